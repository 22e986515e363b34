"""Tests of NoiseFreeGPBandit-v0 and the shared GP numerics (papergym.envs.bandits.gp): kernels against
closed forms, exact RKHS norms, the oracle against brute force, the continuous-mode certificate, the env
and vector-env contracts, and the noise-free posterior against dense and scikit-learn references."""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

import papergym.envs  # noqa: F401  (registers the ids)
import papergym.envs.bandits.gp as gpmod
from papergym.envs import InvalidActionError, run_seeds
from papergym.envs.bandits.gp import (
    INSTANCES,
    KERNELS,
    MAX_CANDIDATES,
    NoiseFreeGP,
    NoiseFreeGPBanditEnv,
    NoiseFreeGPBanditVectorEnv,
    dense_posterior,
    kernel_from_distance,
    kernel_lipschitz_profile,
    kernel_matrix,
    make_candidates,
    make_problem,
)
from papergym.envs.bandits.gp import instances as gp_instances
from papergym.envs.bandits.gp import posterior as gp_posterior
from papergym.envs.wrappers import RegretRecorder


def make(seed=0, **kw):
    env = NoiseFreeGPBanditEnv(**kw)
    env.reset(seed=seed)
    return env


def independent_norm(oracle, kernel, ell):
    Z, a = np.array(oracle.centres), np.array(oracle.coefficients)
    return math.sqrt(a @ kernel_matrix(kernel, Z, Z, ell) @ a)


# ------------------------------------------------------------------------------------------ kernels
def test_kernels_closed_forms():
    ell = 0.3
    e = math.e
    # k(0) = 1 for every kernel; hand-computed values at distances where the forms simplify
    for k in KERNELS:
        assert kernel_from_distance(k, np.array(0.0), ell) == 1.0
    assert kernel_from_distance("se", np.array(ell), ell) == pytest.approx(math.exp(-0.5), rel=1e-15)
    assert kernel_from_distance("se", np.array(2 * ell), ell) == pytest.approx(math.exp(-2.0), rel=1e-15)
    assert kernel_from_distance("matern-0.5", np.array(ell), ell) == pytest.approx(1 / e, rel=1e-15)
    assert kernel_from_distance("matern-1.5", np.array(ell / math.sqrt(3)), ell) == pytest.approx(2 / e, rel=1e-14)
    assert kernel_from_distance("matern-2.5", np.array(ell / math.sqrt(5)), ell) == pytest.approx(
        7 / (3 * e), rel=1e-14
    )
    assert kernel_from_distance("matern-2.5", np.array(2 * ell / math.sqrt(5)), ell) == pytest.approx(
        (1 + 2 + 4 / 3) * math.exp(-2), rel=1e-14
    )
    # Gram matrix: symmetric, unit diagonal (exact zero distances), values from the distance form
    X = np.random.default_rng(0).random((7, 2))
    for k in KERNELS:
        K = kernel_matrix(k, X, X, ell)
        assert np.array_equal(np.diag(K), np.ones(7)) and np.array_equal(K, K.T)
        r = np.linalg.norm(X[2] - X[5])
        assert K[2, 5] == pytest.approx(float(kernel_from_distance(k, np.array(r), ell)), rel=1e-14)
        assert kernel_lipschitz_profile(k, ell, r) == pytest.approx(math.sqrt(2 * (1 - K[2, 5])), rel=1e-12)
    with pytest.raises(ValueError, match="kernel must be one of"):
        kernel_from_distance("rbf", np.array(0.0), ell)


# ---------------------------------------------------------------------------------- instance families
@pytest.mark.parametrize("instance", INSTANCES)
@pytest.mark.parametrize(
    "d,kernel",
    [
        (1, "se"),
        (1, "matern-0.5"),
        (1, "matern-1.5"),
        (1, "matern-2.5"),
        (2, "se"),
        (2, "matern-1.5"),
        (2, "matern-2.5"),
        (3, "se"),
        (3, "matern-2.5"),
    ],
)
def test_rkhs_norm_is_exactly_B(instance, d, kernel):
    for seed, B in [(0, 1.0), (1, 3.0)]:
        env = make(seed, instance=instance, d=d, kernel=kernel, B=B)
        o = env.oracle
        ell = env.problem.lengthscale
        assert independent_norm(o, kernel, ell) == pytest.approx(B, rel=1e-8)
        assert o.rkhs_norm() == pytest.approx(B, rel=1e-12)
        # |f(x) - f(x')| <= B sqrt(2 (1 - k(|x - x'|))) (Cauchy-Schwarz in the RKHS)
        rng = np.random.default_rng(seed)
        X, Y = rng.random((300, d)), rng.random((300, d))
        Y[:100] = np.clip(X[:100] + 0.01 * rng.standard_normal((100, d)), 0, 1)  # close pairs too
        gaps = np.abs(o.values(X) - o.values(Y))
        prof = np.array([kernel_lipschitz_profile(kernel, ell, h) for h in np.linalg.norm(X - Y, axis=1)])
        assert np.all(gaps <= B * prof + 1e-12)


