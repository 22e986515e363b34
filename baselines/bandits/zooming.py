"""Zooming algorithm (adaptive discretisation) -- baseline ``zooming`` of NonStatLipschitz-v0.

Reference: R. Kleinberg, A. Slivkins, E. Upfal, *Multi-armed bandits in metric spaces*, STOC 2008
(the "zooming algorithm"); [secondary]; described in ``docs/papers/nonstat-lipschitz.md``. The
algorithm assumes a *stationary* mean function and never forgets; in the non-stationary benchmark it
is the "adaptive discretisation without restarts" reference.

Algorithm (one run; ``T`` = horizon, ``n(x)`` = pulls of active point ``x``, ``mean(x)`` their mean
reward, ``mean(x) = 0`` while ``n(x) = 0``)::

    r(x)   = sqrt(radius_const * log T / (1 + n(x)))                 # confidence radius   (1)
    B(x)   = { y in [0,1]^d : ||y - x||_inf < r(x) }                 # open ball           (2)
    activation: while some y in [0,1]^d is not covered by the union of B(x), x active,
                activate one such y (n(y) = 0)                       # covering invariant  (3)
    play   x_t = argmax_{x active} mean(x) + bonus_mult * r(x)       # selection rule      (4)

Activation (3) is run at construction (from the empty set) and after every ``update`` (only the
played point's ball shrinks, so only the two shells ``B_old(x_t) \\ B_new(x_t)`` can become
uncovered); the covering invariant therefore holds between any ``update`` and the next ``act``.

Which uncovered point is activated [design]:

* ``d = 1`` (exact): balls are the open intervals ``(l, u)`` with float64 endpoints
  ``l = x - r``, ``u = x + r``; the activated point is the *smallest* uncovered point of ``[0, 1]``
  (the uncovered set is closed, so its minimum exists; it is ``0`` or some right endpoint ``u``),
  found exactly: starting from the left end of a shell, jump to the largest right end ``u`` of the
  balls containing the current point until no ball contains it. With the default constants
  ``r = sqrt(2 log T) > 1`` for a fresh point, so one activation re-covers ``[0, 1]``.
* ``d > 1`` (grid): coverage is maintained on the ``G^d`` cell midpoints ``((i + 1/2) / G)_k``
  (``G = cover_grid``, default ``max(2, round(4096 ** (1/d)))``: about 4096 points) by per-point
  cover counts, updated incrementally on the shell of the shrinking ball; the activated point is the
  uncovered grid point of smallest flat (C-order) index. Coverage of the continuum between grid
  points is only guaranteed up to the grid spacing ``1/G``.

Ties in (4) go to the earliest activated point (smallest index) [design]. The agent is deterministic:
it draws no random numbers (the seed only fixes the number of runs).

Hyperparameters (every one a constructor argument):

==================  =========  ============================================================
``radius_const``    2.0        the 2 in ``r = sqrt(2 log T / (1 + n))`` [secondary]
``bonus_mult``      2.0        index ``mean + 2 r`` [secondary]
``cover_grid``      None       ``d > 1`` only: grid points per axis for the covering test [design]
==================  =========  ============================================================

Deviations / choices: ``log T`` is ``log max(T, 2)`` so that ``T = 1`` still has positive radii
[design]; the "any uncovered point" of the paper is made deterministic as described above [design];
the mean of a never-pulled point is 0 (it is pulled first anyway: its radius is the largest) [design].

Implementation: per-run states in padded arrays ``(n_runs, capacity)`` (capacity doubles when
needed), per-step work in ``numba`` kernels looping over the runs; a run's result never depends on
which runs it is batched with (runs share no state).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.validate import positive_float

__all__ = ["BatchedZooming", "Zooming", "zooming_radius"]

ENV_ID = "NonStatLipschitz-v0"


def zooming_radius(n: Any, horizon: int, radius_const: float = 2.0) -> np.ndarray:
    """Confidence radius (1): ``sqrt(radius_const * log max(T, 2) / (1 + n))`` (elementwise)."""
    log_t = math.log(max(int(horizon), 2))
    return np.sqrt(radius_const * log_t / (1.0 + np.asarray(n, dtype=np.float64)))


# ------------------------------------------------------------------------------------ numba kernels
@njit(cache=True)
def _select(cnt, sums, n_active, c_log, bonus_mult, chosen):
    """Selection rule (4) for every run; ties -> smallest index."""
    for i in range(cnt.shape[0]):
        best = -np.inf
        arg = 0
        for j in range(n_active[i]):
            n = cnt[i, j]
            mean = sums[i, j] / n if n > 0 else 0.0
            idx = mean + bonus_mult * np.sqrt(c_log / (1.0 + n))
            if idx > best:
                best = idx
                arg = j
        chosen[i] = arg


@njit(cache=True)
def _smallest_uncovered_1d(x, cnt, k, c_log, a, b):
    """Smallest point of [a, b] outside every open interval (x_j - r_j, x_j + r_j), j < k; or -1.

    Starting from ``cur = a``: while some interval contains ``cur`` (``l < cur < u``, float64
    endpoints as everywhere), jump to the largest such ``u``; the first ``cur`` that no interval
    contains is the smallest uncovered point (the uncovered set is closed: open balls).
    """
    cur = a
    while cur <= b:
        nxt = cur
        for j in range(k):
            r = np.sqrt(c_log / (1.0 + cnt[j]))
            if x[j, 0] - r < cur:
                u = x[j, 0] + r
                if u > nxt:
                    nxt = u
        if nxt == cur:  # nothing contains cur
            return cur
        cur = nxt
    return -1.0


@njit(cache=True)
def _cover_1d(x, cnt, sums, n_active, i, c_log, a, b):
    """Activation rule (3) for run ``i`` on the segment [a, b] of [0, 1]; returns #activations."""
    a = max(a, 0.0)
    b = min(b, 1.0)
    if a > b:
        return 0
    added = 0
    while True:
        p = _smallest_uncovered_1d(x[i], cnt[i], n_active[i], c_log, a, b)
        if p < 0.0:
            return added
        k = n_active[i]
        x[i, k, 0] = p
        cnt[i, k] = 0
        sums[i, k] = 0.0
        n_active[i] = k + 1
        added += 1


