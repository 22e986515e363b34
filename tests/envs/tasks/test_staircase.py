"""FeatureStaircase-v0 numerics: the empirical staircase of synthetic curves with known drops, of simulated
gradient descent on a diagonal net (where AGF predicts it), and the score's terms on known cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.agents.solvers.agf import agf_diagonal
from papergym.envs.tasks.staircase import extract_staircase, gd_diagonal_losses, score_staircase


def _curve(levels, times, T, width=0.05):
    """A staircase in log-loss with logistic drops of relative width ``width`` centred at ``times``."""
    t = np.arange(T + 1, dtype=float)
    logL = np.full(T + 1, math.log(levels[0]))
    for (a, b), tc in zip(zip(levels[:-1], levels[1:]), times):
        z = (np.log(np.maximum(t, 1)) - math.log(tc)) / width
        logL += (math.log(b) - math.log(a)) / (1 + np.exp(-z))
    return np.exp(logL)


def test_synthetic_staircase_is_recovered():
    levels, times = [100.0, 10.0, 1.0, 0.05], [1_000, 6_000, 40_000]
    emp = extract_staircase(_curve(levels, times, 200_000))
    assert emp[0][0] == 0 and emp[0][1] == pytest.approx(100.0, rel=1e-3)
    assert len(emp) == 4
    for (tk, lk, _), t, lev in zip(emp[1:], times, levels[1:]):
        assert tk == pytest.approx(t, rel=0.02) and lk == pytest.approx(lev, rel=1e-2)


def test_floor_hides_round_off_and_features_are_attributed():
    L = _curve([1.0, 1e-3, 1e-12], [500, 4_000], 20_000)
    emp = extract_staircase(L)
    assert len(emp) == 3 and emp[-1][1] == pytest.approx(1e-6)  # the last level is the floor
    feats = np.zeros((L.size, 3))
    feats[600:, 2] = 1.0
    feats[5_000:, 0] = 2.0
    assert [e[2] for e in extract_staircase(L, feats)[1:]] == [2, 0]
    with pytest.raises(ValueError, match="losses"):
        extract_staircase([1.0])


def test_gradient_descent_staircase_and_agf_score():
    rng = np.random.default_rng(10)
    X = rng.standard_normal((20, 5)) * np.arange(1, 6) ** -0.5
    y = X @ (10 * rng.standard_normal(5))
    steps = agf_diagonal(X, y, 1e-8, lr=1e-3)
    T = int(1.3 * steps[-1].t)
    L = gd_diagonal_losses(X, y, 1e-8, 1e-3, T)
    emp = extract_staircase(L)
    assert len(emp) - 1 == len(steps)  # every AGF drop is a plateau of GD, and no other
    sc = score_staircase([tuple(s) for s in steps], emp[1:], T, L[0])
    assert sc["count_error"] == 0 and sc["time_error"] < 0.1 and sc["level_error"] < 0.2
    one = score_staircase([(steps[0].t, steps[-1].level, 0)], emp[1:], T, L[0])
    assert one["staircase_error"] > sc["staircase_error"] + 0.5  # a single jump scores far worse


def test_score_terms():
    emp = [(100, 10.0, 0), (1_000, 1.0, 1), (10_000, 0.1, 2)]
    perfect = score_staircase(emp, emp, 1e5, 100.0)
    assert perfect["staircase_error"] == pytest.approx(0.0, abs=1e-12)
    rev = score_staircase([(100, 10.0, 2), (1_000, 1.0, 1), (10_000, 0.1, 0)], emp, 1e5, 100.0)
    assert rev["order_error"] == pytest.approx(1.0) and rev["time_error"] == pytest.approx(0.0, abs=1e-12)
    late = score_staircase([(200, 10.0, 0), (2_000, 1.0, 1), (20_000, 0.1, 2), (2e5, 0.01, 3)], emp, 1e5, 100.0)
    assert late["time_error"] == pytest.approx(math.log(2)) and late["count_error"] == 0.0  # beyond horizon
    extra = score_staircase(emp + [(50_000, 0.09, 3)], emp, 1e5, 100.0)
    assert extra["count_error"] == pytest.approx(1 / 3)
    none = score_staircase([(5e5, 1.0)], emp, 1e5, 100.0)  # all after the horizon: (horizon, l0)
    assert none["count_error"] == pytest.approx(2 / 3) and none["time_error"] > 0
    assert score_staircase(emp, [], 1e5, 100.0)["staircase_error"] == 3.0
    for bad, word in (
        ([], "at least one"),
        ([(0, 1.0)], "t must be"),
        ([(5, 1.0), (3, 0.5)], "non-decreasing"),
        ([(5,)], "expected"),
    ):
        with pytest.raises(ValueError, match=word):
            score_staircase(bad, emp, 1e5, 100.0)


def test_diagonal_instance_and_vectorised_ground_truth():
    from papergym.envs.tasks.staircase import diagonal_instance, gd_diagonal

    X, y, b = diagonal_instance(5, 20, 1.0, 3)
    X2, y2, _ = diagonal_instance(5, 20, 1.0, 3)
    assert X.shape == (20, 5) and np.array_equal(X, X2) and np.array_equal(y, y2)
    np.testing.assert_allclose(y, X @ b)
    assert not np.array_equal(X, diagonal_instance(5, 20, 1.0, 4)[0])
    alphas = [1e-2, 1e-8]
    L, M = gd_diagonal(X, y, alphas, 1e-3, 3_000)
    assert L.shape == (2, 3_001) and M.shape == (2, 3_001, 5)
    for k, a in enumerate(alphas):  # against a plain per-alpha loop
        u, v = np.full(5, np.sqrt(2) * a), np.zeros(5)
        for it in range(3_001):
            r = y - X @ (u * v)
            assert L[k, it] == pytest.approx(0.5 * r @ r / 20, rel=1e-12)
            np.testing.assert_allclose(M[k, it], np.abs(u * v).astype(np.float32), rtol=1e-6)
            g = X.T @ r / 20
            u, v = u + 1e-3 * g * v, v + 1e-3 * g * u
    with pytest.raises(ValueError, match="d and n"):
        diagonal_instance(0, 20, 1.0, 0)


def test_ground_truth_features_follow_agf():
    from papergym.envs.tasks.staircase import diagonal_instance, gd_diagonal

    X, y, _ = diagonal_instance(4, 16, 1.0, 1)
    steps = agf_diagonal(X, y, 1e-8, lr=1e-3)
    T = int(1.3 * steps[-1].t)
    L, M = gd_diagonal(X, y, [1e-8], 1e-3, T)
    emp = extract_staircase(L[0], M[0])[1:]
    assert len(emp) == len(steps)
    assert [e[2] for e in emp] == [s.feature for s in steps]  # the activating coordinate of each drop
    sc = score_staircase([tuple(s) for s in steps], emp, T, L[0, 0])
    assert sc["order_error"] == 0.0 and sc["staircase_error"] < 0.3