def test_family_structure():
    # rkhs-sum: J = n_centres centres in [0,1]^d drawn from the instance stream, then a ~ N(0, I)
    env = make(5, d=2, n_centres=7)
    o = env.oracle
    rng = np.random.default_rng(run_seeds(5).instance)
    Z = rng.random((7, 2))
    a = rng.standard_normal(7)
    assert np.array_equal(o.centres, Z)
    K = kernel_matrix("se", Z, Z, 0.2)
    np.testing.assert_allclose(o.coefficients, a / math.sqrt(a @ K @ a), rtol=1e-14)
    # gp-interpolant: centres = the n_inducing^d grid and f is the interpolant of its own values there
    for d, p in [(1, 15), (2, 7), (3, 5)]:
        env = make(2, instance="gp-interpolant", d=d, kernel="matern-2.5")
        assert env.resolved_kwargs["n_inducing"] == p
        Zg = env.oracle.centres
        assert Zg.shape == (p**d, d)
        assert np.array_equal(np.unique(Zg), np.linspace(0, 1, p))
        K = kernel_matrix("matern-2.5", Zg, Zg, env.problem.lengthscale)
        np.testing.assert_allclose(
            np.linalg.solve(K, env.oracle.values(Zg)), env.oracle.coefficients, rtol=1e-6, atol=1e-9
        )


def test_gp_interpolant_conditioning_guard():
    # SE, l = 0.2 on 15 points is too ill-conditioned: the default is lowered, an explicit value refused
    env = NoiseFreeGPBanditEnv(instance="gp-interpolant", lengthscale=0.2)
    p = env.resolved_kwargs["n_inducing"]
    assert 2 <= p < 15
    Z = np.linspace(0, 1, p)[:, None]
    assert np.linalg.eigvalsh(kernel_matrix("se", Z, Z, 0.2))[0] > gpmod.GP_INTERPOLANT_MIN_EIG
    Z1 = np.linspace(0, 1, p + 1)[:, None]
    assert np.linalg.eigvalsh(kernel_matrix("se", Z1, Z1, 0.2))[0] <= gpmod.GP_INTERPOLANT_MIN_EIG * 1.01
    with pytest.raises(ValueError, match=f"n_inducing=15.*n_inducing <= {p} works"):
        NoiseFreeGPBanditEnv(instance="gp-interpolant", lengthscale=0.2, n_inducing=15)
    with pytest.raises(ValueError, match="n_inducing"):
        NoiseFreeGPBanditEnv(instance="gp-interpolant", d=3, n_inducing=17)  # 17^3 > MAX_CENTRES


