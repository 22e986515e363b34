"""Tests of NonStatLipschitz-v0 (papergym.envs.bandits.lipschitz): env contract, oracle closed forms,
significant shifts against known answers and a brute-force reference, vector env bit-identity."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

import papergym.envs  # noqa: F401  (registers the ids)
from papergym.envs import InvalidActionError, NormalStream, UniformStream, run_seeds
from papergym.envs.bandits.lipschitz import (
    INSTANCES,
    NonStatLipschitzEnv,
    NonStatLipschitzVectorEnv,
    instance_kwargs,
)
from papergym.envs.wrappers import RegretRecorder

SMALL = {  # small but valid configurations of every instance
    "two-peak-cyclic": {},
    "two-peak-cyclic-10": {},
    "piecewise-tents": {"random_lengths": True},
    "benign-changes": {},
    "drifting-peak": {},
    "random-lipschitz": {},
}
MULTI_D = ("two-peak-cyclic", "piecewise-tents", "drifting-peak")


def make(instance="two-peak-cyclic", horizon=2048, seed=0, **kw):
    env = NonStatLipschitzEnv(instance=instance, horizon=horizon, **kw)
    env.reset(seed=seed)
    return env


def rollout(env, actions):
    return np.array([env.step(a)[1] for a in actions])


# ------------------------------------------------------------------------------------ env contract
@pytest.mark.parametrize("instance,d", [(i, 1) for i in INSTANCES] + [(i, 2) for i in MULTI_D])
def test_check_env(instance, d):
    env = NonStatLipschitzEnv(instance=instance, horizon=2048, d=d, **SMALL[instance])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    # the only expected remarks: Box(-inf, inf) observation and no render modes
    bad = [str(w.message) for w in caught if "infinity" not in str(w.message) and "render" not in str(w.message)]
    assert bad == []
    assert env.problem.d == d and env.problem.horizon == 2048
    assert env.problem.params == {"d": d, "lipschitz": 1.0, "norm": "linf", "noise": "bernoulli", "sigma": 0.1}
    assert env.action_space.shape == (d,) and env.observation_space.shape == (1,)


def test_gym_make_and_registration():
    env = gym.make("papergym.envs:NonStatLipschitz-v0", instance="piecewise-tents", horizon=1000)
    obs, info = env.reset(seed=1)
    assert obs.shape == (1,) and obs[0] == 0.0 and info == {"t": 0}
    obs, r, term, trunc, info = env.step(np.array([0.2]))
    assert info == {"t": 1} and term is False and trunc is False and r in (0.0, 1.0) and obs[0] == r
    assert env.unwrapped.t == 1
    venv = gym.make_vec("NonStatLipschitz-v0", num_envs=3, vectorization_mode="vector_entry_point", horizon=100)
    assert isinstance(venv.unwrapped, NonStatLipschitzVectorEnv)
    obs, _ = venv.reset(seed=[4, 5, 6])
    assert obs.shape == (3, 1)


def test_truncation_and_step_after_end():
    env = make(horizon=5)
    for t in range(1, 6):
        obs, r, term, trunc, info = env.step([0.5])
        assert term is False and trunc is (t == 5) and info == {"t": t}
    with pytest.raises(ResetNeeded):
        env.step([0.5])
    env.reset(seed=0)
    assert env.t == 0
    env.step([0.5])
    with pytest.raises(ResetNeeded):
        NonStatLipschitzEnv().step([0.5])


def test_reset_without_seed():
    a = NonStatLipschitzEnv(instance="benign-changes", horizon=300)
    b = NonStatLipschitzEnv(instance="benign-changes", horizon=300)
    a.reset()
    b.reset()
    acts = np.full((300, 1), 0.8)
    assert not np.array_equal(rollout(a, acts), rollout(b, acts))  # fresh entropy: different instances
    # Gymnasium convention: reset() after reset(seed=s) continues deterministically
    a.reset(seed=7)
    a.reset()
    b.reset(seed=7)
    b.reset()
    assert np.array_equal(rollout(a, acts), rollout(b, acts))


# ------------------------------------------------------------------------------------ determinism
@pytest.mark.parametrize("instance", INSTANCES)
def test_same_seed_same_trajectory(instance):
    acts = np.random.default_rng(0).random((2048, 1))
    r1 = rollout(make(instance, seed=11, **SMALL[instance]), acts)
    r2 = rollout(make(instance, seed=11, **SMALL[instance]), acts)
    r3 = rollout(make(instance, seed=12, **SMALL[instance]), acts)
    assert np.array_equal(r1, r2)
    assert not np.array_equal(r1, r3)


def test_random_instances_depend_on_seed_deterministic_ones_do_not():
    for inst, kw in [("piecewise-tents", {"random_lengths": True}), ("random-lipschitz", {})]:
        cps = {make(inst, horizon=5000, seed=s, **kw).oracle.change_points() for s in range(4)}
        assert len(cps) == 4
    e1, e2 = make("benign-changes", seed=1), make("benign-changes", seed=2)
    assert e1.oracle.mean_reward([0.75], 5) != e2.oracle.mean_reward([0.75], 5)
    for inst, kw in [
        ("two-peak-cyclic", {}),
        ("piecewise-tents", {"random_tents": False}),
        ("drifting-peak", {}),
        ("benign-changes", {"static": True}),
    ]:
        o1, o2 = make(inst, seed=1, **kw).oracle, make(inst, seed=2, **kw).oracle
        xs = np.linspace(0, 1, 11)[:, None]
        assert all(np.array_equal(o1.mean_rewards(xs, t), o2.mean_rewards(xs, t)) for t in (1, 700, 2048))


@pytest.mark.parametrize("noise", ["bernoulli", "gaussian"])
def test_noise_is_common_random_numbers(noise):
    """Y_t = 1{U_t < mu_t(x)} or mu_t(x) + sigma Z_t with U_t/Z_t the run's noise stream, independent of x."""
    env = make("random-lipschitz", seed=5, noise=noise, sigma=0.3)
    stream = (UniformStream if noise == "bernoulli" else NormalStream)([run_seeds(5).noise])
    acts = np.random.default_rng(1).random((2048, 1))
    for t, a in enumerate(acts, start=1):
        mean = env.oracle.mean_reward(a, t)
        z = stream.take1()[0]
        r = env.step(a)[1]
        assert r == (float(z < mean) if noise == "bernoulli" else mean + 0.3 * z)


