"""FTRL baselines of MSetSemiBandit-v0 (ftrl-hybrid, logbarrier-osmd, shannon-osmd) and their shared
template (baselines/bandits/ftrl_semibandit.py): KKT solver, exact-marginal sampler, agents."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit

from papergym.agents.base import (
    get_agent_info,
    list_agents,
    make_agent,
    make_batched_agent,
)
from papergym.baselines.bandits.ftrl_hybrid import BatchedFTRLHybrid, FTRLHybrid
from papergym.baselines.bandits.ftrl_semibandit import (
    hybrid_gamma,
    solve_ftrl,
    systematic_sample,
)
from papergym.baselines.bandits.logbarrier_osmd import BatchedLogBarrierOSMD
from papergym.baselines.bandits.shannon_osmd import BatchedShannonOSMD
from papergym.envs.bandits.semibandit import ENV_ID, make_problem
from papergym.envs.spec import agent_seed

AGENTS = {
    "ftrl-hybrid": BatchedFTRLHybrid,
    "logbarrier-osmd": BatchedLogBarrierOSMD,
    "shannon-osmd": BatchedShannonOSMD,
}


def seeds(n, start=0):
    return [agent_seed(s) for s in range(start, start + n)]


def zero_obs(n, d):
    return {"losses": np.zeros((n, d)), "observed": np.zeros((n, d), dtype=np.int8)}


# ------------------------------------------------------------------------- independent references
def psi_prime_hybrid(x, y, gamma):
    """psi'(x) of the hybrid regulariser, with the complement y = 1 - x given separately."""
    return -0.5 / np.sqrt(x) - gamma * (1.0 + np.log(y))


