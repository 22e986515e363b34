"""Entropic games (docs/papers/best-response-games.md): known answers of the oracles, the action rules, the roles,
PettingZoo."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import papergym.envs  # noqa: F401
from papergym.envs import InvalidActionError
from papergym.envs.games.common import (
    auto_step,
    bilinear_jacobian,
    euler_factor,
    euler_factor_bound,
    gap_metrics,
    gibbs,
    jacobian_bounds,
    kl,
    omega,
    solve_saddle,
)
from papergym.envs.games.markov_game import EntropicMarkovGameEnv
from papergym.envs.games.matrix_game import RPS, EntropicMatrixGameEnv, MatrixGame
from papergym.envs.games.mean_field import EntropicMeanFieldEnv


def _check(env):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env, skip_render_check=True)


# ---------------------------------------------------------------------------------------------- common
def test_gibbs_and_kl_closed_forms():
    lr = np.log(np.array([0.2, 0.3, 0.5]))
    g = np.array([1.0, -2.0, 0.5])
    p = gibbs(lr, g, 0.7, -1)
    q = np.exp(lr - g / 0.7)
    np.testing.assert_allclose(p, q / q.sum(), rtol=1e-15)
    np.testing.assert_allclose(gibbs(lr, g + 123.0, 0.7, -1), p, rtol=1e-13)  # shift invariance
    np.testing.assert_allclose(gibbs(lr, g, 0.7, +1), gibbs(lr, -g, 0.7, -1), rtol=1e-15)
    assert kl(np.exp(lr), lr) == pytest.approx(0.0, abs=1e-16)
    assert kl(np.array([1.0, 0.0, 0.0]), lr) == pytest.approx(-math.log(0.2))  # 0 log 0 = 0


def test_omega_matches_brute_force():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(4, 5))
    brute = max(
        (M[i, j] - M[k, j] - M[i, l] + M[k, l]) / 2
        for i in range(4)
        for k in range(4)
        for j in range(5)
        for l in range(5)
    )
    assert omega(M) == pytest.approx(brute, rel=1e-14)
    assert omega(RPS) == pytest.approx(1.5)


def test_finite_set_contraction_bound_holds():
    """Finite-set contraction bound: ||p(z) - p(z')||_1 <= osc(z - z')/2 for p = softmax(log pi + z)."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        lr = np.log(rng.dirichlet(np.ones(6)))
        z, z2 = rng.normal(size=6) * 3, rng.normal(size=6) * 3
        lhs = np.abs(gibbs(lr, z, 1.0, 1) - gibbs(lr, z2, 1.0, 1)).sum()
        assert lhs <= 0.5 * np.ptp(z - z2) + 1e-12


def test_gap_metrics():
    g = 0.5 ** np.arange(1, 101)
    m = gap_metrics(g, 1e-6)
    assert m["steps_to_tol"] == 20  # 0.5^20 < 1e-6 <= 0.5^19
    assert m["rate"] == pytest.approx(0.5, rel=1e-9)
    assert m["cycling"] == 0.0
    flat = np.ones(50)
    m = gap_metrics(flat, 1e-6)
    assert m["steps_to_tol"] == 51 and m["cycling"] == 1.0 and m["rate"] == pytest.approx(1.0)


# ------------------------------------------------------------------------------------------ mean field
@pytest.mark.parametrize("a,sigma,h", [(0.5, 1.0, 0.5), (0.2, 0.7, 0.3), (0.9, 1.0, 1.0), (0.0, 2.0, 0.25)])
def test_curie_weiss_mean_contracts_exactly(a, sigma, h):
    env = EntropicMeanFieldEnv("curie-weiss", a=a, sigma=sigma, horizon=30)
    obs, _ = env.reset(seed=0)
    mu = env.mu0.copy()
    m0 = env.prob.mean(mu)
    factor = 1 - h * (1 - a / sigma)
    for k in range(1, 31):
        mu = (1 - h) * mu + h * gibbs(env.prob.log_pi, obs, sigma, -1)
        obs, r, term, trunc, _ = env.step(mu)
        assert env.prob.mean(mu) == pytest.approx(m0 * factor**k, rel=1e-9, abs=1e-13)
        assert r == pytest.approx(-env.prob.F_sigma(mu))
        assert env.oracle.regret(mu) >= 0
    assert trunc and not term


def test_curie_weiss_minimiser_is_the_reference():
    env = EntropicMeanFieldEnv("curie-weiss")
    env.reset(seed=0)
    o = env.oracle
    assert o.value == pytest.approx(0.0, abs=1e-13)  # KL(pi|pi) summed over 2001 points: round-off only
    np.testing.assert_allclose(o.minimiser, env.prob.pi, atol=1e-15)
    assert o.contractive and o.a_c == pytest.approx(1.0, rel=1e-9)
    assert o.contraction_estimate() <= 0.5 + 1e-9  # W1(Psi mu, Psi mu') = (a/sigma)|m - m'| <= (a/sigma) W1
    assert o.contraction_estimate() > 0.45