def test_bernoulli_mean():
    env = make("benign-changes", horizon=20000, static=True)
    r = rollout(env, np.full((20000, 1), 0.25))
    assert set(np.unique(r)) <= {0.0, 1.0}
    assert abs(r.mean() - 0.9) < 0.01  # std of the mean 0.002


# ------------------------------------------------------------------------------------ oracle
def test_two_peak_closed_form_against_fine_grid():
    T, c = 4096, 5
    o = make("two-peak-cyclic", horizon=T).oracle
    xs = np.linspace(0, 1, 20001)[:, None]
    for t in np.linspace(1, T, 97).astype(int):
        alpha = 0.5 * (1 - np.cos(2 * np.pi * c * (t - 1) / T))
        mu = o.mean_rewards(xs, t)
        expected = (1 - alpha) * (1 - np.abs(xs[:, 0] - 0.3)) + alpha * (1 - np.abs(xs[:, 0] - 0.7))
        np.testing.assert_allclose(mu, expected, atol=1e-12)
        assert o.optimal_value(t) == pytest.approx(max(1 - 0.4 * alpha, 0.6 + 0.4 * alpha), abs=1e-12)
        assert o.optimal_value(t) >= mu.max() - 1e-12
        assert o.optimal_value(t) == pytest.approx(mu.max(), abs=1e-12)  # the grid contains 0.3 and 0.7
        assert o.regret(o.best_action(t), t) == 0.0


