"""br-flow (the paper's method) and the game baselines: update rules against their definitions, known
convergence behaviour, divergence reporting, and every learner on every env and role."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import papergym.envs  # noqa: F401
from papergym.agents.base import list_agents, make_agent, play_episode
from papergym.envs.games.common import gibbs
from papergym.envs.games.markov_game import EntropicMarkovGameEnv
from papergym.envs.games.matrix_game import EntropicMatrixGameEnv
from papergym.envs.games.mean_field import EntropicMeanFieldEnv
from papergym.envs.wrappers import RegretRecorder

GAME_ENVS = ("EntropicMeanField-v0", "EntropicMatrixGame-v0", "EntropicMarkovGame-v0")
LEARNERS = ("br-flow", "best-response-iteration", "fictitious-play", "mirror-descent-ascent", "extragradient")


def _run(env, name, seed=0, **hp):
    obs, _ = env.reset(seed=seed)
    agent = make_agent(name, env.problem, seed=0, **hp)
    xs = []
    play_episode(agent, env, obs, on_step=lambda a, r: xs.append(np.array(a)))
    return agent, xs


def test_registered_for_every_game_env():
    for env_id in GAME_ENVS:
        names = {a.name for a in list_agents(env_id)}
        assert set(LEARNERS) <= names
        assert [a for a in list_agents(env_id) if a.name == "br-flow"][0].role == "paper"


@pytest.mark.parametrize(
    "env_id,kw",
    [
        ("EntropicMeanField-v0", {"instance": "double-well", "G": 501}),
        ("EntropicMeanField-v0", {"instance": "interaction", "G": 301}),
        ("EntropicMatrixGame-v0", {"instance": "random", "role": "min"}),
        ("EntropicMatrixGame-v0", {"instance": "random", "role": "max"}),
        ("EntropicMatrixGame-v0", {"instance": "rps-cold", "role": "both"}),
        ("EntropicMarkovGame-v0", {"instance": "random", "role": "both"}),
        ("EntropicMarkovGame-v0", {"instance": "random", "role": "min", "opponent": "extragradient"}),
    ],
)
@pytest.mark.parametrize("name", LEARNERS)
def test_every_learner_runs_on_every_env_and_role(env_id, kw, name):
    env = RegretRecorder(gym.make(env_id, horizon=40, **kw))
    obs, _ = env.reset(seed=1)
    agent = make_agent(name, env.unwrapped.problem, seed=0)
    play_episode(agent, env, obs)
    assert len(env.regrets) == 40 and min(env.regrets) >= 0
    m = env.unwrapped.oracle.episode_metrics()
    assert m["gap_last"] == pytest.approx(env.regrets[-1])
    assert m["gap_avg"] >= 0 and 1 <= m["steps_to_tol"] <= 41
    d = agent.diagnostics()
    assert d["diverged"] in (0.0, 1.0)


def test_br_flow_euler_step_is_the_paper_discretisation():
    env = EntropicMatrixGameEnv("random", role="both")
    obs, _ = env.reset(seed=2)
    agent = make_agent("br-flow", env.problem, h=0.3)
    g = env.game
    mu, nu = g.init_min.copy(), g.init_max.copy()
    for _ in range(10):
        x = agent.act(obs)
        g_mu, g_nu = g.feedback(mu, nu)
        mu = 0.7 * mu + 0.3 * gibbs(g.log_ref_min, g_mu, g.sigma_min, -1)
        nu = 0.7 * nu + 0.3 * gibbs(g.log_ref_max, g_nu, g.sigma_max, +1)
        np.testing.assert_allclose(x, np.concatenate([mu, nu]), atol=1e-15)
        obs, *_ = env.step(x)


def test_special_cases_best_response_iteration_and_fictitious_play():
    env = EntropicMatrixGameEnv("random", role="both", horizon=30)
    _, bri = _run(env, "best-response-iteration")
    _, h1 = _run(env, "br-flow", h=1.0)
    np.testing.assert_array_equal(np.array(bri), np.array(h1))
    # fictitious play: x_k is the running average of the best responses BR(x_0), ..., BR(x_{k-1})
    obs, _ = env.reset(seed=0)
    fp = make_agent("fictitious-play", env.problem)
    brs = []
    for _k in range(1, 20):
        brs.append(fp.best_response(obs))
        x = fp.act(obs)
        np.testing.assert_allclose(x, np.mean(brs, axis=0), atol=1e-14)
        obs, *_ = env.step(x)


def test_exponential_scheme_is_euler_with_step_one_minus_exp():
    env = EntropicMatrixGameEnv("random", role="both", horizon=25)
    _, a = _run(env, "br-flow", h=0.4, scheme="exponential")
    _, b = _run(env, "br-flow", h=1 - np.exp(-0.4))
    np.testing.assert_allclose(np.array(a), np.array(b), atol=1e-15)


def test_curie_weiss_contraction_through_the_agent():
    env = EntropicMeanFieldEnv("curie-weiss", a=0.5, sigma=1.0, horizon=40)
    agent, xs = _run(env, "br-flow", h=0.5)
    m0 = env.prob.mean(env.mu0)
    for k, x in enumerate(xs, start=1):
        assert env.prob.mean(x) == pytest.approx(m0 * 0.75**k, rel=1e-9, abs=1e-13)
    m = env.oracle.episode_metrics()
    assert m["rate"] == pytest.approx(0.75**2, rel=1e-3)  # F^s - F* is quadratic in the mean
    assert agent.diagnostics()["diverged"] == 0.0
    # every iterate is a mixture of unit Gaussians with means of one sign: stochastically ordered against pi,
    # so W1(mu_k, pi) = m(mu_k)
    assert m["w1_last"] == pytest.approx(m0 * 0.75**40, rel=1e-6)


def test_curie_weiss_divergence_is_reported_not_a_fake_minimum():
    env = EntropicMeanFieldEnv("curie-weiss", a=1.5, sigma=1.0, horizon=60)
    agent, xs = _run(env, "br-flow", h=0.5)
    d = agent.diagnostics()
    assert d["diverged"] == 1.0 and d["boundary_mass"] > 0.5
    # far from the truncation the mean grows by 1 + h (a/sigma - 1) per step (the grid's tail at R = 8 costs
    # ~1e-8 once the best response is centred near 3)
    m0 = env.prob.mean(env.mu0)
    for k, x in enumerate(xs[:4], start=1):
        assert env.prob.mean(x) == pytest.approx(m0 * 1.25**k, rel=1e-6)
    assert not env.oracle.contractive


def test_rps_converges_to_the_uniform_equilibrium():
    env = EntropicMatrixGameEnv("rps", role="both", horizon=100)
    _, xs = _run(env, "br-flow")
    np.testing.assert_allclose(xs[-1], np.full(6, 1 / 3), atol=1e-13)
    assert env.oracle.episode_metrics()["gap_last"] <= 1e-14


def test_rps_cold_large_steps_cycle_small_steps_converge():
    env = EntropicMatrixGameEnv("rps-cold", role="both", horizon=600)
    _run(env, "br-flow", h=0.5)
    big = env.oracle.episode_metrics()
    assert big["cycling"] == 1.0 and big["gap_last"] > 0.1
    _run(env, "br-flow", h=0.02)
    small = env.oracle.episode_metrics()
    assert small["gap_last"] < 1e-6 and small["cycling"] == 0.0
    _run(env, "fictitious-play")
    fp = env.oracle.episode_metrics()
    assert fp["gap_last"] < big["gap_last"] / 10


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_game_fixed_point_has_tiny_gap(seed):
    env = EntropicMatrixGameEnv("random", role="both", horizon=200)
    _, xs = _run(env, "br-flow", seed=seed)
    o = env.oracle
    mu, nu = xs[-1][:5], xs[-1][5:]
    assert o.equilibrium_gap(mu, nu) <= 1e-8
    np.testing.assert_allclose(mu, o.mu_star, atol=1e-10)
    np.testing.assert_allclose(nu, o.nu_star, atol=1e-10)


@pytest.mark.parametrize("inst", ["random", "random-medium", "single-state"])
def test_markov_br_flow_matches_regularised_shapley(inst):
    env = EntropicMarkovGameEnv(inst, role="both", horizon=150)
    _, xs = _run(env, "br-flow", seed=4)
    o, g = env.oracle, env.game
    np.testing.assert_allclose(xs[-1][:, : g.A], o.mu_star, atol=1e-6)
    np.testing.assert_allclose(xs[-1][:, g.A :], o.nu_star, atol=1e-6)


def test_mirror_descent_is_the_geometric_interpolation():
    env = EntropicMatrixGameEnv("random", role="both", a=0.2, sigma=0.5, sigma_max=2.0)
    obs, _ = env.reset(seed=0)
    agent = make_agent("mirror-descent-ascent", env.problem, eta=0.7)
    x0 = agent.x.copy()
    x1 = agent.act(obs)
    psi = agent.best_response(obs)
    for s, T in ((slice(0, 5), 0.5), (slice(5, 10), 2.0)):
        w = 0.7 * T / (1 + 0.7 * T)
        y = x0[s] ** (1 - w) * psi[s] ** w
        np.testing.assert_allclose(x1[s], y / y.sum(), rtol=1e-12)


def test_extragradient_modes():
    env = EntropicMatrixGameEnv("random", role="both")
    obs, _ = env.reset(seed=0)
    opt = make_agent("extragradient", env.problem)
    mda = make_agent("mirror-descent-ascent", env.problem)
    # the first optimistic step has no previous feedback: it is the plain step
    np.testing.assert_allclose(opt.act(obs), mda.act(obs), atol=1e-15)
    x1 = opt.x.copy()
    obs2, *_ = env.step(x1)
    np.testing.assert_allclose(opt.act(obs2), mda.prox(x1, 2 * obs2 - obs), atol=1e-15)
    # two-call: midpoint from x_k, then the update from x_k with the midpoint's feedback
    obs, _ = env.reset(seed=0)
    tc = make_agent("extragradient", env.problem, mode="two-call")
    x0 = tc.x.copy()
    mid = tc.act(obs)
    np.testing.assert_allclose(mid, mda.prox(x0, obs), atol=1e-15)
    obs_mid, *_ = env.step(mid)
    np.testing.assert_allclose(tc.act(obs_mid), mda.prox(x0, obs_mid), atol=1e-15)


def test_deterministic_under_a_seed():
    env = EntropicMarkovGameEnv("random", role="both", horizon=20)
    _, a = _run(env, "extragradient", seed=9)
    _, b = _run(env, "extragradient", seed=9)
    np.testing.assert_array_equal(np.array(a), np.array(b))


@pytest.mark.parametrize(
    "hp,msg",
    [({"h": 0}, "h must"), ({"h": 1.5}, "h must"), ({"schedule": "cosine"}, "schedule"), ({"scheme": "rk4"}, "scheme")],
)
def test_br_flow_bad_hyperparameters(hp, msg):
    env = EntropicMatrixGameEnv("rps")
    with pytest.raises(ValueError, match=msg):
        make_agent("br-flow", env.problem, **hp)


def test_learner_needs_a_game_problem():
    from papergym.agents.games.br_flow import BRFlow

    env = gym.make("NonStatLipschitz-v0", horizon=10).unwrapped
    with pytest.raises(ValueError, match="blocks"):
        BRFlow(env.problem)


def test_compare_reports_game_metrics():
    from papergym.leaderboard import compare

    res = compare(
        "EntropicMatrixGame-v0",
        agents=["br-flow", "fictitious-play"],
        seeds=[0, 1],
        horizon=60,
        env_kwargs={"instance": "random", "role": "both"},
        backend="serial",
    )
    s = res.summary.set_index("agent")
    assert s.loc["br-flow", "gap_last"] < 1e-12 < s.loc["fictitious-play", "gap_last"]
    assert s.loc["br-flow", "steps_to_tol"] < s.loc["fictitious-play", "steps_to_tol"]
    assert "iterate_gap" in res.curves.columns
    table = res.format_table()
    assert "gap avg-iterate" in table and "steps to tol" in table
    # the oracle's contractivity and the convergence status (random: kappa = max(1/4 + omega(G)/2, ...) < 1)
    assert {"kappa", "contractive", "status"} <= set(table.splitlines()[0].split())
    assert s.loc["br-flow", "converged"] == 1.0 and "converged 2/2" in table
    assert (s.contraction_bound < 1).all() and (s.contractive == 1.0).all()


def test_compare_table_shows_grid_edge_not_converged():
    from papergym.leaderboard import compare

    res = compare(
        "EntropicMeanField-v0",
        agents=["br-flow"],
        seeds=[8331],
        horizon=40,
        env_kwargs={"instance": "curie-weiss-unstable", "G": 801},
        backend="serial",
        cache=False,
    )
    row = res.summary.set_index("agent").loc["br-flow"]
    assert row.gap_last < 1e-6  # the gap to the grid's "minimiser" is tiny ...
    assert row.grid_edge == 1.0 and row.converged == 0.0 and row.contractive == 0.0
    table = res.format_table()
    assert "grid-edge 1/1" in table and "converged 1/1" not in table  # ... and the table says what it is


# --------------------------------------------------------------------------- h = "auto" (the default)
def test_auto_step_is_derived_from_the_published_bounds():
    env = EntropicMatrixGameEnv("rps-cold", role="both")
    env.reset(seed=8301)
    assert make_agent("br-flow", env.problem).h == pytest.approx(1 / (1 + 7.5**2))  # delta = 0, c = 7.5
    mf = EntropicMeanFieldEnv("double-well", G=301)
    mf.reset(seed=8301)
    assert make_agent("br-flow", mf.problem).h == 1.0  # one player: c = 0
    mk = EntropicMarkovGameEnv("random-cold", role="min")
    mk.reset(seed=8313)
    c = mk.problem.params["br_bounds"]["cross"]
    agent = make_agent("br-flow", mk.problem)  # a single role still plays the joint dynamics
    assert agent.h == pytest.approx(1 / (1 + c * c)) and agent.diagnostics()["rate_bound"] == pytest.approx(
        c * c / (1 + c * c)
    )
    assert make_agent("br-flow", env.problem, h=0.3).h == 0.3
    assert np.isnan(make_agent("fictitious-play", env.problem).diagnostics()["h"])
    with pytest.raises(ValueError, match="'auto' or a number"):
        make_agent("br-flow", env.problem, h="fast")
    from papergym.envs.spec import ProblemSpec

    p = env.problem
    bare = ProblemSpec(
        p.env_id,
        p.action_space,
        p.observation_space,
        p.horizon,
        {k: v for k, v in p.params.items() if k != "br_bounds"},
    )
    with pytest.raises(ValueError, match="br_bounds"):
        make_agent("br-flow", bare)
    make_agent("br-flow", bare, h=0.5)  # an explicit step needs no bounds


def test_auto_step_exponential_scheme_gives_the_same_iterates():
    env = EntropicMatrixGameEnv("random", role="both", horizon=20)
    _, a = _run(env, "br-flow", seed=8302)
    _, b = _run(env, "br-flow", seed=8302, scheme="exponential")
    np.testing.assert_allclose(np.array(a), np.array(b), atol=1e-14)


# family -> (env class, kwargs, step budget K): the default horizons; 2000 for the cold (sigma, tau = 0.1) ones
CERTIFIED = {
    "matrix/rps": (EntropicMatrixGameEnv, {"instance": "rps"}, 500),
    "matrix/rps-cold": (EntropicMatrixGameEnv, {"instance": "rps-cold"}, 2000),
    "matrix/rps-nonconvex": (EntropicMatrixGameEnv, {"instance": "rps-nonconvex"}, 500),
    "matrix/random": (EntropicMatrixGameEnv, {"instance": "random"}, 500),
    "markov/random": (EntropicMarkovGameEnv, {"instance": "random"}, 300),
    "markov/random-cold": (EntropicMarkovGameEnv, {"instance": "random-cold"}, 2000),
    "markov/random-medium": (EntropicMarkovGameEnv, {"instance": "random-medium"}, 300),
    "markov/single-state": (EntropicMarkovGameEnv, {"instance": "single-state"}, 300),
    "mean-field/curie-weiss": (EntropicMeanFieldEnv, {"instance": "curie-weiss"}, 200),
    "mean-field/double-well": (EntropicMeanFieldEnv, {"instance": "double-well"}, 200),
    "mean-field/interaction": (EntropicMeanFieldEnv, {"instance": "interaction"}, 200),
}


def _until(env, agent, obs, tol):
    for _ in range(env.horizon):
        a = agent.act(obs)
        obs, r, _, trunc, _ = env.step(a)
        agent.update(a, r, obs)
        if env._gaps[-1] <= tol or trunc:
            break
    return agent


@pytest.mark.parametrize("family", list(CERTIFIED))
def test_default_step_converges_on_every_certified_family(family):
    """Fresh seeds, default hyperparameters, self-play: gap <= 1e-6 within the budget, status "converged", at a
    linear rate within the guaranteed bound and close to the exact linearisation's prediction."""
    cls, kw, K = CERTIFIED[family]
    seeds = (8313, 8314) if "cold" in family else (8311, 8312, 8313)  # random-cold: |Im lambda| = 3.9, 6.5
    for seed in seeds:
        env = cls(horizon=K, gap_tol=1e-6, **kw, **({} if cls is EntropicMeanFieldEnv else {"role": "both"}))
        obs, _ = env.reset(seed=seed)
        agent = make_agent("br-flow", env.problem, seed=0)
        _until(env, agent, obs, 1e-13)  # past the 1e-12 floor below which the rate is not fitted
        m = env.oracle.episode_metrics()
        assert m["steps_to_tol"] <= K and m["status"] == "converged", (family, seed, m)
        pred = env.oracle.predicted_rate(agent.h)
        assert pred < 1
        # the fitted per-step factor is the linearisation's, within 10 % in log (transients of faster modes)
        assert abs(math.log(m["rate"]) - math.log(pred)) <= 0.1 * abs(math.log(pred)), (family, seed, m["rate"], pred)
        bound = agent.diagnostics()["rate_bound"]
        if np.isfinite(bound):
            assert pred <= bound * (1 + 1e-9)