def test_curie_weiss_unstable_has_boundary_minimisers():
    env = EntropicMeanFieldEnv("curie-weiss-unstable")
    env.reset(seed=0)
    o = env.oracle
    assert not o.contractive
    assert len(o.minimisers) == 2
    ms = sorted(env.prob.mean(m) for m in o.minimisers)
    assert ms[0] == pytest.approx(-ms[1], rel=1e-9) and ms[1] > 0.9 * env.R
    assert o.regret(env.prob.pi) > 10  # the symmetric fixed point pi is far from the grid optimum


def test_double_well_known_constants():
    env = EntropicMeanFieldEnv("double-well")
    env.reset(seed=0)
    o = env.oracle
    var = 2 * math.gamma(0.75) / math.gamma(0.25)
    assert o.a_c == pytest.approx(1 / var, rel=1e-7)  # a_c(1) = Gamma(1/4) / (2 Gamma(3/4)) ~ 1.479338
    assert o.a_c == pytest.approx(1.479338, abs=1e-6)
    z0 = 2 * 4**-0.75 * math.gamma(0.25) / math.sqrt(2 * math.pi)
    assert o.value == pytest.approx(-math.log(z0), abs=1e-9)  # F^s(mu*) = -log Z_0 ~ -0.022510
    assert len(o.minimisers) == 1 and abs(env.prob.mean(o.minimiser)) < 1e-12
    assert o.fixed_point_residual(o.minimiser) < 1e-13


def test_double_well_broken_symmetric_pair_of_minimisers():
    env = EntropicMeanFieldEnv("double-well-broken")
    env.reset(seed=0)
    o = env.oracle
    assert not o.contractive and len(o.minimisers) == 2
    m_plus, m_minus = (env.prob.mean(m) for m in o.minimisers)
    assert m_plus > 0.5 and m_minus == pytest.approx(-m_plus, rel=1e-9)
    for m in o.minimisers:
        assert o.fixed_point_residual(m) < 1e-12
        assert env.prob.F_sigma(m) == pytest.approx(o.value, abs=1e-12)
    # the symmetric fixed point m = 0 is not the minimum
    assert o.regret(gibbs(env.prob.log_pi, env.prob.V, 1.0, -1)) > 1e-3


def test_interaction_minimiser_is_a_symmetric_fixed_point():
    env = EntropicMeanFieldEnv("interaction")
    env.reset(seed=0)
    o = env.oracle
    assert o.fixed_point_residual(o.minimiser) < 1e-12
    np.testing.assert_allclose(o.minimiser, o.minimiser[::-1], atol=1e-14)
    # W * mu by FFT equals the direct sum
    mu = env.mu0
    direct = np.array([np.sum(-env.a * np.exp(-((x - env.prob.x) ** 2) / 2) * mu) for x in env.prob.x[::97]])
    np.testing.assert_allclose(env.prob.conv(mu)[::97], direct, atol=1e-12)
    assert o.contractive


def test_mean_field_regret_is_nonnegative_on_random_measures():
    rng = np.random.default_rng(3)
    for inst in ("curie-weiss", "double-well", "double-well-broken", "interaction", "curie-weiss-unstable"):
        env = EntropicMeanFieldEnv(inst, G=401)
        env.reset(seed=1)
        for _ in range(20):
            w = rng.dirichlet(np.ones(401) * 0.3)
            assert env.oracle.regret(w) >= 0


@pytest.mark.parametrize(
    "bad,rule",
    [
        (np.full(2001, np.nan), "NaN"),
        (np.zeros(2001), "sum to 0"),
        (-np.ones(2001), "negative"),
        (np.ones(5), "shape"),
        ("abc", "array"),
    ],
)
def test_mean_field_invalid_actions(bad, rule):
    env = EntropicMeanFieldEnv()
    obs, _ = env.reset(seed=0)
    with pytest.raises(InvalidActionError, match=rule):
        env.step(bad)
    assert env.t == 0
    obs2, *_ = env.step(np.ones(2001))
    assert obs2.shape == (2001,)