@pytest.mark.parametrize("T,c", [(4096, 5), (2**15, 5), (1000, 10), (999, 3)])
def test_two_peak_argmax_switches(T, c):
    o = make("two-peak-cyclic", horizon=T, cycles=c).oracle
    sw = o.argmax_switches()
    assert len(sw) == 2 * c
    for k, t in enumerate(sw):
        exact = T * (2 * k + 1) / (4 * c)  # argmax switch: t - 1 = T (2k + 1)/(4c)
        assert t - 1 >= exact > t - 2
    # brute force: which peak is better at every round (ties, alpha = 1/2, only at integer `exact`)
    better07 = np.array([o.mean_reward([0.7], t) > o.mean_reward([0.3], t) for t in range(1, T + 1)])
    flips = 2 + np.flatnonzero(better07[1:] != better07[:-1])
    assert len(flips) == 2 * c
    assert all(f in (s, s + 1) for f, s in zip(flips, sw))


def test_preset_ten_cycles():
    o = make("two-peak-cyclic-10", horizon=4000).oracle
    assert len(o.argmax_switches()) == 20
    assert instance_kwargs("two-peak-cyclic-10") == {"cycles": 10}
    assert make("two-peak-cyclic", horizon=4000, cycles=10).oracle.argmax_switches() == o.argmax_switches()


@pytest.mark.parametrize("instance,d", [(i, 1) for i in INSTANCES] + [(i, 2) for i in MULTI_D])
def test_means_bounded_lipschitz_and_regret(instance, d):
    env = make(instance, seed=3, d=d, **SMALL[instance])
    o = env.oracle
    rng = np.random.default_rng(0)
    for t in rng.integers(1, 2049, size=25):
        t = int(t)
        x, y = rng.random((400, d)), rng.random((400, d))
        y[:200] = np.clip(x[:200] + rng.normal(0, 0.01, (200, d)), 0, 1)  # close pairs too
        mx, my = o.mean_rewards(x, t), o.mean_rewards(y, t)
        assert np.all((mx >= 0) & (mx <= 1))
        assert np.all(np.abs(mx - my) <= np.abs(x - y).max(axis=1) + 1e-12)  # 1-Lipschitz in l-inf
        opt = o.optimal_value(t)
        assert opt >= mx.max()
        g = o.gaps(x, t)
        assert np.all(g >= 0) and np.allclose(g, opt - mx, atol=1e-15)
        assert o.regret(x[0], t) == g[0] and o.mean_reward(x[0], t) == mx[0]
        assert o.regret(o.best_action(t), t) == pytest.approx(0.0, abs=1e-15)
        if d == 1:  # exact optimum: a fine grid never beats it and comes within its spacing
            fine = o.mean_rewards(np.linspace(0, 1, 4097)[:, None], t)
            assert opt >= fine.max() and opt - fine.max() <= 1 / 4096 + 1e-12


def test_regret_recorder_uses_oracle():
    env = RegretRecorder(make("drifting-peak", horizon=200))
    env.reset(seed=0)
    acts = np.random.default_rng(2).random((200, 1))
    expected = [
        env.unwrapped.oracle.optimal_value(t) - env.unwrapped.oracle.mean_reward(a, t)
        for t, a in enumerate(acts, start=1)
    ]
    for a in acts:
        env.step(a)
    np.testing.assert_allclose(env.regrets, expected, atol=1e-15)


def test_benign_arm_quarter_always_optimal():
    o = make("benign-changes", horizon=3000, seed=4).oracle
    assert len(o.change_points()) == 2999  # s_t redrawn every round: L = T
    assert o.argmax_switches() == ()
    xs = np.linspace(0, 1, 1001)[:, None]
    for t in range(1, 3001, 7):
        assert o.regret([0.25], t) == 0.0 and o.optimal_value(t) == 0.9
        assert o.mean_rewards(xs, t).max() == 0.9
    assert make("benign-changes", horizon=300, static=True).oracle.change_points() == ()


