"""MDBE -- Multi-Depth Bin Elimination, the method of *Non-Stationary Lipschitz Bandits*.

N. Nguyen, S. Gaucher, C. Vernade, NeurIPS 2025 (arXiv 2505.18871). Official code:
``nguyenicolas/NS_Lipschitz_Bandits`` (``Policy.py`` class ``MBDE``, ``Diadic.py``); this module is a
re-implementation from the paper and ``docs/papers/nonstat-lipschitz.md`` (no code copied; tags: see
docs/conventions.md). It
is registered as agent ``mdbe`` (role ``paper``) for ``NonStatLipschitz-v0``; ``mdbe-calibrated`` (also role
``paper``) is the same algorithm with ``c0`` calibrated on stationary instances of the problem's class
(:class:`BatchedMDBECalibrated`).

Algorithm (step numbers cited inline in the code)
-------------------------------------------------
A dyadic tree over ``[0, 1]^d``: depth ``j >= 1`` holds ``2^{d(j-1)}`` cells of side ``2^{-(j-1)}``
(depth 1 = the whole cube). With ``g = growth`` (``2^{d+2}``, i.e. 8 for ``d = 1``):

1. Episode start: ``m <- min_depth``.
2. Block start: ``m <- m + 1``; the block lasts ``g^m`` rounds; every depth-``m`` cell is active;
   ``B_MASTER`` <- the depth-``m`` cells.
3. Replay schedule, drawn at block start: for each block offset ``s = 2 .. g^m - 1`` and depth
   ``j = m-1, ..., min_depth`` (finest first), if ``g^j`` divides ``s`` start a depth-``j`` replay at
   ``s`` with probability ``sqrt(g^j / (s + 1))``; the first success stops the scan of ``s`` (at most
   one start per offset). A depth-``j`` replay lasts ``g^j`` rounds.
4. Each round, replay bookkeeping: every replay ending now is deactivated; if only depth ``m`` is
   left, the active depth-``m`` set is restored to ``B_MASTER``; a replay starting now (re)activates
   *all* depth-``j`` cells, including evicted regions, and its window starts now.
5. Sampling: descent through the active depths (coarsest first), uniform among the active cells at
   the coarsest one, then uniform among the active descendants at each finer active depth, stopping
   when there are none; ``X_t`` uniform in the final cell. ``P_t(B)`` = product of the uniform split
   probabilities on the path to ``B`` (recomputed after every (de)activation or eviction).
6. Estimates: every active cell ``B`` of every active depth records
   ``mu_hat_t(B) = Y_t 1{X_t in B} / P_t(B)``.
7. Eviction test (every active depth ``j``, every ordered pair ``(B, B')`` of active depth-``j``
   cells): evict ``B'`` and all its descendants if for some ``s1`` in the start grid,
   ``sum_{s=s1}^{t} (mu_hat_s(B) - mu_hat_s(B')) > c0 log(T) sqrt(max(n 2^{dj}, 4^{dj})) + 4 n / 2^j``,
   ``n = t - s1 + 1``, ``s1 in [s_start, t-1]`` (``s_start`` = start of the replay at ``j``, block start
   for ``j = m``); no test while ``t - s_start <= 2``.
8. ``B_MASTER <- B_MASTER ∩ {active depth-m cells}``.
9. ``B_MASTER`` empty: a significant shift is declared; back to step 1 (``m`` back to ``min_depth``,
   so the next block has depth ``min_depth + 1 = 3``; all statistics dropped).
10. Block end (``t = t0 + g^m``): all replays dropped, back to step 2.

Hyperparameters (all enter the cell key)
----------------------------------------
==================  =============  ===================================================================
name                default        provenance
==================  =============  ===================================================================
``c0``              0.12           [code] the authors' final experiments (``MBDE(T, c0=0.12)`` in the
                                   notebook of the official repository's last experimental commit,
                                   2025-07-21). History in that repository: hard-coded 22.7, 1, 0.8,
                                   0.56, 0.5, 0.42, 0.41, 0.3, 0.2 (several with older threshold
                                   formulas), then an argument: 3.2, 0.2, 0.12. The theory constant
                                   is unknown.
``replay_schedule`` ``"absolute-   [code] the schedule the authors ran: replay starts drawn at block
                    round"``       start and looked up by *absolute* round (so after the first block
                                   replays start at absolute multiples of ``growth^j``, and none once
                                   the round exceeds ``growth^m``). ``"block-offset"``: the paper's
                                   reading, replays keyed by the offset from the block's start -- with
                                   ``c0 = 0.12`` it replays far more and raises many false alarms
                                   (e.g. restarts on stationary instances).
``log_term``        ``"T"``        [code] ``log T`` (current code); ``"block"`` = ``log g^m`` (an
                                   earlier code version, anytime).
``min_depth``       2              [code] ``MIN_DEPTH``; coarsest replay depth, episodes start blocks at
                                   depth ``min_depth + 1``.
``growth``          ``2^{d+2}``    [code] 8 for ``d = 1``; [design] ``2^{d+2}`` for ``d > 1`` (block
                                   ``m`` lasts ``growth^m`` rounds, a depth-``j`` replay ``growth^j``).
``start_grid``      ``"dyadic"``   [design] window starts ``s1`` with ``t - s1`` a power of two, plus
                                   ``s1 = s_start`` (the whole window): ``O(log n)`` windows per depth
                                   and round; ``"all"`` = every ``s1`` as in [code] (``O(n)`` per
                                   round, much slower for long blocks).
``code_compat``     ``False``      ``True`` reproduces the quirks of the official code (below).
==================  =============  ===================================================================

What the authors' constants do (measured: ``c0`` and schedule, Bernoulli rewards of mean
``1 - |x - 0.3|``, no change at all, 8 seeds, restarts per run):

========================================  ============  ============
settings                                T = 2^14      T = 2^16
========================================  ============  ============
``c0 = 0.12``, absolute-round (default)  3.0           4.5
``c0 = 0.12``, block-offset              8.5           31.5
``c0 = 0.2``, absolute-round             1.0           2.4
``c0 = 0.4``, either schedule            0             0
========================================  ============  ============

Every restart there is a false alarm: with the authors' final constant the eliminations fire on
stationary noise, more often the more replays run. The defaults stay the authors' (a reproduction
runs what they ran); a conservative ``c0`` is one hyperparameter away (``--hp mdbe.c0=0.4``).

Reading of the official code (choices the paper leaves open)
------------------------------------------------------------
* ``n 2^j``: the code's threshold is ``c0 log T sqrt(max(n 2^j, 4^j)) + 4 n / 2^j`` with ``n`` the
  number of rounds in the window and ``j`` the cell depth counted from the root = depth 1 (so
  ``2^j`` is twice the number of depth-``j`` cells). For ``d > 1``: ``2^{dj}``, ``4^{dj}`` under the
  root, ``4 n / 2^j`` unchanged ([design]).
* Which cells record estimates: the code appends an estimate to every tree node every round (0 when
  the node is inactive or does not contain ``X_t``). Only active cells at active depths are ever
  tested, and a depth's windows start when the depth was (re)activated, so only those estimates
  are kept here (per-depth logs over the current block / replay).
* Which pairs are tested: the code tests the ordered pairs of the active lists taken at the start
  of the round's eviction step; a cell evicted earlier in the same round (at its own depth, or by
  a cascade from another depth) still serves as the better cell ``B`` and is tested as ``B'`` in
  that round, and the lists are refreshed after all depths are tested. Since every test depends on
  the estimates only, the result does not depend on the order: here all tests of a round are
  evaluated on the round-start active sets, then all evictions (with their cascades) are applied.
  ``B`` ranges over active cells only (evicted cells are never compared until reactivated).
* Cascades: evicting a depth-``j`` cell evicts its descendants at every finer depth, including
  depth ``m``; a replay can therefore empty ``B_MASTER`` (this is how most shifts are detected,
  since at depth ``m`` the best cell of a window survives that window).
* ``B_MASTER`` restore (step 4): depth-``m`` cells are never reactivated inside a block (replays run
  at depths ``< m``), so ``B_MASTER`` always equals the active depth-``m`` set and the restore is a
  no-op; it is kept for fidelity (the older code version reactivated depth ``m`` at every replay
  start, where the restore mattered).
* ``P_t`` used in the round-``t`` estimates is the one used to sample ``X_t``.
* A replay cannot start at block offset 0 or 1 (the code's loop starts at ``s = 2``).
* Restart time: ``restart_times`` holds the round ``t`` whose update emptied ``B_MASTER``; the new
  episode starts at round ``t + 1``.
* Cells are numbered left to right for ``d = 1`` and in Morton (Z) order for ``d > 1``, so the
  descendants of a cell at any finer depth form one contiguous index range.
* Draws per round: one uniform per descent level visited and ``d`` for the point in the final
  cell; the schedule draws at block start. ``update`` requires the actions ``act`` returned (the
  importance weights assume MDBE's own draws were played).
* Cells are half-open (``X`` on a boundary belongs to the upper cell, except at 1); the code's cells
  are closed (a boundary point counts in both neighbours), a measure-zero difference.

Deviations from the official code with ``code_compat=False``
------------------------------------------------------------
* (``replay_schedule="block-offset"`` only) Replay schedule indexed by block offset (the code looks
  the schedule up by absolute round, as the default does).
* Full descent when sampling (the code only descends to *direct* children, so when the next
  active depth is two or more levels finer it samples uniformly inside the coarse cell, while
  ``P_t`` still assumes the full descent).
* Every replay ending in a round is deactivated (the code deactivates only one, the coarsest; the
  other stays active, with a growing window, until the block ends or its depth restarts).
* The eviction window ends at the current round ``t`` (the code's window ends at ``t - 1``: the
  estimate of round ``t`` first enters the test of round ``t + 1``). Both skip the test while
  ``t - s_start <= 2``; applied to the code's lagged window this means its first test uses 3 rounds
  of data, here 4 (the rule as stated is for the window ending at ``t``).
* ``start_grid="dyadic"`` by default (speed); ``"all"`` is the code's grid.
* Randomness: each run draws from its own xoshiro256** generator inside numba, seeded with four
  raw words of ``numpy.random.default_rng(seed)`` (so only from the run's seed, whatever it is
  batched with; numpy ``Generator`` objects in numba need a typed list whose first construction
  costs ~0.5 s per process and ~1 us per call). The schedule draws for offsets beyond the horizon
  are skipped (they can never be reached).

``code_compat=True`` reproduces the code behaviours above (with the absolute-round schedule: the
"endings" of replays scheduled before the block started; direct-children descent; one deactivation
per round; lagged window). It does not reproduce the code's random streams.

Implementation
--------------
Flat per-depth arrays, one row per run, stepped by one numba kernel for all runs: per depth an
event log (cell hit and importance-weighted value per round: at most one cell per depth is hit),
running per-cell prefix sums and checkpoints of the prefix vector every ``C_j = max(32, #cells)``
rounds, so a window sum costs ``O(#cells + C_j)`` and a round ``O(#cells log n)`` per active depth
(``"dyadic"``); the memory is ``O(T)`` per run, not ``O(T #cells)``. Per window all ordered pairs are
tested at once: ``B'`` is evicted iff ``max_B W(B) - W(B') > threshold``. ``act`` returns the action
computed at the end of the previous ``update`` (one kernel call per round).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from papergym.agents.rng import rand_uniform as _rand  # noqa: E402  (per-run xoshiro256**)
from papergym.agents.rng import rng_state as _rng_state  # noqa: E402

from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.agents.bandits import mdbe_calibration_table as _calibration_table  # noqa: E402  (in the code hash)

#: Most tree cells (all depths) MDBE allocates per run; a larger tree is refused with a clear error.
_MAX_CELLS = 2**22

__all__ = [
    "BatchedMDBE",
    "MDBE",
    "draw_replay_schedule",
    "DEFAULTS",
    "BatchedMDBECalibrated",
    "MDBECalibrated",
    "C0_GRID",
    "CALIBRATION_DEFAULTS",
    "calibrate_c0",
    "calibrated_c0",
    "calibration_seeds",
    "shipped_calibrations",
]

DEFAULTS: dict[str, Any] = {
    "c0": 0.12,
    "replay_schedule": "absolute-round",
    "log_term": "T",
    "min_depth": 2,
    "growth": None,  # None -> 2^(d+2)
    "start_grid": "dyadic",
    "code_compat": False,
}
_LOG_TERMS = ("T", "block")
_REPLAY_SCHEDULES = ("absolute-round", "block-offset")
_START_GRIDS = ("dyadic", "all")

# ---- layout rows (shared by all runs): lay[ROW, depth]
_L_N, _L_NOFF, _L_LEN, _L_LOFF, _L_C, _L_COFF, _L_GPOW = range(7)
# ---- configuration ints: cfg_i[...]
_C_D, _C_G, _C_GROWTH, _C_MIN, _C_MMAX, _C_T, _C_GRID, _C_COMPAT, _C_LOGBLOCK, _C_ABS = range(10)
# ---- configuration floats: cfg_f[...]
_F_C0, _F_LOGT, _F_LOGG = range(3)
# ---- per-run integer scalars: iv[run, ...]
(
    _I_T,  # current round t (1-based): the round whose action is in x
    _I_M,  # block depth m
    _I_T0,  # block start round
    _I_BLEN,  # block length growth^m
    _I_NSCHED,  # number of scheduled replays in this block
    _I_SPTR,  # next schedule entry
    _I_RESTARTS,  # number of shifts declared
    _I_FINJ,  # depth of the final cell of the descent (round t)
    _I_FINA,  # index of that cell
    _I_NMASTER,  # |B_MASTER|
    _I_DIRTY,  # probabilities must be recomputed
) = range(11)
_NIV = 11
# ---- per-run per-depth ints: dep[run, depth, ...]
_D_ON, _D_START, _D_END = range(3)


# ============================================================================ numba kernels
@njit(cache=True)
def _draw_schedule(rs, m, growth, min_depth, max_off, sched):
    """Step 3: replay starts ``(offset, depth)`` of a depth-``m`` block, offsets ``< max_off``.

    Offsets ``s >= 2`` that are multiples of ``growth^j``; depths scanned finest first, one uniform
    per depth tried, the first success ends the scan of ``s``. Returns the number of entries.
    """
    n = 0
    step = growth**min_depth
    s = step  # the smallest multiple of growth^min_depth that is >= 2
    while s < max_off:
        for j in range(m - 1, min_depth - 1, -1):
            pj = growth**j
            if s % pj == 0:
                if _rand(rs) < math.sqrt(pj / (s + 1.0)):
                    sched[n, 0] = s
                    sched[n, 1] = j
                    n += 1
                    break
        s += step
    return n


@njit(cache=True)
def _coords(a, j, d, out):
    """Integer coordinates (in units of 2^-(j-1)) of cell ``a`` at depth ``j`` (Morton index)."""
    for k in range(d):
        out[k] = 0
    for lev in range(j - 1):  # lev 0 = finest split
        code = (a >> (d * lev)) & ((1 << d) - 1)
        for k in range(d):
            out[k] |= ((code >> k) & 1) << lev


@njit(cache=True)
def _encode(c, j, d):
    """Morton index at depth ``j`` of integer coordinates ``c``."""
    a = 0
    for lev in range(j - 1):
        code = 0
        for k in range(d):
            code |= ((c[k] >> lev) & 1) << k
        a |= code << (d * lev)
    return a


@njit(cache=True)
def _reset_window(j, lay, q, ck):
    """A depth's window (block for m, replay otherwise) starts: prefix sums and checkpoint 0 = 0."""
    nj = lay[_L_N, j]
    b0 = lay[_L_NOFF, j]
    c0 = lay[_L_COFF, j]
    for b in range(nj):
        q[b0 + b] = 0.0
        ck[c0 + b] = 0.0


