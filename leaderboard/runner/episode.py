"""One regret-tracking episode loop over a native vector env: :func:`run_vector_episode`.

Local comparisons (:func:`papergym.leaderboard.runner.compare.compare`, ``mode="batched"``) and the
leaderboard's evaluation of an agent (:func:`papergym.leaderboard.board.evaluate.play`, for registry
references in-process and for submissions behind a sandbox session) play their runs through this one
loop, so a local ``papergym compare`` and a board score of the same agent on the same seeds agree bit for
bit. What differs between the two callers is a parameter or a thin *driver* around the agent, never a
second loop:

* the agent: :class:`PolicyDriver` wraps a batched agent (``act`` / ``update``) as the local runner calls
  it; :class:`SessionDriver` wraps an agent session
  (:class:`~papergym.leaderboard.board.sandbox.SandboxedAgentSession`, its per-call time limits and
  hidden seeds included, or an in-process one);
* ``check_actions``: the board's row-by-row validation, which ends only the run whose action the env
  refuses (status ``invalid_action``); without it an invalid action raises from ``venv.step``;
* ``fatal``: the exception types (the board: ``SandboxError``) that end every run still going with the
  exception's ``status`` (``timeout``, ``oom``, ``error``); other exceptions propagate;
* ``defer_regret``: book a round's regret while the agent computes the next round's actions (the board
  overlaps its process with the sandboxed child's); the numbers are those of booking before the step,
  because an oracle's ``regret(actions, t)`` is a function of the actions and ``t`` only;
* ``probes``: extra per-run values read after the step at every checkpoint (a scheduling env's
  ``makespan``).

Bookkeeping (:class:`RegretBook`): the regret of the action played at round ``t`` is
``venv.oracle.regret(actions, t)``, computed from means, never from the realised reward. The cumulative
regret ``R_t`` is stored at the :func:`checkpoints`; where the oracle class sets
``TRACK_SIMPLE_REGRET`` the simple regret ``min_{s <= t} regret(a_s, s)`` too, and where the oracle's
``tracks_static_regret`` is true the cumulative static regret ``sum_t static_regret_increment(a_t, t)``
(the pseudo-regret against the best fixed action; see ``docs/conventions.md``).

The per-run path of the local runner (``mode="per-run"``: one Gymnasium env wrapped in
:class:`~papergym.envs.wrappers.RegretRecorder` per seed) stays separate on purpose: it is the
reference the vector envs and batched agents are checked against (``tests/leaderboard/test_episode_loop.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

__all__ = [
    "N_LIN_POINTS",
    "N_LOG_POINTS",
    "EpisodeDriver",
    "PolicyDriver",
    "RegretBook",
    "SessionDriver",
    "VectorEpisode",
    "checkpoints",
    "run_vector_episode",
]

N_LOG_POINTS = 100
N_LIN_POINTS = 100


def checkpoints(horizon: int) -> np.ndarray:
    """Rounds at which cumulative regret is stored: log- and linearly spaced, ``T // 2`` and ``T``."""
    T = int(horizon)
    pts = np.concatenate(
        [np.geomspace(1, T, N_LOG_POINTS), np.linspace(1, T, N_LIN_POINTS + 1)[1:], [max(1, T // 2), T]]
    )
    return np.unique(np.clip(np.round(pts).astype(np.int64), 1, T))


class RegretBook:
    """Regret bookkeeping of ``n`` runs played together (module docstring).

    :meth:`book` adds round ``t``'s regret of ``actions``; :meth:`close_round` (after the env stepped
    round ``t``) stores the running values when ``t`` is a checkpoint. Curves not reached (an episode cut
    short) stay NaN."""

    def __init__(
        self,
        oracle: Any,
        first_oracle: Any,
        n: int,
        horizon: int,
        probes: Mapping[str, Callable[[], Any]] | None = None,
    ):
        self.ck = checkpoints(horizon)
        self.n = int(n)
        self.regret = oracle.regret
        self.track_simple = bool(getattr(type(first_oracle), "TRACK_SIMPLE_REGRET", False))
        self.track_static = bool(getattr(first_oracle, "tracks_static_regret", False))
        self.static_increment = oracle.static_regret_increment if self.track_static else None
        k = len(self.ck)
        self.cum = np.zeros(self.n)
        self.best = np.full(self.n, np.inf)
        self.stcum = np.zeros(self.n)
        self.hist = np.full((k, self.n), np.nan)
        self.shist = np.full((k, self.n), np.nan) if self.track_simple else None
        self.sthist = np.full((k, self.n), np.nan) if self.track_static else None
        self.probes = dict(probes or {})
        self.phist = {name: np.full((k, self.n), np.nan) for name in self.probes}
        self._j = 0
        self._next = int(self.ck[0])

    def book(self, actions: Any, t: int) -> None:
        """Add the regret of round ``t``'s ``actions`` (one row per run)."""
        r = self.regret(actions, t)
        self.cum += r
        if self.track_simple:
            np.minimum(self.best, r, out=self.best)
        if self.track_static:
            self.stcum += self.static_increment(actions, t)

    def close_round(self, t: int) -> None:
        """Store the running values if ``t`` is a checkpoint (call it after the env stepped round ``t``)."""
        if t != self._next:
            return
        j = self._j
        self.hist[j] = self.cum
        if self.track_simple:
            self.shist[j] = self.best
        if self.track_static:
            self.sthist[j] = self.stcum
        for name, probe in self.probes.items():
            self.phist[name][j] = probe()
        self._j = j + 1
        self._next = int(self.ck[self._j]) if self._j < len(self.ck) else -1


@dataclass
class VectorEpisode:
    """What :func:`run_vector_episode` returns: per-run statuses and the curves at the checkpoints ``t``
    (arrays of shape ``(len(t), n)``; ``None`` where the oracle does not track that regret)."""

    t: np.ndarray
    cum_regret: np.ndarray
    simple_regret: np.ndarray | None
    static_regret: np.ndarray | None
    probes: dict[str, np.ndarray]
    status: list[str]
    errors: list[str | None]
    horizon: int
    rounds: int = 0  # rounds played (fewer than ``horizon`` when every run ended early)
    extra: dict[str, Any] = field(default_factory=dict)


class EpisodeDriver(Protocol):
    """The agent side of one episode: ``send`` a round's observations, rewards of the previous round
    (``None`` at round 1) and the mask of runs still going; ``recv`` the actions (one row per run) and
    ``{run index: message}`` of runs whose agent failed. Optional ``start()`` (called first, inside the
    loop's failure handling) and ``finish(observations, rewards)`` (after the last round)."""

    def send(self, observations: Any, rewards: np.ndarray | None, active: np.ndarray) -> None: ...

    def recv(self) -> tuple[Any, Mapping[int, str] | None]: ...


class PolicyDriver:
    """A batched agent as the local runner drives it: ``act(obs)`` each round, ``update(actions, rewards,
    obs)`` after each step, the last one included (its ``diagnostics()`` count every round)."""

    def __init__(self, policy: Any):
        self.policy = policy
        self._obs: Any = None
        self._rewards: Any = None
        self._prev: Any = None

    def send(self, observations: Any, rewards: np.ndarray | None, active: np.ndarray) -> None:
        self._obs, self._rewards = observations, rewards

    def recv(self) -> tuple[Any, None]:
        if self._rewards is not None:
            self.policy.update(self._prev, self._rewards, self._obs)
        self._prev = self.policy.act(self._obs)
        return self._prev, None

    def finish(self, observations: Any, rewards: np.ndarray) -> None:
        self.policy.update(self._prev, rewards, observations)


class SessionDriver:
    """An agent session (:class:`~papergym.leaderboard.board.sandbox.AgentSession`) as the board drives it:
    ``start(problem, seeds, hyperparameters)``, then one round trip per round -- ``send_step`` /
    ``recv_step`` where the session has them (a sandboxed child computes while the loop books the
    previous round), ``step`` otherwise. The rewards of the last round are never sent."""

    def __init__(self, session: Any, problem: Any, seeds: Sequence[int], hyperparameters: Mapping[str, Any]):
        self.session = session
        self.problem = problem
        self.seeds = [int(s) for s in seeds]
        self.hyperparameters = dict(hyperparameters)
        self._send = getattr(session, "send_step", None)
        self._recv = getattr(session, "recv_step", None)
        if self._send is None or self._recv is None:
            self._send = self._recv = None
        self._held: list[Any] = []

    def start(self) -> None:
        self.session.start(self.problem, self.seeds, self.hyperparameters)

    def send(self, observations: Any, rewards: np.ndarray | None, active: np.ndarray) -> None:
        if self._send is not None:
            self._send(observations, rewards, active)
        else:
            self._held[:] = [observations, rewards, active]

    def recv(self) -> tuple[Any, Mapping[int, str] | None]:
        if self._recv is not None:
            return self._recv()
        return self.session.step(*self._held)


def run_vector_episode(
    venv: Any,
    observations: Any,
    driver: Any,
    *,
    horizon: int | None = None,
    check_actions: Callable[[Any, np.ndarray, list[str], list[str | None]], Any] | None = None,
    fatal: tuple[type[BaseException], ...] = (),
    defer_regret: bool = False,
    probes: Mapping[str, Callable[[], Any]] | None = None,
) -> VectorEpisode:
    """Play one episode of every run of the reset vector env ``venv`` (first ``observations``) with
    ``driver``'s actions, booking regret (module docstring).

    Per round: ``driver.send(obs, rewards, active)``; ``driver.recv()`` -> ``(actions, failed)``; runs
    in ``failed`` end with status ``error``; the loop stops when no run is left; ``check_actions(actions,
    active, status, errors)`` returns the actions the env can step with (ending the runs it refuses);
    the regret of round ``t`` is booked and ``venv.step`` called. An exception of a ``fatal`` type ends
    every run still going with its ``status`` attribute (default ``"error"``) and message."""
    n = int(venv.num_envs)
    T = int(horizon if horizon is not None else venv.problem.horizon)
    book = RegretBook(venv.oracle, venv.oracles[0], n, T, probes)
    status = ["ok"] * n
    errors: list[str | None] = [None] * n
    active = np.ones(n, dtype=bool)
    obs, rewards = observations, None
    pending: tuple[Any, int] | None = None
    rounds = 0
    try:
        start = getattr(driver, "start", None)
        if start is not None:
            start()
        for t in range(1, T + 1):
            driver.send(obs, rewards, active.copy())
            if pending is not None:
                book.book(*pending)
                book.close_round(pending[1])
                pending = None
            raw, failed = driver.recv()
            for i, msg in (failed or {}).items():
                i = int(i)
                if 0 <= i < n and active[i]:
                    status[i], errors[i], active[i] = "error", str(msg), False
            if not active.any():
                break
            actions = raw if check_actions is None else check_actions(raw, active, status, errors)
            if defer_regret:
                obs, rewards, _, _, _ = venv.step(actions)
                pending = (actions, t)
            else:
                book.book(actions, t)
                obs, rewards, _, _, _ = venv.step(actions)
                book.close_round(t)
            rounds = t
        if pending is not None:
            book.book(*pending)
            book.close_round(pending[1])
            pending = None
        finish = getattr(driver, "finish", None)
        if finish is not None and rewards is not None:
            finish(obs, rewards)
    except fatal as exc:
        for i in range(n):
            if active[i]:
                status[i], errors[i], active[i] = getattr(exc, "status", "error"), str(exc), False
    return VectorEpisode(
        t=book.ck,
        cum_regret=book.hist,
        simple_regret=book.shist,
        static_regret=book.sthist,
        probes=book.phist,
        status=status,
        errors=errors,
        horizon=T,
        rounds=rounds,
    )