def test_phase_families_change_points():
    o = make("piecewise-tents", horizon=1000, phases=4, random_tents=False).oracle
    assert o.change_points() == (251, 501, 751)
    assert o.mean_reward([0.2], 250) == pytest.approx(0.7) and o.mean_reward([0.8], 251) == pytest.approx(0.7)
    assert o.mean_reward([0.8], 250) == pytest.approx(0.3)
    for inst, kw in [("piecewise-tents", {"random_lengths": True, "phases": 6}), ("random-lipschitz", {})]:
        env = make(inst, horizon=5000, seed=9, **kw)
        cp = np.array((1,) + env.oracle.change_points() + (5001,))
        assert len(cp) == kw.get("phases", 8) + 1 and np.all(np.diff(cp) >= 256)


# ------------------------------------------------------------------------------------ significant shifts
def brute_force_shifts(oracle, T, grid, c_sig=1.0):
    """The significant-shift definition with every window length, written directly (slow; tiny T only)."""
    pts = ((np.arange(grid) + 0.5) / grid)[:, None]
    delta = np.array([oracle.gaps(pts, t) for t in range(1, T + 1)])  # (T, G)
    shifts, tau, t = [], 1, 1
    flagged = np.zeros(grid, bool)
    while t <= T:
        S = np.cumsum(delta[tau - 1 : t], axis=0)  # S over [tau, t]
        for n in range(1, t - tau + 2):
            win = S[-1] - (S[-1 - n] if n < len(S) else 0.0)
            flagged |= win >= c_sig * n ** (2 / 3)
        if flagged.all() and t > tau:
            shifts.append(t)
            tau = t
            flagged[:] = False
            continue
        t += 1
    return tuple(shifts)


@pytest.mark.parametrize(
    "instance,kw",
    [
        ("two-peak-cyclic", {"cycles": 1}),
        ("piecewise-tents", {"phases": 3, "random_lengths": True, "min_length": 60}),
        ("drifting-peak", {"period": 100}),
        ("random-lipschitz", {"phases": 3, "min_length": 60}),
        ("benign-changes", {}),
    ],
)
def test_significant_shifts_exact_matches_brute_force(instance, kw):
    T = 240
    o = make(instance, horizon=T, seed=2, **kw).oracle
    assert o.significant_shifts(grid=16, length_ratio=None) == brute_force_shifts(o, T, 16)


@pytest.mark.parametrize("random_lengths", [False, True])
def test_tents_shifts_known_answer(random_lengths):
    """Old peak has gap 0.4 after a change: 0.4 n >= n^(2/3) first at n = 16, so tau = cp + 15."""
    P = 5
    o = make(
        "piecewise-tents", horizon=2**15, phases=P, random_lengths=random_lengths, seed=3, random_tents=False
    ).oracle
    cps = o.change_points()
    assert len(cps) == P - 1
    expected = tuple(c + 15 for c in cps)
    assert o.significant_shifts() == expected  # 16 = ceil(2^(4/4)) is a length
    # length_ratio 1.5: lengths ..., 12, 18, ...; 0.4 * 12 < 12^(2/3), 0.4 * 18 >= 18^(2/3) -> tau = cp + 17
    assert o.significant_shifts(grid=128, length_ratio=1.5) == tuple(c + 17 for c in cps)


def test_tents_exact_small():
    o = make("piecewise-tents", horizon=1024, phases=4, random_tents=False).oracle
    assert o.significant_shifts(grid=64, length_ratio=None) == (272, 528, 784)  # cp + 15


def test_benign_no_shift():
    for T in (2**15, 100000):
        o = make("benign-changes", horizon=T, seed=1).oracle
        assert o.significant_shifts() == ()


@pytest.mark.parametrize("instance,kw", [("two-peak-cyclic", {}), ("drifting-peak", {"period": 400})])
def test_geometric_lengths_close_to_exact(instance, kw):
    o = make(instance, horizon=1024, **kw).oracle
    exact = o.significant_shifts(grid=64, length_ratio=None)
    geo = o.significant_shifts(grid=64)
    assert len(exact) >= 1 and len(geo) == len(exact)
    assert all(0 <= g - e <= 16 for g, e in zip(geo, exact))  # geometric lengths: same shifts, a little late