# -------------------------------------------------------------------------------------- candidates
def test_candidate_sets():
    C = make_candidates(1)
    assert C.shape == (1000, 1) and C[0, 0] == 0.0 and C[-1, 0] == 1.0
    np.testing.assert_allclose(np.diff(C[:, 0]), 1 / 999, rtol=1e-9)
    C2 = make_candidates(2)
    assert C2.shape == (2500, 2)
    assert np.array_equal(np.unique(C2[:, 0]), np.linspace(0, 1, 50)) and len(np.unique(C2, axis=0)) == 2500
    C3 = make_candidates(3)
    assert C3.shape == (2048, 3) and C3.min() >= 0 and C3.max() < 1
    assert np.array_equal(C3, make_candidates(3, "sobol", 2048, 0))
    assert not np.array_equal(C3, make_candidates(3, candidate_seed=1))
    assert make_candidates(3, "grid", 27).shape == (27, 3)
    assert make_candidates(3, "grid").shape == (13**3, 3)
    U = make_candidates(2, "uniform", 100, 4)
    assert np.array_equal(U, np.random.default_rng(4).random((100, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # non-power-of-two Sobol sizes are accepted silently
        assert make_candidates(2, "sobol", 1000).shape == (1000, 2)
    for arr in (C, C2, C3, U):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0, 0] = 0.5
    with pytest.raises(ValueError, match=r"n_candidates=1000 is not side\^2 .*961 or 1024"):
        make_candidates(2, "grid", 1000)
    with pytest.raises(ValueError, match=r"n_candidates=30 is not side\^3 .*27 or 64"):
        make_candidates(3, "grid", 30)
    with pytest.raises(ValueError, match="n_candidates=.*too large"):
        make_candidates(2, "uniform", MAX_CANDIDATES + 1)
    with pytest.raises(ValueError, match="candidate_set must be one of .auto., .grid., .sobol., .uniform.; got"):
        make_candidates(2, "halton")


def test_problem_spec_public_and_seed_independent():
    env = NoiseFreeGPBanditEnv(d=2, kernel="matern-1.5", B=2.0)
    p0 = env.problem
    assert p0.env_id == "NoiseFreeGPBandit-v0" and p0.horizon == 150
    assert set(p0.params) == {"d", "kernel", "lengthscale", "B", "candidates", "action_mode"}
    assert (p0.d, p0.kernel, p0.lengthscale, p0.B, p0.action_mode) == (2, "matern-1.5", 0.2, 2.0, "discrete")
    assert p0.action_space == gym.spaces.Discrete(2500)
    assert p0.observation_space == gym.spaces.Box(-2.0 * (1 + 1e-9), 2.0 * (1 + 1e-9), (1,), np.float64)
    for s in (0, 1, 2):
        env.reset(seed=s)
        assert env.problem is p0
    other = NoiseFreeGPBanditEnv(d=2, kernel="matern-1.5", B=2.0)
    other.reset(seed=9)
    assert other.problem.public_dict() == p0.public_dict()
    mp = make_problem(d=2, kernel="matern-1.5", B=2.0)
    assert mp.public_dict() == p0.public_dict() and mp.action_space == p0.action_space
    pc = make_problem(d=3, action_mode="continuous")
    assert pc.action_space == gym.spaces.Box(0.0, 1.0, (3,), np.float64) and pc.horizon == 200
    assert pc.candidates.shape == (2048, 3)


def test_resolved_kwargs():
    assert NoiseFreeGPBanditEnv().resolved_kwargs == {
        "horizon": 60,
        "lengthscale": 0.1,
        "n_candidates": 1000,
        "n_inducing": None,
    }
    assert NoiseFreeGPBanditEnv(d=2, instance="gp-interpolant").resolved_kwargs == {
        "horizon": 150,
        "lengthscale": 0.2,
        "n_candidates": 2500,
        "n_inducing": 7,
    }
    assert NoiseFreeGPBanditEnv(d=3, horizon=17, lengthscale=0.3).resolved_kwargs == {
        "horizon": 17,
        "lengthscale": 0.3,
        "n_candidates": 2048,
        "n_inducing": None,
    }


# ------------------------------------------------------------------------------------------- oracle
@pytest.mark.parametrize("instance", INSTANCES)
@pytest.mark.parametrize("d", [1, 2, 3])
def test_discrete_oracle_against_brute_force(instance, d):
    env = make(3, instance=instance, d=d, kernel="matern-2.5")
    o = env.oracle
    C = env.problem.candidates
    f = o.values(C)
    assert np.array_equal(o.f_candidates, f)  # one evaluator: bit for bit
    assert o.optimal_value(1) == f.max() and o.best_action() == int(np.argmax(f))
    assert np.array_equal(o.maximiser, C[np.argmax(f)]) and o.certificate == 0.0
    best = o.best_action()
    assert o.regret(best, 1) == 0.0 and o.simple_regret([best]) == 0.0
    regs = np.array([o.regret(i, 5) for i in range(len(C))])
    assert np.all(regs >= 0.0)
    np.testing.assert_array_equal(regs, f.max() - f)
    assert o.mean_reward(7, 2) == f[7]
    with pytest.raises(ValueError, match="t must be an integer round"):
        o.regret(0, 0)


def test_simple_regret_known_answer():
    env = make(1)
    o = env.oracle
    f, fs = o.f_candidates, o.optimal_value(1)
    order = np.argsort(f)
    lo, mid = int(order[0]), int(order[500])
    assert o.simple_regret([lo]) == fs - f[lo]
    assert o.simple_regret([lo, mid, lo]) == fs - f[mid]  # best observed point
    assert o.simple_regret(np.array([mid, o.best_action()])) == 0.0
    with pytest.raises(ValueError, match="at least one"):
        o.simple_regret([])
    envc = make(1, action_mode="continuous")
    oc = envc.oracle
    C = envc.problem.candidates
    assert oc.simple_regret(C[[lo, mid]]) == oc.optimal_value(1) - max(oc.values(C[[lo, mid]]))
    assert oc.simple_regret(np.stack([C[lo], oc.maximiser])) == 0.0


def test_regret_recorder_noise_free():
    env = RegretRecorder(NoiseFreeGPBanditEnv(d=2, horizon=40))
    env.reset(seed=4)
    o = env.unwrapped.oracle
    rng = np.random.default_rng(0)
    rewards = [env.step(int(a))[1] for a in rng.integers(0, 2500, 40)]
    # noise-free: the regret is f* minus the reward received, every round
    np.testing.assert_array_equal(np.array(env.regrets), o.optimal_value(1) - np.array(rewards))
    assert env.cumulative_regret == pytest.approx(40 * o.optimal_value(1) - sum(rewards), rel=1e-12)


@pytest.mark.parametrize("instance", INSTANCES)
@pytest.mark.parametrize(
    "d,kernel", [(1, "se"), (1, "matern-1.5"), (1, "matern-0.5"), (2, "se"), (2, "matern-2.5"), (2, "matern-1.5")]
)
def test_continuous_optimum_and_certificate(instance, d, kernel):
    env = make(6, instance=instance, d=d, kernel=kernel, action_mode="continuous")
    o = env.oracle
    fs, cert = o.optimal_value(1), o.certificate
    assert np.all(fs >= o.f_candidates)  # f* >= every candidate (same evaluator)
    X = np.random.default_rng(0).random((20000 if d == 1 else 50000, d))
    fx = o.values(X)
    assert fs >= fx.max() - 1e-12  # and >= a random dense sample
    assert np.all(fx <= fs + cert + 1e-12)  # sup f - f* <= certificate
    assert math.isfinite(cert) and cert >= 0.0
    # small certificates where the kernel is smooth (bounds of the module docstring)
    limit = {"se": 1e-3, "matern-2.5": 1e-3, "matern-1.5": 1e-2, "matern-0.5": 0.2}[kernel]
    assert cert <= limit
    xs = o.maximiser
    assert xs.shape == (d,) and np.all((xs >= 0) & (xs <= 1))
    assert o.values(xs[None, :])[0] == fs and o.regret(xs, 1) == 0.0 and o.mean_reward(xs, 3) == fs
    assert np.array_equal(o.best_action(), xs)
    # every regret is >= 0; at a candidate's coordinates it is f* - f_candidates exactly
    C = env.problem.candidates
    for i in (0, 17, len(C) - 1):
        assert o.regret(C[i], 2) == fs - o.f_candidates[i] >= 0.0
    assert all(o.regret(x, 1) >= 0.0 for x in X[:50])


def test_continuous_optimum_d1_against_fine_grid():
    env = make(11, kernel="matern-2.5", action_mode="continuous")
    o = env.oracle
    fine = o.values(np.linspace(0, 1, 1_000_001)[:, None])
    assert abs(o.optimal_value(1) - fine.max()) <= max(1e-9, o.certificate)
    assert o.optimal_value(1) >= fine.max() - 1e-12


def test_certificate_nan_without_grid():
    env = make(0, d=4, action_mode="continuous", horizon=5)
    o = env.oracle
    assert math.isnan(o.certificate)
    assert o.optimal_value(1) >= o.f_candidates.max()
    X = np.random.default_rng(1).random((20000, 4))
    assert o.optimal_value(1) >= o.values(X).max()


# ------------------------------------------------------------------------------------ env contract
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"d": 2, "instance": "gp-interpolant"},
        {"action_mode": "continuous"},
        {"d": 2, "action_mode": "continuous", "kernel": "matern-1.5"},
    ],
)
def test_check_env(kw):
    env = NoiseFreeGPBanditEnv(**kw)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    bad = [str(w.message) for w in caught if "infinity" not in str(w.message) and "render" not in str(w.message)]
    assert bad == []
    assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.DISABLED


