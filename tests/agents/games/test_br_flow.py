"""br-flow (the paper's method) and the game baselines: update rules against their definitions, known
convergence behaviour, divergence reporting, and every learner on every env and role."""

from __future__ import annotations

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


@pytest.mark.parametrize("env_id,kw", [("EntropicMeanField-v0", {"instance": "double-well", "G": 501}),
                                       ("EntropicMeanField-v0", {"instance": "interaction", "G": 301}),
                                       ("EntropicMatrixGame-v0", {"instance": "random", "role": "min"}),
                                       ("EntropicMatrixGame-v0", {"instance": "random", "role": "max"}),
                                       ("EntropicMatrixGame-v0", {"instance": "rps-cold", "role": "both"}),
                                       ("EntropicMarkovGame-v0", {"instance": "random", "role": "both"}),
                                       ("EntropicMarkovGame-v0", {"instance": "random", "role": "min",
                                                                  "opponent": "extragradient"})])
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
    for k in range(1, 20):
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
        assert env.prob.mean(x) == pytest.approx(m0 * 0.75 ** k, rel=1e-9, abs=1e-13)
    m = env.oracle.episode_metrics()
    assert m["rate"] == pytest.approx(0.75 ** 2, rel=1e-3)  # F^s - F* is quadratic in the mean
    assert agent.diagnostics()["diverged"] == 0.0
    # every iterate is a mixture of unit Gaussians with means of one sign: stochastically ordered against pi,
    # so W1(mu_k, pi) = m(mu_k)
    assert m["w1_last"] == pytest.approx(m0 * 0.75 ** 40, rel=1e-6)


def test_curie_weiss_divergence_is_reported_not_a_fake_minimum():
    env = EntropicMeanFieldEnv("curie-weiss", a=1.5, sigma=1.0, horizon=60)
    agent, xs = _run(env, "br-flow")
    d = agent.diagnostics()
    assert d["diverged"] == 1.0 and d["boundary_mass"] > 0.5
    # far from the truncation the mean grows by 1 + h (a/sigma - 1) per step (the grid's tail at R = 8 costs
    # ~1e-8 once the best response is centred near 3)
    m0 = env.prob.mean(env.mu0)
    for k, x in enumerate(xs[:4], start=1):
        assert env.prob.mean(x) == pytest.approx(m0 * 1.25 ** k, rel=1e-6)
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
    np.testing.assert_allclose(xs[-1][:, :g.A], o.mu_star, atol=1e-6)
    np.testing.assert_allclose(xs[-1][:, g.A:], o.nu_star, atol=1e-6)


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


@pytest.mark.parametrize("hp,msg", [({"h": 0}, "h must"), ({"h": 1.5}, "h must"), ({"schedule": "cosine"}, "schedule"),
                                    ({"scheme": "rk4"}, "scheme")])
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

    res = compare("EntropicMatrixGame-v0", agents=["br-flow", "fictitious-play"], seeds=[0, 1], horizon=60,
                  env_kwargs={"instance": "random", "role": "both"}, backend="serial")
    s = res.summary.set_index("agent")
    assert s.loc["br-flow", "gap_last"] < 1e-12 < s.loc["fictitious-play", "gap_last"]
    assert s.loc["br-flow", "steps_to_tol"] < s.loc["fictitious-play", "steps_to_tol"]
    assert "iterate_gap" in res.curves.columns
    table = res.format_table()
    assert "gap avg-iterate" in table and "steps to tol" in table