def test_non_contractive_runs_are_not_reported_converged():
    for inst, status in (("curie-weiss-unstable", "grid-edge"), ("double-well-broken", "not contractive")):
        env = EntropicMeanFieldEnv(inst, horizon=100)
        _run(env, "br-flow", seed=8321)
        m = env.oracle.episode_metrics()
        assert m["status"] == status and m["converged"] == 0.0
    env = EntropicMatrixGameEnv("rps", a=1.2, b=1.2, allow_nonconvex_inner=True, role="both", horizon=10)
    _run(env, "br-flow", seed=8321)
    m = env.oracle.episode_metrics()
    assert m["status"] == "not contractive" and m["converged"] == 0.0


def test_fixed_half_step_stalls_where_auto_converges():
    """The finding behind h="auto": h = 0.5 leaves the cold Markov game's rotation undamped
    (|1 - h + h i lambda| > 1 for lambda > sqrt 3)."""
    env = EntropicMarkovGameEnv("random-cold", role="both", horizon=300)
    env.reset(seed=8313)
    lam = np.abs(env.oracle.linearised_spectrum().imag).max()
    assert lam > math.sqrt(3) and env.oracle.predicted_rate(0.5) > 1
    _run(env, "br-flow", seed=8313, h=0.5)
    m = env.oracle.episode_metrics()
    assert m["status"] == "not converged" and m["gap_last"] > 1e-3
