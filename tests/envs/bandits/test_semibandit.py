"""Tests of MSetSemiBandit-v0 (papergym.envs.bandits.semibandit): the MSet space, every family's means
against the documented formulas, the oracle against brute force, the realised losses against the raw noise
stream, invalid actions, kwargs, check_env and vector-env bit-identity."""

from __future__ import annotations

import itertools
import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env
from gymnasium.vector.utils import batch_space

import papergym.envs  # noqa: F401  (registers the ids)
from papergym.envs import InvalidActionError, run_seeds
from papergym.envs.bandits.semibandit import (
    COMPARE_DEFAULTS,
    INSTANCES,
    BatchedMSet,
    BatchedMSetSemiBanditOracle,
    MSet,
    MSetSemiBanditEnv,
    MSetSemiBanditOracle,
    MSetSemiBanditVectorEnv,
    make_problem,
    sca_signs,
)
from papergym.envs.wrappers import RegretRecorder

SCA = "stochastically-constrained-adversarial"
SWITCH = "oblivious-switching"


def make(instance="stochastic", seed=0, **kw):
    env = MSetSemiBanditEnv(instance=instance, **kw)
    env.reset(seed=seed)
    return env


def one_hot(d, idx):
    a = np.zeros(d, np.int8)
    a[list(idx)] = 1
    return a


def all_sets(d, m):
    return [one_hot(d, c) for c in itertools.combinations(range(d), m)]


def random_actions(k, d, m, seed=0):
    sp = MSet(d, m, seed=seed)
    return np.stack([sp.sample() for _ in range(k)])


# ------------------------------------------------------------------------------------------- spaces
def test_mset_sample_is_uniform_and_contains_checks_the_rules():
    sp = MSet(5, 2, seed=1)
    subsets = {c: 0 for c in itertools.combinations(range(5), 2)}
    N = 5000
    for _ in range(N):
        a = sp.sample()
        assert a.dtype == np.int8 and a.shape == (5,) and sp.contains(a)
        subsets[tuple(np.flatnonzero(a))] += 1
    counts = np.array(list(subsets.values()))
    chi2 = float(((counts - N / 10) ** 2 / (N / 10)).sum())
    assert chi2 < 33.7  # chi-square, 9 dof, p = 1e-4
    assert sp.contains([1, 1, 0, 0, 0]) and sp.contains(np.array([0.0, 1.0, 0.0, 1.0, 0.0]))
    assert sp.contains(np.array([True, False, False, True, False]))
    assert not sp.contains([1, 1, 1, 0, 0])  # size
    assert not sp.contains([2, 0, 0, 0, 0])  # values
    assert not sp.contains([1, 1, 0, 0])  # shape
    assert not sp.contains(np.array(["1", "1", "0", "0", "0"]))


def test_batched_mset_space_and_batch_space():
    sp = batch_space(MSet(6, 3), 4)
    assert isinstance(sp, BatchedMSet) and sp.shape == (4, 6) and sp.m == 3
    sp.seed(0)
    for _ in range(20):
        a = sp.sample()
        assert a.dtype == np.int8 and sp.contains(a)
        assert np.all(a.sum(axis=1) == 3)
    bad = sp.sample()
    bad[2] = 0
    assert not sp.contains(bad)
    venv = MSetSemiBanditVectorEnv(num_envs=4, d=6, m=3)
    assert venv.action_space == sp
    assert venv.observation_space["losses"].shape == (4, 6) and venv.observation_space["observed"].shape == (4, 6)


# ------------------------------------------------------------------------------------------- families
def test_sca_sign_hand_values_and_reference_expression():
    s = sca_signs(20_000)
    # floor(ln t / ln 1.1): t=1 -> 0, 2 -> 7, 3 -> 11, 10 -> 24, 11 -> 25, 12 -> 26, 100 -> 48
    expected = {1: 1, 2: -1, 3: 1, 10: 1, 11: -1, 12: -1, 100: -1}
    for t, v in expected.items():
        assert s[t - 1] == v, t
    ref = np.array([1 if int(np.log(t) / np.log(1.1)) % 10 < 5 else -1 for t in range(1, 20_001)], np.int8)
    assert np.array_equal(s, ref)  # the reference code's scalar expression [code, Adversarial.play]
    assert s.dtype == np.int8 and not s.flags.writeable


