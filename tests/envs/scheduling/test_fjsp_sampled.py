"""The ``sampled-dispatch`` start of FJSPImprove-v0 (envs/scheduling/fjsp/sampled.py): its quality against
CP-SAT references on fresh SD2 10x5 instances, the rollout rule against a plain-Python reference, valid
schedules, determinism, no local optimum, and the protocol defaults that use it."""

from __future__ import annotations

import time

import numpy as np
import pytest

from papergym.envs.scheduling.fjsp.generators import sd2_instance
from papergym.envs.scheduling.fjsp.graph import (
    evaluate,
    neighbourhood,
    validate_schedule,
)
from papergym.envs.scheduling.fjsp.improve import (
    COMPARE_DEFAULTS,
    FJSPImproveEnv,
    initial_solution,
)
from papergym.envs.scheduling.fjsp.sampled import (
    SAMPLED_K,
    sampled_dispatch,
    sampled_rollouts,
)
from papergym.envs.scheduling.fjsp.sets import load_instance

# Fresh SD2 10x5 instances of FJSPImproveEnv(family="sd2", n_jobs=10, n_machines=5).reset(seed=s), s = 7301..7320
# (seeds no other test uses): instance hash prefix -> CP-SAT makespan and bound, computed offline with
# papergym.baselines.scheduling.cpsat.solve_cpsat(inst, time_limit=30, num_workers=2, seed=0, hint=<the start>)
# (OR-Tools 9.15; 17 proved optimal, 7313, 7314 and 7318 stopped at the limit: the makespan is the best found).
FRESH = {
    7301: ("3480823937358646", 318, 318),
    7302: ("232f28f0d6be079f", 301, 301),
    7303: ("72c3a114b7964601", 364, 364),
    7304: ("7c552cbb74f49b36", 292, 292),
    7305: ("be22bf571c01797b", 263, 263),
    7306: ("5ebf60635641821d", 305, 305),
    7307: ("f26c0ff9b7293e0b", 357, 357),
    7308: ("0bf377f77c27b065", 400, 400),
    7309: ("413586a7ee682709", 279, 279),
    7310: ("76151153a38a142b", 288, 288),
    7311: ("173dfcf524d1e008", 309, 309),
    7312: ("eb7b7c517e3761cc", 310, 310),
    7313: ("09a0bd839eb41962", 331, 245),
    7314: ("28c3ee4c67fe7b2c", 322, 219),
    7315: ("c0469bbbbad54a8c", 351, 351),
    7316: ("e1e28f53c82db9ef", 259, 259),
    7317: ("acccd22d9a70115a", 299, 299),
    7318: ("c05d98bbca935e41", 320, 202),
    7319: ("548caa002a4cdf5c", 325, 325),
    7320: ("b5800152a4091c68", 328, 328),
}


@pytest.fixture(scope="module")
def fresh_starts():
    env = FJSPImproveEnv(family="sd2", n_jobs=10, n_machines=5, init="sampled-dispatch", horizon=1)
    out = {}
    for seed, (sha, ub, lb) in FRESH.items():
        env.reset(seed=seed)
        assert env.instance.sha256()[:16] == sha, "the SD2 instance stream of the env changed"
        out[seed] = (env.instance, env.solution, env.makespan, ub, lb)
    return out


def test_start_gap_on_fresh_sd2_10x5_is_the_papers(fresh_starts):
    """MIStar starts from DANIEL-sampled solutions, 11.96 % above the references on SD2 10x5; the shipped
    start must be of that quality (9-15 %), far from MWKR's ~68 %."""
    gaps = []
    for _inst, _sol, c0, ub, lb in fresh_starts.values():
        assert c0 >= lb  # never below CP-SAT's proven bound
        gaps.append((c0 - ub) / ub)
    assert 0.09 <= float(np.mean(gaps)) <= 0.15, np.mean(gaps)
    mwkr = [
        (evaluate(inst, initial_solution(inst, "mwkr")).cmax - ub) / ub for inst, _, _, ub, _ in fresh_starts.values()
    ]
    assert np.mean(mwkr) > 0.4


def test_start_leaves_the_searches_improving_moves(fresh_starts):
    """No local search: most starts have a strictly improving nopt2-lite move (measured: 14 of these 20)."""
    improving = 0
    for inst, sol, c0, _, _ in fresh_starts.values():
        mv = neighbourhood(inst, sol)
        assert len(mv) > 0
        improving += int(mv.cmax.min()) < c0
    assert improving >= 12