def test_gym_make_and_episode():
    env = gym.make("NoiseFreeGPBandit-v0", kernel="matern-1.5", d=2, horizon=3)
    with pytest.raises(ResetNeeded):
        env.unwrapped.step(0)
    with pytest.raises(ResetNeeded):
        _ = env.unwrapped.oracle
    obs, info = env.reset(seed=0)
    assert np.array_equal(obs, np.zeros(1)) and info == {"t": 0} and env.unwrapped.t == 0
    f = env.unwrapped.oracle.f_candidates
    for t in (1, 2, 3):
        obs, r, term, trunc, info = env.step(t * 10)
        assert r == f[t * 10] and np.array_equal(obs, [f[t * 10]]) and obs.dtype == np.float64
        assert term is False and trunc is (t == 3) and info == {"t": t}
    with pytest.raises(ResetNeeded):
        env.unwrapped.step(0)
    env.reset(seed=0)
    assert env.unwrapped.t == 0 and env.step(5)[1] == f[5]


def test_determinism_and_seed_dependence():
    gp_instances.cached_instance.cache_clear()
    for mode in ("discrete", "continuous"):
        a = make(7, d=2, action_mode=mode).oracle
        gp_instances.cached_instance.cache_clear()  # rebuild from scratch
        b = make(7, d=2, action_mode=mode).oracle
        c = make(8, d=2, action_mode=mode).oracle
        assert a._inst is not b._inst
        for name in ("centres", "coefficients", "f_candidates", "maximiser"):
            assert np.array_equal(getattr(a, name), getattr(b, name))
        assert a.optimal_value(1) == b.optimal_value(1) and a.certificate == b.certificate
        assert not np.array_equal(a.f_candidates, c.f_candidates)
    # reset() without a seed: a run seed drawn from np_random (reproducible after a seeded reset)
    env = NoiseFreeGPBanditEnv()
    env.reset(seed=3)
    env.reset()
    s1, f1 = env.run_seed, env.oracle.f_candidates
    env2 = NoiseFreeGPBanditEnv()
    env2.reset(seed=3)
    env2.reset()
    assert env2.run_seed == s1 and np.array_equal(env2.oracle.f_candidates, f1)