@njit(cache=True)
def _new_block(rs, t, m, cfg_i, cfg_f, lay, iv, fv, dep, act, master, q, ck, sched):
    """Step 2 (+ step 3): start a depth-``m`` block at round ``t``."""
    growth = cfg_i[_C_GROWTH]
    T = cfg_i[_C_T]
    mmax = cfg_i[_C_MMAX]
    blen = lay[_L_GPOW, m]
    iv[_I_M] = m
    iv[_I_T0] = t
    iv[_I_BLEN] = blen
    for j in range(mmax + 1):
        dep[j, _D_ON] = 0
    act[:] = 0
    nm = lay[_L_N, m]
    b0 = lay[_L_NOFF, m]
    for b in range(nm):
        act[b0 + b] = 1
        master[b] = 1
    for b in range(nm, master.shape[0]):
        master[b] = 0
    iv[_I_NMASTER] = nm
    dep[m, _D_ON] = 1
    dep[m, _D_START] = t
    dep[m, _D_END] = t + blen
    _reset_window(m, lay, q, ck)
    # threshold log factor: log T, or log growth^m ("block")
    if cfg_i[_C_LOGBLOCK] == 1:
        fv[0] = cfg_f[_F_C0] * m * cfg_f[_F_LOGG]
    else:
        fv[0] = cfg_f[_F_C0] * cfg_f[_F_LOGT]
    # step 3: schedule. Offsets are never reached beyond the horizon; the absolute-round schedule
    # (the official code's) keys it by absolute round (< growth^m).
    if cfg_i[_C_ABS] == 1:
        max_off = min(blen, T + 1)
    else:
        max_off = min(blen, T - t + 1)
    iv[_I_NSCHED] = _draw_schedule(rs, m, growth, cfg_i[_C_MIN], max_off, sched)
    iv[_I_SPTR] = 0
    iv[_I_DIRTY] = 1


