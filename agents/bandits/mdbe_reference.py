"""MDBE as the paper writes it: a readable reference for :mod:`papergym.agents.bandits.mdbe`.

N. Nguyen, S. Gaucher, C. Vernade, *Non-Stationary Lipschitz Bandits*, NeurIPS 2025 (arXiv 2505.18871),
Multi-Depth Bin Elimination. This module transcribes the algorithm directly, one run, dimension ``d = 1``:
dense per-round estimate vectors, every window summed from cumulative sums, every ordered pair of cells
compared. The step numbers in the comments (``step 1`` .. ``step 10``) are those of the algorithm summary
in the docstring of :mod:`papergym.agents.bandits.mdbe`, which also gives the readings of the paper and of
the official code (``nguyenicolas/NS_Lipschitz_Bandits``) that both implementations follow, and the
hyperparameters' provenance (tags: docs/conventions.md; the environment and results:
docs/papers/nonstat-lipschitz.md).

:class:`MDBEReference` draws its uniforms from the same per-run xoshiro256** generator, in the same order,
as the fast numba kernels of :class:`~papergym.agents.bandits.mdbe.BatchedMDBE`, so for the same seed and
rewards the two take identical actions and declare the same shifts (checked by
``tests/agents/bandits/test_mdbe_reference.py``). It is slow (``O(T)`` memory per depth and
``O(#cells^2 log n)`` work per round) and not registered as an agent: it exists to be read and to check
the fast implementation against.

Notation: depth ``j >= 1`` of the dyadic tree over ``[0, 1]`` holds ``2^{j-1}`` cells of width
``2^{-(j-1)}`` (depth 1 = the whole interval); cell ``b`` of depth ``j`` is ``[b 2^{-(j-1)}, (b+1) 2^{-(j-1)})``
and its descendants at depth ``j' > j`` are the cells ``b 2^{j'-j} .. (b+1) 2^{j'-j} - 1``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from papergym.agents.rng import rand_uniform, rng_state

__all__ = ["MDBEReference"]


class MDBEReference:
    """One run of MDBE in dimension 1, transcribed from the paper (see the module docstring).

    Parameters
    ----------
    horizon:
        ``T`` (the threshold uses ``log T``; replay offsets beyond ``T`` are never drawn).
    seed:
        The run's seed (anything :func:`papergym.agents.rng.rng_state` accepts; the same value as
        ``BatchedMDBE(seeds=[seed])`` gives the same actions).
    c0, start_grid, code_compat, replay_schedule, growth, min_depth:
        As :class:`~papergym.agents.bandits.mdbe.BatchedMDBE` (``growth`` default ``2^{d+2} = 8``).

    Protocol: :meth:`act` returns ``X_t`` (a float in ``[0, 1]``), :meth:`update` takes ``Y_t``;
    ``restarts`` lists the rounds at which a significant shift was declared.
    """

    def __init__(
        self,
        horizon: int,
        seed: Any,
        c0: float = 0.12,
        start_grid: str = "dyadic",
        code_compat: bool = False,
        replay_schedule: str = "absolute-round",
        growth: int = 8,
        min_depth: int = 2,
    ):
        if start_grid not in ("dyadic", "all"):
            raise ValueError(f"start_grid must be 'dyadic' or 'all', got {start_grid!r}")
        if replay_schedule not in ("absolute-round", "block-offset"):
            raise ValueError(f"replay_schedule must be 'absolute-round' or 'block-offset', got {replay_schedule!r}")
        self.T, self.c0, self.grid, self.compat = int(horizon), float(c0), start_grid, bool(code_compat)
        self.g, self.min_depth = int(growth), int(min_depth)
        self.absolute = replay_schedule == "absolute-round"  # replay starts keyed by absolute round
        state = rng_state(seed)
        self.rand = lambda: rand_uniform(state)
        self.t, self.restarts = 1, []
        self.new_block(1, self.min_depth + 1)  # steps 1-2: an episode starts with a block at min_depth + 1
        self.round_start()

    # ------------------------------------------------------------------ protocol
    def act(self) -> float:
        """``X_t``, the action of the current round."""
        return self.x

    def new_block(self, t: int, m: int) -> None:
        """Step 2: a depth-``m`` block starts at round ``t`` (lasting ``g^m`` rounds); step 3: its replays."""
        g = self.g
        self.m, self.t0 = m, t
        self.active = {j: np.zeros(2 ** (j - 1), bool) for j in range(1, m + 1)}
        self.active[m][:] = True  # every depth-m cell is active
        self.master = np.ones(2 ** (m - 1), bool)  # B_MASTER <- the depth-m cells
        self.on, self.hist = {m: (t, t + g**m)}, {m: []}  # active depths: (s_start, end); estimates
        # step 3: for offsets s = 2 .. g^m - 1, depths j = m-1 .. min_depth (finest first): a depth-j replay
        # starts at s with probability sqrt(g^j / (s + 1)) if g^j divides s; at most one start per s
        max_off = min(g**m, self.T + 1) if self.absolute else min(g**m, self.T - t + 1)
        step = g**self.min_depth
        self.sched = []
        for s in range(step, max_off, step):
            for j in range(m - 1, self.min_depth - 1, -1):
                if s % g**j == 0 and self.rand() < math.sqrt(g**j / (s + 1)):
                    self.sched.append((s, j))
                    break

    def round_start(self) -> None:
        """Step 4 (replays ending / starting now) and step 5 (``P_t`` and the draw of ``X_t``)."""
        t, m, g = self.t, self.m, self.g
        # step 4: replays ending now are deactivated (code_compat: the coarsest depth whose schedule has an
        # entry at absolute round t - g^j, whether or not it started in this block)
        if self.compat:
            ended = [j for j in range(self.min_depth, m) if 0 <= t - g**j < g**m and (t - g**j, j) in self.sched][:1]
        else:
            ended = [j for j, (_, e) in self.on.items() if j != m and e == t]
        for j in ended:
            self.on.pop(j, None)
            self.active[j][:] = False
        if ended and len(self.on) == 1:  # only depth m left: its active set is restored to B_MASTER
            self.active[m] = self.master.copy()
        # a replay starting now reactivates *all* depth-j cells (evicted regions included); its window starts
        key = t if self.absolute else t - self.t0
        for s, j in self.sched:
            if s == key:
                self.on[j], self.hist[j] = (t, t + g**j), []
                self.active[j][:] = True
        # step 5: P_t(B) = product of the uniform split probabilities along the descent to B: uniform among
        # the active cells of the coarsest active depth, then among the active descendants at each finer one
        D = sorted(self.on)
        self.P = {D[0]: np.where(self.active[D[0]], 1.0 / self.active[D[0]].sum(), 0.0)}
        for ja, jb in zip(D[:-1], D[1:]):
            r, Pb = 2 ** (jb - ja), np.zeros(2 ** (jb - 1))
            for a in np.flatnonzero(self.P[ja] > 0):
                desc = [b for b in range(a * r, (a + 1) * r) if self.active[jb][b]]
                for b in desc:
                    Pb[b] = self.P[ja][a] / len(desc)
            self.P[jb] = Pb
        # the descent itself, stopping where a cell has no active descendant; X_t uniform in the final cell
        j = D[0]
        lst = np.flatnonzero(self.active[j])
        a = lst[int(self.rand() * len(lst))]
        for j2 in D[1:]:
            if self.compat and j2 != j + 1:  # the official code follows direct children only
                break
            r = 2 ** (j2 - j)
            desc = [b for b in range(a * r, (a + 1) * r) if self.active[j2][b]]
            if not desc:
                break
            a, j = desc[int(self.rand() * len(desc))], j2
        self.fin = (j, a)
        self.x = (a + self.rand()) / 2 ** (j - 1)

    def threshold(self, n: int, j: int) -> float:
        """Step 7: ``c0 log(T) sqrt(max(n 2^j, 4^j)) + 4 n / 2^j`` for a window of ``n`` rounds at depth ``j``."""
        return self.c0 * math.log(self.T) * math.sqrt(max(n * 2**j, 4**j)) + 4 * n / 2**j

    def update(self, y: float) -> None:
        """Steps 6-10 with the reward ``Y_t`` of ``X_t``, then steps 4-5 of the next round."""
        t, m = self.t, self.m
        jf, af = self.fin
        # step 6: mu_hat_t(B) = Y_t 1{X_t in B} / P_t(B) for every active cell B of every active depth
        for j in self.on:
            b = (
                af >> (jf - j)
                if j <= jf
                else min(max(int(self.x * 2 ** (j - 1)), af << (j - jf)), ((af + 1) << (j - jf)) - 1)
            )
            v = np.zeros(2 ** (j - 1))
            if self.active[j][b] and self.P[j][b] > 0:
                v[b] = y / self.P[j][b]
            self.hist[j].append(v)
        # step 7: at every active depth j, evict B' (and its descendants) if for some window [s1, t]
        # sum_{s=s1}^{t} (mu_hat_s(B) - mu_hat_s(B')) > threshold(t - s1 + 1, j) for an active B;
        # no test while t - s_start <= 2; all tests use the active sets at the start of this step
        evict = []
        for j, (s0, _) in self.on.items():
            p = t - s0
            if p <= 2:
                continue
            e = p - int(self.compat)  # window end (position from s_start): t, or t - 1 as the official code
            C = np.vstack([np.zeros(2 ** (j - 1)), np.cumsum(np.array(self.hist[j]), axis=0)])
            if self.grid == "all":
                starts = range(e)
            else:  # e - s1 a power of two, plus the whole window
                starts = sorted({e - 2**k for k in range(40) if e - 2**k >= 0} | {0})
            A = np.flatnonzero(self.active[j])
            for q1 in starts:
                W, n = C[e + 1] - C[q1], e - q1 + 1
                thr = self.threshold(n, j)
                evict += [(j, b2) for b in A for b2 in A if W[b] - W[b2] > thr]
        for j, b in evict:
            for j2 in range(j, m + 1):
                r = 2 ** (j2 - j)
                self.active[j2][b * r : (b + 1) * r] = False
        # step 8: B_MASTER <- B_MASTER ∩ active depth-m cells
        self.master &= self.active[m]
        self.t += 1
        if not self.master.any():  # step 9: a significant shift; a new episode (step 1) starts next round
            self.restarts.append(t)
            self.new_block(self.t, self.min_depth + 1)
        elif self.t == self.t0 + self.g**m:  # step 10: block end, the next block is one depth finer
            self.new_block(self.t, m + 1)
        if self.t <= self.T:
            self.round_start()