def test_two_peak_shifts_follow_argmax_switches():
    T, c = 2**15, 5
    o = make("two-peak-cyclic", horizon=T).oracle
    sh = o.significant_shifts()
    sw = o.argmax_switches()
    assert len(sh) == len(sw) == 2 * c  # one shift per argmax switch, within a quarter cycle
    assert all(0 < s - w < T / (4 * c) for s, w in zip(sh, sw))
    assert o.significant_shifts() is sh  # cached


def test_shift_argument_errors():
    o = make(horizon=500).oracle
    with pytest.raises(ValueError, match="length_ratio"):
        o.significant_shifts(length_ratio=1.0)
    with pytest.raises(ValueError, match="c_sig"):
        o.significant_shifts(c_sig=-1)
    with pytest.raises(ValueError, match="grid"):
        o.significant_shifts(grid=0)


# ------------------------------------------------------------------------------------ vector env
@pytest.mark.parametrize(
    "instance,kw",
    [
        ("two-peak-cyclic", {}),
        ("piecewise-tents", {"random_lengths": True}),
        ("benign-changes", {"noise": "gaussian", "sigma": 0.2}),
        ("random-lipschitz", {}),
        ("drifting-peak", {"d": 2}),
    ],
)
def test_vector_rows_bit_identical_to_single(instance, kw):
    T, seeds = 2048, [3, 10, 11, 99]
    d = kw.get("d", 1)
    venv = NonStatLipschitzVectorEnv(num_envs=4, instance=instance, horizon=T, **kw)
    obs, info = venv.reset(seed=seeds)
    assert obs.shape == (4, 1) and venv.t == 0
    acts = np.random.default_rng(5).random((T, 4, d))
    R = np.empty((T, 4))
    G = np.empty((T, 4))
    M = np.empty((T, 4))
    O = np.empty((T, 4))
    for t in range(T):
        G[t] = venv.oracle.regret(acts[t], t + 1)
        M[t] = venv.oracle.mean_reward(acts[t], t + 1)
        O[t] = venv.oracle.optimal_value(t + 1)
        o, R[t], term, trunc, info = venv.step(acts[t])
        assert np.array_equal(o[:, 0], R[t]) and not term.any() and trunc.all() == (t + 1 == T)
        assert np.array_equal(info["t"], np.full(4, t + 1))
    assert venv.t == T
    with pytest.raises(ResetNeeded):
        venv.step(acts[0])
    for i, s in enumerate(seeds):
        env = make(instance, horizon=T, seed=s, **kw)
        o = env.oracle
        assert venv.oracles[i].seed == s
        for t in range(T):
            assert o.regret(acts[t, i], t + 1) == G[t, i]
            assert o.mean_reward(acts[t, i], t + 1) == M[t, i]
            assert o.optimal_value(t + 1) == O[t, i] and O[t, i] - M[t, i] == pytest.approx(G[t, i], abs=1e-15)
            assert env.step(acts[t, i])[1] == R[t, i]


def test_vector_int_seed_and_none():
    v = NonStatLipschitzVectorEnv(num_envs=3, instance="benign-changes", horizon=50)
    v.reset(seed=20)
    assert v.seeds == [20, 21, 22]
    v.reset()
    assert len(set(v.seeds)) == 3
    with pytest.raises(ValueError, match="num_envs"):
        v.reset(seed=[1, 2])


# ------------------------------------------------------------------------------------ invalid actions
BAD_SINGLE = [
    (np.array([0.5, 0.5]), "shape"),
    (np.array(0.5), "shape"),
    (np.array([np.nan]), "finite"),
    (np.array([np.inf]), "finite"),
    (np.array([1.5]), "bounds"),
    (np.array([-0.01]), "bounds"),
    (np.array([True]), "dtype"),
    (["a"], "dtype"),
    (np.array([0.5 + 0j]), "dtype"),
]