@njit(cache=True)
def _update_1d(x, cnt, sums, n_active, chosen, rewards, c_log):
    """Record the rewards, then re-establish the covering invariant on the two shells."""
    for i in range(x.shape[0]):
        j = chosen[i]
        xj = x[i, j, 0]
        r_old = np.sqrt(c_log / (1.0 + cnt[i, j]))
        cnt[i, j] += 1
        sums[i, j] += rewards[i]
        r_new = np.sqrt(c_log / (1.0 + cnt[i, j]))
        l_old, l_new = xj - r_old, xj - r_new
        u_new, u_old = xj + r_new, xj + r_old
        # left shell first: its points are smaller than the right shell's
        _cover_1d(x, cnt, sums, n_active, i, c_log, l_old, l_new)
        _cover_1d(x, cnt, sums, n_active, i, c_log, u_new, u_old)


# --- d > 1: cover counts on a grid of cell midpoints


@njit(cache=True)
def _box_range(g, c, r, lo, hi):
    """Per axis, the index range [lo, hi] of the grid coordinates g_i = (i + 1/2)/G with
    c - r < g_i < c + r (empty when lo > hi); float64 comparisons decide, the formula only guesses."""
    G = g.shape[0]
    for k in range(c.shape[0]):
        l = c[k] - r
        u = c[k] + r
        a = min(max(int(np.ceil(l * G - 0.5)), 0), G)
        while a > 0 and g[a - 1] > l:
            a -= 1
        while a < G and not (g[a] > l):
            a += 1
        bb = min(max(int(np.floor(u * G - 0.5)), -1), G - 1)
        while bb < G - 1 and g[bb + 1] < u:
            bb += 1
        while bb >= 0 and not (g[bb] < u):
            bb -= 1
        lo[k] = a
        hi[k] = bb


@njit(cache=True)
def _add_box(counts, G, lo, hi, delta, idx, zeros, nz):
    """counts[p] += delta for the grid points p of the index box [lo, hi]; points whose count drops
    to 0 are appended to ``zeros``. ``idx`` is scratch (length d). Returns the new nz."""
    d = lo.shape[0]
    for k in range(d):
        if lo[k] > hi[k]:
            return nz
        idx[k] = lo[k]
    while True:
        flat = 0
        for k in range(d):
            flat = flat * G + idx[k]
        counts[flat] += delta
        if counts[flat] == 0:
            zeros[nz] = flat
            nz += 1
        k = d - 1  # odometer, last axis fastest
        while k >= 0:
            idx[k] += 1
            if idx[k] <= hi[k]:
                break
            idx[k] = lo[k]
            k -= 1
        if k < 0:
            return nz


@njit(cache=True)
def _sub_shell(counts, G, lo_o, hi_o, lo_n, hi_n, plo, phi, idx, zeros):
    """counts -= 1 on the grid points of box_old minus box_new (box_new inside box_old), enumerated as
    disjoint pieces: axis k outside the new range, axes < k inside it, axes > k in the old range."""
    d = lo_o.shape[0]
    nz = 0
    empty_new = False
    for k in range(d):
        if lo_n[k] > hi_n[k]:
            empty_new = True
    if empty_new:
        return _add_box(counts, G, lo_o, hi_o, -1, idx, zeros, 0)
    for k in range(d):
        for m in range(d):
            if m < k:
                plo[m] = lo_n[m]
                phi[m] = hi_n[m]
            else:
                plo[m] = lo_o[m]
                phi[m] = hi_o[m]
        # below the new range on axis k
        plo[k] = lo_o[k]
        phi[k] = lo_n[k] - 1
        nz = _add_box(counts, G, plo, phi, -1, idx, zeros, nz)
        # above the new range on axis k
        plo[k] = hi_n[k] + 1
        phi[k] = hi_o[k]
        nz = _add_box(counts, G, plo, phi, -1, idx, zeros, nz)
    return nz