DISCRETE_BAD = [
    (1.5, "dtype"),
    (3.0, "dtype"),
    (True, "dtype"),
    (np.bool_(False), "dtype"),
    (float("nan"), "finite"),
    (np.array(np.nan), "finite"),
    (1000, "range"),
    (-1, "range"),
    (np.int64(2**40), "range"),
    ([1, 2], "shape"),
    (np.array([[1]]), "shape"),
    ("3", "dtype"),
    (None, "dtype"),
    (np.array([1.0]), "dtype"),
]


@pytest.mark.parametrize("bad,rule", DISCRETE_BAD)
def test_invalid_discrete_action_leaves_env_unchanged(bad, rule):
    env = make(0)
    env.step(4)
    with pytest.raises(InvalidActionError, match=f"rule '{rule}'"):
        env.step(bad)
    with pytest.raises(InvalidActionError, match=f"rule '{rule}'"):
        env.validate_action(bad)
    assert env.t == 1
    assert env.step(5) == (
        pytest.approx(np.array([env.oracle.f_candidates[5]])),
        env.oracle.f_candidates[5],
        False,
        False,
        {"t": 2},
    )


def test_valid_discrete_action_forms():
    env = make(0)
    f = env.oracle.f_candidates
    for a in (7, np.int32(7), np.uint8(7), np.array(7), np.array([7]), [7]):
        assert env.validate_action(a) == 7
        assert env.step(a)[1] == f[7]
        assert env.oracle.regret(a, 1) == env.oracle.optimal_value(1) - f[7]


CONT_BAD = [
    (np.array([0.5, 0.5, 0.5]), "shape"),
    (0.5, "shape"),
    (np.array([np.nan, 0.5]), "finite"),
    (np.array([0.5, np.inf]), "finite"),
    (np.array([1.5, 0.5]), "bounds"),
    (np.array([0.2, -1e-9]), "bounds"),
    (np.array(["a", "b"]), "dtype"),
    (np.array([True, False]), "dtype"),
]