@pytest.mark.parametrize("bad,rule", BAD_SINGLE)
def test_invalid_action_leaves_env_unchanged(bad, rule):
    acts = np.random.default_rng(0).random((30, 1))
    ref = rollout(make("benign-changes", horizon=100), acts)
    env = RegretRecorder(make("benign-changes", horizon=100))
    env.reset(seed=0)
    got = []
    for i, a in enumerate(acts):
        if i == 10:
            with pytest.raises(InvalidActionError, match=rule):
                env.step(bad)
            with pytest.raises(InvalidActionError, match=rule):
                env.unwrapped.validate_action(bad)
            assert env.unwrapped.t == 10 and len(env.regrets) == 10
        got.append(env.step(a)[1])
    assert np.array_equal(got, ref)


def test_valid_action_forms():
    env = make(horizon=10)
    env.step([0.5])
    env.step(np.array([0.5], np.float32))
    env.step(np.array([1]))
    env.step((0.0,))
    assert env.t == 4
    assert isinstance(InvalidActionError("x"), ValueError)


def test_vector_invalid_actions_unchanged():
    T, n = 40, 3
    acts = np.random.default_rng(0).random((T, n, 1))
    ref = NonStatLipschitzVectorEnv(num_envs=n, horizon=T)
    ref.reset(seed=[1, 2, 3])
    R_ref = np.array([ref.step(a)[1] for a in acts])
    v = NonStatLipschitzVectorEnv(num_envs=n, horizon=T)
    v.reset(seed=[1, 2, 3])
    R = []
    for i, a in enumerate(acts):
        if i == 5:
            bad = a.copy()
            bad[1, 0] = np.nan
            for b, rule in [(bad, "finite"), (a[:2], "shape"), (a + 2, "bounds"), (a[:, 0], "shape")]:
                with pytest.raises(InvalidActionError, match=rule):
                    v.step(b)
                with pytest.raises(InvalidActionError, match=rule):
                    v.oracle.regret(b, 6)
            assert v.t == 5
        R.append(v.step(a.astype(np.float32).astype(np.float64))[1])
    assert np.array_equal(np.array(R), R_ref)


# ------------------------------------------------------------------------------------ arguments
def test_instance_registry():
    assert INSTANCES == (
        "two-peak-cyclic",
        "two-peak-cyclic-10",
        "piecewise-tents",
        "benign-changes",
        "drifting-peak",
        "random-lipschitz",
    )
    assert instance_kwargs("piecewise-tents") == {
        "phases": 5,
        "random_lengths": False,
        "min_length": 256,
        "random_tents": True,
    }
    assert instance_kwargs("drifting-peak") == {"period": None}
    assert instance_kwargs("random-lipschitz") == {"phases": 8, "min_length": 256}
    assert instance_kwargs("benign-changes") == {"static": False}
    with pytest.raises(ValueError, match="valid instances: two-peak-cyclic"):
        instance_kwargs("nope")


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (
            {"instance": "two-peaks"},
            r"unknown instance 'two-peaks'; valid instances: two-peak-cyclic, two-peak-cyclic-10",
        ),
        (
            {"instance": "piecewise-tents", "cycles": 3},
            r"unknown kwarg\(s\) 'cycles'.*valid kwargs: .*phases, random_lengths, min_length",
        ),
        ({"instance": "two-peak-cyclic", "phases": 3}, r"'phases'.*valid kwargs: .*cycles"),
        ({"horizon": 0}, "horizon"),
        ({"horizon": "long"}, "horizon"),
        ({"horizon": 10.5}, "horizon"),
        ({"d": 0}, r"\bd must"),
        ({"instance": "benign-changes", "d": 2}, r"d must be 1"),
        ({"noise": "poisson"}, "noise must be one of 'bernoulli', 'gaussian'; got"),
        ({"sigma": -1.0}, "sigma"),
        ({"sigma": float("nan")}, "sigma"),
        ({"cycles": 0}, "cycles"),
        ({"instance": "piecewise-tents", "random_lengths": 1}, "random_lengths"),
        ({"instance": "piecewise-tents", "random_tents": "no"}, "random_tents must be True or False, got 'no'"),
        ({"instance": "random-lipschitz", "horizon": 1000}, r"horizon=1000 is too short.*min_length=256"),
        ({"instance": "drifting-peak", "period": 0}, "period"),
        ({"instance": "benign-changes", "static": "yes"}, "static"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NonStatLipschitzEnv(**kwargs)
    with pytest.raises(ValueError, match=match):
        NonStatLipschitzVectorEnv(num_envs=2, **kwargs)


def test_bad_round_and_seed():
    env = make(horizon=100)
    with pytest.raises(ValueError, match=r"t must be an integer round in 1\.\.100"):
        env.oracle.regret([0.5], 0)
    with pytest.raises(ValueError, match="t must"):
        env.oracle.optimal_value(101)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)