def test_stochastic_means():
    env = make("stochastic", seed=3, d=6, m=2, gap=0.2, horizon=100)
    o = env.unwrapped.oracle
    opt = o.optimal_set(1)
    assert opt.sum() == 2
    for t in (1, 37, 100):
        np.testing.assert_allclose(o.mean_losses(t), np.where(opt == 1, 0.4, 0.6), atol=1e-15)
        assert np.array_equal(o.optimal_set(t), opt)
    assert np.array_equal(o.best_set(), opt)
    assert o.switch_times() == () and o.change_points() == ()
    np.testing.assert_allclose(o.gaps(5), np.where(opt == 1, 0.0, 0.2), atol=1e-15)
    assert o.min_gap() == pytest.approx(0.2)


def test_sca_means_follow_the_sign():
    g = 0.3
    env = make(SCA, seed=5, d=5, m=2, gap=g, horizon=200)
    o = env.unwrapped.oracle
    opt = o.optimal_set(1)
    b = 0.5 * (1 - g)
    lo, hi = 0.5 * (1 - g), 0.5 * (1 + g)
    for t, sign in {1: 1, 2: -1, 3: 1, 10: 1, 11: -1, 12: -1, 100: -1}.items():
        np.testing.assert_allclose(o.mean_losses(t), np.where(opt == 1, lo, hi) + sign * b, atol=1e-15)
    np.testing.assert_allclose(o.mean_losses(1), np.where(opt == 1, 1 - g, 1.0), atol=1e-15)
    np.testing.assert_allclose(o.mean_losses(2), np.where(opt == 1, 0.0, g), atol=1e-15)
    for t in range(1, 201):
        mu = o.mean_losses(t)
        assert mu.min() >= 0.0 and mu.max() <= 1.0
        assert np.array_equal(o.optimal_set(t), opt)
        np.testing.assert_allclose(o.gaps(t), np.where(opt == 1, 0.0, g), atol=1e-12)  # gaps stay g
    s = sca_signs(200)
    assert o.change_points() == tuple(t for t in range(2, 201) if s[t - 1] != s[t - 2])
    assert o.change_points()[:4] == (2, 3, 5, 7)


