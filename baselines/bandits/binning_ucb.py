"""Binning + UCB baselines of ``NonStatLipschitz-v0``: ``binning-ucb`` and ``binning-ucb-oracle``.

Described in ``docs/papers/nonstat-lipschitz.md`` (tags: see docs/conventions.md); reference [code]
``nguyenicolas/NS_Lipschitz_Bandits``,
``Policy.py`` classes ``BinningUCB`` and ``BinningUCB_Oracle`` (read to understand, not copied).

``binning-ucb`` (role ``baseline``)
    Split ``[0, 1]`` into ``K = floor((T / log T)^{1/3})`` equal bins (``d > 1``: the regular grid of
    ``K^d`` cells with ``K = floor((T / log T)^{1/(d+2)})`` per axis [design]); pull every bin once
    (in index order), then play the bin maximising the UCB index

        ``I_k = mean_k + c sqrt(log T / n_k)``

    and play its midpoint. Never forgets (stationary UCB on a fixed discretisation).

``binning-ucb-oracle`` (role ``oracle``: receives the oracle, drawn as a reference, never ranked)
    Restarts at the oracle's significant shifts ``tau_1 < tau_2 < ...`` (``oracle.significant_shifts()``
    with its default arguments; ``tau_0 = 1``). Phase ``i`` covers rounds ``[tau_i, tau_{i+1})`` (the
    last one ends at ``T``), has length ``l_i``, and uses ``K_i = max(1, floor((l_i / log max(l_i, 2))^{1/3}))``
    bins (``d > 1``: exponent ``1/(d+2)`` per axis [design]); within a phase it runs the UCB above from
    scratch (all statistics dropped at ``tau_i``) with ``log T`` replaced by ``log max(l_i, 2)`` (the
    log of the phase length, the phase's own horizon) [design, see deviations].

Hyperparameters
    ``c`` = 1.0 [code] (exploration constant, both agents).
    ``bins`` = None (``binning-ucb`` only): bins per axis; None = the formula above [design].
    ``log_term``:
      * ``binning-ucb``: ``"T"`` (default: ``log T``) or ``"t"`` (``log`` of the number of
        pulls made so far, the anytime index of [code] ``BinningUCB``).
      * ``binning-ucb-oracle``: ``"phase"`` (default, ``log max(l_i, 2)``) or ``"t"`` (``log
        max(p, 1)`` with ``p`` the pulls made so far in the phase, as [code] ``BinningUCB_Oracle``).

Tie-breaking [design]: lowest bin index (``np.argmax``), deterministic; these agents use no randomness
(the seed only fixes the number of runs). Unpulled bins have index ``+inf``, so the initial "pull each
bin once" happens in index order ``0, 1, ..., K-1`` exactly as in [code].

Deviations from [code]
    * [code] ``BinningUCB`` uses ``log(total pulls so far)``; this baseline's definition fixes ``log T`` (default here,
      ``log_term="t"`` reproduces the code).
    * [code] ``BinningUCB_Oracle`` splits ``[1, T]`` into ``nb_shifts`` equal phases; papergym restarts at
      the oracle's significant shifts. Its bonus uses ``log(max(phase pulls, 1))``; the default
      here is the log of the phase length (``log_term="t"`` reproduces the code).
    * The code adds ``1e-9`` to the counts in the bonus denominator; not needed here (every bin is
      pulled once before the index is used), so it is dropped.
    * The arm is taken from the agent's own record of the bin it chose, not re-derived from ``action``.

Implementation (speed): statistics are ``(n_runs, K^d)`` arrays of reward sums and counts; the UCB
index is kept in an array and only the entry of the bin pulled in each run is recomputed per round
(flat indexing), so ``act`` is one ``argmax`` and one table lookup. The mean is ``sum / count`` (not a
running average), so equal statistics give bit-identical indices and ties break the same way in every
run and in a brute-force recomputation.
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
    midpoints,
    n_runs,
    problem_dims,
    ucb_pull,
)
from papergym.validate import one_of, positive_float, positive_int

__all__ = ["BatchedBinningUCB", "BatchedBinningUCBOracle", "BinningUCB", "BinningUCBOracle"]


class BatchedBinningUCB:
    """``binning-ucb`` over ``len(seeds)`` independent runs (see the module docstring)."""

    LOG_TERMS = ("T", "t")

    def __init__(
        self, problem: Any, *, seeds: Sequence[Any], c: float = 1.0, bins: int | None = None, log_term: str = "T"
    ):
        self.problem = problem
        self.n_envs = n = n_runs(seeds)
        self.T, self.d = problem_dims(problem)
        self.c = positive_float(c, "c", allow_zero=True)
        self.log_term = one_of(log_term, "log_term", self.LOG_TERMS)
        self.K = binning_bins(self.T, self.d) if bins is None else positive_int(bins, "bins")  # bins per axis
        self.n_cells = C = self.K**self.d
        self._mid = midpoints(self.K, self.d)  # (C, d) bin midpoints: the played points
        self._log = math.log(max(self.T, 2))  # log T of the index
        self._sums = np.zeros((n, C))
        self._counts = np.zeros((n, C))
        self._ucb = np.full((n, C), np.inf)  # unpulled bins: +inf -> pulled first, in index order
        self._tmp = np.empty((n, C))
        self._sums1 = self._sums.reshape(-1)  # flat views: entry (i, k) is i * C + k
        self._counts1 = self._counts.reshape(-1)
        self._ucb1 = self._ucb.reshape(-1)
        self._rowoff = np.arange(n, dtype=np.int64) * C
        self._arm = np.zeros(n, dtype=np.int64)
        self._bonus = np.empty(n)
        self._one = np.ones(n)  # constant operands as arrays: numpy's scalar operands cost more
        self._log_n = np.full(n, self._log)
        self.t = 0  # rounds played

    def act(self, observations: Any) -> np.ndarray:
        if self.log_term == "t" and self.t >= self.n_cells:
            # anytime index of [code]: log(pulls so far), changes every round -> recompute all bins
            np.divide(self._log_t(), self._counts, out=self._tmp)
            np.sqrt(self._tmp, out=self._tmp)
            np.multiply(self._tmp, self.c, out=self._tmp)
            np.divide(self._sums, self._counts, out=self._ucb)
            np.add(self._ucb, self._tmp, out=self._ucb)
        # I_k = mean_k + c sqrt(log T / n_k); argmax, lowest index on ties
        self._arm = self._ucb.argmax(axis=1)
        return self._mid[self._arm]

    def _log_t(self) -> float:
        return math.log(max(self.t, 1))

    def update(self, actions: Any, rewards: Any, observations: Any) -> None:
        rewards = np.asarray(rewards, dtype=float)
        if rewards.shape != (self.n_envs,):
            raise ValueError(f"rewards must have shape ({self.n_envs},), got {rewards.shape}")
        flat = self._rowoff + self._arm  # the pulled bin of every run
        cnt = self._counts1[flat]
        np.add(cnt, self._one, out=cnt)
        s = self._sums1[flat]
        np.add(s, rewards, out=s)
        self._counts1[flat] = cnt
        self._sums1[flat] = s
        # refresh the index of the pulled bin only (the others are unchanged when log T is fixed):
        # I_k = s_k / n_k + c sqrt(log T / n_k)
        b = np.divide(self._log_n, cnt, out=self._bonus)
        np.sqrt(b, out=b)
        if self.c != 1.0:  # (multiplying by 1 is exact: skipped)
            b *= self.c
        np.divide(s, cnt, out=s)
        s += b
        self._ucb1[flat] = s
        self.t += 1

    def diagnostics(self) -> dict[str, Any]:
        return {"bins": [self.n_cells] * self.n_envs}


class BinningUCB(PerRunFromBatched):
    """Per-run ``binning-ucb`` (one row of :class:`BatchedBinningUCB`)."""

    batched_cls = BatchedBinningUCB


class BatchedBinningUCBOracle:
    """``binning-ucb-oracle`` over ``len(seeds)`` runs; ``oracles[i]`` is run ``i``'s oracle."""

    LOG_TERMS = ("phase", "t")

    def __init__(
        self,
        problem: Any,
        *,
        seeds: Sequence[Any],
        oracles: Sequence[Any],
        c: float = 1.0,
        log_term: str = "phase",
    ):
        self.problem = problem
        self.n_envs = n = n_runs(seeds)
        if oracles is None or len(oracles) != n:
            got = "None" if oracles is None else len(oracles)
            raise ValueError(f"oracles must hold one oracle per run ({n}), got {got}")
        self.T, self.d = problem_dims(problem)
        self.c = positive_float(c, "c", allow_zero=True)
        self.log_term = one_of(log_term, "log_term", self.LOG_TERMS)
        T, d = self.T, self.d

        # phases from the oracle's significant shifts: [tau_i, tau_{i+1}), tau_0 = 1
        self.shifts: list[tuple[int, ...]] = [
            self._check_shifts(o.significant_shifts(), T, i) for i, o in enumerate(oracles)
        ]
        events: dict[int, list[tuple[int, int, float]]] = {}
        first: list[tuple[int, float]] = []
        c_max = 1
        for row, taus in enumerate(self.shifts):
            starts = (1, *taus)
            ends = (*taus, T + 1)
            for j, (a, b) in enumerate(zip(starts, ends)):
                length = b - a  # l_i
                k = binning_bins(length, d)  # K_i = max(1, floor((l_i / log max(l_i, 2))^{1/(d+2)}))
                lg = math.log(max(length, 2))
                c_max = max(c_max, k**d)
                if j == 0:
                    first.append((k, lg))
                else:
                    events.setdefault(a, []).append((row, k, lg))
        self._events = {
            t: (np.array([e[0] for e in ev]), [e[1] for e in ev], [e[2] for e in ev]) for t, ev in events.items()
        }
        self.max_cells = c_max
        self._K = np.array([f[0] for f in first], dtype=np.int64)  # bins per axis in the current phase
        self._lg = np.array([f[1] for f in first])  # log max(l_i, 2) of the current phase
        self._sums = np.zeros((n, c_max))
        self._counts = np.zeros((n, c_max))
        self._valid = np.zeros((n, c_max), dtype=bool)
        self._ucb = np.empty((n, c_max))
        self._phase_pulls = np.zeros(n, dtype=np.int64)
        for row in range(n):
            self._reset_row(row, int(self._K[row]), float(self._lg[row]))
        self._tmp = np.empty((n, c_max))
        self._rowoff = np.arange(n, dtype=np.int64) * c_max
        self._arm = np.zeros(n, dtype=np.int64)
        self._restarts = np.zeros(n, dtype=np.int64)
        self.t = 0

    @staticmethod
    def _check_shifts(shifts: Any, T: int, run: int) -> tuple[int, ...]:
        taus = tuple(int(s) for s in shifts)
        if any(b <= a for a, b in zip(taus, taus[1:])) or any(s < 2 or s > T for s in taus):
            raise ValueError(
                f"oracles[{run}].significant_shifts() must be strictly increasing rounds in [2, T={T}] "
                f"(tau_0 = 1 excluded), got {taus}"
            )
        return taus

    def _reset_row(self, row: int, k: int, lg: float) -> None:
        """Start a new phase in run ``row``: K_i = k bins per axis, all statistics dropped."""
        cells = k**self.d
        self._K[row] = k
        self._lg[row] = lg
        self._sums[row] = 0.0
        self._counts[row] = 0.0
        self._valid[row] = False
        self._valid[row, :cells] = True
        self._ucb[row] = -np.inf  # cells beyond K_i^d never chosen
        self._ucb[row, :cells] = np.inf  # unpulled: +inf -> round robin in index order
        self._phase_pulls[row] = 0

    def act(self, observations: Any) -> np.ndarray:
        t = self.t + 1  # round being played
        ev = self._events.get(t)
        if ev is not None:  # t = tau_i for these runs: restart
            rows, ks, lgs = ev
            for row, k, lg in zip(rows.tolist(), ks, lgs):
                self._reset_row(row, k, lg)
            self._restarts[rows] += 1
        if self.log_term == "t":
            # [code] index: c sqrt(log max(phase pulls, 1) / n_k), recomputed for every bin
            lg = np.log(np.maximum(self._phase_pulls, 1).astype(float))[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                np.divide(lg, self._counts, out=self._tmp)
                np.sqrt(self._tmp, out=self._tmp)
                np.multiply(self._tmp, self.c, out=self._tmp)
                np.divide(self._sums, self._counts, out=self._ucb)
                np.add(self._ucb, self._tmp, out=self._ucb)
            self._ucb[self._counts == 0] = np.inf
            self._ucb[~self._valid] = -np.inf
        self._arm = self._ucb.argmax(axis=1)  # lowest index on ties
        return cell_midpoints(self._arm, self._K, self.d)

    def update(self, actions: Any, rewards: Any, observations: Any) -> None:
        rewards = np.asarray(rewards, dtype=float)
        if rewards.shape != (self.n_envs,):
            raise ValueError(f"rewards must have shape ({self.n_envs},), got {rewards.shape}")
        # I_k = mean_k + c sqrt(log max(l_i, 2) / n_k), refreshed for the pulled bin
        ucb_pull(self._counts, self._sums, self._ucb, self._rowoff + self._arm, rewards, self.c, self._lg)
        self._phase_pulls += 1
        self.t += 1

    def diagnostics(self) -> dict[str, Any]:
        return {
            "restarts": self._restarts.tolist(),
            "restart_times": [[s for s in taus if s <= self.t] for taus in self.shifts],
        }


class BinningUCBOracle(PerRunFromBatched):
    """Per-run ``binning-ucb-oracle`` (one row of :class:`BatchedBinningUCBOracle`); needs ``oracle=``."""

    batched_cls = BatchedBinningUCBOracle


register_agent(
    "binning-ucb",
    BinningUCB,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedBinningUCB,
    description="UCB on K = floor((T/log T)^{1/3}) equal bins, bin midpoints, never forgets ([code] BinningUCB)",
    defaults={"c": 1.0, "bins": None, "log_term": "T"},
)

register_agent(
    "binning-ucb-oracle",
    BinningUCBOracle,
    envs=[ENV_ID],
    role="oracle",
    batched_factory=BatchedBinningUCBOracle,
    description=(
        "Binning + UCB restarted at the oracle's significant shifts, K_i bins per phase ([code] BinningUCB_Oracle)"
    ),
    defaults={"c": 1.0, "log_term": "phase"},
)