def test_strict_simplex():
    env = EntropicMeanFieldEnv(strict_simplex=True)
    env.reset(seed=0)
    with pytest.raises(InvalidActionError, match="not 1"):
        env.step(np.ones(2001))
    env.step(np.ones(2001) / 2001)
    loose = EntropicMeanFieldEnv()
    loose.reset(seed=0)
    _, r, *_ = loose.step(np.ones(2001) * 7)  # weights are normalised
    _, r2, *_ = loose.step(np.ones(2001) / 2001)
    assert r == pytest.approx(r2, rel=1e-14)


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"instance": "nope"}, "valid instances"),
        ({"sigma": 0}, "sigma"),
        ({"a": -1}, "a must be"),
        ({"G": 2}, "G must"),
        ({"horizon": 0}, "horizon"),
    ],
)
def test_mean_field_bad_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        EntropicMeanFieldEnv(**kw)


def test_mean_field_public_problem_hides_the_family_parameters():
    env = EntropicMeanFieldEnv("double-well", a=0.7)
    p = env.problem.params
    assert "a" not in p and "V" not in p
    assert set(p) >= {"grid", "reference", "sigma", "mu0", "blocks"}


# ---------------------------------------------------------------------------------------- matrix game
@pytest.mark.parametrize("a,b", [(0.0, 0.0), (0.3, 0.6), (0.5, 0.5), (0.9, 0.1)])
def test_rps_equilibrium_is_uniform_with_value(a, b):
    env = EntropicMatrixGameEnv("rps", a=a, b=b, role="both")
    env.reset(seed=0)
    o = env.oracle
    u = np.full(3, 1 / 3)
    np.testing.assert_allclose(o.mu_star, u, atol=1e-14)
    np.testing.assert_allclose(o.nu_star, u, atol=1e-14)
    assert o.value == pytest.approx((b - a) / 6, abs=1e-14)
    assert o.equilibrium_gap(u, u) == pytest.approx(0.0, abs=1e-14)


@pytest.mark.parametrize("inst,kappa", [("rps", 0.75), ("rps-cold", 7.5), ("rps-nonconvex", 1.0)])
def test_contraction_bounds(inst, kappa):
    env = EntropicMatrixGameEnv(inst)
    env.reset(seed=0)
    assert env.oracle.contraction_bound() == pytest.approx(kappa)


def test_ni_closed_form_for_bilinear_games():
    """a = b = 0: NI = s KL(mu|pi) + s' KL(nu|rho) + s' log sum rho e^{G'mu/s'} + s log sum pi e^{-G nu/s}."""
    env = EntropicMatrixGameEnv("random", A=4, B=6, a=0.0, b=0.0, sigma=0.3, sigma_max=0.7, role="both")
    env.reset(seed=5)
    G = env.game.G
    rng = np.random.default_rng(0)
    for _ in range(10):
        mu, nu = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(6))
        s, s2 = 0.3, 0.7
        ni = (
            s * np.sum(mu * np.log(mu * 4))
            + s2 * np.sum(nu * np.log(nu * 6))
            + s2 * np.log(np.mean(np.exp(G.T @ mu / s2)))
            + s * np.log(np.mean(np.exp(-G @ nu / s)))
        )
        o = env.oracle
        assert o.equilibrium_gap(mu, nu) == pytest.approx(ni, rel=1e-12, abs=1e-15)
        assert o.exploitability_min(mu) >= 0 and o.exploitability_max(nu) >= 0


def _mp_equilibrium(G, a, b, s1, s2, digits=40):
    """High-precision reference: best-response iteration in mpmath (a contraction for these instances)."""
    import mpmath as mp

    mp.mp.dps = digits
    A, B = G.shape
    Gm = mp.matrix(G.tolist())
    mu = [mp.mpf(1) / A] * A
    nu = [mp.mpf(1) / B] * B
    for _ in range(400):
        gmu = [sum(Gm[i, j] * nu[j] for j in range(B)) - a * mu[i] for i in range(A)]
        gnu = [sum(Gm[i, j] * mu[i] for i in range(A)) + b * nu[j] for j in range(B)]
        e1 = [mp.e ** (-x / s1) for x in gmu]
        e2 = [mp.e ** (x / s2) for x in gnu]
        mu = [x / sum(e1) for x in e1]
        nu = [x / sum(e2) for x in e2]
    return np.array([float(x) for x in mu]), np.array([float(x) for x in nu])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_game_equilibrium_matches_high_precision_reference(seed):
    env = EntropicMatrixGameEnv("random", role="both")
    env.reset(seed=seed)
    o = env.oracle
    assert o.contraction_bound() <= 0.75 + 1e-12
    assert o.equilibrium_gap(o.mu_star, o.nu_star) <= 1e-12
    mu, nu = _mp_equilibrium(env.game.G, 0.5, 0.5, 1.0, 1.0)
    np.testing.assert_allclose(o.mu_star, mu, atol=1e-14)
    np.testing.assert_allclose(o.nu_star, nu, atol=1e-14)


