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
running per-cell window sums and checkpoints of them every ``C_j = max(32, #cells)`` rounds; the
memory is ``O(T)`` per run, not ``O(T #cells)``. Dyadic windows (``"dyadic"``): window ``k`` of a
depth needs the cells' sums over ``[s_start, t - 2^k)``, whose end moves one round per round, so one
*sliding prefix* per ``k`` is kept and brought forward by the one log entry it gains (the same
additions in the same order as checkpoint + log entries, hence the same numbers): a round costs
``O(#cells log n)`` per active depth with no log scan. Per window all ordered pairs are tested at
once: ``B'`` is evicted iff ``max_B W(B) - W(B') > threshold``. ``act`` returns the action computed
at the end of the previous ``update`` (one kernel call per round).

Speed (profiled with ``perf``; one run, T = 10^5, two-peak-cyclic, defaults): the work of a round is
well under a microsecond; what cost more was around it. numba's reference counting of array views
(an atomic increment and decrement per view copied or passed, ~50 views a round) took more time than
the algorithm itself, and its dispatcher ~0.12 us per array argument (25 per call). Hence: every
run's state lives in one byte *arena* per batch (a row per run, a typed slot per field), the kernels
view it through ``carray`` over raw addresses (views without reference counts) and receive five
arrays per call; ``update`` takes the arrays ``act`` returned as they are. Measured on 2 idle cores,
before and after in one script: the agent's own time for T = 10^5 rounds
went from 0.51 s to 0.15 s, a whole run (env step and regret included, which now take most of it)
from 1.53 s to 1.1 s, and over 100 seeds the batched runner is ~30-40x a per-seed loop (it was
~10x): a batched agent-step (env step and regret included) fell from ~1.8 us to ~0.4 us.

The kernels read two named tuples, documented field by field where they are defined: :class:`Config`
(problem, hyperparameters, memory layout; shared by all runs) and :class:`State` (what a run carries from
round to round; ``BatchedMDBE`` holds it with a leading run axis, as numpy views of the arena). The
algorithm as the paper writes it, without these data structures, is
:mod:`papergym.agents.bandits.mdbe_reference`; the tests check that both take the same actions.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba import carray, njit
from numba.core import cgutils, types
from numba.extending import intrinsic

from papergym.agents.bandits import mdbe_calibration_table as _calibration_table
from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.agents.rng import rand_uniform as _rand
from papergym.agents.rng import rng_state as _rng_state

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

# ============================================================================ state structures
# The kernels read two named tuples (numba compiles a NamedTuple argument as a struct of its fields, so
# the field names below are the kernels' vocabulary):
#
# * ``Config``: the problem, the hyperparameters and the memory layout, shared by all runs, read only.
# * ``State``: everything one run carries from round to round. ``BatchedMDBE`` holds one ``State`` whose
#   arrays have a leading run axis (views of one byte arena, see ``_make_arena``); ``_row_state`` takes
#   row ``i`` of it (views, no copy), which is what the per-run kernels see.
#
# Cells of all depths live in flat per-run arrays: depth ``j``'s ``n_cells[j]`` cells are at
# ``cell_offset[j] .. cell_offset[j] + n_cells[j] - 1`` (left to right for d = 1, Morton order for d > 1).
# Per-depth arrays are indexed by the depth ``j = 0 .. max_depth`` (entry 0 unused).


class Config(NamedTuple):
    """What all runs share (read only in the kernels). Flags are the ints 0 / 1."""

    d: int  #: dimension of the action cube [0, 1]^d
    n_children: int  #: children of a cell, G = 2^d
    growth: int  #: block m lasts growth^m rounds, a depth-j replay growth^j
    min_depth: int  #: coarsest replay depth (episodes start blocks at min_depth + 1)
    max_depth: int  #: deepest block reachable within the horizon
    horizon: int  #: T
    all_starts: int  #: 1: every window start s1 (start_grid="all"); 0: the dyadic grid
    code_compat: int  #: 1: reproduce the official code's quirks (module docstring)
    log_block: int  #: 1: threshold log term log(growth^m); 0: log T
    absolute_schedule: int  #: 1: replay starts keyed by absolute round; 0: by block offset
    c0: float  #: threshold constant
    log_T: float  #: log T (0 for T = 1)
    log_growth: float  #: log(growth)
    n_cells: np.ndarray  #: [j] number of depth-j cells, G^(j-1)
    cell_offset: np.ndarray  #: [j] first index of depth j in the flat per-cell arrays
    log_length: np.ndarray  #: [j] capacity of depth j's event log (its longest window, in rounds)
    log_offset: np.ndarray  #: [j] first index of depth j in the flat event-log arrays
    checkpoint_every: np.ndarray  #: [j] C_j = max(32, n_cells[j]): rounds between prefix checkpoints
    checkpoint_offset: np.ndarray  #: [j] first index of depth j in the flat checkpoint array
    growth_pow: np.ndarray  #: [j] growth^j (block / replay length of depth j)
    n_windows: np.ndarray  #: [j] K_j: sliding prefixes kept for depth j (dyadic windows k = 0 .. K_j - 1)
    prefix_offset: np.ndarray  #: [j] first index of depth j in the flat window_prefix array (K_j rows)


class State(NamedTuple):
    """What one run carries from round to round (a leading run axis in ``BatchedMDBE``)."""

    rng: np.ndarray  #: (4,) uint64: the run's xoshiro256** generator state
    counters: np.ndarray  #: (N_COUNTERS,) int64: the run's integer scalars, indexed by the _I_* names
    c0_log: np.ndarray  #: (1,) float: c0 x the log term of the current block (threshold factor)
    depth_on: np.ndarray  #: [j] int64: 1 if depth j is active (the block depth m or a running replay)
    window_start: np.ndarray  #: [j] int64: s_start, the round depth j's window started
    window_end: np.ndarray  #: [j] int64: the round depth j's block / replay ends (first round after it)
    active: np.ndarray  #: (cells,) int8: 1 if the cell is active (not evicted, at a depth switched on)
    master: np.ndarray  #: (n_cells[max_depth],) int8: B_MASTER over the depth-m cells
    evict: np.ndarray  #: (cells,) int8: cells marked for eviction in this round's tests
    n_desc: np.ndarray  #: (cells,) int64: active descendants of a cell at the next active depth
    prob: np.ndarray  #: (cells,) float: P_t(B), the probability that the descent reaches cell B
    window_sum: np.ndarray  #: (cells,) float: sum of the cell's estimates over its depth's window so far
    log_cell: np.ndarray  #: (log,) int32: per depth and window position, the cell hit (-1: none)
    log_value: np.ndarray  #: (log,) float: its importance-weighted estimate Y_t / P_t(B)
    checkpoints: np.ndarray  #: (checkpoint,) float: window_sum of every cell every C_j window positions
    schedule: np.ndarray  #: (entries, 2) int64: the block's replay starts (key, depth), sorted by key
    restart_times: np.ndarray  #: (T // 4 + 2,) int64: the rounds at which shifts were declared
    x: np.ndarray  #: (d,) float: the action of the current round
    window_prefix: np.ndarray  #: (prefix,) float: per depth j and k < K_j, the cells' sums over positions [0, e - 2^k)
    prefix_end: np.ndarray  #: [j] int64: the window end e those sums were last brought to (-1: none yet)


# ---- State.counters: the run's integer scalars
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
N_COUNTERS = 11


# ============================================================================ numba kernels
@njit(cache=True)
def _draw_schedule(rng, m, growth, min_depth, max_offset, out):
    """Step 3: replay starts ``(offset, depth)`` of a depth-``m`` block, offsets ``< max_offset``,
    written to the rows of ``out``.

    Offsets ``s >= 2`` that are multiples of ``growth^j``; depths scanned finest first, one uniform
    per depth tried, the first success ends the scan of ``s``. Returns the number of entries.
    """
    n = 0
    step = growth**min_depth
    s = step  # the smallest multiple of growth^min_depth that is >= 2
    while s < max_offset:
        for j in range(m - 1, min_depth - 1, -1):
            pj = growth**j
            if s % pj == 0:
                if _rand(rng) < math.sqrt(pj / (s + 1.0)):
                    out[n, 0] = s
                    out[n, 1] = j
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


@njit(cache=True, inline="always")
def _reset_window(cfg, st, j):
    """A depth's window (block for m, replay otherwise) starts: window sums, checkpoint 0 and the sliding
    prefixes = 0."""
    wsum = st.window_sum
    ck = st.checkpoints
    b0 = cfg.cell_offset[j]
    c0 = cfg.checkpoint_offset[j]
    for b in range(cfg.n_cells[j]):
        wsum[b0 + b] = 0.0
        ck[c0 + b] = 0.0
    pw = st.window_prefix
    p0 = cfg.prefix_offset[j]
    for i in range(cfg.n_windows[j] * cfg.n_cells[j]):
        pw[p0 + i] = 0.0
    st.prefix_end[j] = -1


@njit(cache=True, inline="always")
def _new_block(cfg, st, t, m):
    """Step 2 (+ step 3): start a depth-``m`` block at round ``t``."""
    iv = st.counters
    blen = cfg.growth_pow[m]
    iv[_I_M] = m
    iv[_I_T0] = t
    iv[_I_BLEN] = blen
    act = st.active
    master = st.master
    for j in range(cfg.max_depth + 1):
        st.depth_on[j] = 0
    act[:] = 0
    nm = cfg.n_cells[m]
    b0 = cfg.cell_offset[m]
    for b in range(nm):
        act[b0 + b] = 1
        master[b] = 1
    for b in range(nm, master.shape[0]):
        master[b] = 0
    iv[_I_NMASTER] = nm
    st.depth_on[m] = 1
    st.window_start[m] = t
    st.window_end[m] = t + blen
    _reset_window(cfg, st, m)
    # threshold log factor: log T, or log growth^m ("block")
    if cfg.log_block == 1:
        st.c0_log[0] = cfg.c0 * m * cfg.log_growth
    else:
        st.c0_log[0] = cfg.c0 * cfg.log_T
    # step 3: schedule. Offsets are never reached beyond the horizon; the absolute-round schedule
    # (the official code's) keys it by absolute round (< growth^m).
    if cfg.absolute_schedule == 1:
        max_off = min(blen, cfg.horizon + 1)
    else:
        max_off = min(blen, cfg.horizon - t + 1)
    iv[_I_NSCHED] = _draw_schedule(st.rng, m, cfg.growth, cfg.min_depth, max_off, st.schedule)
    iv[_I_SPTR] = 0
    iv[_I_DIRTY] = 1


@njit(cache=True)
def _sched_has(sched, n, s, j):
    """Is ``(s, j)`` among the first ``n`` rows of the (key-sorted) schedule ``sched``?"""
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        if sched[mid, 0] < s:
            lo = mid + 1
        else:
            hi = mid
    return lo < n and sched[lo, 0] == s and sched[lo, 1] == j


@njit(cache=True, inline="always")
def _deactivate(cfg, st, j):
    """Switch depth ``j`` off (its replay ended): its cells are inactive."""
    act = st.active
    st.depth_on[j] = 0
    b0 = cfg.cell_offset[j]
    for b in range(cfg.n_cells[j]):
        act[b0 + b] = 0


@njit(cache=True, inline="always")
def _round_start(cfg, st, t):
    """Step 4: replays ending / starting at round ``t``."""
    iv = st.counters
    on = st.depth_on
    act = st.active
    m = iv[_I_M]
    t0 = iv[_I_T0]
    mind = cfg.min_depth
    ended = False
    if cfg.code_compat == 0:
        # every replay ending now is deactivated
        for j in range(mind, m):
            if on[j] == 1 and st.window_end[j] == t:
                _deactivate(cfg, st, j)
                ended = True
    else:
        # code: depths j whose schedule has an entry at absolute round t - growth^j (it may never
        # have started in this block); only the coarsest one is deactivated
        for j in range(mind, m):
            s = t - cfg.growth_pow[j]
            if s >= 0 and s < cfg.growth_pow[m] and _sched_has(st.schedule, iv[_I_NSCHED], s, j):
                _deactivate(cfg, st, j)
                ended = True
                break
    if ended:
        iv[_I_DIRTY] = 1
        only_m = True
        for j in range(mind, m):
            if on[j] == 1:
                only_m = False
        if only_m:  # restore B_MASTER as the active depth-m set (a no-op, see module docstring)
            master = st.master
            b0 = cfg.cell_offset[m]
            for b in range(cfg.n_cells[m]):
                act[b0 + b] = master[b]
    # a replay starting now: the schedule key is the block offset, or the absolute round
    key = t if cfg.absolute_schedule == 1 else t - t0
    sched = st.schedule
    n = iv[_I_NSCHED]
    p = iv[_I_SPTR]
    while p < n and sched[p, 0] < key:
        p += 1
    if p < n and sched[p, 0] == key:
        j = sched[p, 1]
        on[j] = 1
        st.window_start[j] = t
        st.window_end[j] = t + cfg.growth_pow[j]
        b0 = cfg.cell_offset[j]
        for b in range(cfg.n_cells[j]):  # all depth-j cells, evicted regions included
            act[b0 + b] = 1
        _reset_window(cfg, st, j)
        iv[_I_DIRTY] = 1
        p += 1
    iv[_I_SPTR] = p


@njit(cache=True, inline="always")
def _recompute_probs(cfg, st):
    """P_t (step 5): product of uniform split probabilities along the descent; n_desc = #active
    descendants of each cell at the next active depth."""
    G = cfg.n_children
    n_cells = cfg.n_cells
    cell_offset = cfg.cell_offset
    act = st.active
    prob = st.prob
    cnt = st.n_desc
    on = st.depth_on
    m = st.counters[_I_M]
    prev = -1
    for j in range(1, m + 1):
        if on[j] == 0:
            continue
        nj = n_cells[j]
        b0 = cell_offset[j]
        if prev < 0:
            c = 0
            for b in range(nj):
                c += act[b0 + b]
            for b in range(nj):
                prob[b0 + b] = 1.0 / c if (act[b0 + b] == 1 and c > 0) else 0.0
        else:
            r = G ** (j - prev)
            pb0 = cell_offset[prev]
            for a in range(n_cells[prev]):
                c = 0
                for b in range(a * r, (a + 1) * r):
                    c += act[b0 + b]
                cnt[pb0 + a] = c
                pa = prob[pb0 + a]
                for b in range(a * r, (a + 1) * r):
                    prob[b0 + b] = pa / c if (act[b0 + b] == 1 and pa > 0.0) else 0.0
        prev = j
    if prev >= 0:
        pb0 = cell_offset[prev]
        for a in range(n_cells[prev]):
            cnt[pb0 + a] = 0
    st.counters[_I_DIRTY] = 0


@njit(cache=True, inline="always")
def _sample(cfg, st):
    """Step 5: descent through the active depths; X_t uniform in the final cell (into ``st.x``)."""
    d = cfg.d
    G = cfg.n_children
    cell_offset = cfg.cell_offset
    act = st.active
    rs = st.rng
    on = st.depth_on
    x = st.x
    m = st.counters[_I_M]
    j = 1
    while on[j] == 0:
        j += 1
    nj = cfg.n_cells[j]
    b0 = cell_offset[j]
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
        while j2 <= m and on[j2] == 0:
            j2 += 1
        if j2 > m:
            break
        if cfg.code_compat == 1 and j2 != j + 1:
            break  # code quirk: only direct children are followed
        c = st.n_desc[cell_offset[j] + a]
        if c == 0:
            break
        k = min(int(_rand(rs) * c), c - 1)
        r = G ** (j2 - j)
        b0 = cell_offset[j2]
        na = -1
        for b in range(a * r, (a + 1) * r):
            if act[b0 + b] == 1:
                if k == 0:
                    na = b
                    break
                k -= 1
        a = na
        j = j2
    st.counters[_I_FINJ] = j
    st.counters[_I_FINA] = a
    scale = 2.0 ** (j - 1)
    for kk in range(d):
        # coordinate kk of cell a (as _coords, without an allocation per round)
        ck = 0
        for lev in range(j - 1):
            ck |= ((a >> (d * lev + kk)) & 1) << lev
        x[kk] = min((ck + _rand(rs)) / scale, 1.0)


@njit(cache=True)
def _cell_of_x(d, final_depth, final_cell, x, j):
    """Index of the depth-``j`` cell containing X_t = ``x``, drawn in cell ``final_cell`` of depth
    ``final_depth`` (exact ancestor of the final cell when ``j`` is not finer than it; else
    floor(X 2^{j-1}) clamped inside the final cell). Same arithmetic as ``_coords`` / ``_encode``,
    coordinate by coordinate, without allocating."""
    jf = final_depth
    af = final_cell
    if j <= jf:
        return af >> (d * (jf - j))
    sh = j - jf
    side = 1 << (j - 1)
    a = 0
    for k in range(d):
        cfk = 0  # coordinate k of the final cell (units of 2^-(jf-1))
        for lev in range(jf - 1):
            cfk |= ((af >> (d * lev + k)) & 1) << lev
        v = int(math.floor(x[k] * side))
        lo = cfk << sh
        hi = lo + (1 << sh) - 1
        ck = min(max(v, lo), hi)
        for lev in range(j - 1):
            a |= ((ck >> lev) & 1) << (d * lev + k)
    return a


# Speed: numba passes a NamedTuple to a function it does not inline field by field (~190 words for
# Config + State), which costs more than a round's work. The per-round kernels are therefore inlined
# (``inline="always"``) into the two entry points, and the helpers below (``_prefix_at``: the window-end sums
# of ``code_compat``, and the tests' reference for the sliding prefixes; ``_threshold``: the ``"all"`` grid)
# take the arrays they need, by keyword.
@njit(cache=True)
def _prefix_at(checkpoints, log_cell, log_value, n_cells, checkpoint_start, log_start, checkpoint_every, qpos, out):
    """out[b] = sum of one depth's estimates of cell b over window positions ``[0, qpos)``.

    ``checkpoints[checkpoint_start + k * n_cells + b]``: that sum over ``[0, k * checkpoint_every)``;
    ``log_cell[log_start + r]`` / ``log_value[log_start + r]``: the cell hit at position ``r`` and its
    estimate (State fields)."""
    cidx = qpos // checkpoint_every
    base = checkpoint_start + cidx * n_cells
    for b in range(n_cells):
        out[b] = checkpoints[base + b]
    for r in range(cidx * checkpoint_every, qpos):
        node = log_cell[log_start + r]
        if node >= 0:
            out[node] += log_value[log_start + r]


@njit(cache=True)
def _threshold(n, j, d, c0log):
    """Step 7: c0 log(.) sqrt(max(n 2^{dj}, 4^{dj})) + 4 n / 2^j."""
    a = 2.0 ** (d * j)
    return c0log * math.sqrt(max(n * a, a * a)) + 4.0 * n / 2.0**j


@njit(cache=True, inline="always")
def _test_depth_dyadic(cfg, st, j, e, wend, wtmp):
    """Windows [s1, e] with e - s1 a power of two, plus the whole window (positions, 0 = s_start);
    ``wend``: the window sums over positions [0, e]; ``wtmp``: scratch.

    Window ``k`` (``q1 = e - 2^k > 0``) needs the cells' sums over positions ``[0, q1)``. ``q1`` moves
    one position per round (``e`` does), so these prefixes slide: ``window_prefix`` keeps one per ``k``,
    brought forward from the previous round's ``e`` (``prefix_end``) by adding the log entries in between,
    in position order from 0 -- the same additions, in the same order, as ``_prefix_at`` (checkpoint =
    the running window sum; then the entries after it), hence the same numbers; a round costs one log
    entry per window instead of a checkpoint copy and up to ``C_j`` entries. ``W = wend - prefix``; all
    ordered pairs at once: ``B'`` (active) is marked iff ``max_B W(B) - W(B') > thr`` over active ``B``."""
    nj = cfg.n_cells[j]
    b0 = cfg.cell_offset[j]
    lstart = cfg.log_offset[j]
    p0 = cfg.prefix_offset[j]
    c0log = st.c0_log[0]
    ln = st.log_cell
    lv = st.log_value
    act = st.active
    ev = st.evict
    pw = st.window_prefix
    last = st.prefix_end[j]
    # _threshold's factors for this depth (the same operations, hoisted)
    a_dj = 2.0 ** (cfg.d * j)
    p_j = 2.0**j
    any_ev = False
    k = 0
    while True:
        q1 = e - (1 << k)
        if q1 <= 0:
            q1 = 0
        mx = -np.inf
        mn = np.inf
        if q1 > 0:
            pb = p0 + k * nj
            r0 = last - (1 << k)  # this prefix covers [0, r0) (nothing yet if r0 <= 0)
            if r0 < 0:
                r0 = 0
            for r in range(r0, q1):
                node = ln[lstart + r]
                if node >= 0:
                    pw[pb + node] += lv[lstart + r]
            for b in range(nj):
                w = wend[b] - pw[pb + b]
                wtmp[b] = w
                if act[b0 + b] == 1:
                    mx = max(mx, w)
                    mn = min(mn, w)
        else:  # the whole window: the prefix is checkpoint 0, i.e. 0
            for b in range(nj):
                w = wend[b] - 0.0
                wtmp[b] = w
                if act[b0 + b] == 1:
                    mx = max(mx, w)
                    mn = min(mn, w)
        n = e - q1 + 1
        thr = c0log * math.sqrt(max(n * a_dj, a_dj * a_dj)) + 4.0 * n / p_j
        if mx - mn > thr:
            for b in range(nj):
                if act[b0 + b] == 1 and mx - wtmp[b] > thr:
                    ev[b0 + b] = 1
            any_ev = True
        if q1 == 0:
            break
        k += 1
    st.prefix_end[j] = e
    return any_ev


@njit(cache=True, inline="always")
def _test_depth_all(cfg, st, j, e, w):
    """Every window [s1, e], s1 = e-1 .. 0 (the code's grid), scanning the log backwards with
    running max / min of the window sums ``w`` (scratch) over active cells."""
    d = cfg.d
    c0log = st.c0_log[0]
    act = st.active
    ev = st.evict
    ln = st.log_cell
    lv = st.log_value
    nj = cfg.n_cells[j]
    b0 = cfg.cell_offset[j]
    l0 = cfg.log_offset[j]
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
def _evict_subtree(cfg, active, j, b, m):
    """Evict cell b of depth j and all its descendants (every finer depth up to m) in ``active``."""
    G = cfg.n_children
    cell_offset = cfg.cell_offset
    active[cell_offset[j] + b] = 0
    for j2 in range(j + 1, m + 1):
        r = G ** (j2 - j)
        b0 = cell_offset[j2]
        for c in range(b * r, (b + 1) * r):
            active[b0 + c] = 0


@njit(cache=True, inline="always")
def _update_run(cfg, st, y, wa, wb):
    """Feedback ``y`` of round t (steps 6-10), then round t+1's bookkeeping and action (steps 4-5).
    ``wa``, ``wb``: scratch vectors of at least ``n_cells[max_depth]`` entries."""
    T = cfg.horizon
    compat = cfg.code_compat
    n_cells = cfg.n_cells
    cell_offset = cfg.cell_offset
    iv = st.counters
    on = st.depth_on
    wstart = st.window_start
    act = st.active
    prob = st.prob
    wsum = st.window_sum
    ln = st.log_cell
    lv = st.log_value
    ck = st.checkpoints
    ev = st.evict
    master = st.master
    t = iv[_I_T]
    m = iv[_I_M]
    # ---- step 6: importance-weighted estimates of the active cells of every active depth
    for j in range(1, m + 1):
        if on[j] == 0:
            continue
        p = t - wstart[j]
        l0 = cfg.log_offset[j]
        b0 = cell_offset[j]
        a = _cell_of_x(d=cfg.d, final_depth=iv[_I_FINJ], final_cell=iv[_I_FINA], x=st.x, j=j)
        if act[b0 + a] == 1 and prob[b0 + a] > 0.0:
            v = y / prob[b0 + a]
            ln[l0 + p] = a
            lv[l0 + p] = v
            wsum[b0 + a] += v
        else:
            ln[l0 + p] = -1
            lv[l0 + p] = 0.0
        C = cfg.checkpoint_every[j]
        if (p + 1) % C == 0:  # checkpoint of the window sums over positions [0, p]
            c0 = cfg.checkpoint_offset[j] + ((p + 1) // C) * n_cells[j]
            for b in range(n_cells[j]):
                ck[c0 + b] = wsum[b0 + b]
    # ---- step 7: eviction tests on the round-start active sets, evictions applied afterwards
    any_ev = False
    for j in range(1, m + 1):
        if on[j] == 0:
            continue
        p = t - wstart[j]
        if p <= 2:  # no test while t - s_start <= 2
            continue
        e = p - compat  # window end: t (t - 1 in code_compat)
        if cfg.all_starts == 0:
            if compat == 1:
                _prefix_at(
                    checkpoints=ck,
                    log_cell=ln,
                    log_value=lv,
                    n_cells=n_cells[j],
                    checkpoint_start=cfg.checkpoint_offset[j],
                    log_start=cfg.log_offset[j],
                    checkpoint_every=cfg.checkpoint_every[j],
                    qpos=e + 1,
                    out=wb,
                )
            else:
                b0 = cell_offset[j]
                for b in range(n_cells[j]):
                    wb[b] = wsum[b0 + b]
            if _test_depth_dyadic(cfg, st, j, e, wb, wa):
                any_ev = True
        else:
            if _test_depth_all(cfg, st, j, e, wa):
                any_ev = True
    if any_ev:
        for j in range(1, m + 1):
            if on[j] == 0:
                continue
            b0 = cell_offset[j]
            for b in range(n_cells[j]):
                if ev[b0 + b] == 1:
                    ev[b0 + b] = 0
                    _evict_subtree(cfg, act, j, b, m)
        # ---- step 8: B_MASTER <- B_MASTER ∩ active depth-m cells
        b0 = cell_offset[m]
        nmaster = 0
        for b in range(n_cells[m]):
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
        if r < st.restart_times.shape[0]:
            st.restart_times[r] = t - 1
        iv[_I_RESTARTS] = r + 1
        if t <= T:
            _new_block(cfg, st, t, cfg.min_depth + 1)
    elif t == iv[_I_T0] + iv[_I_BLEN]:
        if t <= T:
            _new_block(cfg, st, t, m + 1)
    if t > T:
        return
    # ---- round t+1: steps 4-5
    _round_start(cfg, st, t)
    if iv[_I_DIRTY] == 1:
        _recompute_probs(cfg, st)
    _sample(cfg, st)


@njit(cache=True, inline="always")
def _init_run(cfg, st):
    """Round 1: steps 1-2 (episode and first block), then steps 4-5."""
    st.counters[:] = 0
    st.counters[_I_T] = 1
    _new_block(cfg, st, 1, cfg.min_depth + 1)
    _round_start(cfg, st, 1)
    _recompute_probs(cfg, st)
    _sample(cfg, st)


# Calls from Python. numba's dispatcher costs ~0.12 us per array it receives (a NamedTuple argument costs
# ~15 us more), against ~1-3 us for a round of MDBE's work; the entry points below therefore receive five
# arrays: the config packed in one int64 and one float64 array (``_pack_config``), one uint8 *arena* per
# batch holding every field of every run's ``State`` (row ``i`` = run ``i``; each field a byte range of
# the row, 8-byte aligned, the layout in the int config), the actions and the rewards. The kernels take
# typed views of the row's byte ranges (``_row_state``); ``BatchedMDBE._state`` holds numpy views of the
# same memory, so Python reads what the kernels write.
_CONFIG_INTS = Config._fields[:10]
_CONFIG_FLOATS = Config._fields[10:13]
_CONFIG_ARRAYS = Config._fields[13:]
assert _CONFIG_INTS[-1] == "absolute_schedule" and _CONFIG_FLOATS == ("c0", "log_T", "log_growth")
#: arena slots: the State fields in order, then two per-run scratch vectors
_SLOT_DTYPES = (
    np.uint64,  # rng
    np.int64,  # counters
    np.float64,  # c0_log
    np.int64,  # depth_on
    np.int64,  # window_start
    np.int64,  # window_end
    np.int8,  # active
    np.int8,  # master
    np.int8,  # evict
    np.int64,  # n_desc
    np.float64,  # prob
    np.float64,  # window_sum
    np.int32,  # log_cell
    np.float64,  # log_value
    np.float64,  # checkpoints
    np.int64,  # schedule (entries, 2)
    np.int64,  # restart_times
    np.float64,  # x
    np.float64,  # window_prefix
    np.int64,  # prefix_end
    np.float64,  # scratch a
    np.float64,  # scratch b
)
assert len(State._fields) == 20
_N_SLOTS = len(_SLOT_DTYPES)
_CI_LAYOUT = len(_CONFIG_INTS)  # int config: the ints, then (byte offset, byte length) per slot, then the rows
_CI_ROWS = _CI_LAYOUT + 2 * _N_SLOTS


def _make_arena(n: int, shapes: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """A zeroed arena of ``n`` rows for slots of per-run ``shapes`` (dtypes: ``_SLOT_DTYPES``); returns
    (arena, the (byte offset, byte length) layout, numpy views ``(n, *shape)`` of every slot)."""
    layout = np.zeros(2 * _N_SLOTS, dtype=np.int64)
    off = 0
    for k, (shape, dt) in enumerate(zip(shapes, _SLOT_DTYPES, strict=True)):
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dt).itemsize
        layout[2 * k : 2 * k + 2] = (off, nbytes)
        off += -(-nbytes // 8) * 8  # every slot 8-byte aligned
    arena = np.zeros((n, max(off, 8)), dtype=np.uint8)
    return arena, layout, _arena_views(arena, layout, shapes)


def _arena_views(arena: np.ndarray, layout: np.ndarray, shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    """Numpy views ``(n, *shape)`` of every slot of ``arena``."""
    n = arena.shape[0]
    return [
        arena[:, o : o + nb].view(dt).reshape((n, *shape))
        for (o, nb), shape, dt in zip(layout.reshape(-1, 2), shapes, _SLOT_DTYPES, strict=True)
    ]


def _pack_config(cfg: Config, layout: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``cfg`` and the arena ``layout`` as (int64: scalars, layout, per-depth rows; float64: scalars)."""
    ints = np.array([getattr(cfg, f) for f in _CONFIG_INTS], dtype=np.int64)
    rows = np.stack([getattr(cfg, f) for f in _CONFIG_ARRAYS]).astype(np.int64)
    return (
        np.concatenate([ints, layout, rows.ravel()]),
        np.array([getattr(cfg, f) for f in _CONFIG_FLOATS], dtype=np.float64),
    )


@intrinsic
def _address(typingctx, addr):
    """The integer ``addr`` as a ``void *`` (for :func:`numba.carray`)."""
    if not isinstance(addr, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(addr), codegen


# Views without reference counts: numba counts references to every array view it copies or passes
# (an atomic increment and decrement, ~10-20 ns each), and the per-round kernels handle ~50 views: profiled
# (perf), NRT_incref / NRT_decref took more time than MDBE's own work. Views made by ``carray`` over a raw
# address carry no reference count; the memory they see is owned by the arrays the entry points receive
# (``ci`` and ``arena``), alive for the whole call.
@njit(cache=True)
def _unpack_config(ci, cf):
    """Inverse of ``_pack_config`` (the layout stays in ``ci``)."""
    rows = carray(_address(ci.ctypes.data + 8 * _CI_ROWS), (len(_CONFIG_ARRAYS), ci[4] + 1), np.int64)
    return Config(
        ci[0],
        ci[1],
        ci[2],
        ci[3],
        ci[4],
        ci[5],
        ci[6],
        ci[7],
        ci[8],
        ci[9],
        cf[0],
        cf[1],
        cf[2],
        rows[0],
        rows[1],
        rows[2],
        rows[3],
        rows[4],
        rows[5],
        rows[6],
        rows[7],
        rows[8],
    )


@njit(cache=True, inline="always")
def _slot(ci, base, k, itemsize):
    """(address, length) of arena slot ``k`` of the run whose arena row starts at address ``base``."""
    return _address(base + ci[_CI_LAYOUT + 2 * k]), ci[_CI_LAYOUT + 2 * k + 1] // itemsize


@njit(cache=True, inline="always")
def _f8(ci, base, k):
    p, n = _slot(ci, base, k, 8)
    return carray(p, n, np.float64)


@njit(cache=True, inline="always")
def _i8(ci, base, k):
    p, n = _slot(ci, base, k, 8)
    return carray(p, n, np.int64)


@njit(cache=True, inline="always")
def _row_state(ci, base):
    """The ``State`` of one run: typed views of its arena row (at address ``base``)."""
    p, n = _slot(ci, base, 0, 8)
    rng = carray(p, n, np.uint64)
    p, n = _slot(ci, base, 6, 1)
    active = carray(p, n, np.int8)
    p, n = _slot(ci, base, 7, 1)
    master = carray(p, n, np.int8)
    p, n = _slot(ci, base, 8, 1)
    evict = carray(p, n, np.int8)
    p, n = _slot(ci, base, 12, 4)
    log_cell = carray(p, n, np.int32)
    p, n = _slot(ci, base, 15, 16)
    schedule = carray(p, (n, 2), np.int64)
    return State(
        rng,
        _i8(ci, base, 1),
        _f8(ci, base, 2),
        _i8(ci, base, 3),
        _i8(ci, base, 4),
        _i8(ci, base, 5),
        active,
        master,
        evict,
        _i8(ci, base, 9),
        _f8(ci, base, 10),
        _f8(ci, base, 11),
        log_cell,
        _f8(ci, base, 13),
        _f8(ci, base, 14),
        schedule,
        _i8(ci, base, 16),
        _f8(ci, base, 17),
        _f8(ci, base, 18),
        _i8(ci, base, 19),
    )


@njit(cache=True)
def _init_all(ci, cf, arena):
    """Round 1 of every run (rows of ``arena``)."""
    cfg = _unpack_config(ci, cf)
    for i in range(arena.shape[0]):
        _init_run(cfg, _row_state(ci, arena.ctypes.data + i * arena.shape[1]))


@njit(cache=True)
def _update_all(ci, cf, arena, actions, y):
    """All runs (rows of ``arena``), one round (``actions`` (runs, d) played, rewards ``y``). Returns 0,
    or (nothing changed) 1 if an action is not the one proposed, 2 if a reward is not finite."""
    cfg = _unpack_config(ci, cf)
    n = arena.shape[0]
    a0 = arena.ctypes.data
    stride = arena.shape[1]
    for i in range(n):
        x = _f8(ci, a0 + i * stride, 17)
        for k in range(x.shape[0]):
            if actions[i, k] != x[k]:
                return 1
        if not np.isfinite(y[i]):
            return 2
    for i in range(n):
        base = a0 + i * stride
        _update_run(cfg, _row_state(ci, base), y[i], _f8(ci, base, 20), _f8(ci, base, 21))
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
            raise ValueError(
                "code_compat=True reproduces the official code, whose replay schedule is "
                "'absolute-round'; it cannot be combined with replay_schedule='block-offset'"
            )
        self.problem = problem
        self.d, self.T = d, T
        self.hyperparameters = dict(
            c0=float(c0),
            log_term=log_term,
            min_depth=int(min_depth),
            growth=int(growth),
            start_grid=start_grid,
            code_compat=bool(code_compat),
            replay_schedule=replay_schedule,
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
        lay = np.zeros((9, mmax + 1), dtype=np.int64)  # rows: the Config fields n_cells .. prefix_offset
        noff = loff = coff = poff = 0
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
            K = int(length).bit_length() + 1  # dyadic windows with e - 2^k > 0: 2^k < e < length
            lay[:, j] = (nj, noff, length, loff, C, coff, growth**j, K, poff)
            noff += nj
            loff += length
            coff += ncheck * nj
            poff += K * nj
        self._cfg = Config(
            d=d,
            n_children=G,
            growth=growth,
            min_depth=min_depth,
            max_depth=mmax,
            horizon=T,
            all_starts=int(start_grid == "all"),
            code_compat=int(bool(code_compat)),
            log_block=int(log_term == "block"),
            absolute_schedule=int(replay_schedule == "absolute-round"),
            c0=float(c0),
            log_T=math.log(T) if T > 1 else 0.0,
            log_growth=math.log(growth),
            n_cells=lay[0],
            cell_offset=lay[1],
            log_length=lay[2],
            log_offset=lay[3],
            checkpoint_every=lay[4],
            checkpoint_offset=lay[5],
            growth_pow=lay[6],
            n_windows=lay[7],
            prefix_offset=lay[8],
        )
        nmax = G ** (mmax - 1)
        step = growth**min_depth
        shapes = [
            (4,),  # rng
            (N_COUNTERS,),
            (1,),  # c0_log
            (mmax + 1,),  # depth_on
            (mmax + 1,),  # window_start
            (mmax + 1,),  # window_end
            (noff,),  # active
            (nmax,),  # master
            (noff,),  # evict
            (noff,),  # n_desc
            (noff,),  # prob
            (noff,),  # window_sum
            (loff,),  # log_cell
            (loff,),  # log_value
            (coff,),  # checkpoints
            ((T + 1) // step + 1, 2),  # schedule
            (T // 4 + 2,),  # restart_times
            (d,),  # x
            (poff,),  # window_prefix
            (mmax + 1,),  # prefix_end
            (nmax,),  # scratch a
            (nmax,),  # scratch b
        ]
        self._arena, layout, views = _make_arena(n, shapes)
        self._shapes = shapes
        self._state = State(*views[:20])  # one row per run (field meanings: State); views of the arena
        self._state.rng[:] = np.stack([_rng_state(s) for s in seeds])
        self._t = 1
        self._xshape = (n, d)
        self._ci, self._cf = _pack_config(self._cfg, layout)
        _init_all(self._ci, self._cf, self._arena)

    # copies and pickles: the State views are remade over the copied arena (a copy of each view would not
    # see what the kernels write)
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_state"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        layout = self._ci[_CI_LAYOUT : _CI_LAYOUT + 2 * _N_SLOTS]
        self._state = State(*_arena_views(self._arena, layout, self._shapes)[:20])

    # ------------------------------------------------------------------ protocol
    def act(self, observations: Any = None) -> np.ndarray:
        """Actions of the current round, ``(n_envs, d)`` in ``[0, 1]^d`` (observations unused)."""
        if self._t > self.T:
            raise RuntimeError(f"MDBE was built for horizon T={self.T}; all {self.T} rounds are played")
        return self._state.x.copy()

    def update(self, actions: Any, rewards: Any, observations: Any = None) -> None:
        """Feedback of the current round (rewards ``(n_envs,)``); prepares the next action."""
        if self._t > self.T:
            raise RuntimeError(f"MDBE was built for horizon T={self.T}; update called for round {self._t}")
        a, y = actions, rewards
        if not (  # fast path: the arrays act() returned and the env's rewards, as they are
            type(a) is np.ndarray
            and type(y) is np.ndarray
            and a.dtype == np.float64
            and y.dtype == np.float64
            and a.shape == self._xshape
            and y.shape == (self.n_envs,)
        ):
            a = np.asarray(actions, dtype=float)
            y = np.asarray(rewards, dtype=float)
            if a.shape != self._xshape:
                a = a.reshape(self._xshape) if a.size == self._state.x.size else a
            if y.shape != (self.n_envs,):
                y = y.reshape(-1)
            if a.shape != self._xshape or y.shape != (self.n_envs,):
                raise ValueError(
                    f"expected actions of shape {self._xshape} and rewards of shape ({self.n_envs},), "
                    f"got {np.shape(actions)} and {np.shape(rewards)}"
                )
        status = _update_all(self._ci, self._cf, self._arena, a, y)
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
        r = self._state.counters[:, _I_RESTARTS]
        return {
            "restarts": [int(v) for v in r],
            "restart_times": [self._state.restart_times[i, : int(r[i])].tolist() for i in range(self.n_envs)],
        }

    # ------------------------------------------------------------------ inspection (tests, plots)
    @property
    def round(self) -> int:
        """The round whose action ``act`` returns (1-based)."""
        return self._t

    @property
    def block_depth(self) -> np.ndarray:
        """Current block depth ``m`` of every run."""
        return self._state.counters[:, _I_M].copy()

    def block_start(self, run: int = 0) -> int:
        return int(self._state.counters[run, _I_T0])

    def schedule(self, run: int = 0) -> list[tuple[int, int]]:
        """Replay starts ``(key, depth)`` of the current block (key = the absolute round, or the block
        offset with ``replay_schedule="block-offset"``)."""
        n = int(self._state.counters[run, _I_NSCHED])
        return [(int(s), int(j)) for s, j in self._state.schedule[run, :n]]

    def active_depths(self, run: int = 0) -> list[int]:
        return [j for j in range(1, self.max_depth + 1) if self._state.depth_on[run, j] == 1]

    def window_start(self, depth: int, run: int = 0) -> int:
        """``s_start`` of an active depth (block start for ``m``, replay start otherwise)."""
        return int(self._state.window_start[run, depth])

    def _cells(self, arr: np.ndarray, depth: int, run: int) -> np.ndarray:
        if not 1 <= depth <= self.max_depth:
            raise ValueError(f"depth must be in 1..{self.max_depth}, got {depth!r}")
        nj, b0 = self._cfg.n_cells[depth], self._cfg.cell_offset[depth]
        return arr[run, b0 : b0 + nj].copy()

    def active_cells(self, depth: int, run: int = 0) -> np.ndarray:
        """Boolean mask of the active cells of ``depth`` (Morton order; left to right for d = 1)."""
        return self._cells(self._state.active, depth, run).astype(bool)

    def probabilities(self, depth: int, run: int = 0) -> np.ndarray:
        """``P_t(B)`` of the cells of ``depth`` for the current round's descent."""
        return self._cells(self._state.prob, depth, run)

    def master_cells(self, run: int = 0) -> np.ndarray:
        """Boolean mask of ``B_MASTER`` over the depth-``m`` cells."""
        m = int(self._state.counters[run, _I_M])
        return self._state.master[run, : self._cfg.n_cells[m]].astype(bool)

    def final_cell(self, run: int = 0) -> tuple[int, int]:
        """``(depth, index)`` of the cell the current action was drawn from."""
        return int(self._state.counters[run, _I_FINJ]), int(self._state.counters[run, _I_FINA])


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


def _calibration_key(
    d: int,
    T: int,
    noise: str,
    sigma: float,
    c0_grid: Any,
    false_alarm_target: float,
    calibration_runs: int,
    mdbe_hp: dict[str, Any],
) -> tuple:
    grid = tuple(float(c) for c in c0_grid)
    sig = None if noise == "bernoulli" else float(sigma)  # sigma only matters for Gaussian noise
    hp = {**{k: DEFAULTS[k] for k in _MDBE_HP}, **mdbe_hp}
    if hp["growth"] is None:
        hp["growth"] = 2 ** (d + 2)
    return (
        int(d),
        int(T),
        str(noise),
        sig,
        grid,
        float(false_alarm_target),
        int(calibration_runs),
        tuple(sorted(hp.items())),
    )


def _check_calibration_args(c0_grid: Any, false_alarm_target: Any, calibration_runs: Any) -> tuple:
    try:
        grid = sorted({float(c) for c in c0_grid})
    except (TypeError, ValueError):
        raise ValueError(f"c0_grid must be a list of positive numbers, got {c0_grid!r}") from None
    if not grid or not all(math.isfinite(c) and c > 0 for c in grid):
        raise ValueError(f"c0_grid must be a non-empty list of positive finite numbers, got {c0_grid!r}")
    if (
        isinstance(false_alarm_target, bool)
        or not isinstance(false_alarm_target, (int, float, np.integer, np.floating))
        or not 0.0 <= float(false_alarm_target) < 1.0
    ):
        raise ValueError(f"false_alarm_target must be a number in [0, 1), got {false_alarm_target!r}")
    if (
        isinstance(calibration_runs, bool)
        or not isinstance(calibration_runs, (int, np.integer))
        or calibration_runs < 1
    ):
        raise ValueError(f"calibration_runs must be an integer >= 1, got {calibration_runs!r}")
    return tuple(grid), float(false_alarm_target), int(calibration_runs)


def calibrate_c0(
    d: int = 1,
    horizon: int = 2**15,
    noise: str = "bernoulli",
    sigma: float = 0.1,
    *,
    c0_grid: Any = C0_GRID,
    false_alarm_target: float = 0.05,
    calibration_runs: int = 60,
    **mdbe_hp: Any,
) -> dict[str, Any]:
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
    venv = NonStatLipschitzVectorEnv(
        num_envs=n, instance="piecewise-tents", phases=1, horizon=horizon, d=d, noise=noise, sigma=sigma
    )
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
                alarms = int(np.count_nonzero(agent._state.counters[:, _I_RESTARTS]))
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
        key = _calibration_key(
            e["d"],
            e["T"],
            e["noise"],
            0.1 if e["sigma"] is None else e["sigma"],
            SETTINGS["c0_grid"],
            SETTINGS["false_alarm_target"],
            SETTINGS["calibration_runs"],
            SETTINGS["mdbe"],
        )
        out[key] = {k: e[k] for k in ("c0", "false_alarm_rate", "runs", "target", "tried")}
    return out


def calibrated_c0(
    d: int,
    horizon: int,
    noise: str = "bernoulli",
    sigma: float = 0.1,
    *,
    c0_grid: Any = C0_GRID,
    false_alarm_target: float = 0.05,
    calibration_runs: int = 60,
    **mdbe_hp: Any,
) -> dict[str, Any]:
    """:func:`calibrate_c0`'s result for this class and horizon: from the shipped table
    (:mod:`papergym.agents.bandits.mdbe_calibration_table`, made by ``benchmarks/calibrate_mdbe.py``) when
    it holds the entry, else from this process's cache, else computed (and cached)."""
    grid, target, n = _check_calibration_args(c0_grid, false_alarm_target, calibration_runs)
    key = _calibration_key(d, horizon, noise, sigma, grid, target, n, mdbe_hp)
    hit = shipped_calibrations().get(key) or _CALIBRATION_CACHE.get(key)
    if hit is None:
        hit = calibrate_c0(
            d, horizon, noise, sigma, c0_grid=grid, false_alarm_target=target, calibration_runs=n, **mdbe_hp
        )
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
            raise ValueError(
                f"mdbe-calibrated calibrates on 1-Lipschitz (l-inf) instances; the problem has "
                f"lipschitz={lip!r}, norm={params.get('norm')!r}"
            )
        hp = dict(
            log_term=log_term,
            min_depth=min_depth,
            growth=growth,
            start_grid=start_grid,
            code_compat=code_compat,
            replay_schedule=replay_schedule,
        )
        self.calibration = calibrated_c0(
            d,
            T,
            params.get("noise", "bernoulli"),
            params.get("sigma", 0.1),
            c0_grid=c0_grid,
            false_alarm_target=false_alarm_target,
            calibration_runs=calibration_runs,
            **hp,
        )
        super().__init__(problem, seeds=seeds, c0=self.calibration["c0"], **hp)
        self.hyperparameters.update(
            c0_grid=[float(c) for c in c0_grid],
            false_alarm_target=float(false_alarm_target),
            calibration_runs=int(calibration_runs),
        )

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