@njit(cache=True)
def _sched_has(sched, n, s, j):
    """Is ``(s, j)`` in the (offset-sorted) schedule?"""
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        if sched[mid, 0] < s:
            lo = mid + 1
        else:
            hi = mid
    return lo < n and sched[lo, 0] == s and sched[lo, 1] == j


@njit(cache=True)
def _deactivate(j, lay, dep, act):
    dep[j, _D_ON] = 0
    b0 = lay[_L_NOFF, j]
    for b in range(lay[_L_N, j]):
        act[b0 + b] = 0


@njit(cache=True)
def _round_start(t, cfg_i, lay, iv, dep, act, master, q, ck, sched):
    """Step 4: replays ending / starting at round ``t``."""
    compat = cfg_i[_C_COMPAT]
    m = iv[_I_M]
    t0 = iv[_I_T0]
    mind = cfg_i[_C_MIN]
    ended = False
    if compat == 0:
        # every replay ending now is deactivated
        for j in range(mind, m):
            if dep[j, _D_ON] == 1 and dep[j, _D_END] == t:
                _deactivate(j, lay, dep, act)
                ended = True
    else:
        # code: depths j whose schedule has an entry at absolute round t - growth^j (it may never
        # have started in this block); only the coarsest one is deactivated
        for j in range(mind, m):
            s = t - lay[_L_GPOW, j]
            if s >= 0 and s < lay[_L_GPOW, m] and _sched_has(sched, iv[_I_NSCHED], s, j):
                _deactivate(j, lay, dep, act)
                ended = True
                break
    if ended:
        iv[_I_DIRTY] = 1
        only_m = True
        for j in range(mind, m):
            if dep[j, _D_ON] == 1:
                only_m = False
        if only_m:  # restore B_MASTER as the active depth-m set (a no-op, see module docstring)
            b0 = lay[_L_NOFF, m]
            for b in range(lay[_L_N, m]):
                act[b0 + b] = master[b]
    # a replay starting now: the schedule key is the block offset, or the absolute round
    key = t if cfg_i[_C_ABS] == 1 else t - t0
    n = iv[_I_NSCHED]
    p = iv[_I_SPTR]
    while p < n and sched[p, 0] < key:
        p += 1
    if p < n and sched[p, 0] == key:
        j = sched[p, 1]
        dep[j, _D_ON] = 1
        dep[j, _D_START] = t
        dep[j, _D_END] = t + lay[_L_GPOW, j]
        b0 = lay[_L_NOFF, j]
        for b in range(lay[_L_N, j]):  # all depth-j cells, evicted regions included
            act[b0 + b] = 1
        _reset_window(j, lay, q, ck)
        iv[_I_DIRTY] = 1
        p += 1
    iv[_I_SPTR] = p


@njit(cache=True)
def _recompute_probs(cfg_i, lay, iv, dep, act, cnt, prob):
    """P_t (step 5): product of uniform split probabilities along the descent; cnt = #active
    descendants of each cell at the next active depth."""
    G = cfg_i[_C_G]
    m = iv[_I_M]
    prev = -1
    for j in range(1, m + 1):
        if dep[j, _D_ON] == 0:
            continue
        nj = lay[_L_N, j]
        b0 = lay[_L_NOFF, j]
        if prev < 0:
            c = 0
            for b in range(nj):
                c += act[b0 + b]
            for b in range(nj):
                prob[b0 + b] = 1.0 / c if (act[b0 + b] == 1 and c > 0) else 0.0
        else:
            r = G ** (j - prev)
            pb0 = lay[_L_NOFF, prev]
            for a in range(lay[_L_N, prev]):
                c = 0
                for b in range(a * r, (a + 1) * r):
                    c += act[b0 + b]
                cnt[pb0 + a] = c
                pa = prob[pb0 + a]
                for b in range(a * r, (a + 1) * r):
                    prob[b0 + b] = pa / c if (act[b0 + b] == 1 and pa > 0.0) else 0.0
        prev = j
    if prev >= 0:
        pb0 = lay[_L_NOFF, prev]
        for a in range(lay[_L_N, prev]):
            cnt[pb0 + a] = 0
    iv[_I_DIRTY] = 0


@njit(cache=True)
def _sample(rs, cfg_i, lay, iv, dep, act, cnt, x):
    """Step 5: descent through the active depths; X_t uniform in the final cell."""
    d = cfg_i[_C_D]
    G = cfg_i[_C_G]
    compat = cfg_i[_C_COMPAT]
    m = iv[_I_M]
    j = 1
    while dep[j, _D_ON] == 0:
        j += 1
    nj = lay[_L_N, j]
    b0 = lay[_L_NOFF, j]
    c = 0
    for b in range(nj):
        c += act[b0 + b]
    k = min(int(_rand(rs) * c), c - 1)
    a = -1
    for b in range(nj):
        if act[b0 + b] == 1:
            if k == 0:
                a = b
                break
            k -= 1
    while True:
        j2 = j + 1
        while j2 <= m and dep[j2, _D_ON] == 0:
            j2 += 1
        if j2 > m:
            break
        if compat == 1 and j2 != j + 1:
            break  # code quirk: only direct children are followed
        c = cnt[lay[_L_NOFF, j] + a]
        if c == 0:
            break
        k = min(int(_rand(rs) * c), c - 1)
        r = G ** (j2 - j)
        b0 = lay[_L_NOFF, j2]
        na = -1
        for b in range(a * r, (a + 1) * r):
            if act[b0 + b] == 1:
                if k == 0:
                    na = b
                    break
                k -= 1
        a = na
        j = j2
    iv[_I_FINJ] = j
    iv[_I_FINA] = a
    ci = np.empty(d, np.int64)
    _coords(a, j, d, ci)
    scale = 2.0 ** (j - 1)
    for kk in range(d):
        x[kk] = min((ci[kk] + _rand(rs)) / scale, 1.0)


