"""sw-ucb and d-ucb (baselines/bandits/sliding.py): known answers."""

import math

import numpy as np
import pytest
from _bin_baselines_sim import batched, problem, run_batched, switching, tent, uniforms

from papergym.baselines.bandits.bins import midpoints, sliding_bins
from papergym.baselines.bandits.sliding import BatchedDUCB, BatchedSWUCB, d_discount, sw_window


def test_formulas():
    T = 2**15
    assert sw_window(T, 10) == math.ceil(2 * math.sqrt(T * math.log(T) / 10)) == 370
    assert sw_window(10, 1e-6) == 10  # capped to T
    assert d_discount(T, 10) == 1 - 0.25 * math.sqrt(10 / T)
    ag = batched("sw-ucb", T, seeds=(0,))
    assert ag.K == sliding_bins(T) == 32 and ag.tau == 370
    assert batched("d-ucb", T, seeds=(0,)).gamma == d_discount(T, 10)


def test_sw_ucb_window_counts_and_index_match_brute_force():
    T, tau, K, xi = 400, 25, 8, 0.6
    ag = BatchedSWUCB(problem(T), seeds=[0, 1], bins=K, window=tau, xi=xi)
    U = uniforms(T, 2)
    mu = switching(200)
    obs = np.zeros((2, 1))
    arms, rews = [], []
    for t in range(1, T + 1):
        a = ag.act(obs)
        arm = ag._arm.copy()
        if t <= K:
            assert (arm == t - 1).all()  # every bin once, in order
        else:
            lo = max(0, t - 1 - tau)  # window: rounds max(1, t - tau) .. t - 1
            for run in range(2):
                h_a = np.array(arms)[lo:, run]
                h_r = np.array(rews)[lo:, run]
                cnt = np.bincount(h_a, minlength=K).astype(float)
                s = np.bincount(h_a, weights=h_r, minlength=K)
                with np.errstate(divide="ignore", invalid="ignore"):
                    idx = s / cnt + np.sqrt(xi * math.log(min(t, tau)) / cnt)
                idx[cnt == 0] = np.inf
                assert arm[run] == int(np.argmax(idx)), (t, run)
        np.testing.assert_array_equal(a[:, 0], midpoints(K)[arm, 0])
        r = (U[t - 1] < mu(a, t)).astype(float)
        ag.update(a, r, obs)
        arms.append(arm)
        rews.append(r)
        # N_t(i) = pulls of i in the last tau rounds (brute force)
        lo = max(0, t - tau)
        for run in range(2):
            h = np.array(arms)[lo:, run]
            np.testing.assert_array_equal(ag.window_counts()[run], np.bincount(h, minlength=K))
            s = np.bincount(h, weights=np.array(rews)[lo:, run], minlength=K)
            np.testing.assert_allclose(ag._sums[run], s, atol=1e-9)


def test_sw_ucb_tracks_a_switch():
    T = 4000
    ag = batched("sw-ucb", T, seeds=range(3), bins=5, window=300)
    _, arms, _ = run_batched(ag, switching(2000), T, uniforms(T, 3))
    # after the switch the bins of 0.8 (midpoints 0.7, 0.9) take over within a few windows
    late = arms[3000:]
    assert ((late == 3) | (late == 4)).mean() > 0.7


def test_d_ucb_discounted_counts_closed_form_and_index():
    T, K, xi = 300, 6, 0.6
    gamma = 0.97
    ag = BatchedDUCB(problem(T), seeds=[0, 1, 2], bins=K, gamma=gamma, xi=xi)
    U = uniforms(T, 3)
    mu = tent(0.55)
    obs = np.zeros((3, 1))
    arms, rews = [], []
    for t in range(1, T + 1):
        a = ag.act(obs)
        arm = ag._arm.copy()
        if t <= K:
            assert (arm == t - 1).all()
        else:
            w = gamma ** (t - 1 - np.arange(1, t))  # gamma^{t-1-s}, s = 1 .. t-1
            A, R = np.array(arms), np.array(rews)
            for run in range(3):
                N = np.bincount(A[:, run], weights=w, minlength=K)
                S = np.bincount(A[:, run], weights=w * R[:, run], minlength=K)
                idx = S / N + 2 * np.sqrt(xi * math.log(N.sum()) / N)
                top2 = np.sort(idx)[-2:]
                if top2[1] - top2[0] > 1e-9:  # not a numerical tie
                    assert arm[run] == int(np.argmax(idx)), (t, run)
        r = (U[t - 1] < mu(a, t)).astype(float)
        ag.update(a, r, obs)
        arms.append(arm)
        rews.append(r)
        # N_t(i) = sum_{s <= t} gamma^{t-s} 1{I_s = i}
        w = gamma ** (t - np.arange(1, t + 1))
        A = np.array(arms)
        for run in range(3):
            np.testing.assert_allclose(
                ag.discounted_counts()[run], np.bincount(A[:, run], weights=w, minlength=K), rtol=1e-12
            )
        assert math.isclose(ag._n_total, (1 - gamma**t) / (1 - gamma), rel_tol=1e-12)


def test_bad_hyperparameters():
    with pytest.raises(ValueError, match="window"):
        batched("sw-ucb", 100, window=0)
    with pytest.raises(ValueError, match="L_hint"):
        batched("sw-ucb", 100, L_hint=0)
    with pytest.raises(ValueError, match="xi"):
        batched("d-ucb", 100, xi=-1)
    with pytest.raises(ValueError, match="gamma"):
        batched("d-ucb", 100, gamma=1.5)