def test_score_run_known_answer():
    from papergym.envs.bandits.lipschitz import NonStatLipschitzOracle

    info = {"shifts": [100, 200], "L_tilde": 2}
    got = NonStatLipschitzOracle.score_run(
        info, 900.0, {"restart_times": [250, 50, 120, 130]}, {"horizon": 1000, "d": 1}
    )
    # 50: before the first shift (false alarm); 120: detects 100 (delay 20); 130: second in phase 1
    # (false alarm); 250: detects 200 (delay 50)
    assert got["detections"] == 2 and got["false_alarms"] == 2 and got["mean_delay"] == 35
    assert got["L_tilde"] == 2
    assert got["normalized_regret"] == pytest.approx(900 / (3 ** (1 / 3) * 1000 ** (2 / 3)))
    d2 = NonStatLipschitzOracle.score_run({"shifts": []}, 100.0, {}, {"horizon": 4096, "d": 2})
    assert d2["normalized_regret"] == pytest.approx(100 / 4096**0.75) and "detections" not in d2
    none = NonStatLipschitzOracle.score_run(info, 1.0, {"restart_times": []}, {"horizon": 1000})
    assert none["detections"] == 0 and np.isnan(none["mean_delay"])


# ------------------------------------------------------------------------------------ seeded piecewise-tents
def _tents(oracle):
    """(phase starts, centres (P, d), heights (P,)) read off the oracle at every phase start."""
    starts = (1,) + oracle.change_points()
    centres = np.array([oracle.best_action(s) for s in starts])
    heights = np.array([oracle.optimal_value(s) - 0.3 for s in starts])
    return starts, centres, heights


def _documented_tents(seed, P, d):
    """The draws the env's docstring documents, redone here from the run's instance stream (equal phases)."""
    rng = np.random.default_rng(run_seeds(seed).instance)
    h = rng.uniform(0.2, 0.4, size=P)
    c = np.empty((P, d))
    for i in range(P):
        x = rng.uniform(0.0, 1.0, size=d)
        while i > 0 and np.abs(x - c[i - 1]).max() < 0.4:
            x = rng.uniform(0.0, 1.0, size=d)
        c[i] = x
    return c, h


@pytest.mark.parametrize("d", [1, 2])
def test_seeded_tents_same_seed_same_tents_other_seed_other_tents(d):
    T, P = 4000, 6
    s1, c1, h1 = _tents(make("piecewise-tents", horizon=T, phases=P, d=d, seed=31).oracle)
    s2, c2, h2 = _tents(make("piecewise-tents", horizon=T, phases=P, d=d, seed=31).oracle)
    s3, c3, h3 = _tents(make("piecewise-tents", horizon=T, phases=P, d=d, seed=32).oracle)
    assert s1 == s2 == s3 == (1, 667, 1334, 2001, 2667, 3334)  # phase structure kept: equal phases
    assert np.array_equal(c1, c2) and np.array_equal(h1, h2)
    assert not np.any(c1 == c3) and not np.any(h1 == h3)
    # the documented distributions, draw for draw
    c, h = _documented_tents(31, P, d)
    np.testing.assert_array_equal(c1, c)
    np.testing.assert_allclose(h1, h, rtol=0, atol=1e-15)
    # the vector env builds the same tents in every row
    venv = NonStatLipschitzVectorEnv(num_envs=2, instance="piecewise-tents", horizon=T, phases=P, d=d)
    venv.reset(seed=[32, 31])
    assert np.array_equal(_tents(venv.oracles[1])[1], c1) and np.array_equal(_tents(venv.oracles[0])[1], c3)