@njit(cache=True)
def _cell_of_x(j, cfg_i, iv, x):
    """Index of the depth-``j`` cell containing X_t (exact ancestor of the final cell when
    ``j`` is not finer than it; else floor(X 2^{j-1}) clamped inside the final cell)."""
    d = cfg_i[_C_D]
    jf = iv[_I_FINJ]
    af = iv[_I_FINA]
    if j <= jf:
        return af >> (d * (jf - j))
    cf = np.empty(d, np.int64)
    _coords(af, jf, d, cf)
    sh = j - jf
    c = np.empty(d, np.int64)
    side = 1 << (j - 1)
    for k in range(d):
        v = int(math.floor(x[k] * side))
        lo = cf[k] << sh
        hi = lo + (1 << sh) - 1
        c[k] = min(max(v, lo), hi)
    return _encode(c, j, d)


@njit(cache=True)
def _prefix_at(j, qpos, lay, ln, lv, ck, out):
    """out[b] = sum of the depth-``j`` estimates of cell b over window positions ``[0, qpos)``."""
    nj = lay[_L_N, j]
    C = lay[_L_C, j]
    cidx = qpos // C
    base = lay[_L_COFF, j] + cidx * nj
    for b in range(nj):
        out[b] = ck[base + b]
    l0 = lay[_L_LOFF, j]
    for r in range(cidx * C, qpos):
        node = ln[l0 + r]
        if node >= 0:
            out[node] += lv[l0 + r]


@njit(cache=True)
def _threshold(n, j, d, c0log):
    """Step 7: c0 log(.) sqrt(max(n 2^{dj}, 4^{dj})) + 4 n / 2^j."""
    a = 2.0 ** (d * j)
    return c0log * math.sqrt(max(n * a, a * a)) + 4.0 * n / 2.0**j


@njit(cache=True)
def _mark(nj, b0, act, ev, w, thr):
    """All ordered pairs of one window at once: B' is evicted iff max_B W(B) - W(B') > thr."""
    mx = -np.inf
    mn = np.inf
    for b in range(nj):
        if act[b0 + b] == 1:
            if w[b] > mx:
                mx = w[b]
            if w[b] < mn:
                mn = w[b]
    if mx - mn > thr:
        for b in range(nj):
            if act[b0 + b] == 1 and mx - w[b] > thr:
                ev[b0 + b] = 1
        return True
    return False


@njit(cache=True)
def _test_depth_dyadic(j, e, cfg_i, lay, act, ev, ln, lv, ck, wend, wtmp, c0log):
    """Windows [s1, e] with e - s1 a power of two, plus the whole window (positions, 0 = s_start)."""
    d = cfg_i[_C_D]
    nj = lay[_L_N, j]
    b0 = lay[_L_NOFF, j]
    any_ev = False
    k = 0
    while True:
        q1 = e - (1 << k)
        if q1 <= 0:
            q1 = 0
        _prefix_at(j, q1, lay, ln, lv, ck, wtmp)
        for b in range(nj):
            wtmp[b] = wend[b] - wtmp[b]
        n = e - q1 + 1
        if _mark(nj, b0, act, ev, wtmp, _threshold(n, j, d, c0log)):
            any_ev = True
        if q1 == 0:
            break
        k += 1
    return any_ev


@njit(cache=True)
def _test_depth_all(j, e, cfg_i, lay, act, ev, ln, lv, w, c0log):
    """Every window [s1, e], s1 = e-1 .. 0 (the code's grid), scanning the log backwards with
    running max / min of the window sums over active cells."""
    d = cfg_i[_C_D]
    nj = lay[_L_N, j]
    b0 = lay[_L_NOFF, j]
    l0 = lay[_L_LOFF, j]
    am = -1
    for b in range(nj):
        w[b] = 0.0
        if am < 0 and act[b0 + b] == 1:
            am = b
    mx = 0.0
    mn = 0.0
    an = am
    any_ev = False
    for q1 in range(e, -1, -1):
        node = ln[l0 + q1]
        if node >= 0 and act[b0 + node] == 1:
            v = lv[l0 + q1]
            nv = w[node] + v
            w[node] = nv
            if nv > mx:
                mx = nv
                am = node
            elif node == am and v < 0.0:
                mx = -np.inf
                for b in range(nj):
                    if act[b0 + b] == 1 and w[b] > mx:
                        mx = w[b]
                        am = b
            if nv < mn:
                mn = nv
                an = node
            elif node == an and v > 0.0:
                mn = np.inf
                for b in range(nj):
                    if act[b0 + b] == 1 and w[b] < mn:
                        mn = w[b]
                        an = b
        if q1 <= e - 1:
            n = e - q1 + 1
            thr = _threshold(n, j, d, c0log)
            if mx - mn > thr:
                for b in range(nj):
                    if act[b0 + b] == 1 and mx - w[b] > thr:
                        ev[b0 + b] = 1
                any_ev = True
    return any_ev


@njit(cache=True)
def _evict_subtree(j, b, m, G, lay, act):
    """Evict cell b of depth j and all its descendants (every finer depth up to m)."""
    act[lay[_L_NOFF, j] + b] = 0
    for j2 in range(j + 1, m + 1):
        r = G ** (j2 - j)
        b0 = lay[_L_NOFF, j2]
        for c in range(b * r, (b + 1) * r):
            act[b0 + c] = 0


