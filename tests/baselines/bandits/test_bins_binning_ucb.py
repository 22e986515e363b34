"""binning-ucb and binning-ucb-oracle (baselines/bandits/binning_ucb.py): known answers."""

import math

import numpy as np
import pytest
from _bin_baselines_sim import FakeOracle, batched, per_run, run_batched, run_per_run, switching, tent, uniforms

from papergym.baselines.bandits.bins import binning_bins, midpoints


def brute_index(arms, rewards, K, c, log_value):
    """UCB index from a recorded history of one run (arms, rewards of the rounds so far)."""
    counts = np.bincount(arms, minlength=K).astype(float)
    sums = np.bincount(arms, weights=rewards, minlength=K)
    with np.errstate(divide="ignore", invalid="ignore"):
        idx = sums / counts + c * np.sqrt(log_value / counts)
    idx[counts == 0] = np.inf
    return idx


@pytest.mark.parametrize("c, log_term", [(1.0, "T"), (0.5, "T"), (1.0, "t")])
def test_round_robin_then_argmax_of_index_matches_brute_force(c, log_term):
    T = 600
    ag = batched("binning-ucb", T, seeds=(0, 1, 2), c=c, log_term=log_term)
    K = ag.K
    assert K == binning_bins(T) == 4  # (600 / ln 600)^(1/3) = 4.54
    acts, arms, rews = run_batched(ag, tent(0.45), T, uniforms(T, 3))
    # the first K rounds pull bins 0..K-1 in order, at their midpoints
    np.testing.assert_array_equal(arms[:K], np.repeat(np.arange(K)[:, None], 3, axis=1))
    np.testing.assert_array_equal(acts[:K, 0, 0], midpoints(K)[:, 0])
    for run in range(3):
        for t in range(K + 1, T + 1):  # round t, history = rounds 1..t-1
            h = slice(0, t - 1)
            lg = math.log(T) if log_term == "T" else math.log(t - 1)
            idx = brute_index(arms[h, run], rews[h, run], K, c, lg)
            assert arms[t - 1, run] == int(np.argmax(idx)), (run, t)
    np.testing.assert_array_equal(acts[:, :, 0], midpoints(K)[arms, 0])


def test_stationary_clear_best_bin_gets_most_pulls():
    T = 5000
    ag = batched("binning-ucb", T, seeds=range(4), bins=4)  # midpoints .125 .375 .625 .875
    _, arms, _ = run_batched(ag, tent(0.375, 0.8), T, uniforms(T, 4, seed=7))
    share = (arms == 1).mean(axis=0)
    assert (share > 0.85).all(), share


def test_never_forgets_after_a_switch():
    # stats before the switch are kept: the old best bin keeps a large count
    T = 3000
    ag = batched("binning-ucb", T, seeds=(0,), bins=5)
    run_batched(ag, switching(1500), T, uniforms(T, 1))
    assert ag._counts.sum() == T
    # bins 0, 1 (midpoints 0.1, 0.3) were best in the first half; their counts are kept
    assert ag._counts[0, 0] + ag._counts[0, 1] > 1000


def test_d2_grid():
    T = 2000
    ag = batched("binning-ucb", T, seeds=(0, 1), d=2)
    K = binning_bins(T, 2)
    assert ag.K == K and ag.n_cells == K * K
    acts, arms, _ = run_batched(ag, tent(0.3), T, uniforms(T, 2))
    assert acts.shape == (T, 2, 2)
    np.testing.assert_array_equal(acts, midpoints(K, 2)[arms])


# ------------------------------------------------------------------------------------ oracle version
def phase_bounds(shifts, T):
    starts = (1, *shifts)
    ends = (*shifts, T + 1)
    return list(zip(starts, ends))


@pytest.mark.parametrize("log_term", ["phase", "t"])
def test_oracle_resets_at_shifts_with_phase_bins(log_term):
    T = 1000
    shifts = [(50, 120, 400), (300,), ()]
    oracles = [FakeOracle(s) for s in shifts]
    ag = batched("binning-ucb-oracle", T, seeds=(0, 1, 2), oracles=oracles, log_term=log_term)
    acts, arms, rews = run_batched(ag, switching(400), T, uniforms(T, 3))
    for run, taus in enumerate(shifts):
        for a, b in phase_bounds(taus, T):
            length = b - a
            K = binning_bins(length)
            assert K == max(1, math.floor((length / math.log(max(length, 2))) ** (1 / 3)))
            # rounds a..a+K-1: every bin of the phase once, in order (statistics were reset at a)
            np.testing.assert_array_equal(arms[a - 1 : a - 1 + K, run], np.arange(K))
            np.testing.assert_array_equal(acts[a - 1 : b - 1, run, 0], midpoints(K)[arms[a - 1 : b - 1, run], 0])
            for t in range(a + K, b):  # index from the phase's own history only
                h = slice(a - 1, t - 1)
                lg = math.log(max(length, 2)) if log_term == "phase" else math.log(max(t - a, 1))
                idx = brute_index(arms[h, run], rews[h, run], K, 1.0, lg)
                assert arms[t - 1, run] == int(np.argmax(idx)), (run, t)
    d = ag.diagnostics()
    assert d["restarts"] == [3, 1, 0]
    assert d["restart_times"] == [list(s) for s in shifts]


def test_oracle_one_round_phases():
    T = 10
    ag = batched("binning-ucb-oracle", T, seeds=(0,), oracles=[FakeOracle((2, 3, 10))])
    acts, arms, _ = run_batched(ag, tent(), T, uniforms(T, 1))
    # phases [1,2) [2,3) [3,10) [10,10]: K = 1, 1, 1 (l=7: (7/ln 7)^(1/3) = 1.5), 1
    assert (arms == 0).all() and np.allclose(acts, 0.5)


def test_oracle_bad_shifts_rejected():
    with pytest.raises(ValueError, match="significant_shifts"):
        batched("binning-ucb-oracle", 100, seeds=(0,), oracles=[FakeOracle((50, 20))])
    with pytest.raises(ValueError, match="significant_shifts"):
        batched("binning-ucb-oracle", 100, seeds=(0,), oracles=[FakeOracle((1, 20))])
    with pytest.raises(ValueError, match="one oracle per run"):
        batched("binning-ucb-oracle", 100, seeds=(0, 1), oracles=[FakeOracle(())])


def test_oracle_per_run_equals_batched_with_different_phases():
    T = 400
    shifts = [(30, 200), (150,), ()]
    oracles = [FakeOracle(s) for s in shifts]
    U = uniforms(T, 3)
    acts, _, _ = run_batched(batched("binning-ucb-oracle", T, seeds=(0, 1, 2), oracles=oracles), switching(200), T, U)
    for run, s in enumerate((0, 1, 2)):
        single = run_per_run(
            per_run("binning-ucb-oracle", T, s, oracle=FakeOracle(shifts[run])), switching(200), T, U[:, run]
        )
        np.testing.assert_array_equal(single, acts[:, run])


def test_bad_hyperparameters():
    with pytest.raises(ValueError, match="log_term"):
        batched("binning-ucb", 100, log_term="phase")
    with pytest.raises(ValueError, match="bins"):
        batched("binning-ucb", 100, bins=0)
    with pytest.raises(ValueError, match="c must"):
        batched("binning-ucb", 100, c=-1.0)
    with pytest.raises(ValueError, match="log_term"):
        batched("binning-ucb-oracle", 100, seeds=(0,), oracles=[FakeOracle(())], log_term="T")