def _reference_rollout(inst, tau_noise=None):
    """Plain-Python greedy rollout of the module docstring (tau = 0): EFT machine with gap insertion,
    job priority W - s, ties: shorter p then lower machine; lower job index."""
    proc, js = inst.proc, inst.job_start
    mean_p = proc.sum(1) / (proc > 0).sum(1)
    rem = np.concatenate([np.cumsum(mean_p[js[j] : js[j + 1]][::-1])[::-1] for j in range(inst.n_jobs)])
    timeline = [[] for _ in range(inst.n_machines)]  # sorted (start, end)
    jr = [0] * inst.n_jobs
    nxt = list(js[:-1])
    machine, start = np.zeros(inst.n_ops, int), np.zeros(inst.n_ops, int)
    for _ in range(inst.n_ops):
        best = None
        for j in range(inst.n_jobs):
            o = nxt[j]
            if o >= js[j + 1]:
                continue
            opts = []
            for k in np.flatnonzero(proc[o] > 0):
                p = int(proc[o, k])
                prev_end, s = 0, None
                for a, b in timeline[k]:
                    cand = max(prev_end, jr[j])
                    if cand + p <= a:
                        s = cand
                        break
                    prev_end = b
                if s is None:
                    s = max(prev_end, jr[j])
                opts.append((s + p, p, k, s))
            _, p, k, s = min(opts)
            key = (rem[o] - s) / mean_p.mean()
            if best is None or key > best[0]:
                best = (key, j, k, s, p)
        _, j, k, s, p = best
        o = nxt[j]
        timeline[k] = sorted(timeline[k] + [(s, s + p)])
        machine[o], start[o] = k, s
        jr[j], nxt[j] = s + p, o + 1
    return machine, start


@pytest.mark.parametrize("name", ["sd2-10x5/004", "brandimarte/mk03", "hurink-edata/la02"])
def test_greedy_rollout_matches_the_definition(name):
    inst = load_instance(name)
    cmax, machine, start = sampled_rollouts(inst, np.random.default_rng(5), k=1)
    m_ref, s_ref = _reference_rollout(inst)
    assert np.array_equal(machine[0], m_ref) and np.array_equal(start[0], s_ref)
    assert cmax[0] == validate_schedule(inst, m_ref, s_ref)


def test_rollouts_are_valid_schedules_and_deterministic():
    inst = sd2_instance(12, 6, np.random.default_rng(7331))  # every operation of SD2 mix: 1..6 machines
    c1, m1, s1 = sampled_rollouts(inst, np.random.default_rng(7332))
    c2, m2, s2 = sampled_rollouts(inst, np.random.default_rng(7332))
    assert np.array_equal(c1, c2) and np.array_equal(m1, m2) and np.array_equal(s1, s2)
    assert c1.shape == (SAMPLED_K,) and len(set(c1.tolist())) > 5  # the samples differ
    for r in range(SAMPLED_K):
        assert c1[r] == validate_schedule(inst, m1[r], s1[r])
    c3, _, _ = sampled_rollouts(inst, np.random.default_rng(7333))
    assert c3[0] == c1[0] and not np.array_equal(c1, c3)  # row 0 is the greedy rollout
    sol = sampled_dispatch(inst, np.random.default_rng(7332))
    assert evaluate(inst, sol).cmax <= c1.min()  # semi-active evaluation of the best rollout's orders
    # the env's start is a function of the instance
    env = FJSPImproveEnv(family="sd2", n_jobs=10, n_machines=5, init="sampled-dispatch", horizon=1)
    env.reset(seed=7334)
    a, inst2 = env.solution, env.instance
    env.reset(seed=7335)
    env.reset(seed=7334)
    assert env.solution == a == initial_solution(inst2, "sampled-dispatch")


def test_start_is_fast():
    insts = [sd2_instance(10, 5, np.random.default_rng(s)) for s in range(7341, 7351)]
    sampled_dispatch(insts[0], np.random.default_rng(0))  # compile / load the numba cache
    t0 = time.perf_counter()
    for inst in insts:
        sampled_dispatch(inst, np.random.default_rng(1))
    assert (time.perf_counter() - t0) / len(insts) < 0.05


def test_bad_arguments():
    inst = load_instance("brandimarte/mk01")
    with pytest.raises(ValueError, match="k"):
        sampled_dispatch(inst, np.random.default_rng(0), k=0)
    with pytest.raises(ValueError, match="tau"):
        sampled_dispatch(inst, np.random.default_rng(0), tau=-1.0)
    with pytest.raises(ValueError, match="init must be one of"):
        initial_solution(inst, "given")


def test_compare_and_board_start_from_sampled_dispatch():
    from papergym.leaderboard.board.configs import DEFAULT_BOARDS

    assert COMPARE_DEFAULTS["env_kwargs_always"]["init"] == "sampled-dispatch"
    assert all(kw["init"] == "sampled-dispatch" for kw in DEFAULT_BOARDS["FJSPImprove-v0"].strata.values())
