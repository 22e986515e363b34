"""``sampled-dispatch``: the best of ``K`` sampled dispatching rollouts, the start solution of the
``FJSPImprove-v0`` comparison protocol and leaderboard.

Why
    MIStar (Wang et al., *Learning Memory-Enhanced Improvement Heuristics for Flexible Job Shop
    Scheduling*, NeurIPS 2025) starts every improvement run from a solution **sampled from DANIEL**, the
    constructive DRL policy of Wang et al. (IEEE TNNLS 2023), whose sampled solutions are 11.96 % above the
    OR-Tools references on SD2 10x5 (MIStar's results table, column ``DANIEL(S)``). The ``mwkr`` rule of
    ``FJSPImprove-v0`` (earliest-start candidates, earliest-available machine) starts ≈ 68 % above them, which
    leaves the searches a different problem (most of their 400 steps repair the start). This construction
    has no learned part and does not claim to be DANIEL; it is a documented rule of the same start quality.

Rollout (one schedule)
    Operations are dispatched one at a time. For every unfinished job ``j`` its next operation ``o`` is
    placed on the eligible machine with the **earliest finish** ``s_ok + p_ok``, where ``s_ok`` is the
    earliest start on machine ``k`` at or after the job's ready time **in an idle gap or at the end of
    the machine** (insertion: a gap between two scheduled operations is used if ``o`` fits; ties: the
    shorter ``p_ok``, then the lower machine index). The job is chosen by the priority

        ``π_j = (W_o − s_o) / p̄``,

    ``W_o`` = the remaining work of the job from ``o`` on (sum of each remaining operation's mean eligible
    processing time, the MWKR quantity of :mod:`~papergym.envs.scheduling.fjsp.rules`), ``s_o`` = the
    start of ``o`` on its chosen machine, ``p̄`` = the instance's mean of the mean eligible processing
    times: jobs with much work left and an early possible start go first, the two in equal weights.
    Rollout 0 takes the highest priority (greedy; ties: the lower job index); rollouts ``1..K−1`` sample the
    job from ``softmax(π / τ)`` (Gumbel-max: ``argmax π_j + τ G_j``, ``G_j`` standard Gumbel).
Best of K
    The rollout with the smallest makespan (the first one on ties) is returned; its machine orders sort each
    machine's operations by start time. The env evaluates it semi-actively (heads on the disjunctive graph),
    which never exceeds the rollout's makespan.
Hyperparameters [design; not from the paper]
    ``k = 100`` rollouts, temperature ``tau = 0.3`` (in units of ``p̄``). Chosen on the published SD2 10x5
    test set toward DANIEL(S)'s ≈ 12 % start after trying other job rules (earliest finish, earliest
    start, MWKR, MOR, SPT), Giffler–Thompson conflict sets, sampling (operation, machine) pairs, and
    append-only placement (best of 100: 13–60 % on SD2 10x5); then weights ``W : s`` ∈ {1 : 0, 0 : 1,
    1 : 1, 0.5 : 1, 1 : 0.5} and ``tau`` ∈ {0.1, 0.2, 0.3, 0.5, 0.6, 1.0} with insertion (11.9–16.5 %; the
    equal weights, the simplest, kept). Measured mean gaps (README, FJSPImprove-v0 section): SD2 10x5 test
    set 12.61 %, Brandimarte mk01–10 8.89 %, Hurink edata la01–40 12.08 %; the tests check 9–15 % on 20
    fresh SD2 10x5 instances against CP-SAT (11.6 %).
No local search
    Nothing here moves operations of a finished schedule: the start is a constructive schedule, not the
    output of a search over the ``nopt2-lite`` neighbourhood the searches and MIStar walk, so their gains
    are theirs. Measured share of starts with a strictly improving move: SD2 10x5 test set 70/100,
    Hurink edata 34/40, Brandimarte 1/10 (MWKR: 96/100, 37/40, 8/10). Most others have an equal-makespan
    best move (SD2 24, Hurink 6, Brandimarte 9; 6 SD2 starts have only worse moves): with several
    critical paths no single move shortens all of them (a plateau of the makespan, more common on these
    schedules than on MWKR's), not a local optimum reached by descent.
Determinism and cost
    The rollouts draw their noise from a counter-based generator (splitmix64) seeded per rollout from the
    ``numpy`` generator passed in; ``FJSPImprove-v0`` seeds it with the instance's content hash, so the start
    is a function of the instance. One numba-compiled pass per rollout (a cache of each job's earliest
    start per machine, refreshed only where the last placement changed it): 3–5 ms for ``K = 100`` on SD2
    10x5, 10–20 ms on Brandimarte mk01–10, 0.5 s on a 100x10 instance (one core).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from papergym.envs.scheduling.fjsp.graph import Solution, solution_from_schedule
from papergym.envs.scheduling.fjsp.instance import Instance
from papergym.validate import positive_float, positive_int

__all__ = ["SAMPLED_K", "SAMPLED_TAU", "sampled_dispatch", "sampled_rollouts"]

#: rollouts per instance [design]
SAMPLED_K = 100
#: softmax temperature of the job choice, in units of the mean processing time [design]
SAMPLED_TAU = 0.3

_INF = np.int64(1) << np.int64(60)


@nb.njit(cache=True)
def _uniform(state):  # pragma: no cover - compiled
    """splitmix64 step -> a float in (0, 1)."""
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return ((z >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)


@nb.njit(cache=True)
def _earliest_slot(ms, me, cnt, k, ready, p):  # pragma: no cover - compiled
    """Earliest start ``>= ready`` of an operation of length ``p`` on machine ``k`` (an idle gap or the end)
    and the position it takes in the machine's start-ordered list."""
    c = cnt[k]
    # first interval starting after `ready` (starts are sorted): earlier gaps end before `ready`
    lo, hi = 0, c
    while lo < hi:
        mid = (lo + hi) // 2
        if ms[k, mid] <= ready:
            lo = mid + 1
        else:
            hi = mid
    for i in range(lo, c):
        prev_end = me[k, i - 1] if i > 0 else 0
        s = max(ready, prev_end)
        if s + p <= ms[k, i]:
            return s, i
    last = me[k, c - 1] if c > 0 else 0
    return (max(ready, last)), c