@pytest.mark.parametrize("sigma", [1.0, 0.1, 0.01])
def test_saddle_solver_at_paper_scale_temperatures(sigma):
    rng = np.random.default_rng(7)
    A = 12
    G = rng.uniform(-1, 1, (A, A))
    mg = MatrixGame(G, a=0.0, b=0.0, sigma=sigma, sigma_max=sigma, init=(np.ones(A) / A, np.ones(A) / A))
    mu, nu = mg.equilibrium
    assert mg.best_max(mu) - mg.best_min(nu) <= 1e-12
    # warm start from the solution returns it
    m2, n2 = solve_saddle(G, sigma, sigma, np.full(A, -np.log(A)), np.full(A, -np.log(A)), init=(mu, nu))
    np.testing.assert_allclose(m2, mu, atol=1e-13)


def test_nonconvex_inner_needs_opt_in():
    with pytest.raises(ValueError, match="allow_nonconvex_inner"):
        EntropicMatrixGameEnv("random", a=1.5)
    env = EntropicMatrixGameEnv("random", a=1.5, b=0.2, allow_nonconvex_inner=True, role="both")
    env.reset(seed=0)
    assert not env.oracle.exact
    rng = np.random.default_rng(0)
    for _ in range(5):
        mu = rng.dirichlet(np.ones(5))
        # multistart max over nu' is at least the value at any nu
        nu = rng.dirichlet(np.ones(5))
        assert env.game.best_max(mu) >= env.game.value(mu, nu) - 1e-12


def test_single_agent_roles_and_opponent():
    env = EntropicMatrixGameEnv("random", role="min", opponent="fictitious-play")
    obs, _ = env.reset(seed=4)
    assert obs.shape == (5,)
    _, r, *_ = env.step(np.ones(5))
    assert r == pytest.approx(-env.game.value(env._mu, env._nu))
    assert env.oracle.regret(np.ones(5)) == pytest.approx(env.oracle.exploitability_min(np.full(5, 0.2)))
    env_max = EntropicMatrixGameEnv("random", role="max")
    env_max.reset(seed=4)
    _, r, *_ = env_max.step(np.ones(5))
    assert r == pytest.approx(env_max.game.value(env_max._mu, env_max._nu))
    with pytest.raises(ValueError, match="opponent"):
        EntropicMatrixGameEnv("rps", opponent="no-such-learner")
    with pytest.raises(ValueError, match="role"):
        EntropicMatrixGameEnv("rps", role="middle")


def test_opponent_moves_from_its_own_previous_feedback():
    """role=min vs br-flow: the opponent's strategy at step k is its Euler step from the feedback at k-1."""
    env = EntropicMatrixGameEnv("random", role="min", opponent_kwargs={"h": 0.3})
    obs, _ = env.reset(seed=2)
    g = env.game
    nu = g.init_max.copy()
    mu = g.init_min.copy()
    for _ in range(5):
        g_nu = g.G.T @ mu + g.b * nu
        nu = 0.7 * nu + 0.3 * gibbs(g.log_ref_max, g_nu, 1.0, +1)
        mu = np.random.default_rng(0).dirichlet(np.ones(5))
        env.step(mu)
        np.testing.assert_allclose(env._nu, nu, atol=1e-15)


@pytest.mark.parametrize(
    "cls,kw",
    [
        (EntropicMatrixGameEnv, {"instance": "random"}),
        (EntropicMatrixGameEnv, {"instance": "rps-cold", "role": "max"}),
        (EntropicMatrixGameEnv, {"instance": "rps", "role": "both"}),
        (EntropicMarkovGameEnv, {"instance": "random"}),
        (EntropicMarkovGameEnv, {"instance": "random", "role": "both"}),
        (EntropicMeanFieldEnv, {"instance": "interaction", "G": 301}),
    ],
)
def test_check_env_for_every_role(cls, kw):
    _check(cls(**kw))


def test_random_instances_depend_on_the_seed_only():
    a, b = EntropicMatrixGameEnv("random", role="both"), EntropicMatrixGameEnv("random", role="both")
    o1, _ = a.reset(seed=11)
    o2, _ = b.reset(seed=11)
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(a.game.G, b.game.G)
    b.reset(seed=12)
    assert not np.array_equal(a.game.G, b.game.G)
    x = np.random.default_rng(0).dirichlet(np.ones(10))
    assert a.step(x)[1] == a.step(x)[1]  # same profile, same payoff


def test_game_invalid_actions_leave_the_state_unchanged():
    env = EntropicMarkovGameEnv("random", role="both")
    env.reset(seed=0)
    row_zero = np.ones((3, 4))
    row_zero[1, :2] = 0  # the min player's row of state 1 is empty
    with pytest.raises(InvalidActionError, match="'min'"):
        env.step(row_zero)
    with pytest.raises(InvalidActionError, match="shape"):
        env.step(np.ones((3, 2)))
    assert env.t == 0 and env._gaps == []


