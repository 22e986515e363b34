"""BLiN: batched elimination on a dyadic partition -- baseline ``blin`` of NonStatLipschitz-v0.

Reference: Y. Feng, Z. Huang, T. Wang, *Lipschitz Bandits with Batched Feedback*, NeurIPS 2022
("BLiN", Batched Lipschitz Narrowing) [secondary]. papergym implements the simplified schedule of
``docs/papers/nonstat-lipschitz.md`` (tags: see docs/conventions.md), whose constants are [design]
(the paper's own edge-length sequence
``r_m``, tuned to a batch budget ``B``, is replaced by the plain dyadic one). Like the paper's method it
assumes a stationary mean function: in the non-stationary benchmark it is the "batched elimination
without restarts" reference.

Algorithm (one run; ``T`` = horizon, ``log T`` = ``log max(T, 2)``; cells are the dyadic cubes
``prod_m [c_m r, (c_m + 1) r]`` of ``[0,1]^d``, ``c`` integer coordinates)::

    k = 1; A = the 2^d cells of edge r_1 = 1/2                                    # start
    batch k:  r_k = 2^-k,  n_k = ceil(batch_const * log T / r_k^2)                 # (1)
              play every cell of A exactly n_k times (round-robin sweeps:
              A[0], A[1], ..., A[-1], A[0], ...; n_k sweeps)                       # (2)
    end of batch k:  mean(C) = average reward of C *in this batch*
              best = max_C mean(C);  A <- {C in A : mean(C) >= best - elim_const * r_k}    # (3)
              if k < max_depth: A <- the 2^d children of every survivor (edge r_{k+1}),
                                k <- k + 1, next batch                              # (4)
              else: final phase                                                     # (5)
    final phase: play the surviving cells of edge r_{max_depth} round-robin forever (no more
              elimination or splitting).

Choices [design] (each a constructor argument where it is a number or a switch):

* ``max_depth`` (default ``None``): the largest ``k >= 1`` whose per-cell quota ``n_k`` fits in the
  horizon (``n_k <= T``); finer cells are "smaller than needed" -- not even one of them could be
  sampled ``n_k`` times. At least one batch (``k = 1``) is always run.
* When the horizon ends inside a batch the batch simply continues (the agent does not shorten it).
* Inside a batch the cells are visited in round-robin sweeps (interleaved, so every cell sees the
  same rounds of a drifting environment), in the order of ``A``: survivors keep their relative order
  and each is replaced by its ``2^d`` children in C order of the offset bits (last axis fastest).
  The initial order is C order of the cell coordinates, so for ``d = 1`` cells are sorted by position.
* ``play_point``: ``"center"`` (default; deterministic, like ``binning-ucb``'s bin midpoints) plays
  the cell centre; ``"uniform"`` plays ``(c + U) r`` with ``U ~ U[0,1)^d`` from the agent's own stream
  (``d`` numbers per round, drawn in every round, also in the final phase).
* Elimination (3) keeps ties (a cell is dropped only when strictly below ``best - elim_const r_k``),
  so the best cell always survives and ``A`` is never empty.

Hyperparameters:

================  ==========  ==============================================================
``batch_const``   16.0        ``n_k = ceil(16 log T / r_k^2)`` [design]
``elim_const``    4.0         drop if ``mean < best - 4 r_k`` [design]
``max_depth``     None        finest batch depth, ``None`` = largest ``k`` with ``n_k <= T`` [design]
``play_point``    "center"    ``"center"`` or ``"uniform"`` in the cell [design]
================  ==========  ==============================================================

Note: with rewards in ``[0, 1]``, ``elim_const = 4`` cannot eliminate anything while ``4 r_k >= 1``,
i.e. in the batches ``k = 1, 2``; these [design] constants are kept as they are (documented, tunable).

Implementation: per-run states in padded numpy arrays (cells ``(n_runs, capacity, d)``); a step is a
few vectorised gathers / scatters over the runs; batch ends (rare) are processed run by run. Runs share
no state, and every run consumes its own random stream, so a run's result does not depend on which
runs it is batched with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.envs.spec import UniformStream
from papergym.validate import one_of, positive_float, positive_int

__all__ = ["BatchedBLiN", "BLiN", "blin_quota", "blin_max_depth", "PLAY_POINTS"]

ENV_ID = "NonStatLipschitz-v0"
PLAY_POINTS = ("center", "uniform")


def blin_quota(k: int, horizon: int, batch_const: float = 16.0) -> int:
    """Per-cell plays in batch ``k`` (1): ``ceil(batch_const * log max(T, 2) / r_k^2)``, ``r_k = 2^-k``."""
    return int(math.ceil(batch_const * math.log(max(int(horizon), 2)) * 4.0**k))


def blin_max_depth(horizon: int, batch_const: float = 16.0) -> int:
    """Default ``max_depth``: the largest ``k >= 1`` with ``blin_quota(k) <= T`` (at least 1)."""
    k = 1
    while blin_quota(k + 1, horizon, batch_const) <= horizon:
        k += 1
    return k


class BatchedBLiN:
    """BLiN over ``len(seeds)`` independent runs (see the module docstring).

    Parameters
    ----------
    problem:
        ``ProblemSpec`` of NonStatLipschitz-v0 (uses ``horizon`` and ``d``).
    seeds:
        One seed per run (used only with ``play_point="uniform"``).
    batch_const, elim_const, max_depth, play_point:
        Hyperparameters, see the module docstring.
    record_history:
        Keep, per run, one record per finished batch (depth, cells, counts, sums, kept mask); used by
        the tests and by ``history``; off by default.
    """

    def __init__(
        self,
        problem: Any,
        *,
        seeds: Sequence[Any],
        batch_const: float = 16.0,
        elim_const: float = 4.0,
        max_depth: int | None = None,
        play_point: str = "center",
        record_history: bool = False,
    ):
        self.problem = problem
        self.n_envs = n = len(seeds)
        if n < 1:
            raise ValueError("seeds must contain at least one seed")
        self.d = d = int(problem.params.get("d", 1))
        self.horizon = int(problem.horizon)
        if self.horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {self.horizon}")
        if d < 1:
            raise ValueError(f"d must be >= 1, got {d}")
        self.batch_const = positive_float(batch_const, "batch_const")
        self.elim_const = positive_float(elim_const, "elim_const", allow_zero=True)
        one_of(play_point, "play_point", PLAY_POINTS)
        if max_depth is None:
            max_depth = blin_max_depth(self.horizon, self.batch_const)
        self.max_depth = positive_int(max_depth, "max_depth")
        self.play_point = play_point
        self.record_history = bool(record_history)
        self._stream = UniformStream(seeds) if play_point == "uniform" else None

        # (1)-(2) start: depth 1, all 2^d cells of edge 1/2, in C order of their coordinates
        k0 = 1
        start = np.array(np.unravel_index(np.arange(2 ** (d * k0)), (2**k0,) * d)).T  # (2^d, d)
        cap = start.shape[0]
        self.cells = np.zeros((n, cap, d), dtype=np.int64)
        self.cells[:, : start.shape[0]] = start
        self.n_cells = np.full(n, start.shape[0], dtype=np.int64)
        self.depth = np.full(n, k0, dtype=np.int64)
        self.quota = np.full(n, blin_quota(k0, self.horizon, self.batch_const), dtype=np.int64)
        self.pos = np.zeros(n, dtype=np.int64)  # rounds played in the current batch / final phase
        self.final = np.zeros(n, dtype=bool)
        self.batches_done = np.zeros(n, dtype=np.int64)
        self.counts = np.zeros((n, cap), dtype=np.int64)
        self.sums = np.zeros((n, cap))
        self.chosen = np.zeros(n, dtype=np.int64)
        self._rows = np.arange(n)
        self.history: list[list[dict[str, Any]]] = [[] for _ in range(n)]

    # ------------------------------------------------------------------ protocol
    def act(self, observations: Any = None) -> np.ndarray:
        # (2) round-robin: the cell at position pos mod |A|
        j = self.pos % self.n_cells
        self.chosen = j
        c = self.cells[self._rows, j].astype(np.float64)  # (n, d)
        r = np.ldexp(1.0, -self.depth)[:, None]  # 2^-k, exact
        if self._stream is None:
            off = 0.5
        else:
            off = self._stream.take(self.d)  # (n, d), one row per run from its own stream
        return (c + off) * r

    def update(self, actions: Any, rewards: Any, observations: Any = None) -> None:
        rewards = np.asarray(rewards, dtype=np.float64).reshape(-1)
        if rewards.shape[0] != self.n_envs:
            raise ValueError(f"rewards must have shape ({self.n_envs},), got {np.shape(rewards)}")
        j = self.chosen
        self.counts[self._rows, j] += 1
        self.sums[self._rows, j] += rewards
        self.pos += 1
        done = np.flatnonzero(~self.final & (self.pos == self.n_cells * self.quota))
        for i in done:
            self._end_batch(int(i))

    # ------------------------------------------------------------------ batch end
    def _end_batch(self, i: int) -> None:
        m = int(self.n_cells[i])
        k = int(self.depth[i])
        counts = self.counts[i, :m]
        sums = self.sums[i, :m]
        means = sums / counts  # every cell was played quota >= 1 times
        r = math.ldexp(1.0, -k)
        keep = ~(means < means.max() - self.elim_const * r)  # (3); ties kept
        if self.record_history:
            self.history[i].append(
                {
                    "depth": k,
                    "cells": self.cells[i, :m].copy(),
                    "counts": counts.copy(),
                    "sums": sums.copy(),
                    "keep": keep.copy(),
                }
            )
        survivors = self.cells[i, :m][keep]
        self.batches_done[i] += 1
        if k < self.max_depth:
            # (4) split every survivor into its 2^d children (offset bits in C order)
            bits = np.array(np.unravel_index(np.arange(2**self.d), (2,) * self.d)).T  # (2^d, d)
            children = (2 * survivors[:, None, :] + bits[None, :, :]).reshape(-1, self.d)
            self._set_cells(i, children)
            self.depth[i] = k + 1
            self.quota[i] = blin_quota(k + 1, self.horizon, self.batch_const)
        else:
            # (5) final phase: survivors of the last batch, round-robin, no more batches
            self._set_cells(i, survivors)
            self.final[i] = True
        self.pos[i] = 0

    def _set_cells(self, i: int, cells: np.ndarray) -> None:
        m = cells.shape[0]
        if m > self.cells.shape[1]:
            new_cap = max(m, 2 * self.cells.shape[1])
            grow = new_cap - self.cells.shape[1]
            self.cells = np.concatenate([self.cells, np.zeros((self.n_envs, grow, self.d), np.int64)], axis=1)
            self.counts = np.concatenate([self.counts, np.zeros((self.n_envs, grow), np.int64)], axis=1)
            self.sums = np.concatenate([self.sums, np.zeros((self.n_envs, grow))], axis=1)
        self.cells[i, :m] = cells
        self.n_cells[i] = m
        self.counts[i] = 0
        self.sums[i] = 0.0

    # ------------------------------------------------------------------ inspection
    def active_cells(self, i: int) -> tuple[int, np.ndarray]:
        """``(depth k, (m, d) integer coordinates)`` of run ``i``'s active cells (edge ``2^-k``)."""
        return int(self.depth[i]), self.cells[i, : self.n_cells[i]].copy()

    def diagnostics(self) -> dict[str, Any]:
        return {
            "depth": [int(k) for k in self.depth],
            "n_cells": [int(m) for m in self.n_cells],
            "batches": [int(b) for b in self.batches_done],
            "final_phase": [bool(f) for f in self.final],
        }


class BLiN(PerRunFromBatched):
    """Per-run BLiN agent: one row of :class:`BatchedBLiN` (bit-identical by construction)."""

    batched_cls = BatchedBLiN


DEFAULTS = {"batch_const": 16.0, "elim_const": 4.0, "max_depth": None, "play_point": "center"}

register_agent(
    "blin",
    BLiN,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedBLiN,
    description="BLiN-style batched elimination on a dyadic partition (Feng et al. 2022): batch k plays "
    "each cell ceil(16 log T 4^k) times, drops cells below best - 4 2^-k, splits survivors",
    defaults=DEFAULTS,
)