@pytest.mark.parametrize("bad,rule", CONT_BAD)
def test_invalid_continuous_action_leaves_env_unchanged(bad, rule):
    env = make(0, d=2, action_mode="continuous", horizon=5)
    with pytest.raises(InvalidActionError, match=f"rule '{rule}'"):
        env.step(bad)
    with pytest.raises(InvalidActionError, match=f"rule '{rule}'"):
        env.oracle.regret(bad, 1)
    assert env.t == 0
    assert env.step([0, 1])[1] == env.oracle.values(np.array([[0.0, 1.0]]))[0]  # ints and lists accepted
    assert env.t == 1


# -------------------------------------------------------------------------------------- vector env
@pytest.mark.parametrize(
    "kw",
    [
        {"d": 2},
        {"d": 1, "instance": "gp-interpolant", "kernel": "matern-0.5"},
        {"d": 2, "action_mode": "continuous", "kernel": "matern-2.5"},
        {
            "d": 3,
            "action_mode": "continuous",
            "instance": "gp-interpolant",
            "candidate_set": "uniform",
            "n_candidates": 300,
        },
    ],
)
def test_vector_rows_bit_identical_to_single(kw):
    seeds = [3, 11, 12]
    T = 25
    venv = NoiseFreeGPBanditVectorEnv(num_envs=3, horizon=T, **kw)
    obs, info = venv.reset(seed=seeds)
    assert obs.shape == (3, 1) and np.array_equal(info["t"], [0, 0, 0])
    singles = [make(s, horizon=T, **kw) for s in seeds]
    assert np.array_equal(venv.oracle.optimal_value(1), [e.oracle.optimal_value(1) for e in singles])
    assert np.array_equal(venv.oracle.rkhs_norm(), [e.oracle.rkhs_norm() for e in singles])
    space = singles[0].action_space
    space.seed(1)
    history = []
    for t in range(1, T + 1):
        acts = np.stack([np.asarray(space.sample()) for _ in seeds])
        history.append(acts)
        reg = venv.oracle.regret(acts, t)
        mean = venv.oracle.mean_reward(acts, t)
        o, r, term, trunc, info = venv.step(acts)
        for i, e in enumerate(singles):
            assert reg[i] == e.oracle.regret(acts[i], t) and mean[i] == e.oracle.mean_reward(acts[i], t)
            so, sr, sterm, strunc, _ = e.step(acts[i])
            assert np.array_equal(o[i], so) and r[i] == sr and trunc[i] == strunc and term[i] == sterm
        assert np.array_equal(info["t"], [t] * 3)
    assert trunc.all()
    sr = venv.oracle.simple_regret(np.stack(history))
    for i, e in enumerate(singles):
        assert sr[i] == e.oracle.simple_regret(np.stack([h[i] for h in history]))
    with pytest.raises(ResetNeeded):
        venv.step(acts)


def test_vector_env_via_gym_and_invalid_actions():
    venv = gym.make_vec("NoiseFreeGPBandit-v0", num_envs=2, vectorization_mode="vector_entry_point", horizon=4)
    venv.reset(seed=5)
    assert venv.unwrapped.seeds == [5, 6]
    assert venv.action_space.shape == (2,) and venv.single_action_space == gym.spaces.Discrete(1000)
    for bad, rule in [
        (np.array([1, 1000]), "range"),
        (np.array([1.0, 2.0]), "dtype"),
        (np.array([1, 2, 3]), "shape"),
        (np.array([True, False]), "dtype"),
    ]:
        with pytest.raises(InvalidActionError, match=f"rule '{rule}'"):
            venv.step(bad)
    assert venv.unwrapped.t == 0
    cv = NoiseFreeGPBanditVectorEnv(num_envs=2, d=2, action_mode="continuous", horizon=4)
    cv.reset(seed=[1, 2])
    with pytest.raises(InvalidActionError, match="rule 'bounds'"):
        cv.step(np.array([[0.5, 0.5], [0.5, 1.5]]))
    with pytest.raises(InvalidActionError, match="rule 'shape'"):
        cv.step(np.array([0.5, 0.5]))
    assert cv.t == 0