# ---------------------------------------------------------------------------------------- Markov game
def _soft_vi_ni(game, mu, nu, iters=3000):
    """NI by plain soft value iteration (the game's formulas), independent of the oracle's policy iteration."""
    tau, g = game.tau, game.gamma
    W = np.zeros(game.S)
    U = np.zeros(game.S)
    klmu = np.sum(mu * np.log(mu * game.A), axis=1)
    klnu = np.sum(nu * np.log(nu * game.B), axis=1)
    for _ in range(iters):
        cb = np.einsum("sa,sab->sb", mu, game.r + g * game.P @ W)
        W = tau * np.log(np.mean(np.exp(cb / tau), axis=1)) + tau * klmu
        ca = np.einsum("sab,sb->sa", game.r + g * game.P @ U, nu)
        U = -tau * np.log(np.mean(np.exp(-ca / tau), axis=1)) - tau * klnu
    return float(game.rho0 @ (W - U))


@pytest.mark.parametrize("inst", ["random", "random-cold", "random-medium"])
def test_markov_equilibrium_and_ni(inst):
    env = EntropicMarkovGameEnv(inst, role="both")
    env.reset(seed=3)
    o, game = env.oracle, env.game
    mu, nu = o.mu_star, o.nu_star
    assert o.equilibrium_gap(mu, nu) <= 1e-12
    # the equilibrium is a fixed point of the per-state Gibbs best responses with its own Q
    q_min, q_max = game.feedback(mu, nu)
    np.testing.assert_allclose(gibbs(game.log_ref_min, q_min, game.tau, -1), mu, atol=1e-12)
    np.testing.assert_allclose(gibbs(game.log_ref_max, q_max, game.tau, +1), nu, atol=1e-12)
    rng = np.random.default_rng(0)
    m2 = rng.dirichlet(np.ones(game.A), size=game.S)
    n2 = rng.dirichlet(np.ones(game.B), size=game.S)
    assert o.equilibrium_gap(m2, n2) == pytest.approx(_soft_vi_ni(game, m2, n2), rel=1e-9, abs=1e-12)


def test_markov_single_state_equals_the_matrix_game():
    mk = EntropicMarkovGameEnv("single-state", role="both")
    mk.reset(seed=0)
    mg = EntropicMatrixGameEnv("rps", role="both")
    mg.reset(seed=0)
    np.testing.assert_allclose(mk.oracle.mu_star[0], np.full(3, 1 / 3), atol=1e-14)
    assert mk.oracle.value == pytest.approx(0.0, abs=1e-14)
    rng = np.random.default_rng(1)
    for _ in range(5):
        mu, nu = rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3))
        assert mk.oracle.equilibrium_gap(mu[None], nu[None]) == pytest.approx(
            mg.oracle.equilibrium_gap(mu, nu), rel=1e-10
        )


def test_markov_feedback_is_q_of_the_current_profile():
    env = EntropicMarkovGameEnv("random", role="both")
    env.reset(seed=1)
    game = env.game
    rng = np.random.default_rng(2)
    mu, nu = rng.dirichlet(np.ones(2), size=3), rng.dirichlet(np.ones(2), size=3)
    obs, r, *_ = env.step(np.concatenate([mu, nu], axis=1))
    # V by Monte-Carlo-free direct iteration of the Bellman evaluation equation
    V = np.zeros(3)
    for _ in range(2000):
        c = (
            np.einsum("sa,sab,sb->s", mu, game.r, nu)
            + game.tau * np.sum(mu * np.log(mu * 2), 1)
            - game.tau * np.sum(nu * np.log(nu * 2), 1)
        )
        V = c + game.gamma * np.einsum("sa,sb,sabt,t->s", mu, nu, game.P, V)
    assert r == pytest.approx(-game.rho0 @ V, rel=1e-12)
    Q = game.r + game.gamma * game.P @ V
    np.testing.assert_allclose(obs[:, :2], np.einsum("sab,sb->sa", Q, nu), rtol=1e-12)
    np.testing.assert_allclose(obs[:, 2:], np.einsum("sa,sab->sb", mu, Q), rtol=1e-12)


