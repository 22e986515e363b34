"""Evaluation of submissions and reference agents / solvers on a board's hidden test seeds.

The trusted side of the leaderboard. It owns the env or task, the oracle, the secret and the store; the
code being scored runs behind an *agent session* or a *solver session*
(:mod:`papergym.leaderboard.board.sandbox`): a sandboxed child process for submitted code, the same hosting
logic in-process for the registry's reference agents.

Environments (:func:`play`)
---------------------------
For each stratum of the board (an instance family), the stratum's ``seeds`` runs are played together:
one native vector env over the hidden env seeds, one session hosting the agent(s) over the hidden agent
seeds (independent of the env seeds, so an agent's seed reveals nothing about its instance). Every
round is one round trip: every run's reward and observation in, every run's action out. The loop is
:func:`papergym.leaderboard.runner.episode.run_vector_episode`, the one local comparisons
(:func:`papergym.leaderboard.runner.compare.compare`) play. The regret of the action played at round ``t``
is ``oracle.regret(action, t)``, from means (booked while the agent computes round ``t + 1``: the same
numbers as before the env steps). An action the env refuses (``validate_action``: shape, NaN,
bounds, set size) ends that run with status ``invalid_action``; the other runs go on (the refused row is
replaced by a fixed valid action that is never scored). A per-run agent that raises ends its run
(``error``); a session failure (timeout, oom, crash, protocol violation) ends every run still going with
its status.

Per run the store gets: ``regret`` (the ranked metric: the paper's notion -- the static pseudo-regret
where the oracle tracks it, the cumulative dynamic regret ``R_T`` otherwise), ``final_regret`` (``R_T``),
``regret_half`` (``R_{T//2}``), ``flatness``, ``static_regret`` / ``simple_regret`` where tracked, and
the curve at the runner's checkpoints.

Tasks (:func:`evaluate_solver`)
-------------------------------
Every test instance of the task (seeds drawn by the task from the secret) is solved once, with the
task's default budget. The solver gets the *public* problem only (:func:`public_problem`: the problem's
fields without its ``params``; callables such as ``rhs`` / ``jac`` / ``linear_form.coeffs`` become calls
back to the evaluator) and a hidden seed. ``report(solution)`` points are scored by the task's evaluator,
their time excluded from the solver's. The final solution is scored, then ``task.finalize`` applies the
task's failure rule (PAR-2 for ``NystromODE-v0``).

Statuses
--------
Run statuses: ``ok``, ``error``, ``timeout``, ``oom``, ``invalid_action``, ``diverged`` (the task's metrics
carry ``diverged = 1``: a non-finite or exploding objective; like ``timeout``, the solver's failure on that
instance, its metrics stored with the task's failure value). A submission is ``ok`` when
every run is, the common status when every run failed the same way, ``partial`` otherwise. Only ``ok``
submissions are ranked. Nothing of a submission is stored until every run has finished: its runs are
written in one transaction, so a crash leaves no half submission, and no other submission's rows are
touched.
"""

from __future__ import annotations

import dataclasses
import hashlib
import platform
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd

from papergym.leaderboard.board.configs import (
    EnvBoardConfig,
    TaskBoardConfig,
    board_config,
    board_version,
    load_evaluator_config,
    stratum_seeds,
)
from papergym.leaderboard.board.ranking import RUN_STATUSES  # one list for the store, the board and here
from papergym.leaderboard.runner.bench import AnytimeCurve, clean_metrics, is_diverged

__all__ = [
    "REFERENCE_AUTHOR",
    "RUN_STATUSES",
    "VALIDATION_KEY",
    "SubmissionInfo",
    "check_label",
    "evaluate_agent",
    "evaluate_job",
    "evaluate_solver",
    "feedback",
    "package_versions",
    "play",
    "public_problem",
    "refresh",
    "register_board",
    "submit",
]

REFERENCE_AUTHOR = "papergym"
_PACKAGES = ("numpy", "scipy", "gymnasium", "numba", "pandas", "torch", "papergym")


@dataclass(frozen=True)
class SubmissionInfo:
    """What the store records about the code being scored."""

    name: str
    author: str
    role: str  # submission | paper | baseline | oracle | reference
    kind: str  # agent | solver
    entry: str  # "file.py:attr" or "registry:<name>"
    code_sha256: str
    hyperparameters: Mapping[str, Any] = field(default_factory=dict)
    split: str = "test"  # test (hidden seeds, ranked) | validation (public seeds) | local (own machine)