# ---------------------------------------------------------------------------------------- arguments
@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"instance": "gp-sample"}, "instance must be one of 'rkhs-sum', 'gp-interpolant'; got"),
        ({"kernel": "rbf"}, "kernel must be one of 'se', 'matern-0.5', 'matern-1.5', 'matern-2.5'; got"),
        ({"action_mode": "box"}, "action_mode must be one of 'discrete', 'continuous'; got"),
        ({"B": 0.0}, "B must be a positive finite number"),
        ({"B": float("inf")}, "B must be a positive finite number"),
        ({"B": True}, "B must be a positive finite number"),
        ({"B": "1"}, "B must be a positive finite number"),
        ({"d": 0}, "d must be an integer >= 1"),
        ({"d": 1.5}, "d must be an integer >= 1"),
        ({"horizon": 0}, "horizon must be an integer >= 1"),
        ({"horizon": True}, "horizon must be an integer >= 1"),
        ({"lengthscale": -0.1}, "lengthscale must be a positive finite number"),
        ({"lengthscale": "0.1"}, "lengthscale must be None or a positive finite number"),
        ({"n_centres": 0}, "n_centres must be an integer"),
        ({"n_centres": 10**6}, "n_centres must be an integer in"),
        ({"n_inducing": 1, "instance": "gp-interpolant"}, "n_inducing must be an integer >= 2"),
        ({"n_candidates": 0}, "n_candidates must be an integer >= 1"),
        ({"candidate_seed": -1}, "candidate_seed must be an integer >= 0"),
        ({"candidate_set": "lattice"}, "candidate_set must be one of 'auto', 'grid', 'sobol', 'uniform'; got"),
        ({"d": 2, "n_candidates": 1000}, r"n_candidates=1000 is not side\^2"),
        ({"n_candidates": MAX_CANDIDATES * 2}, "too large"),
        ({"render_mode": "human"}, "render_mode must be None"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NoiseFreeGPBanditEnv(**kwargs)


def test_bad_reset_and_seed():
    env = NoiseFreeGPBanditEnv()
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    with pytest.raises(ValueError, match="options"):
        env.reset(seed=0, options={"x": 1})
    with pytest.raises(ValueError, match="num_envs"):
        NoiseFreeGPBanditVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="list of num_envs=2"):
        NoiseFreeGPBanditVectorEnv(num_envs=2).reset(seed=[1, 2, 3])


# ------------------------------------------------------------------------------- shared GP numerics
def _grid_data(kernel="matern-1.5", ell=0.2, n=60, seed=0):
    C = make_candidates(2)  # 50 x 50 grid
    f = make(seed, d=2, kernel=kernel, lengthscale=ell).oracle.f_candidates
    idx = np.random.default_rng(seed).choice(len(C), n, replace=False)
    return C, f, idx


def test_posterior_interpolates_and_matches_dense_reference():
    C, f, idx = _grid_data()
    gp = NoiseFreeGP(C, "matern-1.5", 0.2)
    for i in idx:
        assert gp.add(i, f[i])
    assert not gp.add(idx[0], f[idx[0]]) and gp.n == 60  # a repeated candidate adds nothing
    assert np.array_equal(gp.mean[idx], f[idx]) and np.array_equal(gp.var[idx], np.zeros(60))  # exact
    mu, var = dense_posterior("matern-1.5", 0.2, C[idx], f[idx], C, gp.jitter)
    rest = np.setdiff1d(np.arange(len(C)), idx)
    np.testing.assert_allclose(gp.mean[rest], mu[rest], atol=1e-8)
    np.testing.assert_allclose(gp.var[rest], var[rest], atol=1e-8)
    # arbitrary points and the joint covariance of a subset
    Zq = np.random.default_rng(1).random((40, 2))
    pm, pv = gp.posterior(Zq)
    dm, dv = dense_posterior("matern-1.5", 0.2, C[idx], f[idx], Zq, gp.jitter)
    np.testing.assert_allclose(pm, dm, atol=1e-8)
    np.testing.assert_allclose(pv, dv, atol=1e-8)
    S = rest[:15]
    KX = kernel_matrix("matern-1.5", C[idx], C[idx], 0.2) + gp.jitter * np.eye(60)
    KSX = kernel_matrix("matern-1.5", C[S], C[idx], 0.2)
    ref = kernel_matrix("matern-1.5", C[S], C[S], 0.2) - KSX @ np.linalg.solve(KX, KSX.T)
    np.testing.assert_allclose(gp.covariance(S), ref, atol=1e-8)


