"""FeatureStaircase-v0 baselines (diagonal track): closed forms on an orthogonal design, where AGF, the
memoryless rule and independent modes coincide; their differences on a correlated design, scored against
simulated gradient descent (AGF best); one-jump and the alpha -> 0 limit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.agents.solvers.agf import activation_phase, agf_diagonal
from papergym.baselines.solvers.staircase import greedy_memoryless, independent_modes, one_jump, pesme_flammarion
from papergym.envs.tasks.staircase import extract_staircase, gd_diagonal_losses, score_staircase


def _orthogonal():
    n, d = 8, 4
    Q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((n, n)))
    lam = np.array([3.0, 0.5, 2.0, 1.0])
    return Q[:, :d] * np.sqrt(n * lam), lam, np.array([1.0, -4.0, -0.7, 2.5])


def test_orthogonal_design_all_rules_agree_with_agf():
    X, lam, b = _orthogonal()
    y = X @ b
    ref = agf_diagonal(X, y, 1e-6)
    for rule in (greedy_memoryless, independent_modes):
        got = rule(X, y, 1e-6)
        assert [s.feature for s in got] == [s.feature for s in ref]
        np.testing.assert_allclose([s.level for s in got], [s.level for s in ref], rtol=1e-8, atol=1e-12)
    # independent modes: each coordinate's own clock, as AGF on decoupled coordinates
    np.testing.assert_allclose([s.t for s in independent_modes(X, y, 1e-6)], [s.t for s in ref], rtol=1e-10)
    # memoryless restarts every clock: its times are cumulative sums of S/(2|g|), later than AGF's
    gm = greedy_memoryless(X, y, 1e-6)
    assert gm[0].t == pytest.approx(ref[0].t) and all(a.t > r.t for a, r in zip(gm[1:], ref[1:]))


def test_one_jump_and_alpha_limit():
    X, lam, b = _orthogonal()
    y = X @ b
    (s,) = one_jump(X, y, 1e-3)
    g0 = np.abs(lam * b)
    assert s.t == pytest.approx(activation_phase(1e-3) / (2 * g0.max())) and s.level == pytest.approx(0, abs=1e-20)
    pf, agf = pesme_flammarion(X, y, 1e-3), agf_diagonal(X, y, 1e-3)
    ratio = 2 * math.log(1e3) / activation_phase(1e-3)
    np.testing.assert_allclose([a.t for a in pf], [r.t * ratio for r in agf], rtol=1e-10)
    with pytest.raises(ValueError, match="alpha"):
        pesme_flammarion(X, y, 0.8)


def test_agf_scores_best_against_gradient_descent():
    rng = np.random.default_rng(10)
    X = rng.standard_normal((20, 5)) * np.arange(1, 6) ** -0.5
    y = X @ (10 * rng.standard_normal(5))
    alpha, lr = 1e-4, 1e-3
    agf = agf_diagonal(X, y, alpha, lr=lr)
    T = int(1.4 * agf[-1].t)
    L = gd_diagonal_losses(X, y, alpha, lr, T)
    emp = extract_staircase(L)[1:]
    scores = {
        name: score_staircase([tuple(s) for s in f(X, y, alpha, lr=lr)], emp, T, L[0])["staircase_error"]
        for name, f in (
            ("agf", agf_diagonal),
            ("pesme-flammarion", pesme_flammarion),
            ("greedy-memoryless", greedy_memoryless),
            ("independent-modes", independent_modes),
            ("one-jump", one_jump),
        )
    }
    # AGF and its alpha -> 0 limit coincide here (S and 2 log(1/alpha) differ by O(alpha^4)); both beat the
    # rules without memory or without re-fitting, and the single jump
    assert scores["pesme-flammarion"] == pytest.approx(scores["agf"], abs=1e-6)
    assert scores["agf"] < min(scores["greedy-memoryless"], scores["independent-modes"]) - 0.2, scores
    assert scores["one-jump"] > 1.0
