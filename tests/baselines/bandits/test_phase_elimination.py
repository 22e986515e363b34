"""Tests of the phased-elimination baselines ``pe-mvr`` and ``reds`` of NoiseFreeGPBandit-v0."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from papergym.agents.base import list_agents, make_agent
from papergym.baselines.bandits.phase_elimination import PEMVR, REDS
from papergym.envs.bandits.gp import dense_posterior, kernel_matrix
from papergym.envs.spec import ProblemSpec

ENV = "NoiseFreeGPBandit-v0"
GRID1 = np.linspace(0.0, 1.0, 200)[:, None]
_g = np.linspace(0.0, 1.0, 50)
GRID2 = np.array([(x, y) for x in _g for y in _g])


def make_problem(C, T, kernel="se", lengthscale=0.2, B=1.0, mode="discrete"):
    C = np.asarray(C, dtype=np.float64)
    N, d = C.shape
    action_space = gym.spaces.Discrete(N) if mode == "discrete" else gym.spaces.Box(0.0, 1.0, (d,), np.float64)
    return ProblemSpec(
        ENV,
        action_space,
        gym.spaces.Box(-np.inf, np.inf, (1,)),
        T,
        {"d": d, "kernel": kernel, "lengthscale": lengthscale, "B": B, "candidates": C, "action_mode": mode},
    )


def rkhs_function(C, rng, kernel="se", lengthscale=0.2, B=1.0, J=20, on_candidates=False):
    """``f = sum_j a_j k(., z_j)`` rescaled to RKHS norm exactly ``B``, values on ``C``."""
    Z = C[rng.choice(len(C), J, replace=False)] if on_candidates else rng.random((J, C.shape[1]))
    a = rng.standard_normal(J)
    a *= B / np.sqrt(a @ kernel_matrix(kernel, Z, Z, lengthscale) @ a)
    return kernel_matrix(kernel, C, Z, lengthscale) @ a


def play(agent, f, T, on_step=None):
    actions = []
    for t in range(T):
        a = agent.act(None)
        i = a if isinstance(a, int) else int(np.flatnonzero(np.all(agent.C == a, axis=1))[0])
        actions.append(i)
        agent.update(a, float(f[i]), None)
        if on_step is not None:
            on_step(t + 1, agent)
    return actions


# ------------------------------------------------------------------------------------ phases
@pytest.mark.parametrize("cls", [PEMVR, REDS])
def test_phase_lengths_double_and_active_set_changes_only_at_phase_ends(cls):
    f = rkhs_function(GRID1, np.random.default_rng(0), lengthscale=0.1)
    T = 2 + 4 + 8 + 16 + 5  # four full phases, the horizon ends inside the fifth
    agent = cls(make_problem(GRID1, T, lengthscale=0.1), seed=3)
    sizes = {}
    play(agent, f, T, on_step=lambda t, a: sizes.__setitem__(t, len(a.active)))
    d = agent.diagnostics()
    assert d["phases"] == 4
    assert d["phase_lengths"] == [2, 4, 8, 16]
    assert agent.phase == 5 and agent.k_phase == 5 and agent.n_phase == 32
    assert d["active_sizes"] == [sizes[2], sizes[6], sizes[14], sizes[30]]
    assert d["active_size"] == sizes[T]
    changes = [t for t in range(2, T + 1) if sizes[t] != sizes[t - 1]]
    assert set(changes) <= {2, 6, 14, 30}
    assert all(b <= a for a, b in zip([len(GRID1)] + d["active_sizes"], d["active_sizes"]))
    # the phase posterior holds only this phase's points; the base keeps the full history (a point
    # re-queried in a later phase is not appended twice there)
    assert agent.gp.n == T - d["repeats"] and agent.pgp.n == min(5, len(agent.active))


def test_phase_length_hyperparameters():
    agent = PEMVR(make_problem(GRID1, 10), first_phase=3, growth=1.5)
    assert [agent.phase_length(i) for i in range(1, 6)] == [3, 5, 7, 11, 16]  # ceil(3 * 1.5^(i-1))
    agent = PEMVR(make_problem(GRID1, 10), first_phase=5, growth=1)
    assert [agent.phase_length(i) for i in range(1, 4)] == [5, 5, 5]
    assert [PEMVR(make_problem(GRID1, 10)).phase_length(i) for i in range(1, 9)] == [2**i for i in range(1, 9)]


# ----------------------------------------------------------------------------- elimination
def test_elimination_rule_by_hand_independent_points():
    # lengthscale 0.01 on a spacing of 0.25: k = exp(-312.5) = 0, the points are independent, so after
    # querying x_0 and x_4 the phase posterior is mu = y, sigma = 0 there and mu = 0, sigma = 1 elsewhere
    C = np.linspace(0.0, 1.0, 5)[:, None]
    agent = PEMVR(make_problem(C, 10, lengthscale=0.01, B=1.0))
    assert agent.act(None) == 0  # all sigma = 1: lowest index
    agent.update(0, 0.5, None)
    assert agent.act(None) == 1  # all other sigma = 1: lowest index
    agent.update(1, -0.3, None)
    # max LCB = max(0.5, -0.3, 0 - 1) = 0.5; UCBs: 0.5, -0.3, 1, 1, 1 -> x_1 dropped
    np.testing.assert_array_equal(agent.active, [0, 2, 3, 4])
    assert agent.diagnostics()["active_sizes"] == [4]

    agent = PEMVR(make_problem(C, 10, lengthscale=0.01, B=1.0))
    for i, y in ((0, 1.5), (1, 0.2)):  # an observed value above B: every unknown UCB (= 1) < 1.5
        assert agent.act(None) == i
        agent.update(i, y, None)
    np.testing.assert_array_equal(agent.active, [0])

    agent = PEMVR(make_problem(C, 10, lengthscale=0.01, B=1.0), beta_sqrt=2.0)
    for _i, y in ((0, 1.5), (1, 0.2)):  # width 2: unknown UCB = 2 >= 1.5 kept; 0.2 < 1.5 dropped
        agent.update(agent.act(None), y, None)
    np.testing.assert_array_equal(agent.active, [0, 2, 3, 4])


@pytest.mark.parametrize("kernel", ["se", "matern-1.5"])
def test_elimination_matches_dense_reference(kernel):
    # correlated points: first phase of pe-mvr queries x_0 then the farthest point (max variance),
    # and keeps exactly {x : mu + B sigma >= max(mu - B sigma)} of a dense solve on those two points
    C = np.linspace(0.0, 1.0, 9)[:, None]
    l, B = 0.4, 1.0
    f = rkhs_function(C, np.random.default_rng(5), kernel, l, B, J=3)
    agent = PEMVR(make_problem(C, 20, kernel, l, B), elim_tol=0.0)
    acts = play(agent, f, 2)
    assert acts == [0, 8]
    mu, var = dense_posterior(kernel, l, C[acts], f[acts], C)
    mu[acts], var[acts] = f[acts], 0.0
    sd = np.sqrt(var)
    keep = np.flatnonzero(mu + B * sd >= np.max(mu - B * sd))
    np.testing.assert_array_equal(agent.active, keep)
    # the second phase is again built from its own points only: its first query is the lowest active
    assert agent.pgp.n == 0 and agent.act(None) == keep[0]


@pytest.mark.parametrize("cls", [PEMVR, REDS])
@pytest.mark.parametrize(
    "kernel,lengthscale", [("se", 0.1), ("matern-1.5", 0.1), ("matern-0.5", 0.2), ("matern-2.5", 0.15)]
)
def test_true_maximiser_never_eliminated(cls, kernel, lengthscale):
    T = 126  # phases 2 .. 64 complete
    for s in range(8):
        rng = np.random.default_rng(100 + s)
        f = rkhs_function(
            GRID1, rng, kernel, lengthscale, B=1.0 + (s % 2), J=4 if s % 3 == 0 else 20, on_candidates=s % 3 == 0
        )
        best = int(np.argmax(f))
        agent = cls(make_problem(GRID1, T, kernel, lengthscale, B=1.0 + (s % 2)), seed=s, elim_tol=0.0)

        def check(t, a, best=best, s=s):
            assert best in a.active, (cls.__name__, kernel, s, t)
            assert len(a.active) >= 1

        play(agent, f, T, on_step=check)
        assert agent.diagnostics()["phases"] == 6


@pytest.mark.parametrize("cls", [PEMVR, REDS])
def test_true_maximiser_never_eliminated_2d(cls):
    for s in range(3):
        f = rkhs_function(GRID2, np.random.default_rng(s), "se", 0.2)
        best = int(np.argmax(f))
        agent = cls(make_problem(GRID2, 126, "se", 0.2), seed=s)
        play(agent, f, 126, on_step=lambda t, a, best=best, s=s: (best in a.active) or pytest.fail(f"seed {s}, t {t}"))
        assert agent.diagnostics()["active_sizes"][-1] < len(GRID2) // 10


@pytest.mark.parametrize("cls", [PEMVR, REDS])
def test_active_set_shrinks_on_an_easy_function(cls):
    # one bump of norm B: f = B k(., 0.3)
    z = np.array([[0.3]])
    f = kernel_matrix("se", GRID1, z, 0.1)[:, 0]
    agent = cls(make_problem(GRID1, 62, "se", 0.1), seed=0)
    acts = play(agent, f, 62)
    sizes = agent.diagnostics()["active_sizes"]
    assert sizes[-1] <= 10 and sizes == sorted(sizes, reverse=True)
    assert np.all(np.abs(GRID1[agent.active, 0] - 0.3) < 0.05)
    # once the active set is tiny, the agent plays near-optimal points
    assert f.max() - f[acts[-1]] < 1e-2


def test_fully_known_active_set_plays_best_known_point():
    C = np.array([[0.0], [0.5], [1.0]])
    f = np.array([0.2, 0.9, 0.4])
    agent = PEMVR(make_problem(C, 11, "se", 0.2), first_phase=8, growth=1)
    acts = play(agent, f, 11)
    # phase 1: max-variance queries 0, 2 (farthest), 1; then every sigma = 0 -> best known (1)
    assert acts[:8] == [0, 2, 1, 1, 1, 1, 1, 1]
    np.testing.assert_array_equal(agent.active, [1])  # sigma = 0 everywhere: only the best survives
    assert acts[8:] == [1, 1, 1]
    agent = REDS(make_problem(C, 8, "se", 0.2), first_phase=8, seed=1)
    acts = play(agent, f, 8)
    assert sorted(acts[:3]) == [0, 1, 2] and acts[3:] == [1] * 5


# ------------------------------------------------------------------------- determinism, actions
def test_pe_mvr_deterministic_and_seed_free():
    f = rkhs_function(GRID1, np.random.default_rng(1), lengthscale=0.1)
    runs = [play(PEMVR(make_problem(GRID1, 40, lengthscale=0.1), seed=s), f, 40) for s in (0, 1, None)]
    assert runs[0] == runs[1] == runs[2]


def test_reds_deterministic_under_seed_different_across_seeds():
    f = rkhs_function(GRID1, np.random.default_rng(1), lengthscale=0.1)
    a = play(REDS(make_problem(GRID1, 40, lengthscale=0.1), seed=7), f, 40)
    b = play(REDS(make_problem(GRID1, 40, lengthscale=0.1), seed=7), f, 40)
    c = play(REDS(make_problem(GRID1, 40, lengthscale=0.1), seed=8), f, 40)
    assert a == b and a != c


@pytest.mark.parametrize("replace", [False, True])
def test_reds_queries_are_active_and_distinct_within_a_phase(replace):
    f = rkhs_function(GRID1, np.random.default_rng(2), lengthscale=0.1)
    agent = REDS(make_problem(GRID1, 62, lengthscale=0.1), seed=0, replace=replace)
    repeats = 0
    for _ in range(62):
        phase, active = agent.phase, agent.active.copy()
        unknown_left = not agent._queried.all()
        i = agent.act(None)
        assert isinstance(i, int) and i in active
        again = bool(agent._queried[agent._pos[i]])
        if again and not unknown_left:  # active set fully known: the best known point
            assert i == active[np.argmax(f[active])]
        repeats += again and unknown_left
        agent.update(i, float(f[i]), None)
        assert agent.phase == phase or (agent.phase == phase + 1 and agent.k_phase == 0)
    # without replacement no point repeats inside a phase while some active point is unqueried; with
    # replacement, once the active set is small (phase 6: 32 draws), repeats happen
    assert (repeats == 0) if not replace else (repeats > 0)


def test_pe_mvr_queries_are_active_legal_indices():
    f = rkhs_function(GRID2, np.random.default_rng(3))
    agent = PEMVR(make_problem(GRID2, 60), seed=0)
    for _ in range(60):
        active = agent.active.copy()
        i = agent.act(None)
        assert type(i) is int and 0 <= i < len(GRID2) and i in active
        # a max-variance query is never a point already queried in this phase
        assert not agent._queried[agent._pos[i]]
        agent.update(i, float(f[i]), None)


@pytest.mark.parametrize("cls", [PEMVR, REDS])
def test_continuous_mode_returns_candidate_coordinates(cls):
    f = rkhs_function(GRID2, np.random.default_rng(4))
    disc = play(cls(make_problem(GRID2, 30), seed=5), f, 30)
    agent = cls(make_problem(GRID2, 30, mode="continuous"), seed=5)
    cont = []
    for _ in range(30):
        x = agent.act(None)
        assert isinstance(x, np.ndarray) and x.shape == (2,) and x.dtype == np.float64
        i = int(np.flatnonzero(np.all(GRID2 == x, axis=1))[0])
        x[:] = -1.0  # a copy: mutating it does not touch the candidate set
        assert np.all(agent.C[i] >= 0.0)
        cont.append(i)
        agent.update(GRID2[i].copy(), float(f[i]), None)
    assert cont == disc


# ---------------------------------------------------------------------- hyperparameters, registry
@pytest.mark.parametrize(
    "field,value",
    [
        ("first_phase", 0),
        ("first_phase", 2.5),
        ("first_phase", True),
        ("growth", 0.5),
        ("growth", "x"),
        ("growth", float("inf")),
        ("beta_sqrt", -1.0),
        ("beta_sqrt", 0.0),
        ("elim_tol", -1e-3),
        ("elim_tol", float("nan")),
        ("jitter", 0.0),
    ],
)
@pytest.mark.parametrize("cls", [PEMVR, REDS])
def test_bad_hyperparameters_raise(cls, field, value):
    with pytest.raises(ValueError, match=field):
        cls(make_problem(GRID1, 10), **{field: value})


def test_bad_replace_raises():
    with pytest.raises(ValueError, match="replace"):
        REDS(make_problem(GRID1, 10), replace="yes")


def test_registered_as_baselines():
    infos = {a.name: a for a in list_agents(ENV)}
    for name in ("pe-mvr", "reds"):
        assert infos[name].role == "baseline" and infos[name].description
        assert infos[name].defaults["first_phase"] == 2 and infos[name].defaults["beta_sqrt"] is None
    assert infos["reds"].defaults["replace"] is False
    assert isinstance(make_agent("pe-mvr", make_problem(GRID1, 10), seed=0), PEMVR)
    assert isinstance(make_agent("reds", make_problem(GRID1, 10), seed=0, growth=3), REDS)


def test_sum_sigma_uses_full_history_posterior():
    # sigma_{t-1}(x_t) of the base (full-history) posterior, not of the phase posterior: the first
    # query of phase 2 has phase sigma 1 but a full-history sigma < 1 when it is near earlier points
    C = np.linspace(0.0, 1.0, 5)[:, None]
    f = np.array([-0.9, 0.3, 0.4, 0.45, 0.5])  # x_0 is eliminated after phase 1 (UCB -0.9 < LCB 0.5)
    agent = PEMVR(make_problem(C, 3, "se", 0.5))
    acts = play(agent, f, 3)
    assert acts[:2] == [0, 4] and acts[2] not in (0, 4)
    sig = agent.diagnostics()["sigma_at_queries"]
    assert sig[0] == 1.0
    _, var = dense_posterior("se", 0.5, C[acts[:2]], f[acts[:2]], C[acts[2:3]])
    np.testing.assert_allclose(sig[2], np.sqrt(var[0]), atol=1e-7)
    assert sig[2] < 1.0


# --------------------------------------------------------------------------- env integration
def _make_env(**kw):
    """The env through ``gym.make`` once registered, else its class if the module has it, else None."""
    from papergym.envs import list_envs
    from papergym.envs.bandits import gp as gp_module

    if ENV in list_envs():
        return gym.make(ENV, **kw)
    cls = getattr(gp_module, "NoiseFreeGPBanditEnv", None)
    return None if cls is None else cls(**kw)


@pytest.mark.parametrize("mode", ["discrete", "continuous"])
@pytest.mark.parametrize("name", ["pe-mvr", "reds"])
def test_env_run_with_regret_recorder(name, mode):
    from papergym.envs.spec import agent_seed
    from papergym.envs.wrappers import RegretRecorder

    env = _make_env(d=2, lengthscale=0.2, horizon=62, action_mode=mode)
    assert env is not None, "NoiseFreeGPBandit-v0 must be registered"
    env = RegretRecorder(env)
    obs, _ = env.reset(seed=3)
    agent = make_agent(name, env.unwrapped.problem, seed=agent_seed(3))
    trunc = False
    for _ in range(62):
        a = agent.act(obs)
        obs, r, term, trunc, _ = env.step(a)
        agent.update(a, r, obs)
        assert not term
    regrets = np.asarray(env.regrets)
    assert len(regrets) == 62 and regrets.min() >= 0.0
    np.testing.assert_allclose(env.regret_curve[-1], regrets.sum())
    d = agent.diagnostics()
    assert d["phase_lengths"] == [2, 4, 8, 16, 32] and d["active_sizes"][-1] < 100
    if mode == "discrete":  # the env's maximiser over the candidates (norm B) survives elimination
        assert int(env.unwrapped.oracle.best_action()) in agent.active