def package_versions() -> dict[str, str]:
    """Versions of Python and the packages a submission's result may depend on."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for p in _PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            pass
    return out


# ============================================================================================ envs
def _vector_env(env_id: str, n: int, env_kwargs: Mapping[str, Any]):
    import papergym.envs as penvs

    spec = gym.spec(penvs.check_env_id(env_id))
    if spec.vector_entry_point is None:
        raise ValueError(f"{env_id} has no native vector env; the leaderboard needs one")
    venv = gym.envs.registration.load_env_creator(spec.vector_entry_point)(num_envs=n, **env_kwargs)
    single = gym.envs.registration.load_env_creator(spec.entry_point)(**env_kwargs)
    return venv, single


def _placeholder_action(single: Any) -> Any:
    """A fixed valid action, played (never scored) in the rows of runs that have ended."""
    # envs whose legal actions depend on the state (FJSP) sample from the reset env's own action space
    state_dependent = single.metadata.get("state_dependent_actions", False)
    space = single.action_space if state_dependent else single.problem.action_space
    space.seed(0)
    a = space.sample()
    checked = single.validate_action(a)
    # FJSP's validate_action returns its decoding, not the action; the games' return None
    return a if state_dependent or checked is None else checked


def _checked_actions(
    actions: Any,
    venv: Any,
    single: Any,
    active: np.ndarray,
    placeholder: Any,
    status: list[str],
    errors: list[str | None],
) -> np.ndarray:
    """The actions the vector env can step with; rows the env refuses end their runs (invalid_action).

    ``actions`` come from the agent (for a sandboxed one: a numeric array whose first dimension is the
    number of runs, checked by :func:`papergym.leaderboard.board.protocol.check_actions`); whatever
    a row provokes in the env's checks (a wrong shape or dtype, NaN, out of bounds, a value numpy
    cannot convert) ends that run as ``invalid_action`` with the exception's message -- never an
    exception out of here."""
    n = len(active)
    freeze = getattr(venv, "freeze", None)  # vector envs that can set runs aside (FJSP) ignore ended runs
    if freeze is not None and not active.all():
        freeze(~active)
    if active.all():  # fast path: the whole batch is valid
        try:
            return venv.validate_action(actions)
        except Exception:  # noqa: BLE001, S110 - some row is not: found row by row below
            pass
    rows: list[Any] = []
    # envs whose legality depends on each run's state (FJSP) check a row against that run (validate_row)
    check_row = getattr(venv, "validate_row", None)
    shape = np.shape(placeholder)

    def invalid(i: int, why: str) -> None:
        status[i], errors[i] = "invalid_action", why
        active[i] = False
        rows.append(placeholder)

    for i in range(n):
        if not active[i]:
            rows.append(placeholder)
            continue
        try:
            a = actions[i]
        except Exception:  # noqa: BLE001 - no row i: the env's check says what is wrong with None
            a = None
        try:
            row = check_row(i, a) if check_row is not None else single.validate_action(a)
        except Exception as exc:  # noqa: BLE001 - anything the agent's row provokes ends that run only
            invalid(i, f"{type(exc).__name__}: {exc}")
            continue
        if np.shape(row) != shape:
            invalid(i, f"InvalidActionError: action of shape {np.shape(row)}, expected {shape}")
            continue
        rows.append(row)
    if freeze is not None and not active.all():
        freeze(~active)
    try:
        return venv.validate_action(np.stack([np.asarray(r) for r in rows]))
    except Exception as exc:  # noqa: BLE001 - rows valid one by one but not together: the runs still going end
        for i in range(n):
            if active[i]:
                status[i], errors[i], active[i] = "invalid_action", f"{type(exc).__name__}: {exc}", False
        if freeze is not None:
            freeze(~active)
        return venv.validate_action(np.stack([np.asarray(placeholder)] * n))


def play(
    env_id: str,
    env_kwargs: Mapping[str, Any],
    env_seeds: Sequence[int],
    session: Any,
    agent_seeds: Sequence[int],
    hyperparameters: Mapping[str, Any] | None = None,
    *,
    on_env: Callable[[Any], None] | None = None,
) -> list[dict[str, Any]]:
    """Play ``len(env_seeds)`` runs of ``env_id`` together against ``session`` (module docstring).

    ``session.start(problem, agent_seeds, hyperparameters)`` gets the public problem
    (:func:`papergym.leaderboard.board.sandbox.problem_to_public`) -- or, for a session with
    ``wants_problem_spec = True`` (the registry's reference agents, trusted), the
    :class:`~papergym.envs.spec.ProblemSpec` itself; ``on_env(venv)`` is called before (oracle-role
    references take the oracles from it). Returns one dict per run: ``status``, ``error``, ``metrics``,
    ``curve`` (DataFrame or None), ``wall_seconds``, ``cpu_seconds``.
    """
    from papergym.leaderboard.board.sandbox import SandboxError, problem_to_public
    from papergym.leaderboard.runner.episode import SessionDriver, run_vector_episode

    n = len(env_seeds)
    if len(agent_seeds) != n:
        raise ValueError(f"{n} env seeds but {len(agent_seeds)} agent seeds")
    venv, single = _vector_env(env_id, n, env_kwargs)
    t0 = time.perf_counter()
    report = None
    try:
        obs, _ = venv.reset(seed=[int(s) for s in env_seeds])
        single.reset(seed=int(env_seeds[0]))
        problem = venv.problem
        placeholder = _placeholder_action(single)
        if on_env is not None:
            on_env(venv)
        payload = problem if getattr(session, "wants_problem_spec", False) else problem_to_public(problem)
        T = int(problem.horizon)

        def check(raw: Any, active: np.ndarray, status: list[str], errors: list[str | None]) -> np.ndarray:
            return _checked_actions(raw, venv, single, active, placeholder, status, errors)

        # The loop of local comparisons (papergym.leaderboard.runner.episode). A round's regret is booked
        # while the agent computes the next round's actions (the oracle is a function of the actions and
        # t; the environments' contract): a sandboxed session's send_step / recv_step overlap the two
        # processes; a session with step() only is driven the same way. A session failure (SandboxError:
        # timeout, oom, crash, protocol violation) ends every run still going with its status.
        driver = SessionDriver(session, payload, agent_seeds, dict(hyperparameters or {}))
        try:
            ep = run_vector_episode(
                venv, obs, driver, horizon=T, check_actions=check, fatal=(SandboxError,), defer_regret=True
            )
        finally:
            report = session.close()
    finally:
        venv.close()
        single.close()
    ck, hist, shist, sthist = ep.t, ep.cum_regret, ep.simple_regret, ep.static_regret
    track_simple, track_static = shist is not None, sthist is not None
    status, errors = ep.status, ep.errors
    wall = time.perf_counter() - t0
    cpu = getattr(report, "cpu_seconds", None)
    tail = getattr(report, "stderr_tail", "") or ""
    out = []
    for i in range(n):
        res: dict[str, Any] = {
            "status": status[i],
            "error": errors[i],
            "metrics": {},
            "curve": None,
            "wall_seconds": wall / n,
            "cpu_seconds": (cpu / n) if cpu is not None else None,
            "stderr_tail": tail,
        }
        if status[i] == "ok":
            cols: dict[str, Any] = {"t": ck, "cum_regret": hist[:, i]}
            RT, Rh = float(hist[-1, i]), float(hist[np.searchsorted(ck, max(1, T // 2)), i])
            m = {"final_regret": RT, "regret_half": Rh, "flatness": (RT - Rh) / RT if RT > 0 else 0.0}
            if track_simple:
                cols["simple_regret"] = shist[:, i]
                m["simple_regret"] = float(shist[-1, i])
            if track_static:
                cols["static_regret"] = sthist[:, i]
                m["static_regret"] = float(sthist[-1, i])
            m["regret"] = m["static_regret"] if track_static else RT
            res["metrics"] = m
            res["curve"] = pd.DataFrame(cols)
        out.append(res)
    return out


class RegistryAgentSession:
    """An :class:`~papergym.leaderboard.board.sandbox.AgentSession` over a registered agent, in-process
    (trusted reference code): its batched implementation when it has one, one agent per seed
    otherwise -- the same numbers either way (the registry's contract)."""

    wants_problem_spec = True

    def __init__(self, name: str, env_id: str):
        from papergym.agents.base import get_agent_info

        self.info = get_agent_info(name, env_id)
        self.name = name
        self.oracles = None
        self._t0 = time.perf_counter()
        self._cpu0 = time.process_time()

    def on_env(self, venv: Any) -> None:
        if self.info.role == "oracle":
            self.oracles = list(venv.oracles)

    def start(self, problem: Any, seeds: Sequence[int], hyperparameters: Mapping[str, Any]) -> None:
        from papergym.agents.base import make_agent, make_batched_agent

        self.n = len(seeds)
        self.batched = make_batched_agent(
            self.name, problem, seeds=list(seeds), oracles=self.oracles, **hyperparameters
        )
        if self.batched is None:
            self.agents = [
                make_agent(
                    self.name,
                    problem,
                    seed=s,
                    oracle=self.oracles[i] if self.oracles is not None else None,
                    **hyperparameters,
                )
                for i, s in enumerate(seeds)
            ]
        self.prev = None

    @staticmethod
    def _row(obs: Any, i: int) -> Any:
        return {k: v[i] for k, v in obs.items()} if isinstance(obs, Mapping) else obs[i]

    def step(self, observations: Any, rewards: np.ndarray | None, active: np.ndarray):
        if self.batched is not None:
            if rewards is not None:
                self.batched.update(self.prev, rewards, observations)
            self.prev = np.asarray(self.batched.act(observations))
            return self.prev, {}
        acts = []
        for i, ag in enumerate(self.agents):
            o = self._row(observations, i)
            if rewards is not None:
                ag.update(self.prev[i], float(rewards[i]), o)
            acts.append(np.asarray(ag.act(o)))
        self.prev = np.stack(acts)
        return self.prev, {}

    def close(self) -> Any:
        from papergym.leaderboard.board.sandbox import SessionReport

        return SessionReport("", time.perf_counter() - self._t0, time.process_time() - self._cpu0, "in-process")


# =========================================================================================== tasks
def public_problem(problem: Any, private: Sequence[str] | None = None) -> tuple[dict[str, Any], dict[str, Callable]]:
    """The public view of a task's problem: ``(data, callables)``.

    ``data``: the problem's dataclass fields (nested dataclasses as dicts) except the private ones
    (``problem.PRIVATE_FIELDS`` if defined, else ``("params",)``: the family parameters the solver must
    not read); ``callables``: dotted name -> the function (``"rhs"``, ``"linear_form.coeffs"``), served
    to the sandboxed solver by calls back to the evaluator.
    """
    if private is None:
        private = tuple(getattr(problem, "PRIVATE_FIELDS", ("params",)))
    data: dict[str, Any] = {}
    calls: dict[str, Callable] = {}

    def walk(obj: Any, prefix: str, into: dict[str, Any]) -> None:
        for f in dataclasses.fields(obj):
            if not prefix and f.name in private:
                continue
            v = getattr(obj, f.name)
            key = f"{prefix}{f.name}"
            if callable(v) and not isinstance(v, type):
                calls[key] = v
            elif dataclasses.is_dataclass(v) and not isinstance(v, type):
                sub: dict[str, Any] = {}
                walk(v, key + ".", sub)
                into[f.name] = sub
            else:
                into[f.name] = v

    if not dataclasses.is_dataclass(problem):
        raise TypeError(f"public_problem needs a dataclass problem, got {type(problem).__name__}")
    walk(problem, "", data)
    return data, calls


class RegistrySolverSession:
    """A :class:`~papergym.leaderboard.board.sandbox.SolverSession` over a registered solver, in-process,
    given the real problem object (trusted reference code)."""

    wants_problem_object = True

    def __init__(self, name: str, task_id: str):
        from papergym.agents.base import get_solver_info

        self.name, self.task_id = name, task_id
        # a reference-role solver (a privileged line, never ranked) gets the evaluator's reference_problem() if any
        self.reference_view = get_solver_info(name, task_id).role == "reference"
        self._cpu0 = time.process_time()
        self._t0 = time.perf_counter()

    def solve(
        self,
        problem: Any,
        callables: Mapping[str, Callable],
        budget: Any,
        hyperparameters: Mapping[str, Any],
        seed: int,
        *,
        report: Callable[[Any, Any, Any], None],
        timeout: float,
    ) -> tuple[Any, float]:
        from papergym.agents.base import make_solver
        from papergym.envs.tasks.base import Budget, BudgetExceeded
        from papergym.leaderboard.board.sandbox import SandboxError

        excluded = 0.0

        def rep(solution: Any, *, iteration: Any = None, work: Any = None) -> None:
            nonlocal excluded
            t = time.perf_counter()
            report(solution, iteration, work)
            excluded += time.perf_counter() - t

        slv = make_solver(self.name, self.task_id, seed=seed, **hyperparameters)
        bud = budget if isinstance(budget, Budget) else Budget(**budget)
        start = time.perf_counter()
        try:
            sol = slv.solve(problem, bud, rep)
        except BudgetExceeded as exc:
            raise _sandbox_error("timeout", f"BudgetExceeded: {exc}") from None
        except MemoryError as exc:
            raise _sandbox_error("oom", f"MemoryError: {exc}") from None
        except SandboxError:
            raise
        except Exception as exc:  # noqa: BLE001 - any other failure of the host becomes a sandbox error
            raise _sandbox_error("error", f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=-3)) from None
        return sol, time.perf_counter() - start - excluded

    def close(self) -> Any:
        from papergym.leaderboard.board.sandbox import SessionReport

        return SessionReport("", time.perf_counter() - self._t0, time.process_time() - self._cpu0, "in-process")


def _sandbox_error(status: str, message: str, tail: str = "") -> Exception:
    from papergym.leaderboard.board.sandbox import SandboxError

    return SandboxError(status, message, tail)


def _registry_code_sha256(*factories: Any) -> str:
    """Full SHA-256 of the source files of a registered agent's / solver's factories."""
    from papergym.agents.base import module_file_bytes

    h = hashlib.sha256()
    for f in factories:
        if f is not None:
            h.update(module_file_bytes(f))
    return h.hexdigest()


def evaluate_solver(
    task: Any,
    refs: Sequence[Any],
    make_session: Callable[[], Any],
    hyperparameters: Mapping[str, Any],
    solver_seeds: Sequence[int],
    *,
    deadline: float | None = None,
) -> list[dict[str, Any]]:
    """Solve every instance of ``refs`` (one per run) through sessions from ``make_session`` (a fresh
    one after a session failure). Returns one run dict per instance (as :func:`play`), with the anytime
    curve of ``report`` points."""
    from papergym.envs.tasks.base import Budget
    from papergym.leaderboard.board.sandbox import SandboxError

    budget: Budget = task.default_budget
    out: list[dict[str, Any]] = []
    session = None
    try:
        for ref, seed in zip(refs, solver_seeds):
            if deadline is not None and time.monotonic() > deadline:
                out.append(
                    {
                        "status": "timeout",
                        "error": "the submission's total time limit was reached",
                        "metrics": clean_metrics(task.finalize({}, None, "timeout", budget))
                        if hasattr(task, "finalize")
                        else {},
                        "curve": None,
                        "wall_seconds": 0.0,
                        "cpu_seconds": None,
                    }
                )
                continue
            if session is None:
                session = make_session()
            problem, evaluator = task.make(ref)
            if getattr(session, "wants_problem_object", False):
                payload, calls = problem, {}
                if getattr(session, "reference_view", False) and hasattr(evaluator, "reference_problem"):
                    payload = evaluator.reference_problem()  # privileged view (e.g. the true subspace): references only
            else:
                payload, calls = public_problem(problem)
            report = AnytimeCurve(evaluator)
            t_start = time.perf_counter()
            status, err, metrics, seconds = "ok", None, {}, None
            timeout = 2.0 * float(budget.max_seconds) + 30.0 if budget.max_seconds else 3600.0
            try:
                report.start()
                solution, seconds = session.solve(
                    payload, calls, budget.as_dict(), dict(hyperparameters), int(seed), report=report, timeout=timeout
                )
                try:
                    metrics = clean_metrics(evaluator.evaluate(solution))
                except Exception as exc:  # noqa: BLE001 - whatever a hostile solution provokes in the task's evaluator
                    status, err = "error", f"malformed solution: {type(exc).__name__}: {str(exc)[:2000]}"
                if status == "ok" and budget.max_seconds is not None and seconds > budget.max_seconds:
                    status, err = "timeout", f"took {seconds:.1f} s > budget {budget.max_seconds} s"
            except SandboxError as exc:
                status, err = exc.status, str(exc)
                session.close()
                session = None
            if hasattr(task, "finalize"):
                metrics = clean_metrics(task.finalize(dict(metrics), seconds, status, budget))
            if status == "ok" and is_diverged(metrics):
                status, err = "diverged", "the task's evaluator reported a diverged run (metric diverged = 1)"
            wall = time.perf_counter() - t_start
            out.append(
                {
                    "status": status,
                    "error": err,
                    "metrics": metrics,
                    "curve": pd.DataFrame(report.points) if report.points else None,
                    "wall_seconds": wall,
                    "cpu_seconds": None,
                    "seconds": seconds,
                }
            )
    finally:
        if session is not None:
            session.close()
    return out


# ======================================================================================= submitting
def _submission_status(statuses: Sequence[str]) -> str:
    s = set(statuses)
    if not s:
        return "error"
    if s == {"ok"}:
        return "ok"
    if len(s) == 1:
        return s.pop()
    return "partial"


def _first_error(runs: Sequence[Mapping[str, Any]]) -> str:
    for r in runs:
        if r["status"] != "ok" and r.get("error"):
            return f"{r['status']}: {r['error']}"[:500]
    return ""


def _register(store: Any, cfg: EnvBoardConfig | TaskBoardConfig) -> str:
    version = board_version(cfg)
    store.register_benchmark(cfg.benchmark_id, cfg.kind, version, cfg.as_dict())
    return version


def register_board(store: Any, benchmark_id: str) -> tuple[EnvBoardConfig | TaskBoardConfig, str]:
    """The configuration of ``benchmark_id``'s board (with the evaluator config's overrides) and its
    version, registered in the store (idempotent). ``ValueError`` for a benchmark without a board."""
    cfg = board_config(benchmark_id)
    return cfg, _register(store, cfg)


def _run_order(benchmark_id: str, stratum: str, n: int, secret: str, shuffle_key: str | None) -> np.ndarray:
    """The order in which a stratum's ``n`` instances are handed to the agent: the identity, or (with
    ``shuffle_key``) a permutation drawn from the secret and the key, so that a run's position in the
    batch says nothing about which hidden instance it plays."""
    if shuffle_key is None:
        return np.arange(n)
    seed = stratum_seeds(benchmark_id, stratum, shuffle_key, 1, secret)[0]
    return np.random.default_rng(seed).permutation(n)


def agent_rows(
    env_id: str,
    cfg: EnvBoardConfig,
    make_session: Callable[[], Any],
    hyperparameters: Mapping[str, Any],
    *,
    secret: str,
    time_limit: float | None = None,
    progress: Callable[[str], None] | None = None,
    seed_key: str = "agent",
    shuffle_key: str | None = None,
    split: str = "test",
) -> tuple[list[dict[str, Any]], list[str]]:
    """Play every stratum of the env board ``cfg`` (no store involved): the run rows and stderr tails.

    The env seeds of stratum ``s`` are derived from ``secret`` (the hidden test seeds, or the public
    :data:`VALIDATION_KEY`), the agent's own seeds from ``secret`` and ``seed_key``; with
    ``shuffle_key`` the instances are played in a secret order (:func:`_run_order`). Rows carry the
    instance's index in the stratum, whatever the order, and ``split`` (``"test"`` or ``"dev"``)."""
    deadline = time.monotonic() + time_limit if time_limit else None
    rows: list[dict[str, Any]] = []
    tails: list[str] = []
    for stratum, kwargs in cfg.strata.items():
        env_kwargs = dict(kwargs)
        if cfg.horizon is not None:
            env_kwargs["horizon"] = cfg.horizon
        order = _run_order(env_id, stratum, cfg.seeds, secret, shuffle_key)
        env_seeds = [stratum_seeds(env_id, stratum, "env", cfg.seeds, secret)[j] for j in order]
        agent_seeds = stratum_seeds(env_id, stratum, seed_key, cfg.seeds, secret)
        if deadline is not None and time.monotonic() > deadline:
            runs = [
                {
                    "status": "timeout",
                    "error": "the submission's total time limit was reached",
                    "metrics": {},
                    "curve": None,
                    "wall_seconds": 0.0,
                    "cpu_seconds": None,
                }
            ] * cfg.seeds
        else:
            if progress:
                progress(f"{env_id} / {stratum}: {cfg.seeds} runs")
            session = make_session()
            runs = play(
                env_id,
                env_kwargs,
                env_seeds,
                session,
                agent_seeds,
                hyperparameters,
                on_env=getattr(session, "on_env", None),
            )
            tail = runs[0].get("stderr_tail", "") if runs else ""
            if tail:
                tails.append(f"[{stratum}] {tail}")
        for j, r in enumerate(runs):
            rows.append({"split": split, "stratum": stratum, "seed_index": int(order[j]), **_run_row(r)})
    rows.sort(key=lambda r: (list(cfg.strata).index(r["stratum"]), r["seed_index"]))
    return rows, tails


#: the lease of a submission scored in this process (a local submission, a reference): renewed every
#: third of it while the runs compute
LOCAL_LEASE_SECONDS = 60.0


def _score(
    store: Any,
    cfg: EnvBoardConfig | TaskBoardConfig,
    info: SubmissionInfo,
    sandbox: str,
    compute: Callable[[], tuple[list[dict[str, Any]], list[str]]],
) -> int:
    """Register the board's version, open the submission, ``compute()`` its run rows, store them in one
    transaction. An evaluator failure marks the submission ``error`` and is raised. Returns its id."""
    from papergym.leaderboard.board.worker import LeaseKeeper, default_worker_id

    version = _register(store, cfg)
    worker_id = default_worker_id()
    sid = store.create_submission(
        benchmark_id=cfg.benchmark_id,
        version=version,
        name=info.name,
        author=info.author,
        kind=info.kind,
        role=info.role,
        entry=info.entry,
        code_sha256=info.code_sha256,
        hyperparameters=dict(info.hyperparameters),
        package_versions=package_versions(),
        sandbox=sandbox,
        split=info.split,
        worker_id=worker_id,
        lease_seconds=LOCAL_LEASE_SECONDS,
    )
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        # the lease is renewed while this process computes; if it dies (SIGKILL), the lease expires and
        # the next `papergym submit` / `leaderboard` ends the row as `error` (Store.requeue_expired)
        with LeaseKeeper(store, sid, worker_id, LOCAL_LEASE_SECONDS):
            rows, tails = compute()
    except BaseException as exc:
        store.finish_submission(
            sid,
            "error",
            message=f"evaluator failure: {type(exc).__name__}: {exc}"[:500],
            wall_seconds=time.perf_counter() - t0,
        )
        raise
    try:
        store.add_runs(sid, rows)
    except BaseException as exc:
        store.finish_submission(sid, "error", message=f"could not store the runs: {exc}"[:500])
        raise
    status = _submission_status([r["status"] for r in rows])
    store.finish_submission(
        sid,
        status,
        message=_first_error(rows),
        stderr_tail="\n".join(tails)[-8192:],
        wall_seconds=time.perf_counter() - t0,
        cpu_seconds=time.process_time() - c0,
    )
    return sid


def evaluate_agent(
    store: Any,
    env_id: str,
    info: SubmissionInfo,
    make_session: Callable[[], Any],
    *,
    secret: str,
    config: EnvBoardConfig | None = None,
    sandbox: str = "",
    time_limit: float | None = None,
    progress: Callable[[str], None] | None = None,
    precomputed: tuple[list[dict[str, Any]], list[str]] | None = None,
) -> int:
    """Score an agent on the env board: every stratum's runs (or the ``precomputed`` rows of
    :func:`agent_rows`), then one transaction into the store. Returns the submission id."""
    cfg = config or board_config(env_id)
    if not isinstance(cfg, EnvBoardConfig):
        raise ValueError(f"{env_id} is a solver task, not an environment: submit a solver to it")
    if info.kind != "agent":
        raise ValueError(f"evaluate_agent scores agents, got a submission of kind {info.kind!r}")
    return _score(
        store,
        cfg,
        info,
        sandbox,
        lambda: (
            precomputed
            if precomputed is not None
            else agent_rows(
                env_id, cfg, make_session, info.hyperparameters, secret=secret, time_limit=time_limit, progress=progress
            )
        ),
    )


def _run_row(r: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "status": r["status"],
        "metrics": r.get("metrics") or {},
        "wall_seconds": r.get("wall_seconds"),
        "cpu_seconds": r.get("cpu_seconds"),
        "curve": r.get("curve"),
        "error": r.get("error"),
    }


def task_plan(task: Any, task_id: str, secret: str, seed_key: str = "agent") -> list[tuple[Any, str, int, int]]:
    """The test instances of a task board: ``(instance ref, stratum, index in stratum, solver seed)``,
    in the task's order (the stratum is the instance name up to its last ``/``). The instances are drawn
    from ``secret``, the solver seeds from ``secret`` and ``seed_key``."""
    refs = _test_instances(task, secret)
    keys: list[tuple[str, int]] = []
    counts: dict[str, int] = {}
    for ref in refs:
        stratum = ref.name.rsplit("/", 1)[0] if "/" in ref.name else ref.name
        keys.append((stratum, counts.get(stratum, 0)))
        counts[stratum] = counts.get(stratum, 0) + 1
    seeds = {st: stratum_seeds(task_id, st, seed_key, k, secret) for st, k in counts.items()}
    return [(ref, st, i, seeds[st][i]) for ref, (st, i) in zip(refs, keys)]


def task_rows(
    task_id: str,
    cfg: TaskBoardConfig,
    make_session: Callable[[], Any],
    hyperparameters: Mapping[str, Any],
    *,
    secret: str,
    time_limit: float | None = None,
    progress: Callable[[str], None] | None = None,
    strata: Sequence[str] | None = None,
    seed_key: str = "agent",
    split: str = "test",
) -> tuple[list[dict[str, Any]], list[str]]:
    """Solve the test instances of the task board ``cfg`` (those of ``strata`` only, when given; no
    store involved), drawn from ``secret`` (the hidden seeds or the public :data:`VALIDATION_KEY`): the
    run rows and (no) stderr tails."""
    from papergym.envs.tasks.base import make_task

    task = make_task(task_id, **dict(cfg.task_kwargs))
    plan = [p for p in task_plan(task, task_id, secret, seed_key) if strata is None or p[1] in strata]
    if progress:
        progress(f"{task_id}: {len(plan)} instances")
    deadline = time.monotonic() + time_limit if time_limit else None
    runs = evaluate_solver(
        task, [p[0] for p in plan], make_session, hyperparameters, [p[3] for p in plan], deadline=deadline
    )
    return [{"split": split, "stratum": st, "seed_index": i, **_run_row(r)} for (_, st, i, _), r in zip(plan, runs)], []


def evaluate_task(
    store: Any,
    task_id: str,
    info: SubmissionInfo,
    make_session: Callable[[], Any],
    *,
    secret: str,
    config: TaskBoardConfig | None = None,
    sandbox: str = "",
    time_limit: float | None = None,
    progress: Callable[[str], None] | None = None,
    precomputed: tuple[list[dict[str, Any]], list[str]] | None = None,
) -> int:
    """Score a solver on the task board (every test instance, or the ``precomputed`` rows of
    :func:`task_rows`), then one transaction into the store. Returns the submission id."""
    cfg = config or board_config(task_id)
    if not isinstance(cfg, TaskBoardConfig):
        raise ValueError(f"{task_id} is an environment, not a solver task: submit an agent to it")
    if info.kind != "solver":
        raise ValueError(f"evaluate_task scores solvers, got a submission of kind {info.kind!r}")
    return _score(
        store,
        cfg,
        info,
        sandbox,
        lambda: (
            precomputed
            if precomputed is not None
            else task_rows(
                task_id,
                cfg,
                make_session,
                info.hyperparameters,
                secret=secret,
                time_limit=time_limit,
                progress=progress,
            )
        ),
    )


def _test_instances(task: Any, secret: str) -> list[Any]:
    """The task's test instances, its seeds derived from ``secret`` (set for the call only)."""
    import os

    from papergym.envs.tasks.base import SECRET_ENV

    old = os.environ.get(SECRET_ENV)
    os.environ[SECRET_ENV] = secret
    try:
        return list(task.instances("test"))
    finally:
        if old is None:
            os.environ.pop(SECRET_ENV, None)
        else:
            os.environ[SECRET_ENV] = old


def check_label(value: Any, what: str) -> str:
    """A submission's name or author: 1-64 printable characters, no leading/trailing space."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"the submission's {what} must be a non-empty string, got {value!r}")
    if len(value) > 64 or not value.isprintable() or value != value.strip():
        raise ValueError(
            f"the submission's {what} must be at most 64 printable characters without leading or "
            f"trailing spaces, got {value!r}"
        )
    return value


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def submit(
    store: Any,
    entry: str,
    benchmark_id: str,
    *,
    name: str | None = None,
    author: str = "anonymous",
    hyperparameters: Mapping[str, Any] | None = None,
    sandbox: str = "auto",
    limits: Any = None,
    secret: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> int:
    """Evaluate the submitted file ``"path.py:attr"`` on the board of ``benchmark_id`` in the sandbox and
    store the result. Returns the submission id (its status says how it went)."""
    from papergym.envs.tasks.base import list_tasks
    from papergym.leaderboard.board.sandbox import (
        Limits,
        SandboxedAgentSession,
        SandboxedSolverSession,
        load_entry,
        resolve_sandbox,
    )

    path, attr = load_entry(entry)
    name = check_label(name or Path(path).stem, "name")
    author = check_label(author, "author")
    if author == REFERENCE_AUTHOR:
        raise ValueError(f"author {REFERENCE_AUTHOR!r} is reserved for the registry's reference agents and solvers")
    limits = limits or Limits()
    if secret is None:
        secret = load_evaluator_config(create_secret=True).secret
    kind = "solver" if benchmark_id in list_tasks() else "agent"
    if kind == "agent":
        import papergym.envs as penvs

        penvs.check_env_id(benchmark_id)
    # the mode actually used, decided once before anything runs or is stored: "auto" -> "full" or "bwrap";
    # SandboxUnavailable when the isolation asked for is missing (never a silent fall-back), ValueError for a
    # name that is no mode (papergym.leaderboard.board.sandbox, Isolation)
    used = resolve_sandbox(sandbox)
    info = SubmissionInfo(
        name=name,
        author=author,
        role="submission",
        kind=kind,
        entry=f"{Path(path).name}:{attr}",
        code_sha256=_file_sha256(path),
        hyperparameters=dict(hyperparameters or {}),
        split="local",
    )
    if kind == "agent":
        return evaluate_agent(
            store,
            benchmark_id,
            info,
            lambda: SandboxedAgentSession(path, attr, limits=limits, sandbox=used),
            secret=secret,
            sandbox=used,
            time_limit=limits.submission_seconds,
            progress=progress,
        )
    return evaluate_task(
        store,
        benchmark_id,
        info,
        lambda: SandboxedSolverSession(path, attr, limits=limits, sandbox=used),
        secret=secret,
        sandbox=used,
        time_limit=limits.submission_seconds,
        progress=progress,
    )


# ====================================================================================== service jobs
#: The key the *validation* split's seeds are derived from, in place of the evaluator's secret. It is
#: public on purpose: anyone can reproduce the validation instances, and they share nothing with the
#: hidden test instances (those are derived from the secret).
VALIDATION_KEY = "papergym public validation split"


def _safe_file_name(name: str) -> str:
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in Path(str(name)).stem)[:64] or "submission"
    return f"{stem if stem[0].isalpha() else 'sub_' + stem}.py"


def _status_summary(rows: Sequence[Mapping[str, Any]]) -> str:
    """``"18 ok, 2 timeout"``: the run statuses, counted (the only per-run detail a test run reveals)."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return ", ".join(f"{n} {st}" for st, n in sorted(counts.items(), key=lambda kv: RUN_STATUSES.index(kv[0])))


def evaluate_job(
    job: Any,
    *,
    secret: str,
    sandbox: str = "full",
    limits: Any = None,
    config: EnvBoardConfig | TaskBoardConfig | None = None,
) -> Any:
    """Evaluate a queued submission (:class:`papergym.leaderboard.board.jobs.Job`) for a worker: its file
    in the sandbox on the job's split; returns a :class:`~papergym.leaderboard.board.jobs.JobOutcome`.

    * ``validation``: the board's instances drawn from the public :data:`VALIDATION_KEY`, the agent's
      seeds too; the outcome keeps each run's error and the stderr tail for the author.
    * ``test``: the hidden instances (from ``secret``); the agent's seeds are drawn from the secret and
      the submission id and each stratum's instances are handed over in a secret order drawn the same
      way, so neither a seed nor a run's position identifies a hidden instance across submissions. The
      outcome carries no stderr, no error text and a message that only counts run statuses: nothing
      the code observed leaves the sandbox except its actions (scored here) and its exit status.

    Everything is derived from the job, so a job evaluated again after its worker died gives the same
    result. ``sandbox`` is ``"full"`` for ranked evaluation: when bubblewrap, the per-job cgroup, the
    seccomp filter or the uid pool is missing, :class:`~papergym.leaderboard.board.sandbox.SandboxError`
    is raised before anything runs (the worker ends the job as ``error``)."""
    import tempfile

    from papergym.leaderboard.board.jobs import JobOutcome
    from papergym.leaderboard.board.sandbox import Limits, SandboxedAgentSession, SandboxedSolverSession

    if job.split not in ("validation", "test"):
        raise ValueError(f"a service job is on the validation or the test split, got {job.split!r}")
    if job.kind not in ("agent", "solver"):
        raise ValueError(f"a job's kind is 'agent' or 'solver', got {job.kind!r}")
    if sandbox == "full":
        from papergym.leaderboard.board.isolation import isolation_status

        status = isolation_status()
        if not status.full:
            from papergym.leaderboard.board.sandbox import SandboxUnavailable

            raise SandboxUnavailable(
                "ranked evaluation needs the full sandbox; missing: " + "; ".join(status.missing())
            )
    cfg = config or board_config(job.benchmark_id)
    version = board_version(cfg)
    if version != job.version:
        return JobOutcome(
            "error",
            [],
            message=f"the board {job.benchmark_id} changed (version {job.version} -> "
            f"{version}) after this submission was queued: submit it again",
        )
    limits = limits or Limits()
    test = job.split == "test"
    key = secret if test else VALIDATION_KEY
    seed_key = f"agent/submission-{job.submission_id}" if test else "agent"
    run_split = "test" if test else "dev"
    t0, c0 = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory(prefix="papergym-job-") as tmp:
        path = Path(tmp) / _safe_file_name(job.code_name)
        path.write_bytes(job.code)
        if job.kind == "agent":
            if not isinstance(cfg, EnvBoardConfig):
                return JobOutcome("error", [], message=f"{job.benchmark_id} is a solver task: submit a solver")
            rows, tails = agent_rows(
                job.benchmark_id,
                cfg,
                lambda: SandboxedAgentSession(path, job.attr, limits=limits, sandbox=sandbox),
                job.hyperparameters,
                secret=key,
                time_limit=limits.submission_seconds,
                seed_key=seed_key,
                shuffle_key=f"order/submission-{job.submission_id}" if test else None,
                split=run_split,
            )
        else:
            if not isinstance(cfg, TaskBoardConfig):
                return JobOutcome("error", [], message=f"{job.benchmark_id} is an environment: submit an agent")
            rows, tails = task_rows(
                job.benchmark_id,
                cfg,
                lambda: SandboxedSolverSession(path, job.attr, limits=limits, sandbox=sandbox),
                job.hyperparameters,
                secret=key,
                time_limit=limits.submission_seconds,
                seed_key=seed_key,
                split=run_split,
            )
    status = _submission_status([r["status"] for r in rows])
    if test:
        for r in rows:
            r["error"] = None
        message = "" if status == "ok" else f"runs: {_status_summary(rows)}"
        tail = ""
    else:
        message, tail = _first_error(rows), "\n".join(tails)[-8192:]
    return JobOutcome(
        status,
        rows,
        message=message,
        stderr_tail=tail,
        wall_seconds=time.perf_counter() - t0,
        cpu_seconds=time.process_time() - c0,
        sandbox=sandbox,
    )


def feedback(store: Any, submission_id: int) -> dict[str, Any]:
    """The public feedback of one submission, JSON-able (the service shows it to its author only).

    Always: ``id``, ``board``, ``name``, ``author``, ``kind``, ``split``, ``status``, ``created_at``,
    ``finished_at``, ``wall_seconds`` (the whole evaluation, rounded to the second), ``runs_by_status``
    (per stratum, the number of runs of each status) and, when every run finished, ``score``:
    the board's primary metric aggregated as the board does (mean over strata of the mean over runs)
    with its 95 % stratified-bootstrap CI (``ci_low``, ``ci_high``) over the ``ok`` runs.

    Validation (and local) submissions also get ``message``, ``stderr_tail`` and ``runs``: each run's
    stratum, index, status, error, seconds and metrics. Test submissions get nothing per run: no
    stderr, no error text, no per-seed value, no per-run timing."""
    from papergym.leaderboard.runner.stats import stratified_bootstrap

    from .ranking import metric_and_direction

    sub = store.submission(int(submission_id))
    if sub is None:
        raise LookupError(f"no submission {submission_id}")
    split = sub.get("split", "test")
    out: dict[str, Any] = {
        "id": int(sub["submission_id"]),
        "board": sub["benchmark_id"],
        "name": sub["name"],
        "author": sub["author"],
        "kind": sub["kind"],
        "split": split,
        "status": sub["status"],
        "created_at": _iso_or_none(sub.get("created_at")),
        "finished_at": _iso_or_none(sub.get("finished_at")),
        "wall_seconds": None
        if sub.get("wall_seconds") is None or not np.isfinite(sub["wall_seconds"])
        else round(float(sub["wall_seconds"])),
    }
    runs = store.runs(submission_ids=[int(submission_id)], split=None)
    by: dict[str, dict[str, int]] = {}
    for r in runs.itertuples(index=False):
        by.setdefault(r.stratum, {}).setdefault(r.status, 0)
        by[r.stratum][r.status] += 1
    out["runs_by_status"] = by
    out["score"] = out["ci_low"] = out["ci_high"] = None
    try:
        metric = metric_and_direction(board_config(sub["benchmark_id"]))[0]
    except ValueError:
        metric = None
    ok = runs[runs.status == "ok"] if len(runs) else runs
    if metric and len(ok) and metric in ok.columns:
        vals = {st: g.sort_values("seed_index")[metric].to_numpy(dtype=float) for st, g in ok.groupby("stratum")}
        vals = {st: v[np.isfinite(v)] for st, v in vals.items()}
        if all(len(v) for v in vals.values()):
            b = stratified_bootstrap({"x": vals}, n_boot=2000)
            out.update(score=float(b.estimate[0]), ci_low=float(b.low[0]), ci_high=float(b.high[0]), metric=metric)
    if split != "test":
        out["message"] = sub.get("message") or ""
        out["stderr_tail"] = sub.get("stderr_tail") or ""
        metric_cols = [
            c
            for c in runs.columns
            if c
            not in (
                "run_id",
                "submission_id",
                "split",
                "stratum",
                "seed_index",
                "status",
                "wall_seconds",
                "cpu_seconds",
                "curve_path",
                "curve_sha256",
                "error",
                "metrics",
            )
        ]
        out["runs"] = (
            [
                {
                    "stratum": r["stratum"],
                    "index": int(r["seed_index"]),
                    "status": r["status"],
                    "error": r.get("error") if isinstance(r.get("error"), str) else None,
                    "wall_seconds": _finite_or_none(r.get("wall_seconds")),
                    "metrics": {c: _finite_or_none(r.get(c)) for c in metric_cols},
                }
                for r in runs.sort_values(["stratum", "seed_index"]).to_dict("records")
            ]
            if len(runs)
            else []
        )
    return out


def _finite_or_none(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if np.isfinite(f) else None


def _iso_or_none(ts: Any) -> str | None:
    if ts is None or (isinstance(ts, float) and not np.isfinite(ts)) or pd.isna(ts):
        return None
    return pd.Timestamp(ts).isoformat()


# ========================================================================================= refresh
def _reference_entries(benchmark_id: str, cfg: Any, include: Sequence[str], only: Sequence[str] | None):
    from papergym.agents.base import list_agents, list_solvers

    if cfg.kind == "task":
        items = [(s.name, s.role, _registry_code_sha256(s.factory)) for s in list_solvers(benchmark_id)]
    else:
        items = [
            (a.name, a.role, _registry_code_sha256(a.factory, a.batched_factory)) for a in list_agents(benchmark_id)
        ]
    out = []
    for name, role, code in items:
        if only is not None and name not in only:
            continue
        if name in cfg.skip_references and name not in include and (only is None or name not in only):
            continue
        out.append((name, role, code))
    return out


def _reference_agent_rows(env_id: str, cfg: EnvBoardConfig, name: str, secret: str):
    """Worker of :func:`refresh`: the run rows of one reference agent (trusted, in-process)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return agent_rows(env_id, cfg, lambda: RegistryAgentSession(name, env_id), {}, secret=secret)


def _reference_task_rows(task_id: str, cfg: TaskBoardConfig, name: str, secret: str, stratum: str):
    """Worker of :func:`refresh`: the run rows of one reference solver on one stratum of the board."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return task_rows(
            task_id, cfg, lambda: RegistrySolverSession(name, task_id), {}, secret=secret, strata=[stratum]
        )


def _status_of(store: Any, bid: str, version: str, sid: int) -> str:
    sub = store.submissions(bid, version=version)
    return str(sub[sub.submission_id == sid].status.iloc[0])


def refresh(
    store: Any,
    benchmark_ids: Sequence[str] | None = None,
    *,
    include: Sequence[str] = (),
    only: Sequence[str] | None = None,
    force: bool = False,
    secret: str | None = None,
    progress: Callable[[str], None] | None = None,
    n_jobs: int | None = None,
) -> list[tuple[str, str, str]]:
    """Score the registry's reference agents / solvers (roles paper, baseline, oracle, reference) on the
    current version of each board, in-process (trusted code). A reference already scored on this
    version with the same code hash is skipped unless ``force``. Returns ``(benchmark, name, status)``."""
    from papergym.leaderboard.board.configs import board_ids

    if secret is None:
        secret = load_evaluator_config(create_secret=True).secret
    ids = list(benchmark_ids) if benchmark_ids else board_ids()
    done: list[tuple[str, str, str]] = []
    for bid in ids:
        cfg = board_config(bid)
        version = board_version(cfg)
        existing = store.submissions(bid, version=version, latest_only=True)
        todo = []
        for name, role, code in _reference_entries(bid, cfg, include, only):
            if not force and len(existing):
                hit = existing[
                    (existing.name == name) & (existing.author == REFERENCE_AUTHOR) & (existing.code_sha256 == code)
                ]
                if len(hit):
                    done.append((bid, name, f"{hit.iloc[-1].status} (cached)"))
                    continue
            todo.append(
                SubmissionInfo(
                    name=name,
                    author=REFERENCE_AUTHOR,
                    role=role,
                    kind="solver" if cfg.kind == "task" else "agent",
                    entry=f"registry:{name}",
                    code_sha256=code,
                )
            )
        if not todo:
            continue
        # References are trusted and independent: computed in parallel worker processes (one BLAS
        # thread each, as in the sandbox -- solver tasks are timed), stored here, one transaction each.
        # An env board's unit is one agent on every stratum, a task board's one solver on one stratum.
        if cfg.kind == "env":
            units = [(_reference_agent_rows, (bid, cfg, info.name, secret), info.name) for info in todo]
        else:
            from papergym.envs.tasks.base import make_task

            strata = list(dict.fromkeys(p[1] for p in task_plan(make_task(bid, **dict(cfg.task_kwargs)), bid, secret)))
            units = [
                (_reference_task_rows, (bid, cfg, info.name, secret, st), info.name) for info in todo for st in strata
            ]
        if progress:
            progress(f"{bid}: {len(todo)} references, {len(units)} work units")
        from joblib import Parallel, delayed

        from papergym.leaderboard.runner.executors import default_n_jobs

        jobs = n_jobs if n_jobs is not None else default_n_jobs()
        computed = Parallel(n_jobs=max(1, min(jobs, len(units))), backend="loky")(
            delayed(fn)(*args) for fn, args, _ in units
        )
        for info in todo:
            rows: list[dict[str, Any]] = []
            tails: list[str] = []
            for (_, _, name), (r, t) in zip(units, computed):
                if name == info.name:
                    rows += r
                    tails += t
            score = evaluate_agent if cfg.kind == "env" else evaluate_task
            sid = score(
                store,
                bid,
                info,
                lambda: None,
                secret=secret,
                config=cfg,
                sandbox="in-process",
                precomputed=(rows, tails),
            )
            done.append((bid, info.name, _status_of(store, bid, version, sid)))
    return done