def test_seeded_tents_distributions_and_every_change_leaves_a_gap():
    hs, seps = [], []
    for seed in range(40):
        o = make("piecewise-tents", horizon=2000, phases=8, seed=100 + seed).oracle
        starts, c, h = _tents(o)
        hs.extend(h)
        seps.extend(np.abs(np.diff(c, axis=0)).max(axis=1))
        assert np.all((c >= 0) & (c <= 1))
        for i in range(1, len(starts)):  # the previous peak is on the new tent's floor: gap h_i
            assert o.regret(c[i - 1], starts[i]) == pytest.approx(h[i], abs=1e-15)
            assert o.regret(c[i - 1], starts[i] - 1) == 0.0
    hs = np.array(hs)
    assert hs.min() >= 0.2 and hs.max() <= 0.4 and abs(hs.mean() - 0.3) < 0.01  # U[0.2, 0.4]: sd of mean 0.002
    assert min(seps) >= 0.4


@pytest.mark.parametrize("d", [1, 2])
def test_seeded_tents_optimum_matches_brute_force_grid(d):
    """mu_t* against a brute-force maximum over a grid: exact with the centres added, within half a grid step
    (1-Lipschitz) on the grid alone; the means against the closed form of the documented parameters."""
    T, P = 3000, 5
    o = make("piecewise-tents", horizon=T, phases=P, d=d, seed=41).oracle
    c, h = _documented_tents(41, P, d)
    g = np.linspace(0.0, 1.0, 2049 if d == 1 else 129)
    grid = g[:, None] if d == 1 else np.stack([m.ravel() for m in np.meshgrid(g, g, indexing="ij")], axis=1)
    step = g[1] - g[0]
    starts = (1,) + o.change_points()
    for p, s in enumerate(starts):
        for t in (s, s + 300):
            mu = o.mean_rewards(np.vstack([grid, c]), t)
            np.testing.assert_allclose(
                mu[: len(grid)], 0.3 + np.maximum(0.0, h[p] - np.abs(grid - c[p]).max(axis=1)), rtol=0, atol=1e-15
            )
            opt = o.optimal_value(t)
            assert opt == mu.max()  # brute force over the grid and every tent's centre
            assert 0.0 <= opt - mu[: len(grid)].max() <= step / 2 + 1e-12
            assert opt == pytest.approx(0.3 + h[p], abs=1e-15)
            assert o.regret(o.best_action(t), t) == 0.0
            np.testing.assert_allclose(o.gaps(grid, t), opt - mu[: len(grid)], rtol=0, atol=1e-15)


def test_seeded_tents_every_change_significant_on_long_phases():
    for seed in (51, 52, 53):
        o = make("piecewise-tents", horizon=2**15, phases=5, seed=seed).oracle
        cps, shifts = o.change_points(), o.significant_shifts()
        assert len(shifts) == len(cps) == 4
        assert all(0 < s - c <= 300 for s, c in zip(shifts, cps))  # gaps >= 0.2 -> detectable within ~125 rounds


def test_fixed_tents_kept_as_an_option():
    o = make("piecewise-tents", horizon=1000, phases=4, random_tents=False, seed=5).oracle
    o2 = make("piecewise-tents", horizon=1000, phases=4, random_tents=False, seed=6).oracle
    assert [tuple(o.best_action(t)) for t in (1, 251, 501, 751)] == [(0.2,), (0.8,), (0.2,), (0.8,)]
    assert o.optimal_value(600) == 0.7 and o2.mean_reward([0.33], 900) == o.mean_reward([0.33], 900)