# --------------------------------------------------------------------------------------------- PettingZoo
@pytest.mark.parametrize(
    "modname,kw",
    [
        ("entropic_matrix_game_v0", {"instance": "random"}),
        ("entropic_matrix_game_v0", {"instance": "rps-cold"}),
        ("entropic_markov_game_v0", {"instance": "random"}),
    ],
)
def test_pettingzoo_parallel_api(modname, kw, needs):
    needs("pettingzoo")
    import importlib

    from pettingzoo.test import parallel_api_test

    mod = importlib.import_module(f"papergym.envs.games.{modname}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(mod.parallel_env(**kw), num_cycles=30)


def test_pettingzoo_two_learners(needs):
    needs("pettingzoo")
    from papergym.agents.base import make_agent
    from papergym.envs.games import entropic_matrix_game_v0

    env = entropic_matrix_game_v0.parallel_env(instance="random")
    obs, _ = env.reset(seed=3)
    learners = {
        "min": make_agent("br-flow", env.problem_for("min"), seed=0),
        "max": make_agent("extragradient", env.problem_for("max"), seed=0),
    }
    while env.agents:
        acts = {a: learners[a].act(obs[a]) for a in env.agents}
        obs, rew, term, trunc, _ = env.step(acts)
        assert rew["min"] == -rew["max"]
    o = env.oracle
    assert o.equilibrium_gap(env._env._mu, env._env._nu) < 1e-10
    with pytest.raises(RuntimeError, match="reset"):
        env.step(acts)
    env.reset(seed=3)
    with pytest.raises(InvalidActionError, match="missing"):
        env.step({"min": np.ones(5)})
    with pytest.raises(ValueError, match="role"):
        entropic_matrix_game_v0.parallel_env(instance="random", role="min")


# ------------------------------------------------------------- linearisation, contraction, status


def test_jacobian_bounds_hold_at_every_profile_and_are_nearly_tight():
    """The spectrum of M H (envs/games/common.py, "Linearisation") lies in 0 <= Re <= self, |Im| <= cross,
    |lambda| <= l1, at random profiles of random non-convex-non-concave games."""
    rng = np.random.default_rng(8201)
    ratio_re, ratio_im = 0.0, 0.0
    for _ in range(400):
        A, B = rng.integers(2, 6, 2)
        G = rng.normal(size=(A, B)) * rng.uniform(0.1, 3)
        X, Y = rng.normal(size=(A, A)), rng.normal(size=(B, B))
        P, Q = X @ X.T / A, Y @ Y.T / B
        a, b = rng.uniform(0, 2, 2)
        s1, s2 = rng.uniform(0.1, 3, 2)
        jb = jacobian_bounds(G, s1, s2, a=a, P=P, b=b, Q=Q)
        mu, nu = rng.dirichlet(np.ones(A) * rng.uniform(0.2, 3)), rng.dirichlet(np.ones(B) * rng.uniform(0.2, 3))
        lam = np.linalg.eigvals(bilinear_jacobian(G, mu, nu, s1, s2, a=a, P=P, b=b, Q=Q))
        assert lam.real.min() >= -1e-10
        assert lam.real.max() <= jb["self"] + 1e-10 and np.abs(lam.imag).max() <= jb["cross"] + 1e-10
        assert np.abs(lam).max() <= jb["l1"] + 1e-10
        ratio_re = max(ratio_re, lam.real.max() / jb["self"]) if jb["self"] > 0 else ratio_re
        ratio_im = max(ratio_im, np.abs(lam.imag).max() / jb["cross"])
    assert ratio_re > 0.9 and ratio_im > 0.9  # the bounds are not vacuous


def test_jacobian_bounds_closed_forms():
    # rps, sigma = sigma' = s: cross = min(||G||_2 = sqrt 3, omega(G) = 3/2)/(2 s); l1 = kappa = 3/(4 s)
    jb = jacobian_bounds(RPS, 0.1, 0.1)
    assert jb == pytest.approx({"self": 0.0, "cross": 7.5, "l1": 7.5}, rel=1e-12)
    jb = jacobian_bounds(RPS, 1.0, 1.0, a=0.5, b=0.5)  # rps-nonconvex: P = Q = I, lambda_max(Pi I Pi) = 1
    assert jb["self"] == pytest.approx(0.25, rel=1e-12) and jb["cross"] == pytest.approx(math.sqrt(3) / 2, rel=1e-12)
    assert jb["l1"] == pytest.approx(1.0, rel=1e-12)  # = kappa of the rps-nonconvex family
    assert jacobian_bounds(RPS, 1.0, 4.0)["cross"] == pytest.approx(1.5 / (2 * 2.0), rel=1e-12)  # sqrt(sigma sigma')


def test_auto_step_minimises_the_worst_corner():
    rng = np.random.default_rng(8202)
    hs = np.linspace(1e-4, 1.0, 20001)
    for d, c in [(0.0, 0.0), (0.5, 0.0), (0.0, 7.5), (0.25, 0.866), (0.9, 3.0)] + [
        tuple(rng.uniform(0, [0.99, 10])) for _ in range(20)
    ]:
        h = auto_step(d, c)
        worst = np.sqrt((1 - hs * (1 - d)) ** 2 + (hs * c) ** 2)
        assert euler_factor_bound(h, d, c) <= worst.min() + 1e-12
        assert euler_factor_bound(h, d, c) < 1.0 or (d == 0 == c)  # h = 1, d = 0 = c: factor 0
    assert auto_step(0.3, 0.0) == 1.0 and auto_step(0.0, 7.5) == pytest.approx(1 / (1 + 56.25))
    assert auto_step(1.5, 2.0) == pytest.approx(0.2)  # delta >= 1: the rotation fallback 1/(1 + c^2)
    assert euler_factor(0.5, np.array([2j, -2j, 0.0])) == pytest.approx(math.sqrt(0.25 + 1.0))
    with pytest.raises(ValueError, match="finite"):
        auto_step(float("nan"), 1.0)


def _tangent(rng, p):
    w = rng.normal(size=p.shape)
    return p * (w - (p * w).sum(axis=-1, keepdims=True))  # sums to 0 per row; small where p is small


def test_matrix_linearisation_matches_finite_differences():
    env = EntropicMatrixGameEnv("random", role="both", a=0.7, b=0.3, sigma=0.8, sigma_max=1.3)
    env.reset(seed=8203)
    g = env.game
    mu, nu = g.equilibrium
    J = bilinear_jacobian(g.G, mu, nu, g.sigma_min, g.sigma_max, a=g.a, P=g.P, b=g.b, Q=g.Q)

    def T(m, n):
        gm, gn = g.feedback(m, n)
        return np.concatenate([gibbs(g.log_ref_min, gm, g.sigma_min, -1), gibbs(g.log_ref_max, gn, g.sigma_max, +1)])

    rng = np.random.default_rng(8203)
    for _ in range(5):
        u, v = _tangent(rng, mu), _tangent(rng, nu)
        eps = 1e-5
        fd = (T(mu + eps * u, nu + eps * v) - T(mu - eps * u, nu - eps * v)) / (2 * eps)
        np.testing.assert_allclose(fd, J @ np.concatenate([u, v]), atol=1e-9)
    np.testing.assert_allclose(np.sort_complex(env.oracle.linearised_spectrum()), np.sort_complex(np.linalg.eigvals(J)))


@pytest.mark.parametrize("inst", ["random-cold", "random-medium"])
def test_markov_linearisation_is_per_state_bilinear_with_frozen_q(inst):
    """At the equilibrium dV vanishes on tangent directions (performance difference), so the joint best-response
    map's Jacobian is the per-state matrix-game Jacobian with Q* frozen (markov_game docstring)."""
    env = EntropicMarkovGameEnv(inst, role="both")
    env.reset(seed=8204)
    g = env.game
    mu, nu = g.equilibrium
    Q = g.Q(g.V_star)

    def T(m, n):
        qm, qn = g.feedback(m, n)
        return np.concatenate([gibbs(g.log_ref_min, qm, g.tau, -1), gibbs(g.log_ref_max, qn, g.tau, +1)], axis=1)

    rng = np.random.default_rng(8204)
    for _ in range(3):
        u, v = _tangent(rng, mu), _tangent(rng, nu)
        eps = 1e-5
        fd = (T(mu + eps * u, nu + eps * v) - T(mu - eps * u, nu - eps * v)) / (2 * eps)
        lin = np.stack(
            [bilinear_jacobian(Q[s], mu[s], nu[s], g.tau, g.tau) @ np.concatenate([u[s], v[s]]) for s in range(g.S)]
        )
        np.testing.assert_allclose(fd, lin, atol=1e-8)
    lam = env.oracle.linearised_spectrum()
    assert np.abs(lam.real).max() <= 1e-12  # a pure rotation
    jb = env.problem.params["br_bounds"]
    assert jb["self"] == 0.0 and np.abs(lam.imag).max() <= jb["cross"] * (1 + 1e-12)


def test_mean_field_contraction_bound_is_the_w1_constant():
    rng = np.random.default_rng(8205)
    for inst, a in [("curie-weiss", 0.5), ("double-well", 0.5), ("double-well", 1.2)]:
        env = EntropicMeanFieldEnv(inst, a=a, G=801)
        env.reset(seed=8205)
        o, p = env.oracle, env.prob
        kappa = o.contraction_bound()
        assert kappa == pytest.approx(a / o.a_c, rel=1e-12) and o.contractive == (kappa < 1)
        best = 0.0
        for _ in range(60):  # two-component Gaussian mixtures
            mus = []
            for _ in range(2):
                w = rng.uniform(0.1, 0.9)
                comps = [
                    gibbs(np.zeros(p.G), (p.x - m) ** 2 / (2 * s**2), 1.0, -1)
                    for m, s in zip(rng.uniform(-2.5, 2.5, 2), rng.uniform(0.4, 1.5, 2))
                ]
                mus.append(w * comps[0] + (1 - w) * comps[1])
            ratio = p.w1(p.best_response(mus[0]), p.best_response(mus[1])) / p.w1(*mus)
            assert ratio <= kappa * (1 + 1e-9)
            best = max(best, ratio)
        assert best >= 0.5 * kappa  # not vacuous
    cw = EntropicMeanFieldEnv("curie-weiss", a=0.5)
    cw.reset(seed=8205)
    assert cw.oracle.contraction_bound() == pytest.approx(0.5, rel=1e-9)  # a/sigma: Var of the grid N(0,1) is 1


def test_mean_field_linearised_spectrum():
    env = EntropicMeanFieldEnv("curie-weiss", a=0.6, sigma=1.5)
    env.reset(seed=8206)
    assert env.oracle.linearised_spectrum()[0] == pytest.approx(0.4, rel=1e-9)  # (a/sigma) Var_pi(x)
    assert env.oracle.predicted_rate(0.5) == pytest.approx((1 - 0.5 * 0.6) ** 2, rel=1e-9)
    # interaction: power iteration against a dense eigen-decomposition of J = -S K / sigma on a small grid
    env = EntropicMeanFieldEnv("interaction", G=241, R=6.0, a=1.3, ell=0.8, sigma=0.9)
    env.reset(seed=8206)
    p, mu = env.prob, env.oracle.minimiser
    K = np.array([p.conv(e) for e in np.eye(p.G)]).T
    J = -(np.diag(mu) - np.outer(mu, mu)) @ K / p.sigma
    lam = np.linalg.eigvals(J)
    assert np.abs(lam.imag).max() < 1e-9 and lam.real.min() > -1e-9
    assert env.oracle.linearised_spectrum()[0] == pytest.approx(lam.real.max(), rel=1e-8)


def _play(env, seed, h, steps):
    obs, _ = env.reset(seed=seed)
    x = env.problem.params["blocks"][0]["initial"]
    for _ in range(steps):
        psi = gibbs(np.log(env.prob.pi), obs, env.sigma, -1)
        x = (1 - h) * x + h * psi
        obs, *_ = env.step(x)
    return env.oracle.episode_metrics()


def test_mean_field_status_never_calls_an_artefact_converged():
    m = _play(EntropicMeanFieldEnv("curie-weiss-unstable", horizon=60), 8207, 1.0, 60)
    assert m["gap_last"] < 1e-6  # the run "reached" the grid's minimiser ...
    assert m["status"] == "grid-edge" and m["grid_edge"] == 1.0 and m["converged"] == 0.0  # ... an artefact
    assert m["contractive"] == 0.0 and m["contraction_bound"] == pytest.approx(1.5, rel=1e-6)
    m = _play(EntropicMeanFieldEnv("double-well-broken", horizon=60), 8207, 1.0, 60)
    assert m["gap_last"] < 1e-6 and m["status"] == "not contractive" and m["not_contractive"] == 1.0
    m = _play(EntropicMeanFieldEnv("curie-weiss", horizon=40), 8207, 1.0, 40)
    assert m["status"] == "converged" and m["converged"] == 1.0 and m["edge_mass"] < 1e-12
    m = _play(EntropicMeanFieldEnv("curie-weiss", horizon=3), 8207, 1.0, 3)
    assert m["status"] == "not converged" and m["converged"] == m["grid_edge"] == m["not_contractive"] == 0.0


def test_game_status_needs_a_certificate():
    env = EntropicMatrixGameEnv("rps", a=1.2, b=1.2, allow_nonconvex_inner=True, role="both", horizon=8)
    env.reset(seed=8208)
    assert env.oracle.contraction_bound() == pytest.approx(1.35) and not env.oracle.exact
    x = np.full(6, 1 / 3)  # the equilibrium: NI = 0, but neither a contraction nor uniqueness certifies it
    for _ in range(8):
        env.step(x)
    m = env.oracle.episode_metrics()
    assert m["gap_last"] < 1e-12 and m["status"] == "not contractive" and m["converged"] == 0.0
    env = EntropicMatrixGameEnv("rps-cold", role="both", horizon=5)
    env.reset(seed=8208)
    for _ in range(5):
        env.step(np.full(6, 1 / 3))
    m = env.oracle.episode_metrics()  # kappa = 7.5 but F^s strongly convex-concave: NI certifies
    assert m["status"] == "converged" and m["contractive"] == 0.0 and m["contraction_bound"] == pytest.approx(7.5)