def test_rank_one_updates_equal_refactorisation():
    C, f, idx = _grid_data(kernel="se", ell=0.15, n=80, seed=2)
    gp = NoiseFreeGP(C, "se", 0.15, capacity=8)  # grows several times
    for i in idx:
        gp.add(i, f[i])
    gp.add_point(np.array([0.123, 0.456]), 0.3)
    mean, var, L = gp.mean.copy(), gp.var.copy(), gp.L
    gp.refactorise()
    assert gp.refactorisations == 0
    np.testing.assert_allclose(mean, gp.mean, atol=1e-10)
    np.testing.assert_allclose(var, gp.var, atol=1e-10)
    np.testing.assert_allclose(L, gp.L, atol=1e-10)


def test_jitter_raised_on_cholesky_failure():
    C = make_candidates(1)
    gp = NoiseFreeGP(C, "se", 0.1, jitter=1e-20)  # 1 + jitter == 1 in float64
    x = np.array([0.33333])  # not a candidate
    gp.add_point(x, 0.7)
    assert gp.refactorisations == 0
    with pytest.warns(RuntimeWarning, match="jitter raised"):
        gp.add_point(x, 0.7)  # Schur complement 1 + jitter - 1 = 0: the extension fails
    assert gp.refactorisations == 1 and gp.jitter > 1e-20 and gp.n == 2
    assert np.all(np.isfinite(gp.mean)) and np.all(np.isfinite(gp.var))
    m, v = gp.posterior(x[None, :])
    assert m[0] == pytest.approx(0.7, abs=1e-6) and v[0] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("kernel", ["se", "matern-0.5", "matern-1.5", "matern-2.5"])
def test_posterior_matches_scikit_learn(kernel, needs):
    gpr_mod = needs("sklearn.gaussian_process")
    kmod = needs("sklearn.gaussian_process.kernels")
    ell = 0.2
    C, f, idx = _grid_data(kernel=kernel, ell=ell, n=40, seed=3)
    k = kmod.RBF(length_scale=ell) if kernel == "se" else kmod.Matern(length_scale=ell, nu=float(kernel[7:]))
    gp = NoiseFreeGP(C, kernel, ell)
    for i in idx:
        gp.add(i, f[i])
    reg = gpr_mod.GaussianProcessRegressor(kernel=k, alpha=gp.jitter, optimizer=None, normalize_y=False)
    reg.fit(C[idx], f[idx])
    mu, sd = reg.predict(C, return_std=True)
    rest = np.setdiff1d(np.arange(len(C)), idx)
    np.testing.assert_allclose(gp.mean[rest], mu[rest], atol=1e-6)
    np.testing.assert_allclose(gp.std[rest], sd[rest], atol=1e-6)


def test_add_point_rejects_non_finite_points_and_jitter_is_capped(monkeypatch):
    from papergym.envs.bandits import gp as gpmod

    g = gpmod.NoiseFreeGP(gpmod.make_candidates(1), "se", 0.1)
    g.add(3, 0.5)
    with pytest.raises(ValueError, match="finite"):
        g.add_point(np.array([np.nan]), 0.5)
    # a factorisation that never succeeds: an error past MAX_JITTER, and nothing appended
    g2 = gpmod.NoiseFreeGP(gpmod.make_candidates(1), "se", 0.1, jitter=1e-10)
    g2.add(3, 0.5)
    mean, var = g2.mean.copy(), g2.var.copy()
    monkeypatch.setattr(gp_posterior, "solve_triangular", lambda L, b, **kw: np.full_like(b, 10.0))  # delta^2 < 0
    monkeypatch.setattr(gpmod.NoiseFreeGP, "_rebuild", lambda self: False)
    with pytest.warns(RuntimeWarning, match="jitter raised"), pytest.raises(np.linalg.LinAlgError, match="jitter"):
        g2.add(10, 0.1)
    assert g2.n == 1 and g2.jitter == 1e-10 and not g2.is_queried(10)
    assert np.array_equal(g2.mean, mean) and np.array_equal(g2.var, var)