@njit(cache=True)
def _activate_grid(x, cnt, sums, n_active, counts, i, g, c_log, zeros, nz):
    """Activation rule (3) on the grid for run ``i``: candidates are the grid points in ``zeros``."""
    d = x.shape[2]
    G = g.shape[0]
    r0 = np.sqrt(c_log)
    lo = np.empty(d, np.int64)
    hi = np.empty(d, np.int64)
    idx = np.empty(d, np.int64)
    added = 0
    while True:
        best = -1
        for q in range(nz):
            f = zeros[q]
            if counts[i, f] == 0 and (best < 0 or f < best):
                best = f
        if best < 0:
            return added
        k = n_active[i]
        f = best
        for ax in range(d - 1, -1, -1):
            x[i, k, ax] = g[f % G]
            f //= G
        cnt[i, k] = 0
        sums[i, k] = 0.0
        n_active[i] = k + 1
        added += 1
        _box_range(g, x[i, k], r0, lo, hi)
        _add_box(counts[i], G, lo, hi, 1, idx, zeros, 0)  # +1: never hits 0


@njit(cache=True)
def _update_grid(x, cnt, sums, n_active, counts, chosen, rewards, g, c_log, zeros):
    d = x.shape[2]
    G = g.shape[0]
    lo_o = np.empty(d, np.int64)
    hi_o = np.empty(d, np.int64)
    lo_n = np.empty(d, np.int64)
    hi_n = np.empty(d, np.int64)
    plo = np.empty(d, np.int64)
    phi = np.empty(d, np.int64)
    idx = np.empty(d, np.int64)
    for i in range(x.shape[0]):
        j = chosen[i]
        r_old = np.sqrt(c_log / (1.0 + cnt[i, j]))
        cnt[i, j] += 1
        sums[i, j] += rewards[i]
        r_new = np.sqrt(c_log / (1.0 + cnt[i, j]))
        _box_range(g, x[i, j], r_old, lo_o, hi_o)
        _box_range(g, x[i, j], r_new, lo_n, hi_n)
        nz = _sub_shell(counts[i], G, lo_o, hi_o, lo_n, hi_n, plo, phi, idx, zeros)
        if nz > 0:
            _activate_grid(x, cnt, sums, n_active, counts, i, g, c_log, zeros, nz)


