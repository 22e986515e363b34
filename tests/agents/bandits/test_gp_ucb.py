"""gp-ucb (Iwazaki, NeurIPS 2025): the guarantees of the constant-width rule, checked on functions of
known RKHS norm, and the incremental posterior against a from-scratch reference."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from papergym.agents.base import get_agent_info, make_agent
from papergym.envs.bandits.gp import dense_posterior, kernel_matrix
from papergym.envs.spec import ProblemSpec

ENV_ID = "NoiseFreeGPBandit-v0"


def grid(d: int, side: int) -> np.ndarray:
    g = np.linspace(0.0, 1.0, side)
    return np.stack(np.meshgrid(*([g] * d), indexing="ij"), -1).reshape(-1, d)


def rkhs_function(C, kernel, ell, B, seed, J=20):
    """A kernel expansion with RKHS norm exactly B, evaluated on the candidates."""
    rng = np.random.default_rng(seed)
    Z = rng.random((J, C.shape[1]))
    a = rng.standard_normal(J)
    a *= B / np.sqrt(a @ kernel_matrix(kernel, Z, Z, ell) @ a)
    return kernel_matrix(kernel, C, Z, ell) @ a


def problem(C, kernel="se", ell=0.2, B=1.0, T=60, mode="discrete"):
    d = C.shape[1]
    space = gym.spaces.Discrete(len(C)) if mode == "discrete" else gym.spaces.Box(0.0, 1.0, (d,), np.float64)
    return ProblemSpec(
        ENV_ID,
        space,
        gym.spaces.Box(-np.inf, np.inf, (1,), np.float64),
        T,
        {"d": d, "kernel": kernel, "lengthscale": ell, "B": B, "candidates": C, "action_mode": mode},
    )


def play(agent, f, T):
    acts, sig = [], []
    for _ in range(T):
        i = agent.act(np.zeros(1))
        sig.append(float(agent.gp.std[i]))
        acts.append(i)
        agent.update(i, float(f[i]), np.array([f[i]]))
    return np.array(acts), np.array(sig)


def test_registered_as_the_papers_method():
    info = get_agent_info("gp-ucb", ENV_ID)
    assert info.role == "paper" and info.defaults["beta_sqrt"] is None


@pytest.mark.parametrize(
    "kernel,ell,d,side",
    [("se", 0.1, 1, 400), ("matern-1.5", 0.1, 1, 400), ("matern-2.5", 0.2, 2, 30), ("se", 0.2, 2, 30)],
)
@pytest.mark.parametrize("B", [1.0, 3.0])
def test_instantaneous_regret_bounded_by_2B_sigma(kernel, ell, d, side, B):
    """The paper's guarantee: with beta^1/2 = B and ||f||_k <= B, f* - f(x_t) <= 2 B sigma_{t-1}(x_t) every round, hence
    R_T <= 2 B sum_t sigma and simple regret <= 2 B min_t sigma."""
    C = grid(d, side)
    for seed in range(3):
        f = rkhs_function(C, kernel, ell, B, seed)
        ag = make_agent("gp-ucb", problem(C, kernel, ell, B, T=80), seed=0)
        acts, sig = play(ag, f, 80)
        reg = f.max() - f[acts]
        assert np.all(reg >= 0)
        assert np.all(reg <= 2 * B * sig + 1e-6), np.max(reg - 2 * B * sig)
        assert reg.sum() <= 2 * B * ag.diagnostics()["sum_sigma"] + 1e-6
        assert reg.min() <= 2 * B * sig.min() + 1e-6
        assert ag.gp.refactorisations == 0


def test_requery_only_when_optimal():
    C = grid(1, 500)
    for seed in range(6):
        f = rkhs_function(C, "se", 0.1, 1.0, seed)
        ag = make_agent("gp-ucb", problem(C, "se", 0.1, 1.0, T=120), seed=0)
        acts, _ = play(ag, f, 120)
        seen = set()
        for i in acts:
            if i in seen:
                assert f[i] >= f.max() - 1e-8
            seen.add(int(i))
        assert ag.repeats == len(acts) - len(seen) and ag.gp.n == len(seen)
        assert ag.repeats > 0  # on SE it settles on the optimum within 120 rounds


def test_matches_a_from_scratch_reference():
    """The same actions as GP-UCB written the slow way: a dense solve of the whole posterior every
    round (same jitter), on a well-conditioned Matérn problem."""
    C = grid(2, 25)
    f = rkhs_function(C, "matern-1.5", 0.2, 2.0, 7)
    ag = make_agent("gp-ucb", problem(C, "matern-1.5", 0.2, 2.0, T=40), seed=0)
    acts, _ = play(ag, f, 40)
    ref = [int(np.argmin(np.sum((C - 0.5) ** 2, 1)))]
    for _ in range(39):
        X = np.unique(np.array(ref))
        mu, var = dense_posterior("matern-1.5", 0.2, C[X], f[X], C)
        mu[X], var[X] = f[X], 0.0
        ref.append(int(np.argmax(mu + 2.0 * np.sqrt(var))))
    assert acts.tolist() == ref
    assert acts[0] == 12 * 25 + 12  # x_1: the centre of the grid


def test_regret_stops_growing_on_se_and_beats_uniform():
    """The paper: O(1) cumulative regret for SE; and GP-UCB beats non-adaptive exploration."""
    C = grid(1, 1000)
    ucb, unif = [], []
    for seed in range(8):
        f = rkhs_function(C, "se", 0.1, 1.0, seed)
        acts, _ = play(make_agent("gp-ucb", problem(C, "se", 0.1, 1.0, T=120), seed=0), f, 120)
        reg = np.cumsum(f.max() - f[acts])
        assert reg[-1] - reg[59] <= 1e-6  # no regret at all in the second half
        ucb.append(reg[-1])
        rng = np.random.default_rng(seed)
        unif.append(np.sum(f.max() - f[rng.integers(len(C), size=120)]))
    assert np.mean(ucb) < 0.2 * np.mean(unif)


def test_beta_sqrt_and_x1_hyperparameters():
    C = grid(1, 200)
    f = rkhs_function(C, "se", 0.1, 1.0, 3)
    p = problem(C, "se", 0.1, 1.0, T=30)
    a_default, _ = play(make_agent("gp-ucb", p, seed=0), f, 30)
    a_explicit, _ = play(make_agent("gp-ucb", p, seed=0, beta_sqrt=1.0), f, 30)
    assert a_default.tolist() == a_explicit.tolist()
    a_wide, _ = play(make_agent("gp-ucb", p, seed=0, beta_sqrt=50.0), f, 30)
    assert a_wide.tolist() != a_default.tolist()
    r1, _ = play(make_agent("gp-ucb", p, seed=1, x1="random"), f, 5)
    r2, _ = play(make_agent("gp-ucb", p, seed=1, x1="random"), f, 5)
    r3, _ = play(make_agent("gp-ucb", p, seed=2, x1="random"), f, 5)
    assert r1.tolist() == r2.tolist() and r1[0] != r3[0]


@pytest.mark.parametrize(
    "hp,match",
    [
        ({"beta_sqrt": -1.0}, "beta_sqrt"),
        ({"beta_sqrt": float("nan")}, "beta_sqrt"),
        ({"jitter": 0.0}, "jitter"),
        ({"x1": "left"}, "x1"),
    ],
)
def test_bad_hyperparameters(hp, match):
    with pytest.raises(ValueError, match=match):
        make_agent("gp-ucb", problem(grid(1, 10)), seed=0, **hp)


def test_continuous_mode_returns_candidate_points_and_learns_from_them():
    C = grid(2, 20)
    f = rkhs_function(C, "se", 0.2, 1.0, 0)
    ag = make_agent("gp-ucb", problem(C, mode="continuous"), seed=0)
    ref = make_agent("gp-ucb", problem(C), seed=0)
    for _ in range(15):
        x = ag.act(np.zeros(1))
        i = ref.act(np.zeros(1))
        assert isinstance(x, np.ndarray) and x.shape == (2,) and np.array_equal(x, C[i])
        ag.update(x, float(f[i]), None)
        ref.update(i, float(f[i]), None)
    with pytest.raises(ValueError, match="candidate"):
        ag.update(np.array([0.123, 0.456]), 0.0, None)
    d = ag.diagnostics()
    assert d["sum_sigma"] == pytest.approx(sum(d["sigma_at_queries"])) and len(d["sigma_at_queries"]) == 15
    assert d["best_index"] == int(np.argmax(np.where(np.isin(np.arange(len(C)), ref.gp.indices), f, -np.inf)))


def test_step_cost_is_incremental():
    """The agent never refactorises: after T rounds the factor has one row per distinct query and the
    posterior equals a fresh factorisation."""
    C = grid(2, 50)
    f = rkhs_function(C, "matern-2.5", 0.2, 1.0, 1)
    ag = make_agent("gp-ucb", problem(C, "matern-2.5", 0.2, 1.0, T=150), seed=0)
    play(ag, f, 150)
    mean, var = ag.gp.mean.copy(), ag.gp.var.copy()
    assert ag.gp.refactorisations == 0
    ag.gp.refactorise()
    assert np.max(np.abs(mean - ag.gp.mean)) < 1e-8 and np.max(np.abs(var - ag.gp.var)) < 1e-10
