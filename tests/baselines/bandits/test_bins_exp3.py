"""exp3s and rexp3 (baselines/bandits/exp3.py): known answers."""

import math

import numpy as np
import pytest
from _bin_baselines_sim import batched, problem, switching, tent, uniforms

from papergym.baselines.bandits.bins import midpoints, sliding_bins
from papergym.baselines.bandits.exp3 import BatchedExp3S, BatchedRexp3, exp3s_gamma, rexp3_delta, rexp3_gamma
from papergym.envs.spec import agent_seed


def test_formulas():
    T = 2**15
    K = sliding_bins(T)
    g = exp3s_gamma(K, T, 10)
    assert g == min(1.0, math.sqrt(K * (10 * math.log(K * T) + math.e) / ((math.e - 1) * T)))
    assert 0.28 < g < 0.29
    ag = batched("exp3s", T, seeds=(0,))
    assert ag.K == 32 and ag.alpha == 1 / T and ag.gamma == g
    D = rexp3_delta(K, T, 1.0)
    assert D == math.ceil((K * math.log(K)) ** (1 / 3) * T ** (2 / 3))
    rx = batched("rexp3", T, seeds=(0,))
    assert rx.delta == D and rx.gamma == rexp3_gamma(K, D) == min(1, math.sqrt(K * math.log(K) / ((math.e - 1) * D)))


def play(agent, mu, T, U):
    """Returns arms (T, n), rewards (T, n), probabilities (T, n, K), the agent's uniforms (T, n)."""
    n = agent.n_envs
    obs = np.zeros((n, 1))
    arms, rews, probs = [], [], []
    for t in range(1, T + 1):
        a = agent.act(obs)
        probs.append(agent.last_probabilities())
        arms.append(agent._arm.copy())
        np.testing.assert_array_equal(a[:, 0], midpoints(agent.K)[agent._arm, 0])
        r = (U[t - 1] < mu(a, t)).astype(float)
        rews.append(r)
        agent.update(a, r, obs)
    return np.array(arms), np.array(rews), np.array(probs)


def check_draws(arms, probs, seeds):
    """Arm t of run i = inverse CDF of p(t) at the t-th uniform of default_rng(agent seed i)."""
    T = arms.shape[0]
    for i, s in enumerate(seeds):
        u = np.random.default_rng(agent_seed(s)).random(T)
        for t in range(T):
            cum = np.cumsum(probs[t, i])
            expect = int(np.argmax(cum > u[t])) if cum[-1] > u[t] else len(cum) - 1
            assert arms[t, i] == expect


def brute_exp3_probs(arms, rews, K, gamma, alpha, restart_every=None):
    """Unnormalised weights straight from Auer et al. (3), plain Python floats; p(t) for every t."""
    out = []
    w = [1.0] * K
    for t in range(len(arms)):
        if restart_every and t > 0 and t % restart_every == 0:
            w = [1.0] * K
        W = sum(w)
        p = [(1 - gamma) * wi / W + gamma / K for wi in w]
        out.append(p)
        i = int(arms[t])
        xhat = [0.0] * K
        xhat[i] = rews[t] / p[i]
        w = [w[j] * math.exp(gamma * xhat[j] / K) + math.e * alpha / K * W for j in range(K)]
    return np.array(out)


def test_exp3s_probabilities_match_brute_force_weights():
    T, K = 250, 6
    seeds = [0, 1, 2]
    ag = BatchedExp3S(problem(T), seeds=[agent_seed(s) for s in seeds], bins=K, L_hint=3)
    arms, rews, probs = play(ag, tent(0.6), T, uniforms(T, 3))
    np.testing.assert_allclose(probs.sum(axis=2), 1.0, rtol=0, atol=1e-12)
    assert (probs >= ag.gamma / K - 1e-15).all()
    for i in range(3):
        bf = brute_exp3_probs(arms[:, i], rews[:, i], K, ag.gamma, ag.alpha)
        np.testing.assert_allclose(probs[:, i], bf, rtol=1e-9)
    check_draws(arms, probs, seeds)


def test_rexp3_restarts_every_delta():
    T, K, D = 260, 5, 60
    seeds = [3, 4]
    ag = BatchedRexp3(problem(T), seeds=[agent_seed(s) for s in seeds], bins=K, delta=D)
    assert ag.gamma == rexp3_gamma(K, D)
    arms, rews, probs = play(ag, switching(130), T, uniforms(T, 2))
    np.testing.assert_allclose(probs.sum(axis=2), 1.0, rtol=0, atol=1e-12)
    for t in (0, D, 2 * D, 3 * D, 4 * D):  # rounds 1, D+1, 2D+1, ...: uniform again
        np.testing.assert_allclose(probs[t], 1.0 / K, rtol=1e-14)
    assert not np.allclose(probs[D - 1], 1.0 / K)  # it did learn within the block
    for i in range(2):
        bf = brute_exp3_probs(arms[:, i], rews[:, i], K, ag.gamma, 0.0, restart_every=D)
        np.testing.assert_allclose(probs[:, i], bf, rtol=1e-9)
    check_draws(arms, probs, seeds)
    assert ag.diagnostics()["restarts"] == [4, 4]


def test_exp3s_concentrates_on_stationary_best_bin():
    T = 6000
    ag = batched("exp3s", T, seeds=range(3), bins=4, L_hint=1)
    n = ag.n_envs
    _, _, probs = play(ag, tent(0.375, 0.9), T, uniforms(T, n))
    assert (probs[-1, :, 1] > 0.6).all()


def test_bad_hyperparameters():
    with pytest.raises(ValueError, match="gamma"):
        batched("exp3s", 100, gamma=0.0)
    with pytest.raises(ValueError, match="gamma"):
        batched("rexp3", 100, gamma=2.0)
    with pytest.raises(ValueError, match="delta"):
        batched("rexp3", 100, delta=0)
    with pytest.raises(ValueError, match="V_hint"):
        batched("rexp3", 100, V_hint=-1)