# ------------------------------------------------------------------------------------------ agents
class BatchedZooming:
    """Zooming algorithm over ``len(seeds)`` independent runs (see the module docstring).

    Parameters
    ----------
    problem:
        ``ProblemSpec`` of NonStatLipschitz-v0 (uses ``horizon`` and ``d``).
    seeds:
        One seed per run (unused: the algorithm is deterministic; only their number matters).
    radius_const, bonus_mult, cover_grid:
        Hyperparameters, see the module docstring.
    """

    def __init__(
        self,
        problem: Any,
        *,
        seeds: Sequence[Any],
        radius_const: float = 2.0,
        bonus_mult: float = 2.0,
        cover_grid: int | None = None,
    ):
        self.problem = problem
        self.n_envs = len(seeds)
        if self.n_envs < 1:
            raise ValueError("seeds must contain at least one seed")
        self.d = int(problem.params.get("d", 1))
        self.horizon = int(problem.horizon)
        if self.horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {self.horizon}")
        if self.d < 1:
            raise ValueError(f"d must be >= 1, got {self.d}")
        self.radius_const = positive_float(radius_const, "radius_const")
        self.bonus_mult = positive_float(bonus_mult, "bonus_mult", allow_zero=True)
        self.c_log = self.radius_const * math.log(max(self.horizon, 2))  # radius_const * log T
        r0 = math.sqrt(self.c_log)
        n = self.n_envs
        if self.d == 1:
            if cover_grid is not None:
                raise ValueError("cover_grid is only used for d > 1 (d = 1 is covered exactly); leave it None")
            self.cover_grid = None
            # activations per update <= 2 (floor(1/r0) + 1): each one covers at least [p, p + r0)
            self._max_new = 2 * (int(math.floor(1.0 / r0)) + 2)
        else:
            G = int(round(4096 ** (1.0 / self.d))) if cover_grid is None else int(cover_grid)
            G = max(G, 2) if cover_grid is None else G
            if G < 1:
                raise ValueError(f"cover_grid must be a positive integer, got {cover_grid!r}")
            if G**self.d > 2**24:
                raise ValueError(f"cover_grid**d = {G}**{self.d} is too large (max 2**24 grid points)")
            self.cover_grid = G
            self._grid = (np.arange(G) + 0.5) / G
            # a grid point is activated at most once (its own ball always covers it): G**d points in all
            self._max_new = 0
            self._counts = np.zeros((n, G**self.d), dtype=np.int64)
            self._zeros = np.empty(G**self.d, dtype=np.int64)
        cap = max(16, 2 * self._max_new) if self.d == 1 else self.cover_grid**self.d
        self.x = np.zeros((n, cap, self.d))
        self.cnt = np.zeros((n, cap), dtype=np.int64)
        self.sums = np.zeros((n, cap))
        self.n_active = np.zeros(n, dtype=np.int64)
        self.chosen = np.zeros(n, dtype=np.int64)
        # initial activation from the empty set: the whole of [0,1]^d is uncovered
        if self.d == 1:
            for i in range(n):
                _cover_1d(self.x, self.cnt, self.sums, self.n_active, i, self.c_log, 0.0, 1.0)
        else:
            all_pts = np.arange(self.cover_grid**self.d, dtype=np.int64)
            for i in range(n):
                self._zeros[:] = all_pts
                _activate_grid(
                    self.x,
                    self.cnt,
                    self.sums,
                    self.n_active,
                    self._counts,
                    i,
                    self._grid,
                    self.c_log,
                    self._zeros,
                    all_pts.shape[0],
                )

    # ------------------------------------------------------------------ helpers
    def _ensure_capacity(self) -> None:
        need = int(self.n_active.max()) + self._max_new
        cap = self.cnt.shape[1]
        if need <= cap:
            return
        new_cap = max(need, 2 * cap)
        n = self.n_envs
        x = np.zeros((n, new_cap, self.d))
        cnt = np.zeros((n, new_cap), dtype=np.int64)
        sums = np.zeros((n, new_cap))
        x[:, :cap] = self.x
        cnt[:, :cap] = self.cnt
        sums[:, :cap] = self.sums
        self.x, self.cnt, self.sums = x, cnt, sums

    def radii(self, i: int) -> np.ndarray:
        """Radii (1) of the active points of run ``i``."""
        k = self.n_active[i]
        return np.sqrt(self.c_log / (1.0 + self.cnt[i, :k]))

    def indices(self, i: int) -> np.ndarray:
        """Selection indices (4) of the active points of run ``i``."""
        k = self.n_active[i]
        n = self.cnt[i, :k]
        mean = np.where(n > 0, self.sums[i, :k] / np.maximum(n, 1), 0.0)
        return mean + self.bonus_mult * self.radii(i)

    def active_points(self, i: int) -> np.ndarray:
        """``(k, d)`` active points of run ``i`` in activation order."""
        return self.x[i, : self.n_active[i]].copy()

    # ------------------------------------------------------------------ protocol
    def act(self, observations: Any = None) -> np.ndarray:
        _select(self.cnt, self.sums, self.n_active, self.c_log, self.bonus_mult, self.chosen)
        return self.x[np.arange(self.n_envs), self.chosen].copy()

    def update(self, actions: Any, rewards: Any, observations: Any = None) -> None:
        rewards = np.asarray(rewards, dtype=np.float64).reshape(-1)
        if rewards.shape[0] != self.n_envs:
            raise ValueError(f"rewards must have shape ({self.n_envs},), got {np.shape(rewards)}")
        self._ensure_capacity()
        if self.d == 1:
            _update_1d(self.x, self.cnt, self.sums, self.n_active, self.chosen, rewards, self.c_log)
        else:
            _update_grid(
                self.x,
                self.cnt,
                self.sums,
                self.n_active,
                self._counts,
                self.chosen,
                rewards,
                self._grid,
                self.c_log,
                self._zeros,
            )

    def diagnostics(self) -> dict[str, Any]:
        return {"n_active": [int(k) for k in self.n_active]}


class Zooming(PerRunFromBatched):
    """Per-run zooming agent: one row of :class:`BatchedZooming` (bit-identical by construction)."""

    batched_cls = BatchedZooming


DEFAULTS = {"radius_const": 2.0, "bonus_mult": 2.0, "cover_grid": None}

register_agent(
    "zooming",
    Zooming,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedZooming,
    description="Zooming algorithm (Kleinberg, Slivkins, Upfal 2008): adaptive discretisation, "
    "radius sqrt(2 log T/(1+n)), index mean + 2r; stationary, never forgets",
    defaults=DEFAULTS,
)