def test_switching_segments_and_means():
    n, k, g = 500, 4, 0.2
    for seed in range(5):
        o = make(SWITCH, seed=seed, d=6, m=2, gap=g, horizon=n, n_switches=k).unwrapped.oracle
        sw = o.switch_times()
        assert len(sw) == k and list(sw) == sorted(set(sw)) and 2 <= sw[0] and sw[-1] <= n
        bounds = [1, *sw, n + 1]
        for s in range(k + 1):
            opt = o.optimal_set(bounds[s])
            assert opt.sum() == 2
            for t in (bounds[s], (bounds[s] + bounds[s + 1] - 1) // 2, bounds[s + 1] - 1):
                np.testing.assert_allclose(o.mean_losses(t), np.where(opt == 1, 0.5 - g / 2, 0.5 + g / 2), atol=1e-15)
                assert np.array_equal(o.optimal_set(t), opt)
        cps = [
            sw[s - 1]
            for s in range(1, k + 1)
            if not np.array_equal(o.optimal_set(bounds[s]), o.optimal_set(bounds[s] - 1))
        ]
        assert o.change_points() == tuple(cps)
    assert make(SWITCH, horizon=50, n_switches=0).unwrapped.oracle.switch_times() == ()
    assert make(SWITCH, horizon=3, n_switches=2).unwrapped.oracle.switch_times() == (2, 3)  # every round


def test_switching_times_and_sets_differ_across_seeds():
    outs = {make(SWITCH, seed=s, horizon=10_000).unwrapped.oracle.switch_times() for s in range(10)}
    assert len(outs) == 10


def test_worst_case_epsilon_default_cap_and_explicit():
    d, m, n = 10, 3, 1000
    env = make("worst-case", seed=2, d=d, m=m, horizon=n)
    o = env.unwrapped.oracle
    eps = 0.25 * math.sqrt(d / (n * m))
    assert o.epsilon == eps and env.unwrapped.resolved_kwargs == {"epsilon": eps}
    opt = o.optimal_set(1)
    for t in (1, 500, 1000):
        np.testing.assert_allclose(o.mean_losses(t), np.where(opt == 1, 0.5 - eps, 0.5), atol=1e-15)
    assert o.min_gap() == pytest.approx(eps)
    capped = make("worst-case", d=100, m=1, horizon=1).unwrapped.oracle  # 1/4 sqrt(100) = 2.5 -> 0.5
    assert capped.epsilon == 0.5 and capped.mean_losses(1).min() == 0.0
    o2 = make("worst-case", d=d, m=m, horizon=n, epsilon=0.1).unwrapped.oracle
    np.testing.assert_allclose(np.sort(o2.mean_losses(1)), [0.4] * 3 + [0.5] * 7, atol=1e-15)
    assert MSetSemiBanditEnv("stochastic", epsilon=0.1).resolved_kwargs == {}


def test_arm_permutation_per_seed():
    d, m = 6, 2
    sets = np.stack([make("stochastic", seed=s, d=d, m=m, horizon=10).unwrapped.oracle.best_set() for s in range(300)])
    assert len({tuple(x) for x in sets}) == 15  # every one of the C(6, 2) sets occurs
    freq = sets.sum(axis=0)  # arm i optimal ~ Binomial(300, 1/3)
    z = (freq - 300 * m / d) / math.sqrt(300 * (m / d) * (1 - m / d))
    assert np.all(np.abs(z) < 4)
    # the same seed gives the same permutation (same hidden set for the stationary families)
    for s in range(5):
        a = make("stochastic", seed=s, d=d, m=m).unwrapped.oracle.best_set()
        for inst in (SCA, "worst-case"):
            assert np.array_equal(a, make(inst, seed=s, d=d, m=m).unwrapped.oracle.best_set())


# ------------------------------------------------------------------------------------------- oracle
FAMILY_KW = [
    ("stochastic", {}),
    (SCA, {}),
    (SWITCH, {"n_switches": 4}),
    (SWITCH, {"n_switches": 9}),
    ("worst-case", {}),
]


@pytest.mark.parametrize("instance,kw", FAMILY_KW)
def test_best_set_and_regrets_against_brute_force(instance, kw):
    d, m, n = 5, 2, 240
    sets = all_sets(d, m)
    for seed in range(3):
        env = make(instance, seed=seed, d=d, m=m, horizon=n, gap=0.25, **kw)
        o = env.unwrapped.oracle
        mus = np.stack([o.mean_losses(t) for t in range(1, n + 1)])  # (n, d), brute force only
        total = mus.sum(axis=0)
        np.testing.assert_allclose(o.cumulative_means(), total, rtol=1e-12)
        vals = np.array([total @ a for a in sets])
        best = o.best_set()
        assert best.dtype == np.int8 and best.sum() == m
        assert total @ best == pytest.approx(vals.min(), abs=1e-9)
        if np.sum(np.isclose(vals, vals.min(), atol=1e-9)) == 1:
            assert np.array_equal(best, sets[int(vals.argmin())])
        acts = random_actions(n, d, m, seed=seed)
        acts[::7] = best  # some rounds play the best fixed set
        dyn = stat = 0.0
        for t in range(1, n + 1):
            a, mu = acts[t - 1], mus[t - 1]
            per_set = np.array([mu @ s for s in sets])
            r = o.regret(a, t)
            assert r >= 0.0
            assert r == pytest.approx(mu @ a - per_set.min(), abs=1e-12)
            assert r == pytest.approx(o.optimal_value(t) - o.mean_reward(a, t), abs=1e-12)
            assert o.mean_reward(a, t) == pytest.approx(-(mu @ a), abs=1e-12)
            assert o.regret(o.optimal_set(t), t) == 0.0
            inc = o.static_regret_increment(a, t)
            assert inc == pytest.approx(mu @ (a.astype(float) - best), abs=1e-12)
            assert o.static_regret_increment(best, t) == 0.0
            if instance != SWITCH:
                assert inc == r  # best fixed set = optimal set every round: the two regrets coincide
            dyn += r
            stat += inc
        assert o.dynamic_regret(acts) == dyn  # same additions, same order
        assert o.static_regret(acts) == stat
        assert o.static_regret(acts[:10]) == pytest.approx(
            sum(o.static_regret_increment(acts[t], t + 1) for t in range(10)), abs=1e-12
        )
        assert o.tracks_static_regret is (instance == SWITCH)


@pytest.mark.parametrize("instance", INSTANCES)
def test_regret_known_answer(instance):
    g = 0.2
    env = make(instance, seed=1, d=8, m=3, gap=g, horizon=300)
    o = env.unwrapped.oracle
    gap = o.epsilon if instance == "worst-case" else g
    for t in (1, 2, 150, 300):
        opt = o.optimal_set(t)
        inside, outside = np.flatnonzero(opt), np.flatnonzero(opt == 0)
        for k in range(4):  # swap k optimal arms for k others: regret k * gap
            a = opt.copy()
            a[inside[:k]] = 0
            a[outside[:k]] = 1
            assert o.regret(a, t) == pytest.approx(k * gap, abs=1e-12)


@pytest.mark.parametrize("instance", INSTANCES)
def test_m_equals_d_zero_regret(instance):
    d = 4
    env = make(instance, seed=0, d=d, m=d, horizon=50)
    o = env.unwrapped.oracle
    a = np.ones(d, np.int8)
    for t in range(1, 51):
        assert o.regret(a, t) == 0.0 and o.static_regret_increment(a, t) == 0.0
        env.step(a)
    assert o.min_gap() == math.inf and np.all(o.gaps(3) == 0.0)
    assert np.array_equal(o.best_set(), a)
    assert o.static_regret(np.ones((50, d))) == 0.0


def test_regret_recorder_and_batched_oracle_shapes():
    env = RegretRecorder(gym.make("MSetSemiBandit-v0", instance=SWITCH, horizon=200, d=6, m=2))
    env.reset(seed=4)
    acts = random_actions(200, 6, 2, seed=2)
    for a in acts:
        env.step(a)
    o = env.unwrapped.oracle
    assert env.cumulative_regret == pytest.approx(o.dynamic_regret(acts), abs=1e-9)
    assert o.dynamic_regret(acts) > 0
    venv = MSetSemiBanditVectorEnv(num_envs=3, instance=SWITCH, horizon=200, d=6, m=2)
    venv.reset(seed=[4, 5, 6])
    bo = venv.oracle
    assert isinstance(bo, BatchedMSetSemiBanditOracle) and isinstance(venv.oracles[0], MSetSemiBanditOracle)
    assert bo.tracks_static_regret and bo.mean_losses(3).shape == (3, 6) and bo.best_set().shape == (3, 6)
    A = np.stack([acts[0]] * 3)
    for f in (bo.mean_reward, bo.regret, bo.static_regret_increment):
        assert f(A, 7).shape == (3,)
    assert bo.optimal_value(7).shape == (3,) and bo.optimal_set(7).shape == (3, 6)


# ------------------------------------------------------------------------------------------- losses
@pytest.mark.parametrize("instance", INSTANCES)
def test_losses_are_bernoulli_of_the_noise_stream(instance):
    """l_{t,i} = 1{U_{t,i} < mu_{t,i}} with U the run's noise stream, d numbers per round, whatever the
    action; only the chosen arms are shown, reward = -their sum."""
    d, m, n, seed = 7, 3, 300, 11
    env = make(instance, seed=seed, d=d, m=m, horizon=n)
    o = env.unwrapped.oracle
    U = np.random.default_rng(run_seeds(seed).noise).random(n * d).reshape(n, d)
    acts = random_actions(n, d, m, seed=1)
    for t in range(1, n + 1):
        obs, r, term, trunc, info = env.step(acts[t - 1])
        full = (U[t - 1] < o.mean_losses(t)).astype(float)
        assert np.array_equal(obs["losses"], full * acts[t - 1])
        assert np.array_equal(obs["observed"], acts[t - 1]) and obs["observed"].dtype == np.int8
        assert r == -full[acts[t - 1] == 1].sum()
        assert term is False and trunc is (t == n) and info == {"t": t}


@pytest.mark.parametrize("instance", INSTANCES)
def test_realised_best_set_from_covering_runs(instance):
    """Losses do not depend on the action, so runs of one seed that together choose every arm reveal the
    whole realised loss matrix; its column sums must equal the oracle's regenerated totals."""
    d, m, n, seed = 7, 3, 400, 21
    cover = [one_hot(d, [0, 1, 2]), one_hot(d, [3, 4, 5]), one_hot(d, [4, 5, 6])]
    venv = MSetSemiBanditVectorEnv(num_envs=3, instance=instance, d=d, m=m, horizon=n)
    venv.reset(seed=[seed] * 3)
    A = np.stack(cover)
    L = np.zeros(d, np.int64)
    for _ in range(n):
        obs, *_ = venv.step(A)
        seen = obs["losses"]
        assert np.array_equal(seen[1, 4:6], seen[2, 4:6])  # common random numbers across runs
        row = seen[0] + seen[1] + seen[2] * np.array([0, 0, 0, 0, 0, 0, 1])
        L += row.astype(np.int64)
    o = make(instance, seed=seed, d=d, m=m, horizon=n).unwrapped.oracle
    assert np.array_equal(o.realised_cumulative_losses(), L)
    assert np.array_equal(o.realised_cumulative_losses(chunk_rounds=13), L)  # chunking changes nothing
    expected = np.zeros(d, np.int8)
    expected[np.argsort(L, kind="stable")[:m]] = 1
    assert np.array_equal(o.realised_best_set(), expected)
    assert np.array_equal(venv.oracles[0].realised_best_set(), expected)


@pytest.mark.parametrize("instance", INSTANCES)
def test_loss_frequencies_match_the_means(instance):
    d, m, n = 6, 2, 20_000
    o = make(instance, seed=8, d=d, m=m, horizon=n).unwrapped.oracle
    L = o.realised_cumulative_losses()
    mean = o.cumulative_means()
    var = np.zeros(d)
    if instance == SCA:  # sum_t mu (1 - mu), per phase of the sign
        s = sca_signs(n)
        for sign in (1, -1):
            mu = o.mean_losses(1 if sign == 1 else 2)
            var += np.count_nonzero(s == sign) * mu * (1 - mu)
    elif instance == SWITCH:
        bounds = [1, *o.switch_times(), n + 1]
        for a, b in itertools.pairwise(bounds):
            mu = o.mean_losses(a)
            var += (b - a) * mu * (1 - mu)
    else:
        mu = o.mean_losses(1)
        var = n * mu * (1 - mu)
    z = (L - mean) / np.sqrt(np.maximum(var, 1e-12))
    assert np.all(np.abs(z) < 4), z
    if instance == SCA:  # means 0 and 1 are deterministic
        opt = o.optimal_set(1)
        assert np.all(L[opt == 0] >= np.count_nonzero(sca_signs(n) == 1))


# ------------------------------------------------------------------------------------------- env contract
@pytest.mark.parametrize("instance", INSTANCES)
def test_check_env(instance):
    env = MSetSemiBanditEnv(instance=instance, horizon=500, d=6, m=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    assert [str(w.message) for w in caught if "render" not in str(w.message)] == []
    assert env.problem.params == {"d": 6, "m": 2, "loss_range": (0.0, 1.0)} and env.problem.horizon == 500
    assert env.action_space == MSet(6, 2) and env.problem.action_space == make_problem(6, 2, 500).action_space


def test_gym_make_reset_and_episode_end():
    env = gym.make("papergym.envs:MSetSemiBandit-v0", instance=SCA, horizon=3, d=5, m=2)
    with pytest.raises(ResetNeeded):
        env.unwrapped.step(one_hot(5, [0, 1]))
    with pytest.raises(ResetNeeded):
        _ = env.unwrapped.oracle
    obs, info = env.reset(seed=1)
    assert (
        info == {"t": 0} and np.array_equal(obs["losses"], np.zeros(5)) and np.array_equal(obs["observed"], np.zeros(5))
    )
    assert env.observation_space.contains(obs)
    for t in range(1, 4):
        obs, _r, _term, trunc, _info = env.step(one_hot(5, [1, 3]))
        assert env.observation_space.contains(obs) and env.unwrapped.t == t and trunc is (t == 3)
    with pytest.raises(ResetNeeded):
        env.step(one_hot(5, [1, 3]))
    env.reset(seed=1)
    assert env.unwrapped.t == 0
    assert COMPARE_DEFAULTS == {"seeds": 20, "horizon": 10_000}
    venv = gym.make_vec("MSetSemiBandit-v0", num_envs=2, vectorization_mode="vector_entry_point", horizon=5)
    assert isinstance(venv.unwrapped, MSetSemiBanditVectorEnv)


def rollout(env, actions):
    out = []
    for a in actions:
        obs, r, *_ = env.step(a)
        out.append(np.concatenate([obs["losses"], obs["observed"], [r]]))
    return np.stack(out)


@pytest.mark.parametrize("instance", INSTANCES)
def test_determinism_and_seed_dependence(instance):
    acts = random_actions(200, 8, 3, seed=4)
    a = rollout(make(instance, seed=7, d=8, m=3, horizon=200), acts)
    b = rollout(make(instance, seed=7, d=8, m=3, horizon=200), acts)
    c = rollout(make(instance, seed=8, d=8, m=3, horizon=200), acts)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_reset_without_seed():
    e1, e2 = MSetSemiBanditEnv(horizon=50), MSetSemiBanditEnv(horizon=50)
    e1.reset(seed=3)
    e2.reset(seed=3)
    e1.reset()
    e2.reset()
    assert e1.run_seed == e2.run_seed and e1.run_seed != 3  # drawn from np_random, deterministically
    acts = random_actions(50, 10, 3)
    assert np.array_equal(rollout(e1, acts), rollout(e2, acts))
    e3 = MSetSemiBanditEnv(horizon=50)
    e3.reset()
    assert isinstance(e3.run_seed, int)


BAD_ACTIONS = [
    (np.ones(11, np.int8), "shape"),
    (np.ones((1, 10), np.int8), "shape"),
    ([[1, 0], [1]], "shape"),
    (np.array(["1"] * 10), "dtype"),
    (one_hot(10, [0, 1, 2]).astype(complex), "dtype"),
    (np.array([np.nan] + [1.0, 1.0] + [0.0] * 7), "finite"),
    (np.array([np.inf] + [1.0, 1.0] + [0.0] * 7), "finite"),
    (np.array([2, 1] + [0] * 8), "values"),
    (np.array([-1, 1, 1, 1] + [0] * 6), "values"),
    (np.array([0.5, 1.0, 1.0] + [0.0] * 7), "values"),
    (one_hot(10, [0, 1]), "size"),
    (one_hot(10, [0, 1, 2, 3]), "size"),
    (np.zeros(10, bool), "size"),
]


@pytest.mark.parametrize("bad,rule", BAD_ACTIONS)
def test_invalid_action_leaves_env_unchanged(bad, rule):
    acts = random_actions(30, 10, 3, seed=5)
    ref = rollout(make(SWITCH, seed=2, horizon=30), acts)
    env = make(SWITCH, seed=2, horizon=30)
    env.step(acts[0])
    with pytest.raises(InvalidActionError, match=f"rule '{rule}'"):
        env.step(bad)
    with pytest.raises(InvalidActionError, match=f"rule '{rule}'"):
        env.validate_action(bad)
    with pytest.raises(InvalidActionError, match=f"rule '{rule}'"):
        env.oracle.regret(bad, 2)
    assert env.t == 1
    assert np.array_equal(rollout(env, acts[1:]), ref[1:])


def test_valid_action_forms_are_equivalent():
    base = one_hot(10, [2, 5, 7])
    forms = [
        base,
        base.tolist(),
        base.astype(bool),
        base.astype(np.int64),
        base.astype(np.uint8),
        base.astype(np.float64),
        base.astype(np.float32),
        base[::-1][::-1],
    ]
    outs = []
    for f in forms:
        env = make(seed=9, horizon=5)
        assert np.array_equal(env.validate_action(f), base) and env.validate_action(f).dtype == np.int8
        outs.append(rollout(env, [f] * 5))
        assert env.oracle.regret(f, 1) == env.oracle.regret(base, 1)
    assert all(np.array_equal(o, outs[0]) for o in outs)


def test_vector_invalid_actions_name_the_row_and_leave_state():
    venv = MSetSemiBanditVectorEnv(num_envs=3, d=5, m=2, horizon=20)
    venv.reset(seed=[1, 2, 3])
    A = np.stack([one_hot(5, [0, 1])] * 3)
    venv.step(A)
    bad = A.copy()
    bad[2] = one_hot(5, [0, 1, 2])
    with pytest.raises(InvalidActionError, match="rule 'size'.*row 2"):
        venv.step(bad)
    with pytest.raises(InvalidActionError, match="rule 'shape'"):
        venv.step(A[:2])
    with pytest.raises(InvalidActionError, match="rule 'values'"):
        venv.oracle.regret(A * 2, 2)
    assert venv.t == 1
    ref = MSetSemiBanditVectorEnv(num_envs=3, d=5, m=2, horizon=20)
    ref.reset(seed=[1, 2, 3])
    ref.step(A)
    o1, r1, *_ = venv.step(A)
    o2, r2, *_ = ref.step(A)
    assert np.array_equal(o1["losses"], o2["losses"]) and np.array_equal(r1, r2)


BAD_KWARGS = [
    ({"instance": "stochastc"}, "valid instances: stochastic, stochastically-constrained-adversarial"),
    ({"d": 0}, "d must be an integer"),
    ({"m": 0}, "m must be an integer"),
    ({"m": 11}, "m must be at most d"),
    ({"d": 10.0}, "d must be an integer"),
    ({"horizon": 0}, "horizon must be an integer >= 1"),
    ({"horizon": True}, "horizon must be an integer >= 1"),
    ({"gap": 0.0}, r"gap must be a number in \(0, 1\]"),
    ({"gap": 1.5}, r"gap must be a number in \(0, 1\]"),
    ({"gap": float("nan")}, "gap must be"),
    ({"gap": "0.2"}, "gap must be"),
    ({"n_switches": -1}, "n_switches must be an integer >= 0"),
    ({"n_switches": 1.5}, "n_switches must be an integer >= 0"),
    ({"instance": SWITCH, "horizon": 5, "n_switches": 5}, "n_switches must be at most horizon - 1 = 4"),
    ({"epsilon": 0.0}, r"epsilon must be a number in \(0, 0.5\]"),
    ({"epsilon": 0.6}, r"epsilon must be a number in \(0, 0.5\]"),
    ({"render_mode": "human"}, "render_mode must be None"),
]


@pytest.mark.parametrize("kwargs,match", BAD_KWARGS)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MSetSemiBanditEnv(**kwargs)
    with pytest.raises(ValueError, match=match):
        MSetSemiBanditVectorEnv(num_envs=2, **kwargs)


def test_bad_reset_round_and_num_envs():
    MSetSemiBanditEnv(horizon=5, n_switches=10)  # n_switches only constrains oblivious-switching
    env = make(horizon=5)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        env.reset(seed=-1)
    with pytest.raises(ValueError, match="reset takes no options"):
        env.reset(seed=1, options={"x": 1})
    with pytest.raises(ValueError, match=r"t must be an integer round in 1\.\.5"):
        env.oracle.regret(one_hot(10, [0, 1, 2]), 6)
    with pytest.raises(ValueError, match="t must be an integer round"):
        env.oracle.mean_losses(0)
    with pytest.raises(ValueError, match="num_envs must be an integer >= 1"):
        MSetSemiBanditVectorEnv(num_envs=0)
    venv = MSetSemiBanditVectorEnv(num_envs=2, horizon=5)
    with pytest.raises(ValueError, match="list of num_envs=2 ints"):
        venv.reset(seed=[1, 2, 3])
    with pytest.raises(ResetNeeded):
        venv.step(np.zeros((2, 10)))


# ------------------------------------------------------------------------------------------- vector env
@pytest.mark.parametrize("instance", INSTANCES)
def test_vector_rows_bit_identical_to_single(instance):
    seeds = [3, 1, 4, 1]
    n, d, m = 250, 9, 4
    venv = MSetSemiBanditVectorEnv(num_envs=4, instance=instance, horizon=n, d=d, m=m)
    vobs, _ = venv.reset(seed=seeds)
    singles = [make(instance, seed=s, horizon=n, d=d, m=m) for s in seeds]
    assert np.array_equal(vobs["losses"], np.zeros((4, d))) and vobs["observed"].dtype == np.int8
    sp = venv.action_space
    sp.seed(2)
    bo = venv.oracle
    for i, e in enumerate(singles):
        assert np.array_equal(bo.best_set()[i], e.oracle.best_set())
        assert venv.oracles[i].switch_times() == e.oracle.switch_times()
    for t in range(1, n + 1):
        A = sp.sample()
        reg, inc = bo.regret(A, t), bo.static_regret_increment(A, t)
        mu, mr, ov = bo.mean_losses(t), bo.mean_reward(A, t), bo.optimal_value(t)
        obs, rew, term, trunc, info = venv.step(A)
        assert np.array_equal(info["t"], np.full(4, t)) and not term.any() and trunc.all() == (t == n)
        for i, e in enumerate(singles):
            o = e.oracle
            assert reg[i] == o.regret(A[i], t) and inc[i] == o.static_regret_increment(A[i], t)
            assert np.array_equal(mu[i], o.mean_losses(t)) and mr[i] == o.mean_reward(A[i], t)
            assert ov[i] == o.optimal_value(t)
            so, sr, _, st, _ = e.step(A[i])
            assert np.array_equal(obs["losses"][i], so["losses"]) and np.array_equal(obs["observed"][i], so["observed"])
            assert rew[i] == sr and trunc[i] == st
    assert venv.observation_space.contains(obs)
    assert np.array_equal(venv.oracles[2].realised_cumulative_losses(), singles[2].oracle.realised_cumulative_losses())


def test_vector_int_seed_and_none():
    v1 = MSetSemiBanditVectorEnv(num_envs=3, horizon=10)
    v1.reset(seed=5)
    assert v1.seeds == [5, 6, 7]
    v2 = MSetSemiBanditVectorEnv(num_envs=3, horizon=10)
    v2.reset(seed=5)
    v1.reset()
    v2.reset()
    assert v1.seeds == v2.seeds and len(set(v1.seeds)) == 3