@nb.njit(cache=True)
def _rollout(proc, job_start, rem, scale, tau, seed, out_machine, out_start):  # pragma: no cover - compiled
    """One dispatching rollout (module docstring); fills ``out_machine``/``out_start``, returns the makespan."""
    N, M = proc.shape
    J = job_start.shape[0] - 1
    state = np.empty(1, np.uint64)
    state[0] = np.uint64(seed)
    jr = np.zeros(J, np.int64)
    nxt = job_start[:J].copy()
    ms = np.zeros((M, N), np.int64)  # per machine: starts and ends in start order
    me = np.zeros((M, N), np.int64)
    cnt = np.zeros(M, np.int64)
    cs = np.full((J, M), -1, np.int64)  # cached earliest start of job j's next operation on machine k
    cpos = np.zeros((J, M), np.int64)
    for j in range(J):
        for k in range(M):
            if proc[nxt[j], k] > 0:
                cs[j, k] = 0
    for _ in range(N):
        best, bj, bk = -np.inf, -1, -1
        for j in range(J):
            o = nxt[j]
            if o >= job_start[j + 1]:
                continue
            fk, ff = -1, _INF
            for k in range(M):
                if cs[j, k] < 0:
                    continue
                f = cs[j, k] + proc[o, k]
                if f < ff or (f == ff and proc[o, k] < proc[o, fk]):
                    fk, ff = k, f
            score = (rem[o] - cs[j, fk]) / scale
            if tau > 0.0:
                score += -tau * np.log(-np.log(_uniform(state)))
            if score > best:
                best, bj, bk = score, j, fk
        o = nxt[bj]
        s, pos, p = cs[bj, bk], cpos[bj, bk], proc[o, bk]
        c = cnt[bk]
        for i in range(c, pos, -1):
            ms[bk, i] = ms[bk, i - 1]
            me[bk, i] = me[bk, i - 1]
        ms[bk, pos] = s
        me[bk, pos] = s + p
        cnt[bk] = c + 1
        out_machine[o] = bk
        out_start[o] = s
        jr[bj] = s + p
        nxt[bj] = o + 1
        # refresh the cache: every machine for the job that moved on, machine bk for the others
        for j in range(J):
            o2 = nxt[j]
            if o2 >= job_start[j + 1]:
                continue
            if j == bj:
                for k in range(M):
                    if proc[o2, k] > 0:
                        cs[j, k], cpos[j, k] = _earliest_slot(ms, me, cnt, k, jr[j], proc[o2, k])
                    else:
                        cs[j, k] = -1
            elif cs[j, bk] >= 0:
                cs[j, bk], cpos[j, bk] = _earliest_slot(ms, me, cnt, bk, jr[j], proc[o2, bk])
    cmax = 0
    for j in range(J):
        cmax = max(cmax, jr[j])
    return cmax


def _tables(inst: Instance) -> tuple[np.ndarray, float]:
    proc = inst.proc
    mean_p = proc.sum(axis=1) / (proc > 0).sum(axis=1)
    rem = np.empty(inst.n_ops)
    js = inst.job_start
    for j in range(inst.n_jobs):
        rem[js[j] : js[j + 1]] = np.cumsum(mean_p[js[j] : js[j + 1]][::-1])[::-1]
    return rem, float(mean_p.mean())


def sampled_rollouts(
    inst: Instance, rng: np.random.Generator, *, k: int = SAMPLED_K, tau: float = SAMPLED_TAU
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All ``k`` rollouts: ``(makespans (k,), machine (k, N), start (k, N))``; row 0 is the greedy rollout."""
    k, tau = positive_int(k, "k"), positive_float(tau, "tau", allow_zero=True)  # rollouts, temperature
    rem, scale = _tables(inst)
    seeds = rng.integers(1, np.iinfo(np.int64).max, size=k, dtype=np.int64)
    proc = np.ascontiguousarray(inst.proc, dtype=np.int64)
    js = np.ascontiguousarray(inst.job_start, dtype=np.int64)
    machine = np.empty((k, inst.n_ops), dtype=np.int64)
    start = np.empty((k, inst.n_ops), dtype=np.int64)
    cmax = np.empty(k, dtype=np.int64)
    for r in range(k):
        cmax[r] = _rollout(proc, js, rem, scale, 0.0 if r == 0 else tau, seeds[r], machine[r], start[r])
    return cmax, machine, start


def sampled_dispatch(
    inst: Instance, rng: np.random.Generator, *, k: int = SAMPLED_K, tau: float = SAMPLED_TAU
) -> Solution:
    """The best of ``k`` sampled dispatching rollouts (module docstring) as a :class:`Solution`."""
    cmax, machine, start = sampled_rollouts(inst, rng, k=k, tau=tau)
    r = int(np.argmin(cmax))
    return solution_from_schedule(inst, machine[r], start[r])
