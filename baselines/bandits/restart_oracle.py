"""``restart-oracle``: binning + UCB restarted at EVERY change of the mean function (``NonStatLipschitz-v0``).

A privileged reference line (role ``oracle``: never ranked) for the claim of *Non-Stationary Lipschitz
Bandits* (Nguyen, Gaucher, Vernade, NeurIPS 2025, arXiv 2505.18871) that the regret is governed by the
number of *significant* shifts ``L~``, not by the number of changes ``L``: MDBE's rate
``O~(L~^{1/3} T^{2/3})`` (the paper's main theorem) can be far below ``L^{1/3} T^{2/3}`` when most changes
are insignificant (``benign-changes``: ``L = T``, ``L~ = 0``). This agent is told every change and restarts
a stationary Lipschitz learner at each one, significant or not.

Algorithm
    ``oracle.change_points()`` gives the rounds ``t >= 2`` with ``mu_t != mu_{t-1}`` (the env's
    :meth:`~papergym.envs.bandits.lipschitz.NonStatLipschitzOracle.change_points`); with ``t_0 = 1`` they cut
    ``[1, T]`` into phases ``[t_i, t_{i+1})`` of lengths ``l_i``. In each phase the agent runs, from scratch
    (all statistics dropped at ``t_i``), the stationary learner the paper's experiments compare with:
    binning + UCB ([code] ``BinningUCB_Oracle`` of the official repository ``nguyenicolas/NS_Lipschitz_Bandits``,
    papergym's ``binning-ucb-oracle``) with the per-phase bin count ``K_i = max(1, floor((l_i / log
    max(l_i, 2))^{1/(d+2)}))`` per axis (:func:`~papergym.baselines.bandits.bins.binning_bins`; ``1/3`` for
    ``d = 1``), each bin pulled once in index order, then the bin maximising ``mean_k + c sqrt(log max(l_i, 2)
    / n_k)``, played at its midpoint, ties to the lowest index. It is ``binning-ucb-oracle`` with the change
    points in place of the significant shifts: on an instance whose changes are all significant the two
    differ only by the detection delay of the shifts; on ``benign-changes`` (a change every round) every
    phase lasts one round, ``K_i = 1``, and the agent plays the midpoint every round.

How it gets the change points
    The runner passes the env's oracle to registered ``oracle``-role agents only (``make_agent(...,
    oracle=)``, ``compare``, the leaderboard's reference lines); a submitted agent gets the public
    ``ProblemSpec`` alone, so it cannot read them.

Hyperparameters
    ``c`` = 1.0 [code] (UCB exploration constant, as ``binning-ucb-oracle``).

Diagnostics
    ``restarts``: the number of restarts made so far (= change points passed). The restart rounds are
    ``agent.change_points[i]`` (an array; not stored with every run: on instances that change every round
    they are ``T - 1`` rounds).

Implementation: one padded ``(n_runs, phases + 2)`` int32 array of phase starts (sentinel ``T + 1``), a
pointer per run, and per round one gather to find the runs that restart; their statistics are reset
vectorised (a change every round costs ``O(n_runs)`` numpy work per round, no Python loop over runs).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.baselines.bandits.bins import (
    ENV_ID,
    binning_bins,
    cell_midpoints,
    n_runs,
    problem_dims,
    ucb_pull,
)
from papergym.validate import positive_float

__all__ = ["BatchedRestartOracle", "RestartOracle"]


class BatchedRestartOracle:
    """``restart-oracle`` over ``len(seeds)`` runs; ``oracles[i]`` is run ``i``'s oracle (see the module docstring)."""

    def __init__(self, problem: Any, *, seeds: Sequence[Any], oracles: Sequence[Any], c: float = 1.0):
        self.problem = problem
        self.n_envs = n = n_runs(seeds)
        if oracles is None or len(oracles) != n:
            got = "None" if oracles is None else len(oracles)
            raise ValueError(f"oracles must hold one oracle per run ({n}), got {got}")
        self.T, self.d = T, d = problem_dims(problem)
        self.c = positive_float(c, "c", allow_zero=True)
        cps = []
        for i, o in enumerate(oracles):
            cp = np.asarray(o.change_points(), dtype=np.int64).reshape(-1)
            if cp.size and (np.any(np.diff(cp) <= 0) or cp[0] < 2 or cp[-1] > T):
                raise ValueError(
                    f"oracles[{i}].change_points() must be strictly increasing rounds in [2, T={T}], "
                    f"got {cp[:10].tolist()}{' ...' if cp.size > 10 else ''}"
                )
            cps.append(cp)
        #: per run, the rounds at which the agent restarts (the oracle's change points, int64 arrays)
        self.change_points: list[np.ndarray] = cps
        width = max(cp.size for cp in cps) + 3  # [1, cps..., T + 1, T + 1 ...]
        starts = np.full((n, width), T + 1, dtype=np.int32)
        starts[:, 0] = 1
        for i, cp in enumerate(cps):
            starts[i, 1 : 1 + cp.size] = cp
        self._starts = starts
        # every phase length that occurs -> K_i and log max(l_i, 2) (exact, from the scalar formula)
        lengths = np.concatenate([np.diff(np.concatenate([[1], cp, [T + 1]])) for cp in cps])
        self._ulen = np.unique(lengths)
        self._uK = np.array([binning_bins(int(ln), d) for ln in self._ulen], dtype=np.int64)
        self._ulg = np.array([math.log(max(int(ln), 2)) for ln in self._ulen])
        self.max_cells = C = int(self._uK.max()) ** d
        self._cols = np.arange(C)
        self._sums = np.zeros((n, C))
        self._counts = np.zeros((n, C))
        self._ucb = np.empty((n, C))
        self._K = np.zeros(n, dtype=np.int64)
        self._lg = np.zeros(n)
        self._idx = np.zeros(n, dtype=np.int64)  # current phase of every run
        self._rows = np.arange(n)
        self._rowoff = self._rows * C
        self._arm = np.zeros(n, dtype=np.int64)
        self._restarts = np.zeros(n, dtype=np.int64)
        self._start_phase(self._rows)  # phase 0 of every run (not a restart)
        self.t = 0

    def _start_phase(self, rows: np.ndarray) -> None:
        """Runs ``rows`` enter phase ``_idx[rows]``: ``K_i`` bins per axis, all statistics dropped."""
        idx = self._idx[rows]
        length = self._starts[rows, idx + 1].astype(np.int64) - self._starts[rows, idx]
        j = np.searchsorted(self._ulen, length)
        K = self._uK[j]
        self._K[rows] = K
        self._lg[rows] = self._ulg[j]
        self._sums[rows] = 0.0
        self._counts[rows] = 0.0
        # unpulled cells +inf (round robin in index order), cells beyond K_i^d never chosen
        self._ucb[rows] = np.where(self._cols[None, :] < (K**self.d)[:, None], np.inf, -np.inf)

    def act(self, observations: Any) -> np.ndarray:
        t = self.t + 1  # round being played
        if t > self.T:
            raise RuntimeError(f"restart-oracle was built for horizon T={self.T}; all {self.T} rounds are played")
        restart = self._starts[self._rows, self._idx + 1] == t
        if restart.any():  # t is a change point of these runs
            rows = np.flatnonzero(restart)
            self._idx[rows] += 1
            self._restarts[rows] += 1
            self._start_phase(rows)
        self._arm = self._ucb.argmax(axis=1)  # lowest index on ties
        return cell_midpoints(self._arm, self._K, self.d)

    def update(self, actions: Any, rewards: Any, observations: Any) -> None:
        rewards = np.asarray(rewards, dtype=float)
        if rewards.shape != (self.n_envs,):
            raise ValueError(f"rewards must have shape ({self.n_envs},), got {rewards.shape}")
        # I_k = mean_k + c sqrt(log max(l_i, 2) / n_k), refreshed for the pulled bin
        ucb_pull(self._counts, self._sums, self._ucb, self._rowoff + self._arm, rewards, self.c, self._lg)
        self.t += 1

    def diagnostics(self) -> dict[str, Any]:
        return {"restarts": self._restarts.tolist()}


class RestartOracle(PerRunFromBatched):
    """Per-run ``restart-oracle`` (one row of :class:`BatchedRestartOracle`); needs ``oracle=``."""

    batched_cls = BatchedRestartOracle

    @property
    def change_points(self) -> tuple[int, ...]:
        """The rounds at which this run restarts (the oracle's change points)."""
        return tuple(int(x) for x in self._batched.change_points[0])


register_agent(
    "restart-oracle",
    RestartOracle,
    envs=[ENV_ID],
    role="oracle",
    batched_factory=BatchedRestartOracle,
    description="Binning + UCB restarted at EVERY change of mu_t (oracle change points, significant or not), "
    "K_i bins per phase: the reference for insignificant changes",
    defaults={"c": 1.0},
)