def ref_coord_hybrid(c, gamma):
    """Root of c + psi'(x) = 0 by brentq in the logit s = ln(x/(1-x)) (accurate at both ends);
    returns (x, 1 - x)."""
    g = lambda s: c - 0.5 / math.sqrt(expit(s)) - gamma * (1.0 + math.log(expit(-s)))
    lo, hi = -1.0, 1.0
    while g(lo) > 0:
        lo *= 2
    while g(hi) < 0:
        hi *= 2
    s = optimize.brentq(g, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
    return expit(s), expit(-s)


def ref_coord_closed(kind, c):
    """(x, 1 - x) of the closed forms, the complement without cancellation."""
    if kind == "log-barrier":
        return (1.0, 0.0) if c <= 1 else (1.0 / c, (c - 1.0) / c)
    return (1.0, 0.0) if c <= 0 else (math.exp(-c), -math.expm1(-c))


def ref_solve(L, eta, m, kind, gamma=1.0):
    """Brute force: brentq on lambda of sum_i x_i(lambda) = m, x_i(lambda) from the coordinate
    references above (no Newton, no bracket formula of the module). The sum is read as
    sum_{x <= 1/2} x + sum_{x > 1/2} (1 - (1 - x)) so that tiny x_i next to x_j ~ 1 are not lost."""
    coord = (lambda c: ref_coord_hybrid(c, gamma)) if kind == "hybrid" else (lambda c: ref_coord_closed(kind, c))

    def f(lam):
        xy = [coord(eta * (li + lam)) for li in L]
        big = sum(1 for x, _ in xy if x > 0.5)
        return math.fsum([x for x, _ in xy if x <= 0.5] + [-y for x, y in xy if x > 0.5] + [big - m])

    a, b = -L.max() - 1.0, -L.min() + 1.0
    while f(a) < 0:
        a -= 2 * (b - a)
    while f(b) > 0:
        b += 2 * (b - a)
    lam = optimize.brentq(f, a, b, xtol=1e-14, rtol=1e-15, maxiter=500)
    return np.array([coord(eta * (li + lam))[0] for li in L]), lam


def dm_cases():
    out = []
    for d in (2, 3, 6, 11, 24):
        for m in {1, d - 1, d // 2 - 1, d // 2, d // 2 + 1}:
            if 1 <= m <= d - 1:
                out.append((d, m))
    return sorted(out)


# (spread of L_hat, eta): tiny to large gaps, eta * spread <= 300 so that every 1 - x_i stays above the
# double range (beyond it the complement underflows to 0; see test_far_ahead_arm_rounds_to_one)
SCALE_ETA = [
    (1e-8, 0.5),
    (1e-8, 3.0),
    (1.0, 0.02),
    (1.0, 0.5),
    (1.0, 3.0),
    (30.0, 0.5),
    (30.0, 3.0),
    (1e3, 0.02),
    (1e3, 0.25),
]


# ---------------------------------------------------------------------------------------- the solver
@pytest.mark.parametrize("d,m", dm_cases())
def test_hybrid_kkt_and_independent_solve(d, m):
    rng = np.random.default_rng(d * 100 + m)
    gamma = hybrid_gamma(d, m)
    for scale, eta in SCALE_ETA:
        L = rng.uniform(0, 1, d) * scale + rng.uniform(0, 5)
        s = solve_ftrl(L, eta, m, "hybrid", gamma=gamma)
        x, y = s.x, s.complement
        assert s.converged and 1 <= s.iters <= 100
        assert abs(x.sum() - m) <= 1e-9
        # strictly inside the cube: x > 0 and 1 - x > 0 (held exactly by the complement; x itself
        # rounds to 1.0 when 1 - x < 1.1e-16)
        assert ((x > 0) & (y > 0) & (y < 1)).all()
        assert (x[y > 1.2e-16] < 1).all()
        np.testing.assert_allclose(x + y, 1.0, rtol=0, atol=2.3e-16)
        c = eta * (L + s.lam)
        kkt = c + psi_prime_hybrid(x, y, gamma)
        assert np.abs(kkt).max() <= 1e-9 * max(1.0, np.abs(c).max()), (scale, eta, np.abs(kkt).max())
        xr, _ = ref_solve(L, eta, m, "hybrid", gamma)
        np.testing.assert_allclose(x, xr, rtol=0, atol=1e-7)
        np.testing.assert_allclose(x, xr, rtol=1e-6)  # small x_i relative too


def test_hybrid_optimum_beats_slsqp():
    """The KKT point is the minimiser: no feasible point SLSQP finds has a lower objective."""
    rng = np.random.default_rng(7)
    d, m, eta, gamma = 6, 2, 0.7, 1.0
    L = rng.uniform(0, 4, d)

    def obj(x):
        return L @ x + (np.sum(-np.sqrt(x)) + gamma * np.sum((1 - x) * np.log(1 - x))) / eta

    s = solve_ftrl(L, eta, m, "hybrid", gamma=gamma)
    res = optimize.minimize(
        obj,
        np.full(d, m / d),
        method="SLSQP",
        bounds=[(1e-12, 1 - 1e-12)] * d,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - m}],
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert res.success
    assert obj(s.x) <= res.fun + 1e-10
    np.testing.assert_allclose(s.x, res.x, atol=1e-5)


@pytest.mark.parametrize("kind", ["log-barrier", "shannon"])
@pytest.mark.parametrize("d,m", [(2, 1), (6, 1), (6, 3), (6, 5), (11, 6), (24, 4)])
def test_closed_form_regularisers_kkt_and_independent_solve(kind, d, m):
    rng = np.random.default_rng(d * 10 + m)
    for scale, eta in SCALE_ETA:
        L = rng.uniform(0, 1, d) * scale
        s = solve_ftrl(L, eta, m, kind)
        x = s.x
        assert s.converged and abs(x.sum() - m) <= 1e-9
        assert ((x > 0) & (x <= 1)).all()
        c = eta * (L + s.lam)
        interior = x < 1
        if kind == "log-barrier":  # KKT: c - 1/x = 0 inside, c <= 1 at the bound x = 1
            np.testing.assert_allclose(c[interior] * x[interior], 1.0, rtol=1e-12)
            assert (c[~interior] <= 1).all()
        else:  # psi' = ln x (+1 absorbed): c + ln x = 0 inside, c <= 0 at the bound
            np.testing.assert_allclose(c[interior] + np.log(x[interior]), 0.0, atol=1e-9)
            assert (c[~interior] <= 0).all()
        xr, _ = ref_solve(L, eta, m, kind)
        np.testing.assert_allclose(x, xr, rtol=0, atol=1e-7)
        np.testing.assert_allclose(x, xr, rtol=1e-6)


@pytest.mark.parametrize("kind", ["hybrid", "log-barrier", "shannon"])
def test_equal_losses_give_uniform_marginals_and_m_equals_d(kind):
    s = solve_ftrl(np.full((2, 7), 3.25), 0.4, 3, kind)
    np.testing.assert_allclose(s.x, 3 / 7, rtol=1e-14)
    assert (s.iters == 1).all() and s.converged.all()
    full = solve_ftrl(np.arange(5.0), 0.4, 5, kind)
    np.testing.assert_array_equal(full.x, 1.0)
    assert full.iters == 0 and full.converged


@pytest.mark.parametrize("kind", ["hybrid", "log-barrier", "shannon"])
def test_nonconvergence_is_counted_and_the_fallback_is_feasible(kind):
    rng = np.random.default_rng(3)
    L = rng.uniform(0, 20, (4, 9))
    s = solve_ftrl(L, 0.3, 4, kind, max_iter=1)
    assert not s.converged.any() and (s.iters == 1).all()
    np.testing.assert_allclose(s.x.sum(axis=1), 4.0, atol=1e-12)
    assert ((s.x > 0) & (s.x <= 1)).all()
    if kind == "hybrid":
        assert (s.x < 1).all()
    # and the default budget converges on the same input
    assert solve_ftrl(L, 0.3, 4, kind).converged.all()


def test_warm_start_changes_nothing_but_iterations():
    rng = np.random.default_rng(11)
    L = rng.uniform(0, 50, (3, 12))
    cold = solve_ftrl(L, 0.2, 5)
    warm = solve_ftrl(L, 0.2, 5, lam0=cold.lam + 0.01)
    np.testing.assert_allclose(warm.x, cold.x, atol=1e-9)
    assert (warm.iters <= cold.iters).all()


def test_extreme_gap_complement_and_tiny_marginals_stay_accurate():
    """One arm far ahead: x_0 rounds to 1.0, but its complement equals the others' total mass
    (sum x = m read exactly), the KKT residual holds, and the tiny x_i are right in relative terms
    (a lambda with |sum x - m| <= tol alone could be off by millions here: the c-step criterion)."""
    d, m, eta = 5, 1, 1.0
    L = np.array([0.0, 1e7, 1e7, 1e7, 1e7])
    s = solve_ftrl(L, eta, m, "hybrid")
    y = s.complement
    assert s.converged and 0 < y[0] < 1e-12 and s.x[0] == 1.0 - y[0]
    np.testing.assert_allclose(y[0], s.x[1:].sum(), rtol=1e-8)  # c_i ~ 1e7 resolves to ~2e-9
    c = eta * (L + s.lam)
    assert np.abs(c + psi_prime_hybrid(s.x, y, 1.0)).max() <= 1e-9 * np.abs(c).max()
    for i in range(1, d):  # x_i = u^{-2}, u = 2 (c_i - gamma) + O(1/u^2)
        np.testing.assert_allclose(s.x[i], 1 / (2 * (c[i] - 1.0)) ** 2, rtol=1e-9)


def test_far_ahead_arm_rounds_to_one():
    """Two arms tied for the last slot, one far ahead (eta * gap = 3000): 1 - x_0 = e^{-v} underflows
    to 0, x_0 = 1 exactly; the others still sum to m - 1 and the solve converges."""
    s = solve_ftrl(np.array([0.0, 1000.0, 1000.0]), 3.0, 2, "hybrid")
    assert s.converged and s.x[0] == 1.0 and s.complement[0] == 0.0
    np.testing.assert_allclose(s.x[1:], 0.5, rtol=1e-9)
    sh = solve_ftrl(np.array([1000.0, 0.0, 1000.0, 1000.0]), 3.0, 1, "shannon")  # exp underflow: x_i = 0
    assert sh.converged and sh.x[1] == 1.0 and (sh.x[[0, 2, 3]] == 0.0).all()


def test_gamma_rules():
    assert hybrid_gamma(10, 5, "paper") == 1.0 and hybrid_gamma(10, 1) == 1.0
    assert hybrid_gamma(10, 6, "paper") == math.sqrt(1 / math.log(10 / 4))
    assert hybrid_gamma(10, 9, "paper") == math.sqrt(1 / math.log(10))
    assert hybrid_gamma(10, 4, "code") == 1.0
    assert hybrid_gamma(10, 5, "code") == math.sqrt(1 / math.log(5))  # code switches at m < d/2, ln m
    assert hybrid_gamma(10, 10, "paper") == 0.0  # m = d: unused, the limit of the formula
    with pytest.raises(ValueError, match="gamma_rule"):
        hybrid_gamma(2, 1, "code")  # sqrt(1/ln 1)
    with pytest.raises(ValueError, match="gamma_rule"):
        hybrid_gamma(10, 3, "book")


def test_solver_bad_input():
    with pytest.raises(ValueError, match="regulariser"):
        solve_ftrl(np.zeros(4), 1.0, 2, "tsallis")
    with pytest.raises(ValueError, match="eta"):
        solve_ftrl(np.zeros(4), 0.0, 2)
    with pytest.raises(ValueError, match="m must"):
        solve_ftrl(np.zeros(4), 1.0, 5)
    with pytest.raises(ValueError, match="finite"):
        solve_ftrl(np.array([0.0, np.nan, 1.0]), 1.0, 1)


# --------------------------------------------------------------------------------------- the sampler
def test_systematic_sampler_exact_marginals_and_m_distinct():
    rng = np.random.default_rng(5)
    N = 200_000
    cases = [
        (np.array([0.5, 0.25, 0.25]), 1),
        (np.array([1.0, 0.1, 0.9, 0.6, 0.4]), 3),  # an arm with x = 1
        (solve_ftrl(rng.uniform(0, 10, 10), 0.5, 3).x, 3),
        (solve_ftrl(rng.uniform(0, 60, 12), 0.5, 11).x, 11),
        (solve_ftrl(rng.uniform(0, 3, 8), 0.5, 4, "shannon").x, 4),
    ]
    for x, m in cases:
        d = x.size
        u = rng.random(N)
        A = systematic_sample(np.broadcast_to(x, (N, d)), u, m)
        assert A.dtype == np.int8 and set(np.unique(A)) <= {0, 1}
        assert (A.sum(axis=1) == m).all()  # exactly m distinct arms, every draw
        freq = A.mean(axis=0)
        se = np.sqrt(x * (1 - x) / N)
        assert (np.abs(freq - x) <= 3 * se + 1e-12).all(), (freq, x)


def test_systematic_sampler_by_hand_and_rounding_guard():
    x = np.array([0.5, 0.25, 0.75, 0.5])  # S = 0.5, 0.75, 1.5, 2
    np.testing.assert_array_equal(systematic_sample(x, 0.1, 2), [1, 0, 1, 0])  # points 0.1, 1.1
    np.testing.assert_array_equal(systematic_sample(x, 0.6, 2), [0, 1, 0, 1])  # points 0.6, 1.6
    np.testing.assert_array_equal(systematic_sample(np.ones(4), 0.99, 4), [1, 1, 1, 1])
    # total 3 - 2e-10: the point 1.9999999999 falls past arm 2's rounded interval into arm 3, which
    # then holds two points; the guard completes the set with the unchosen arm of largest x
    x = np.array([0.5, 0.5, 1 - 2e-10, 1.0])
    a = systematic_sample(x, 1 - 1e-10, 3)
    assert a.sum() == 3
    np.testing.assert_array_equal(a, [0, 1, 1, 1])
    # a total rounded below m: the last point goes to the last arm
    a = systematic_sample(np.array([0.5, 0.5, 1.0, 1 - 1e-10]), 1 - 1e-11, 3)
    assert a.sum() == 3


# ----------------------------------------------------------------------------------------- the agents
def simulate(agent, mu, T, noise_seed=123):
    """Bernoulli losses 1{U < mu} (one uniform per arm and round, drawn before the action); returns
    the actions (T, n, d) and the cumulative pseudo-regret (n,)."""
    n, d = agent.n_envs, mu.shape[0]
    m = agent.m
    best = np.sort(mu)[:m].sum()
    rng = np.random.default_rng(noise_seed)
    obs = zero_obs(n, d)
    acts = np.empty((T, n, d), dtype=np.int8)
    regret = np.zeros(n)
    for t in range(T):
        u = rng.random((n, d))
        a = agent.act(obs)
        assert a.shape == (n, d) and a.dtype == np.int8 and (a.sum(axis=1) == m).all()
        acts[t] = a
        regret += a @ mu - best
        losses = (u < mu) * a
        obs = {"losses": losses.astype(float), "observed": a.copy()}
        agent.update(a, -losses.sum(axis=1).astype(float), obs)
    return acts, regret


def stochastic_means(d, m, gap):
    return np.where(np.arange(d) < m, 0.5 * (1 - gap), 0.5 * (1 + gap))


@pytest.mark.parametrize("name", list(AGENTS))
def test_batched_equals_per_run_bit_for_bit_and_deterministic(name):
    d, m, T = 7, 3, 250
    mu = stochastic_means(d, m, 0.3)
    problem = make_problem(d, m, T)
    acts, _ = simulate(make_batched_agent(name, problem, seeds=seeds(3)), mu, T)
    again, _ = simulate(make_batched_agent(name, problem, seeds=seeds(3)), mu, T)
    np.testing.assert_array_equal(acts, again)
    rng = np.random.default_rng(123)
    U = rng.random((T, 3, d))
    for i in range(3):
        ag = make_agent(name, problem, seed=agent_seed(i))
        obs = {"losses": np.zeros(d), "observed": np.zeros(d, dtype=np.int8)}
        for t in range(T):
            a = ag.act(obs)
            np.testing.assert_array_equal(a, acts[t, i])
            losses = ((U[t, i] < mu) * a).astype(float)
            obs = {"losses": losses, "observed": a.copy()}
            ag.update(a, -losses.sum(), obs)
        diag = ag.diagnostics()
        assert diag["nonconverged"] == 0 and 1 <= diag["newton_iters"] < 10


@pytest.mark.parametrize("name", list(AGENTS))
def test_estimator_is_importance_weighted_and_uses_the_run_uniforms(name):
    d, m = 6, 2
    ag = AGENTS[name](make_problem(d, m, 100), seeds=seeds(2))
    rng = np.random.default_rng(1)
    for _ in range(5):
        a = ag.act(zero_obs(2, d))
        x = ag.probabilities()
        losses = (rng.random((2, d)) < 0.5) * a * 1.0
        expect = ag.L_hat + np.where(a == 1, losses / x, 0.0)
        ag.update(a, -losses.sum(axis=1), {"losses": losses, "observed": a})
        np.testing.assert_array_equal(ag.L_hat, expect)
    # a fresh agent's sets are exactly systematic_sample(x_t, U_t) with U_t = default_rng(seed).random()
    fresh = AGENTS[name](make_problem(d, m, 100), seeds=seeds(1, start=4))
    u = np.random.default_rng(agent_seed(4)).random(3)
    for t in range(3):
        a = fresh.act(zero_obs(1, d))
        np.testing.assert_array_equal(a, systematic_sample(fresh.probabilities(), u[t : t + 1], m))
        fresh.update(a, np.zeros(1), {"losses": np.zeros((1, d)), "observed": a})


@pytest.mark.parametrize("name", list(AGENTS))
def test_m_equals_d_plays_every_arm(name):
    d = 4
    ag = AGENTS[name](make_problem(d, d, 50), seeds=seeds(2))
    acts, regret = simulate(ag, stochastic_means(d, d, 0.2), 50)
    assert (acts == 1).all() and (regret == 0).all()
    assert ag.diagnostics()["newton_iters"] == [0.0, 0.0]


def test_first_round_uniform_marginals_and_learning_rates():
    d, m = 10, 3
    for cls in AGENTS.values():
        ag = cls(make_problem(d, m, 100), seeds=seeds(1))
        ag.act(zero_obs(1, d))
        np.testing.assert_allclose(ag.probabilities(), m / d, rtol=1e-13)
    assert BatchedFTRLHybrid(make_problem(d, m), seeds=seeds(1), eta_scale=2).learning_rate(4) == 1.0
    assert BatchedLogBarrierOSMD(make_problem(d, m), seeds=seeds(1)).learning_rate(3) == 4 * math.sqrt(math.log(4) / 3)
    assert BatchedShannonOSMD(make_problem(d, m), seeds=seeds(1)).learning_rate(16) == 0.0625
    assert BatchedFTRLHybrid(make_problem(10, 7), seeds=seeds(1)).gamma == math.sqrt(1 / math.log(10 / 3))
    assert BatchedFTRLHybrid(make_problem(10, 7), seeds=seeds(1), gamma_rule="code").gamma == math.sqrt(1 / math.log(7))
    assert BatchedFTRLHybrid(make_problem(10, 7), seeds=seeds(1), gamma=0.3).gamma == 0.3
    assert BatchedFTRLHybrid(make_problem(3, 3), seeds=seeds(1)).gamma == 0.0


@pytest.mark.parametrize(
    "name,hp,field",
    [
        ("ftrl-hybrid", {"eta_scale": 0}, "eta_scale"),
        ("ftrl-hybrid", {"eta_scale": float("nan")}, "eta_scale"),
        ("ftrl-hybrid", {"gamma_rule": "book"}, "gamma_rule"),
        ("ftrl-hybrid", {"gamma": -1.0}, "gamma"),
        ("ftrl-hybrid", {"tol": 0.0}, "tol"),
        ("ftrl-hybrid", {"max_iter": 0}, "max_iter"),
        ("logbarrier-osmd", {"eta_scale": -2}, "eta_scale"),
        ("logbarrier-osmd", {"max_iter": 2.5}, "max_iter"),
        ("shannon-osmd", {"eta_scale": "big"}, "eta_scale"),
        ("shannon-osmd", {"tol": float("inf")}, "tol"),
    ],
)
def test_bad_hyperparameters(name, hp, field):
    with pytest.raises(ValueError, match=field):
        make_batched_agent(name, make_problem(5, 2), seeds=seeds(1), **hp)


def test_code_gamma_rule_undefined_case_raises():
    with pytest.raises(ValueError, match="gamma_rule"):
        BatchedFTRLHybrid(make_problem(2, 1), seeds=seeds(1), gamma_rule="code")
    BatchedFTRLHybrid(make_problem(2, 1), seeds=seeds(1), gamma_rule="code", gamma=1.0)  # explicit is fine


def test_update_checks():
    ag = BatchedFTRLHybrid(make_problem(5, 2), seeds=seeds(2))
    with pytest.raises(RuntimeError, match="act"):
        ag.update(np.zeros((2, 5)), np.zeros(2), zero_obs(2, 5))
    a = ag.act(zero_obs(2, 5))
    with pytest.raises(ValueError, match="shape"):
        ag.update(a, np.zeros(2), zero_obs(3, 5))
    with pytest.raises(ValueError, match="observations"):
        ag.update(a, np.zeros(2), np.zeros((2, 5)))


def test_registered_for_the_env():
    names = {a.name: a for a in list_agents(ENV_ID)}
    for name, cls in AGENTS.items():
        info = names[name]
        assert info.role == "baseline" and info.envs == (ENV_ID,) and info.batched_factory is cls
        params = inspect.signature(cls).parameters
        declared = {k: v.default for k, v in params.items() if k not in ("problem", "seeds")}
        assert info.defaults == declared
    assert get_agent_info("ftrl-hybrid", ENV_ID).factory is FTRLHybrid


def test_stochastic_regret_far_below_uniform():
    d, m, g, T = 10, 3, 0.2, 3000
    mu = stochastic_means(d, m, g)
    uniform = T * m * g * (1 - m / d)  # uniform m-subset: m (d - m)/d g per round
    limits = {"ftrl-hybrid": 0.35, "logbarrier-osmd": 0.35, "shannon-osmd": 0.7}
    for name, cls in AGENTS.items():
        ag = cls(make_problem(d, m, T), seeds=seeds(4))
        acts, regret = simulate(ag, mu, T)
        assert regret.mean() < limits[name] * uniform, (name, regret.mean(), uniform)
        # late rounds concentrate on the optimal set (arms 0..m-1)
        late = acts[-500:, :, :m].mean()
        assert late > 0.6, (name, late)
        assert ag.diagnostics()["nonconverged"] == [0] * 4


# ------------------------------------------------------------------------------------ through the env
def _need_env():
    import papergym.envs as penvs

    assert ENV_ID in penvs.list_envs(), f"{ENV_ID} must be registered"


@pytest.mark.parametrize("name", list(AGENTS))
def test_env_gym_make_regret_recorder_and_vector_env(name):
    _need_env()
    import gymnasium as gym

    from papergym.envs.bandits.semibandit import MSetSemiBanditVectorEnv
    from papergym.envs.wrappers import RegretRecorder

    kw = {"instance": "stochastic", "horizon": 400, "d": 7, "m": 3, "gap": 0.4}
    T, run_seeds = 400, [0, 1, 2]
    venv = MSetSemiBanditVectorEnv(num_envs=3, **kw)
    obs, _ = venv.reset(seed=run_seeds)
    ag = make_batched_agent(name, venv.problem, seeds=[agent_seed(s) for s in run_seeds])
    vec_regret = np.zeros(3)
    for t in range(1, T + 1):
        a = ag.act(obs)
        vec_regret += venv.oracle.regret(a, t)
        obs, r, _, _, _ = venv.step(a)
        ag.update(a, r, obs)
    assert ag.diagnostics()["nonconverged"] == [0, 0, 0]
    # gym.make + RegretRecorder + the per-run agent give the same run as row 1 of the vector env
    env = RegretRecorder(gym.make(ENV_ID, **kw))
    obs, _ = env.reset(seed=1)
    single = make_agent(name, env.unwrapped.problem, seed=agent_seed(1))
    for _ in range(T):
        a = single.act(obs)
        assert env.unwrapped.action_space.contains(a)
        obs, r, _, _, _ = env.step(a)
        single.update(a, r, obs)
    regrets = np.asarray(env.regrets)
    assert (regrets >= 0).all()
    assert math.isclose(regrets.sum(), vec_regret[1], rel_tol=0, abs_tol=1e-9)
    assert regrets.sum() < 0.6 * 3 * 0.4 * (1 - 3 / 7) * T  # well below uniform's linear regret
    # the runner: batched (vector env) == per-run (gym.make loop), diagnostics as scalars per run
    from papergym.leaderboard.runner.compare import run_cells

    short = dict(kw, horizon=150)
    batched = run_cells(ENV_ID, short, name, {}, run_seeds, mode="batched")
    per_run = run_cells(ENV_ID, short, name, {}, run_seeds, mode="per-run")
    for b, p in zip(batched, per_run):
        assert b["status"] == p["status"] == "ok", (b.get("error"), p.get("error"))
        np.testing.assert_array_equal(b["cum_regret"], p["cum_regret"])
        assert b["diagnostics"] == p["diagnostics"]
        assert b["diagnostics"]["nonconverged"] == 0 and b["diagnostics"]["newton_iters"] >= 1