@njit(cache=True)
def _update_run(rs, y, cfg_i, cfg_f, lay, iv, fv, dep, act, master, ev, cnt, prob, q, ln, lv, ck, sched, rtimes, x, wa, wb):
    """Feedback of round t (steps 6-10), then round t+1's bookkeeping and action (steps 4-5)."""
    G = cfg_i[_C_G]
    T = cfg_i[_C_T]
    compat = cfg_i[_C_COMPAT]
    t = iv[_I_T]
    m = iv[_I_M]
    # ---- step 6: importance-weighted estimates of the active cells of every active depth
    for j in range(1, m + 1):
        if dep[j, _D_ON] == 0:
            continue
        p = t - dep[j, _D_START]
        l0 = lay[_L_LOFF, j]
        b0 = lay[_L_NOFF, j]
        a = _cell_of_x(j, cfg_i, iv, x)
        if act[b0 + a] == 1 and prob[b0 + a] > 0.0:
            v = y / prob[b0 + a]
            ln[l0 + p] = a
            lv[l0 + p] = v
            q[b0 + a] += v
        else:
            ln[l0 + p] = -1
            lv[l0 + p] = 0.0
        C = lay[_L_C, j]
        if (p + 1) % C == 0:  # checkpoint of the prefix vector over positions [0, p]
            c0 = lay[_L_COFF, j] + ((p + 1) // C) * lay[_L_N, j]
            for b in range(lay[_L_N, j]):
                ck[c0 + b] = q[b0 + b]
    # ---- step 7: eviction tests on the round-start active sets, evictions applied afterwards
    any_ev = False
    c0log = fv[0]
    for j in range(1, m + 1):
        if dep[j, _D_ON] == 0:
            continue
        p = t - dep[j, _D_START]
        if p <= 2:  # no test while t - s_start <= 2
            continue
        e = p - compat  # window end: t (t - 1 in code_compat)
        nj = lay[_L_N, j]
        if cfg_i[_C_GRID] == 0:
            if compat == 1:
                _prefix_at(j, e + 1, lay, ln, lv, ck, wb)
            else:
                b0 = lay[_L_NOFF, j]
                for b in range(nj):
                    wb[b] = q[b0 + b]
            if _test_depth_dyadic(j, e, cfg_i, lay, act, ev, ln, lv, ck, wb, wa, c0log):
                any_ev = True
        else:
            if _test_depth_all(j, e, cfg_i, lay, act, ev, ln, lv, wa, c0log):
                any_ev = True
    if any_ev:
        for j in range(1, m + 1):
            if dep[j, _D_ON] == 0:
                continue
            b0 = lay[_L_NOFF, j]
            for b in range(lay[_L_N, j]):
                if ev[b0 + b] == 1:
                    ev[b0 + b] = 0
                    _evict_subtree(j, b, m, G, lay, act)
        # ---- step 8: B_MASTER <- B_MASTER ∩ active depth-m cells
        b0 = lay[_L_NOFF, m]
        nmaster = 0
        for b in range(lay[_L_N, m]):
            if master[b] == 1 and act[b0 + b] == 0:
                master[b] = 0
            nmaster += master[b]
        iv[_I_NMASTER] = nmaster
        iv[_I_DIRTY] = 1
    # ---- steps 9-10: shift detection / block end
    t += 1
    iv[_I_T] = t
    if iv[_I_NMASTER] == 0:
        r = iv[_I_RESTARTS]
        if r < rtimes.shape[0]:
            rtimes[r] = t - 1
        iv[_I_RESTARTS] = r + 1
        if t <= T:
            _new_block(rs, t, cfg_i[_C_MIN] + 1, cfg_i, cfg_f, lay, iv, fv, dep, act, master, q, ck, sched)
    elif t == iv[_I_T0] + iv[_I_BLEN]:
        if t <= T:
            _new_block(rs, t, m + 1, cfg_i, cfg_f, lay, iv, fv, dep, act, master, q, ck, sched)
    if t > T:
        return
    # ---- round t+1: steps 4-5
    _round_start(t, cfg_i, lay, iv, dep, act, master, q, ck, sched)
    if iv[_I_DIRTY] == 1:
        _recompute_probs(cfg_i, lay, iv, dep, act, cnt, prob)
    _sample(rs, cfg_i, lay, iv, dep, act, cnt, x)


@njit(cache=True)
def _init_run(rs, cfg_i, cfg_f, lay, iv, fv, dep, act, master, cnt, prob, q, ck, sched, x):
    """Round 1: steps 1-2 (episode and first block), then steps 4-5."""
    iv[:] = 0
    iv[_I_T] = 1
    _new_block(rs, 1, cfg_i[_C_MIN] + 1, cfg_i, cfg_f, lay, iv, fv, dep, act, master, q, ck, sched)
    _round_start(1, cfg_i, lay, iv, dep, act, master, q, ck, sched)
    _recompute_probs(cfg_i, lay, iv, dep, act, cnt, prob)
    _sample(rs, cfg_i, lay, iv, dep, act, cnt, x)


@njit(cache=True)
def _init_all(rs, cfg_i, cfg_f, lay, iv, fv, dep, act, master, cnt, prob, q, ck, sched, x):
    for i in range(rs.shape[0]):
        _init_run(rs[i], cfg_i, cfg_f, lay, iv[i], fv[i], dep[i], act[i], master[i], cnt[i], prob[i], q[i], ck[i], sched[i], x[i])


@njit(cache=True)
def _update_all(rs, actions, y, cfg_i, cfg_f, lay, iv, fv, dep, act, master, ev, cnt, prob, q, ln, lv, ck, sched,
                rtimes, x, wa, wb):
    """All runs, one round. Returns 0, or (nothing changed) 1 if an action is not the one proposed,
    2 if a reward is not finite."""
    n = rs.shape[0]
    for i in range(n):
        for k in range(x.shape[1]):
            if actions[i, k] != x[i, k]:
                return 1
        if not np.isfinite(y[i]):
            return 2
    for i in range(n):
        _update_run(
            rs[i], y[i], cfg_i, cfg_f, lay, iv[i], fv[i], dep[i], act[i], master[i], ev[i], cnt[i], prob[i],
            q[i], ln[i], lv[i], ck[i], sched[i], rtimes[i], x[i], wa, wb,
        )
    return 0


# ============================================================================ Python API
def draw_replay_schedule(
    m: int, seed: Any, *, growth: int = 8, min_depth: int = 2, max_offset: int | None = None
) -> list[tuple[int, int]]:
    """Step 3 on its own: the ``(offset, depth)`` replay starts of a depth-``m`` block.

    Uses the same kernel as the agent, with a generator state drawn from ``seed`` (an int,
    SeedSequence or Generator); ``max_offset`` (default ``growth**m``) bounds the offsets.
    """
    if m <= min_depth:
        raise ValueError(f"m must exceed min_depth={min_depth}, got m={m}")
    blen = int(growth) ** int(m)
    max_off = blen if max_offset is None else min(int(max_offset), blen)
    step = int(growth) ** int(min_depth)
    sched = np.zeros((max(max_off // step + 1, 1), 2), dtype=np.int64)
    n = _draw_schedule(_rng_state(seed), int(m), int(growth), int(min_depth), int(max_off), sched)
    return [(int(s), int(j)) for s, j in sched[:n]]


def _problem_d_T(problem: Any) -> tuple[int, int]:
    params = getattr(problem, "params", {}) or {}
    if "d" in params:
        d = params["d"]
    else:
        shape = getattr(getattr(problem, "action_space", None), "shape", None)
        if not shape:
            raise ValueError("problem must give the dimension d (problem.params['d'] or action_space.shape)")
        d = shape[0]
    T = getattr(problem, "horizon", None)
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"problem parameter d must be a positive integer, got {d!r}")
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
        raise ValueError(f"problem.horizon must be a positive integer, got {T!r}")
    return int(d), int(T)


class BatchedMDBE:
    """MDBE over ``n_envs = len(seeds)`` independent runs (see the module docstring).

    Parameters
    ----------
    problem:
        :class:`~papergym.envs.spec.ProblemSpec` of ``NonStatLipschitz-v0`` (uses ``d`` and
        ``horizon``; ``T`` must be known for the ``log T`` threshold and the memory layout).
    seeds:
        One seed per run (anything :func:`numpy.random.default_rng` accepts). Each run draws only
        from its own generator (xoshiro256** seeded from ``default_rng(seed)``), so a run does not
        depend on the runs it is batched with.
    c0, log_term, min_depth, growth, start_grid, code_compat, replay_schedule:
        Hyperparameters, see the module docstring.
    """

    def __init__(
        self,
        problem: Any,
        *,
        seeds: Any,
        c0: float = 0.12,
        log_term: str = "T",
        min_depth: int = 2,
        growth: int | None = None,
        start_grid: str = "dyadic",
        code_compat: bool = False,
        replay_schedule: str = "absolute-round",
    ):
        d, T = _problem_d_T(problem)
        seeds = list(seeds)
        if not seeds:
            raise ValueError("seeds must hold at least one seed")
        if not (isinstance(c0, (int, float, np.floating, np.integer)) and math.isfinite(c0) and c0 > 0):
            raise ValueError(f"c0 must be a positive finite number, got {c0!r}")
        if log_term not in _LOG_TERMS:
            raise ValueError(f"log_term must be one of {_LOG_TERMS}, got {log_term!r}")
        if start_grid not in _START_GRIDS:
            raise ValueError(f"start_grid must be one of {_START_GRIDS}, got {start_grid!r}")
        if isinstance(min_depth, bool) or not isinstance(min_depth, (int, np.integer)) or min_depth < 1:
            raise ValueError(f"min_depth must be an integer >= 1, got {min_depth!r}")
        if growth is None:
            growth = 2 ** (d + 2)
        if isinstance(growth, bool) or not isinstance(growth, (int, np.integer)) or growth < 2:
            raise ValueError(f"growth must be an integer >= 2 (or None for 2^(d+2)), got {growth!r}")
        if not isinstance(code_compat, (bool, np.bool_)):
            raise ValueError(f"code_compat must be a bool, got {code_compat!r}")
        if replay_schedule not in _REPLAY_SCHEDULES:
            raise ValueError(f"replay_schedule must be one of {_REPLAY_SCHEDULES}, got {replay_schedule!r}")
        if code_compat and replay_schedule != "absolute-round":
            raise ValueError("code_compat=True reproduces the official code, whose replay schedule is "
                             "'absolute-round'; it cannot be combined with replay_schedule='block-offset'")
        self.problem = problem
        self.d, self.T = d, T
        self.hyperparameters = dict(
            c0=float(c0), log_term=log_term, min_depth=int(min_depth), growth=int(growth),
            start_grid=start_grid, code_compat=bool(code_compat), replay_schedule=replay_schedule,
        )
        self.n_envs = n = len(seeds)
        min_depth, growth = int(min_depth), int(growth)
        G = 2**d
        # deepest block reachable within T rounds (an episode starting at round 1)
        mmax, total = min_depth + 1, growth ** (min_depth + 1)
        while total < T:
            mmax += 1
            total += growth**mmax
        self.max_depth = mmax
        n_cells = sum(G ** (j - 1) for j in range(1, mmax + 1))
        if n_cells > _MAX_CELLS or growth**mmax >= 2**62:
            raise ValueError(
                f"MDBE's dyadic tree is too large for d={d}, horizon={T}, min_depth={min_depth}: the deepest "
                f"block reachable has depth {mmax} and the tree {n_cells:.3g} cells (limit {_MAX_CELLS:,}); "
                "use a smaller d, horizon or min_depth"
            )
        lay = np.zeros((7, mmax + 1), dtype=np.int64)
        noff = loff = coff = 0
        for j in range(1, mmax + 1):
            nj = G ** (j - 1)
            if j < min_depth:
                length = 0
            elif code_compat:  # a replay left active by the code's quirk can last to block end
                length = min(growth**mmax, T)
            else:
                length = min(growth**j, T)
            C = max(32, nj)
            ncheck = length // C + 2
            lay[:, j] = (nj, noff, length, loff, C, coff, growth**j)
            noff += nj
            loff += length
            coff += ncheck * nj
        self._lay = lay
        self._cfg_i = np.array(
            [d, G, growth, min_depth, mmax, T, _START_GRIDS.index(start_grid), int(bool(code_compat)),
             _LOG_TERMS.index(log_term), int(replay_schedule == "absolute-round")],
            dtype=np.int64,
        )
        self._cfg_f = np.array([float(c0), math.log(T) if T > 1 else 0.0, math.log(growth)])
        nmax = G ** (mmax - 1)
        step = growth**min_depth
        self._iv = np.zeros((n, _NIV), dtype=np.int64)
        self._fv = np.zeros((n, 1))
        self._dep = np.zeros((n, mmax + 1, 3), dtype=np.int64)
        self._act = np.zeros((n, noff), dtype=np.int8)
        self._master = np.zeros((n, nmax), dtype=np.int8)
        self._ev = np.zeros((n, noff), dtype=np.int8)
        self._cnt = np.zeros((n, noff), dtype=np.int64)
        self._prob = np.zeros((n, noff))
        self._q = np.zeros((n, noff))
        self._ln = np.zeros((n, loff), dtype=np.int32)
        self._lv = np.zeros((n, loff))
        self._ck = np.zeros((n, coff))
        self._sched = np.zeros((n, (T + 1) // step + 1, 2), dtype=np.int64)
        self._rtimes = np.zeros((n, T // 4 + 2), dtype=np.int64)
        self._x = np.zeros((n, d))
        self._wa = np.zeros(nmax)
        self._wb = np.zeros(nmax)
        self._rs = np.stack([_rng_state(s) for s in seeds])
        self._t = 1
        _init_all(
            self._rs, self._cfg_i, self._cfg_f, self._lay, self._iv, self._fv, self._dep, self._act, self._master,
            self._cnt, self._prob, self._q, self._ck, self._sched, self._x,
        )

    # ------------------------------------------------------------------ protocol
    def act(self, observations: Any = None) -> np.ndarray:
        """Actions of the current round, ``(n_envs, d)`` in ``[0, 1]^d`` (observations unused)."""
        if self._t > self.T:
            raise RuntimeError(f"MDBE was built for horizon T={self.T}; all {self.T} rounds are played")
        return self._x.copy()

    def update(self, actions: Any, rewards: Any, observations: Any = None) -> None:
        """Feedback of the current round (rewards ``(n_envs,)``); prepares the next action."""
        if self._t > self.T:
            raise RuntimeError(f"MDBE was built for horizon T={self.T}; update called for round {self._t}")
        a = np.asarray(actions, dtype=float)
        y = np.asarray(rewards, dtype=float)
        if a.shape != self._x.shape:
            a = a.reshape(self._x.shape) if a.size == self._x.size else a
        if y.shape != (self.n_envs,):
            y = y.reshape(-1)
        if a.shape != self._x.shape or y.shape != (self.n_envs,):
            raise ValueError(
                f"expected actions of shape {self._x.shape} and rewards of shape ({self.n_envs},), "
                f"got {np.shape(actions)} and {np.shape(rewards)}"
            )
        status = _update_all(
            self._rs, a, y, self._cfg_i, self._cfg_f, self._lay, self._iv, self._fv, self._dep, self._act,
            self._master, self._ev, self._cnt, self._prob, self._q, self._ln, self._lv, self._ck, self._sched,
            self._rtimes, self._x, self._wa, self._wb,
        )
        if status == 1:
            raise ValueError(
                "actions must be the ones returned by act() for this round: MDBE's importance weights assume "
                "its own draws were played"
            )
        if status == 2:
            raise ValueError(f"rewards must be finite, got {rewards!r}")
        self._t += 1

    def diagnostics(self) -> dict[str, list]:
        """``restarts``: shifts declared per run; ``restart_times``: the rounds at which they were."""
        r = self._iv[:, _I_RESTARTS]
        return {
            "restarts": [int(v) for v in r],
            "restart_times": [self._rtimes[i, : int(r[i])].tolist() for i in range(self.n_envs)],
        }

    # ------------------------------------------------------------------ inspection (tests, plots)
    @property
    def round(self) -> int:
        """The round whose action ``act`` returns (1-based)."""
        return self._t

    @property
    def block_depth(self) -> np.ndarray:
        """Current block depth ``m`` of every run."""
        return self._iv[:, _I_M].copy()

    def block_start(self, run: int = 0) -> int:
        return int(self._iv[run, _I_T0])

    def schedule(self, run: int = 0) -> list[tuple[int, int]]:
        """Replay starts ``(key, depth)`` of the current block (key = the absolute round, or the block
        offset with ``replay_schedule="block-offset"``)."""
        n = int(self._iv[run, _I_NSCHED])
        return [(int(s), int(j)) for s, j in self._sched[run, :n]]

    def active_depths(self, run: int = 0) -> list[int]:
        return [j for j in range(1, self.max_depth + 1) if self._dep[run, j, _D_ON] == 1]

    def window_start(self, depth: int, run: int = 0) -> int:
        """``s_start`` of an active depth (block start for ``m``, replay start otherwise)."""
        return int(self._dep[run, depth, _D_START])

    def _cells(self, arr: np.ndarray, depth: int, run: int) -> np.ndarray:
        if not 1 <= depth <= self.max_depth:
            raise ValueError(f"depth must be in 1..{self.max_depth}, got {depth!r}")
        nj, b0 = self._lay[_L_N, depth], self._lay[_L_NOFF, depth]
        return arr[run, b0 : b0 + nj].copy()

    def active_cells(self, depth: int, run: int = 0) -> np.ndarray:
        """Boolean mask of the active cells of ``depth`` (Morton order; left to right for d = 1)."""
        return self._cells(self._act, depth, run).astype(bool)

    def probabilities(self, depth: int, run: int = 0) -> np.ndarray:
        """``P_t(B)`` of the cells of ``depth`` for the current round's descent."""
        return self._cells(self._prob, depth, run)

    def master_cells(self, run: int = 0) -> np.ndarray:
        """Boolean mask of ``B_MASTER`` over the depth-``m`` cells."""
        m = int(self._iv[run, _I_M])
        return self._master[run, : self._lay[_L_N, m]].astype(bool)

    def final_cell(self, run: int = 0) -> tuple[int, int]:
        """``(depth, index)`` of the cell the current action was drawn from."""
        return int(self._iv[run, _I_FINJ]), int(self._iv[run, _I_FINA])


class MDBE(PerRunFromBatched):
    """Per-run MDBE: one row of :class:`BatchedMDBE` (bit-identical by construction)."""

    batched_cls = BatchedMDBE

    @property
    def batched(self) -> BatchedMDBE:
        return self._batched


register_agent(
    "mdbe",
    MDBE,
    envs=["NonStatLipschitz-v0"],
    role="paper",
    batched_factory=BatchedMDBE,
    description=(
        "Multi-Depth Bin Elimination (Nguyen, Gaucher, Vernade, NeurIPS 2025): dyadic bins, randomised "
        "replays at coarser depths, importance-weighted elimination, restart when every master bin is evicted"
    ),
    defaults=dict(DEFAULTS),
)


# ============================================================================ mdbe-calibrated
#: ``c0`` grid of ``mdbe-calibrated`` [design]: from the authors' final value 0.12 up to 1.0.
C0_GRID: tuple[float, ...] = (0.12, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.8, 1.0)
#: The calibration's own hyperparameters [design] (see :class:`BatchedMDBECalibrated`).
CALIBRATION_DEFAULTS: dict[str, Any] = {"c0_grid": C0_GRID, "false_alarm_target": 0.05, "calibration_runs": 60}
_CALIBRATION_ENTROPY = 0x4D44424543414C  # ASCII "MDBECAL": the calibration seed stream
_CALIBRATION_CHECK_EVERY = 256  # rounds between checks of the false-alarm count (early stop of a failing c0)
_CALIBRATION_CACHE: dict[tuple, dict[str, Any]] = {}
_MDBE_HP = ("log_term", "min_depth", "growth", "start_grid", "code_compat", "replay_schedule")


def calibration_seeds(n: int, stream: int = 0) -> list[int]:
    """``n`` run seeds of calibration stream ``stream``: ``SeedSequence(0x4D44424543414C, spawn_key=(stream,))``
    words (``uint64``, halved to stay below ``2^63``). Stream 0 is the one ``mdbe-calibrated`` calibrates on;
    other streams give fresh seeds for checks. Such seeds are 63-bit random integers, never the small run
    seeds ``papergym compare`` uses (0, 1, 2, ...)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"the number of calibration runs must be an integer >= 1, got {n!r}")
    if isinstance(stream, bool) or not isinstance(stream, (int, np.integer)) or stream < 0:
        raise ValueError(f"stream must be an integer >= 0, got {stream!r}")
    words = np.random.SeedSequence(_CALIBRATION_ENTROPY, spawn_key=(int(stream),)).generate_state(int(n), np.uint64)
    return [int(w >> np.uint64(1)) for w in words]


def _calibration_key(d: int, T: int, noise: str, sigma: float, c0_grid: Any, false_alarm_target: float,
                     calibration_runs: int, mdbe_hp: dict[str, Any]) -> tuple:
    grid = tuple(float(c) for c in c0_grid)
    sig = None if noise == "bernoulli" else float(sigma)  # sigma only matters for Gaussian noise
    hp = {**{k: DEFAULTS[k] for k in _MDBE_HP}, **mdbe_hp}
    if hp["growth"] is None:
        hp["growth"] = 2 ** (d + 2)
    return (int(d), int(T), str(noise), sig, grid, float(false_alarm_target), int(calibration_runs),
            tuple(sorted(hp.items())))


def _check_calibration_args(c0_grid: Any, false_alarm_target: Any, calibration_runs: Any) -> tuple:
    try:
        grid = sorted({float(c) for c in c0_grid})
    except (TypeError, ValueError):
        raise ValueError(f"c0_grid must be a list of positive numbers, got {c0_grid!r}") from None
    if not grid or not all(math.isfinite(c) and c > 0 for c in grid):
        raise ValueError(f"c0_grid must be a non-empty list of positive finite numbers, got {c0_grid!r}")
    if isinstance(false_alarm_target, bool) or not isinstance(false_alarm_target, (int, float, np.integer, np.floating)) \
            or not 0.0 <= float(false_alarm_target) < 1.0:
        raise ValueError(f"false_alarm_target must be a number in [0, 1), got {false_alarm_target!r}")
    if isinstance(calibration_runs, bool) or not isinstance(calibration_runs, (int, np.integer)) or calibration_runs < 1:
        raise ValueError(f"calibration_runs must be an integer >= 1, got {calibration_runs!r}")
    return tuple(grid), float(false_alarm_target), int(calibration_runs)


def calibrate_c0(d: int = 1, horizon: int = 2**15, noise: str = "bernoulli", sigma: float = 0.1, *,
                 c0_grid: Any = C0_GRID, false_alarm_target: float = 0.05, calibration_runs: int = 60,
                 **mdbe_hp: Any) -> dict[str, Any]:
    """Run the calibration of ``mdbe-calibrated`` (always computes; :func:`calibrated_c0` caches).

    For ``c0`` in ``c0_grid``, ascending: MDBE (``mdbe_hp``: its other hyperparameters) plays
    ``calibration_runs`` runs of the *stationary* member of the class -- ``NonStatLipschitz-v0``'s
    ``piecewise-tents`` with ``phases=1`` (one seeded tent, never a change), dimension ``d``, horizon
    ``horizon``, reward noise ``noise``/``sigma`` -- on the run seeds :func:`calibration_seeds` (stream 0).
    Every restart there is a false alarm. The first ``c0`` whose fraction of runs with at least one restart
    is ``<= false_alarm_target`` is returned. All ``c0`` values face the same instances, noise and agent
    seeds (common random numbers); a ``c0`` stops as soon as more than ``floor(target * runs)`` runs have
    restarted (its fraction can only grow).

    Returns ``{"c0", "false_alarm_rate", "runs", "target", "tried": [{"c0", "alarm_runs", "rounds"}, ...]}``
    (``rounds`` < ``horizon`` for a ``c0`` stopped early). Raises ``ValueError`` if no ``c0`` on the grid
    meets the target.
    """
    from papergym.envs.bandits.lipschitz import NonStatLipschitzVectorEnv
    from papergym.envs.spec import agent_seed

    grid, target, n = _check_calibration_args(c0_grid, false_alarm_target, calibration_runs)
    unknown = sorted(set(mdbe_hp) - set(_MDBE_HP))
    if unknown:
        raise ValueError(f"unknown MDBE hyperparameter(s) {unknown}; accepted: {', '.join(_MDBE_HP)}")
    seeds = calibration_seeds(n)
    venv = NonStatLipschitzVectorEnv(num_envs=n, instance="piecewise-tents", phases=1, horizon=horizon, d=d,
                                     noise=noise, sigma=sigma)
    T = venv.horizon
    allowed = math.floor(target * n + 1e-9)
    tried: list[dict[str, Any]] = []
    for c0 in grid:
        obs, _ = venv.reset(seed=seeds)
        agent = BatchedMDBE(venv.problem, seeds=[agent_seed(s) for s in seeds], c0=c0, **mdbe_hp)
        alarms, t = 0, 0
        for t in range(1, T + 1):
            a = agent.act(obs)
            obs, r, _, _, _ = venv.step(a)
            agent.update(a, r, obs)
            if t % _CALIBRATION_CHECK_EVERY == 0 or t == T:
                alarms = int(np.count_nonzero(agent._iv[:, _I_RESTARTS]))
                if alarms > allowed:
                    break
        tried.append({"c0": c0, "alarm_runs": alarms, "rounds": t})
        if alarms <= allowed:
            return {"c0": c0, "false_alarm_rate": alarms / n, "runs": n, "target": target, "tried": tried}
    raise ValueError(
        f"no c0 on the grid {list(grid)} keeps MDBE's false alarms on stationary instances (d={d}, T={T}, "
        f"noise={noise}) at or below {target:g} of {n} runs; extend c0_grid"
    )


def shipped_calibrations() -> dict[tuple, dict[str, Any]]:
    """The shipped table (:mod:`papergym.agents.bandits.mdbe_calibration_table`) keyed like the cache."""
    SETTINGS = _calibration_table.SETTINGS
    out = {}
    for e in _calibration_table.ENTRIES:
        key = _calibration_key(e["d"], e["T"], e["noise"], 0.1 if e["sigma"] is None else e["sigma"],
                               SETTINGS["c0_grid"], SETTINGS["false_alarm_target"], SETTINGS["calibration_runs"],
                               SETTINGS["mdbe"])
        out[key] = {k: e[k] for k in ("c0", "false_alarm_rate", "runs", "target", "tried")}
    return out


def calibrated_c0(d: int, horizon: int, noise: str = "bernoulli", sigma: float = 0.1, *,
                  c0_grid: Any = C0_GRID, false_alarm_target: float = 0.05, calibration_runs: int = 60,
                  **mdbe_hp: Any) -> dict[str, Any]:
    """:func:`calibrate_c0`'s result for this class and horizon: from the shipped table
    (:mod:`papergym.agents.bandits.mdbe_calibration_table`, made by ``benchmarks/calibrate_mdbe.py``) when
    it holds the entry, else from this process's cache, else computed (and cached)."""
    grid, target, n = _check_calibration_args(c0_grid, false_alarm_target, calibration_runs)
    key = _calibration_key(d, horizon, noise, sigma, grid, target, n, mdbe_hp)
    hit = shipped_calibrations().get(key) or _CALIBRATION_CACHE.get(key)
    if hit is None:
        hit = calibrate_c0(d, horizon, noise, sigma, c0_grid=grid, false_alarm_target=target,
                           calibration_runs=n, **mdbe_hp)
        _CALIBRATION_CACHE[key] = hit
    return {**hit, "tried": [dict(x) for x in hit["tried"]]}


class BatchedMDBECalibrated(BatchedMDBE):
    """``mdbe-calibrated``: MDBE whose ``c0`` is calibrated on stationary instances of the problem's class.

    The paper leaves MDBE's threshold constant open (its theory constant is not stated; the official code's
    history runs values from 22.7 to 0.12, module docstring), and at the authors' final ``c0 = 0.12`` MDBE
    restarts on stationary instances. This variant picks ``c0`` by a procedure that sees no test instance:

    * **class** = what the public :class:`~papergym.envs.spec.ProblemSpec` says: dimension ``d``, Lipschitz
      constant 1 (l-inf), reward noise (``noise``, ``sigma``) and horizon ``T``;
    * **stationary instances** of the class: ``piecewise-tents`` with ``phases=1`` -- one tent of random
      centre and height (the env's seeded tents), never a change, so every restart is a false alarm --
      on run seeds of a separate calibration stream (:func:`calibration_seeds`, never the runner's seeds);
    * **rule**: the smallest ``c0`` on ``c0_grid`` whose fraction of ``calibration_runs`` runs with at
      least one restart is ``<= false_alarm_target`` (:func:`calibrate_c0`).

    The result is cached per (class, ``T``, calibration settings, MDBE hyperparameters): a table shipped
    with papergym for the defaults at ``d = 1``, Bernoulli rewards, ``T = 2^8 .. 2^18`` and ``10^5``
    (:mod:`~papergym.agents.bandits.mdbe_calibration_table`, reproduced by ``benchmarks/calibrate_mdbe.py``),
    else an in-process cache (a new class or horizon costs one calibration per process: about
    ``calibration_runs x T`` MDBE rounds per ``c0`` tried).

    Hyperparameters (all [design], not from the paper): ``c0_grid`` (default :data:`C0_GRID`),
    ``false_alarm_target`` = 0.05, ``calibration_runs`` = 60; MDBE's other hyperparameters as in
    :class:`BatchedMDBE` (the calibration uses the same ones). ``self.calibration`` holds the calibration
    record; ``diagnostics()`` adds ``c0``.
    """

    def __init__(
        self,
        problem: Any,
        *,
        seeds: Any,
        c0_grid: Any = C0_GRID,
        false_alarm_target: float = 0.05,
        calibration_runs: int = 60,
        log_term: str = "T",
        min_depth: int = 2,
        growth: int | None = None,
        start_grid: str = "dyadic",
        code_compat: bool = False,
        replay_schedule: str = "absolute-round",
    ):
        d, T = _problem_d_T(problem)
        params = getattr(problem, "params", {}) or {}
        lip = params.get("lipschitz", 1.0)
        if lip != 1.0 or params.get("norm", "linf") != "linf":
            raise ValueError(f"mdbe-calibrated calibrates on 1-Lipschitz (l-inf) instances; the problem has "
                             f"lipschitz={lip!r}, norm={params.get('norm')!r}")
        hp = dict(log_term=log_term, min_depth=min_depth, growth=growth, start_grid=start_grid,
                  code_compat=code_compat, replay_schedule=replay_schedule)
        self.calibration = calibrated_c0(d, T, params.get("noise", "bernoulli"), params.get("sigma", 0.1),
                                         c0_grid=c0_grid, false_alarm_target=false_alarm_target,
                                         calibration_runs=calibration_runs, **hp)
        super().__init__(problem, seeds=seeds, c0=self.calibration["c0"], **hp)
        self.hyperparameters.update(c0_grid=[float(c) for c in c0_grid], false_alarm_target=float(false_alarm_target),
                                    calibration_runs=int(calibration_runs))

    def diagnostics(self) -> dict[str, list]:
        out = super().diagnostics()
        out["c0"] = [float(self.calibration["c0"])] * self.n_envs
        return out


class MDBECalibrated(PerRunFromBatched):
    """Per-run ``mdbe-calibrated``: one row of :class:`BatchedMDBECalibrated`."""

    batched_cls = BatchedMDBECalibrated

    @property
    def batched(self) -> BatchedMDBECalibrated:
        return self._batched


register_agent(
    "mdbe-calibrated",
    MDBECalibrated,
    envs=["NonStatLipschitz-v0"],
    role="paper",
    batched_factory=BatchedMDBECalibrated,
    description=(
        "MDBE with c0 calibrated per (d, noise, T): the smallest c0 on a grid whose false-alarm rate on "
        "stationary instances (calibration seeds) is <= 5%"
    ),
    defaults={**{k: v for k, v in DEFAULTS.items() if k != "c0"}, **CALIBRATION_DEFAULTS},
)
