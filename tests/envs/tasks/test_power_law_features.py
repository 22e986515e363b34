"""PowerLawRandomFeatures-v0 and its solvers (DANA, SGD, SGD-M): exact risk, unbiased oracle, common random
numbers, budget, the template's special cases, and the bench command end to end."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.agents.base import list_solvers, make_solver
from papergym.envs.tasks.base import BudgetExceeded, make_task
from papergym.envs.tasks.power_law_features import (
    GradientOracle,
    PLRFModel,
    checkpoints,
    population_trace,
)

TASK = "PowerLawRandomFeatures-v0"
SOLVERS = ("dana-decaying", "dana-constant", "sgd", "sgd-momentum")


def _small(**kw):
    args = {"alpha": 1.0, "beta": 0.7, "d": 40, "steps": 3000, "seeds": [0]}
    args.update(kw)
    return make_task(TASK, **args)


def _solve(task, name, ref=None, **hp):
    ref = ref or task.instances()[0]
    problem, ev = task.make(ref)
    pts = []

    def report(th, iteration=None, work=None):
        pts.append((iteration, np.array(th)))
        ev.evaluate(th)  # what the bench's report does: score the iterate (and record it for the slope)

    theta = make_solver(name, TASK, seed=0, **hp).solve(problem, task.default_budget, report)
    return theta, pts, ev


def test_registered_solvers():
    names = {s.name: s.role for s in list_solvers(TASK)}
    assert names == {"dana-decaying": "paper", "dana-constant": "paper", "sgd": "baseline", "sgd-momentum": "baseline"}


def test_exact_risk_matches_monte_carlo():
    m = PLRFModel(0.7, 0.7, d=30, v=120, seed=3)
    rng = np.random.default_rng(0)
    theta = rng.normal(size=30) * 0.3
    Z = rng.standard_normal((200_000, 120))
    losses = 0.5 * (Z @ (m.W @ theta) - Z @ m.b) ** 2
    se = losses.std() / np.sqrt(len(losses))
    assert abs(losses.mean() - m.risk(theta)) < 4 * se


def test_limit_loss_is_the_least_squares_minimum():
    m = PLRFModel(1.0, 0.3, d=20, v=80, seed=1)
    grad = m.W.T @ (m.W @ m.theta_star - m.b)
    assert np.abs(grad).max() < 1e-12
    rng = np.random.default_rng(1)
    for _ in range(10):
        assert m.risk(m.theta_star + 0.1 * rng.normal(size=20)) > m.P_inf
    assert m.P0 == pytest.approx(m.risk(np.zeros(20)))


def test_trace_is_the_expected_feature_norm():
    """T_r = sum_j j^(-2 alpha) = E ||phi||^2 (over W); one instance is within sampling error."""
    a, v, d = 0.7, 800, 200
    trs = [np.trace(PLRFModel(a, 0.7, d, v, seed=s).W.T @ PLRFModel(a, 0.7, d, v, seed=s).W) for s in range(4)]
    assert np.mean(trs) == pytest.approx(population_trace(a, v), rel=0.05)


def test_oracle_is_unbiased_and_uses_common_random_numbers():
    m = PLRFModel(1.0, 0.7, d=10, v=40, seed=2)
    theta = np.linspace(-0.2, 0.3, 10)
    o1, o2 = GradientOracle(m, 1, 2, None), GradientOracle(m, 1, 2, None)
    g1 = np.array([o1.grad(theta) for _ in range(40_000)])
    g2 = np.array([o2.grad(theta) for _ in range(40_000)])
    np.testing.assert_array_equal(g1, g2)  # same seed, same calls -> same samples
    pop = m.W.T @ (m.W @ theta - m.b)
    se = g1.std(axis=0) / np.sqrt(len(g1))
    assert np.all(np.abs(g1.mean(axis=0) - pop) < 5 * se + 1e-12)
    # batch B is the mean of B consecutive single-sample gradients
    ob = GradientOracle(m, 4, 2, None)
    np.testing.assert_allclose(ob.grad(theta), g1[:4].mean(axis=0), rtol=1e-12)
    assert o1.count == 40_000 and ob.count == 4


def test_oracle_budget_and_bad_input():
    m = PLRFModel(1.0, 0.7, d=5, v=20, seed=0)
    o = GradientOracle(m, 2, 0, max_samples=6)
    for _ in range(3):
        o.grad(np.zeros(5))
    with pytest.raises(BudgetExceeded):
        o.grad(np.zeros(5))
    with pytest.raises(ValueError, match="shape"):
        GradientOracle(m, 1, 0, None).grad(np.zeros(4))


def test_dana_with_zero_gamma3_is_sgd_sample_for_sample():
    task = _small()
    t_sgd, p_sgd, _ = _solve(task, "sgd", c2=0.5)
    t_dana, p_dana, _ = _solve(task, "dana-decaying", c2=0.5, c3=0.0)
    np.testing.assert_array_equal(t_sgd, t_dana)
    assert [i for i, _ in p_sgd] == [i for i, _ in p_dana] == list(checkpoints(3000))
    for (_, a), (_, b) in zip(p_sgd, p_dana):
        np.testing.assert_array_equal(a, b)


def test_template_updates_match_their_definition():
    """Two steps of dana-constant by hand from the same samples."""
    task = _small(steps=2, d=8)
    ref = task.instances()[0]
    problem, _ = task.make(ref)
    m = PLRFModel(1.0, 0.7, 8, 32, ref.seed)
    o = GradientOracle(m, 1, ref.seed, None)
    Tr = population_trace(1.0, 32)
    g2, g3, dl = 0.5 / Tr, 0.1 * (1 / 8) * min(1.0, 1 / Tr), 4 + 1.7
    th, y = np.zeros(8), np.zeros(8)
    for t in range(2):
        g = o.grad(th)
        y = (1 - 1 / (1 + t / dl)) * y + g
        th = th - g2 * g - g3 * y
    got = make_solver("dana-constant", TASK).solve(problem, task.default_budget, lambda *a, **k: None)
    np.testing.assert_allclose(got, th, rtol=1e-13, atol=1e-16)


def test_sgd_momentum_tracks_sgd_with_the_effective_step():
    """Heavy ball with momentum b and step eta(1-b) has the loss exponent of SGD with step eta."""
    task = make_task(TASK, alpha=1.0, beta=0.7, d=60, steps=20_000, seeds=[0, 1, 2])
    slopes = {"sgd": [], "sgd-momentum": []}
    for ref in task.instances():
        for name in slopes:
            problem, ev = task.make(ref)
            make_solver(name, TASK).solve(problem, task.default_budget, lambda th, **k: ev.evaluate(th))
            slopes[name].append(ev.slope())
    assert abs(np.median(slopes["sgd"]) - np.median(slopes["sgd-momentum"])) < 0.15
    assert np.median(slopes["sgd"]) < -0.3  # the loss does decay as a power law


@pytest.mark.parametrize("name", SOLVERS)
def test_every_solver_decreases_the_risk_and_reports_at_checkpoints(name):
    task = _small()
    theta, pts, ev = _solve(task, name)
    m = ev.evaluate(theta)
    assert m["diverged"] == 0 and m["excess_ratio"] < 0.05 and m["step"] == 3000
    assert [i for i, _ in pts] == list(checkpoints(3000))
    assert np.isfinite(m["slope"])


def test_evaluator_scores_divergence_and_rejects_malformed_solutions():
    task = _small()
    problem, ev = task.make(task.instances()[0])
    assert ev.evaluate(np.full(40, 1e6))["diverged"] == 1.0
    bad = ev.evaluate(np.full(40, np.nan))
    assert bad["diverged"] == 1.0 and bad["excess_ratio"] == 1.0
    assert ev.evaluate({"theta": np.zeros(40)})["excess_ratio"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="shape"):
        ev.evaluate(np.zeros(3))
    with pytest.raises(ValueError, match="theta"):
        ev.evaluate({"w": np.zeros(40)})


def test_public_problem_hides_the_features():
    from papergym.leaderboard.board.evaluate import public_problem

    task = _small()
    problem, _ = task.make(task.instances()[0])
    data, calls = public_problem(problem)
    assert set(calls) == {"oracle.grad"}
    assert {"alpha", "beta", "d", "v", "batch", "steps", "trace", "theta0", "checkpoints"} <= set(data)
    flat = repr(data)
    assert "W" not in data and "b" not in data and len(flat) < 20_000


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"alpha": 0.2}, "alpha"),
        ({"d": 1}, "d must"),
        ({"steps": 0}, "steps"),
        ({"beta": -1}, "beta"),
        ({"seeds": [-1]}, "seeds"),
    ],
)
def test_bad_task_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        make_task(TASK, **kw)


def test_instances_and_test_split(monkeypatch):
    task = make_task(TASK, d=[50, 100], seeds=[0, 1])
    names = [r.name for r in task.instances()]
    assert len(names) == 4 * 2 * 2 and names[0] == "a=0.3,b=0.7/d=50/s0"
    monkeypatch.setenv("PAPERGYM_TEST_SECRET", "s3cret")
    test = task.instances("test")
    assert len(test) == 4 * 2 * 5 and all(r.seed not in (0, 1) for r in test)


def test_bench_end_to_end(tmp_path):
    from papergym.leaderboard import bench

    res = bench(
        TASK,
        solvers=list(SOLVERS),
        task_kwargs={"alpha": 1.0, "beta": 0.7, "d": 30, "steps": 2000, "seeds": [0]},
        backend="serial",
        out=tmp_path / "cells",
    )
    assert (res.runs.status == "ok").all()
    folder = res.save(tmp_path / "out")
    assert (folder / "loss_vs_steps.png").exists()
    assert "ratio = slope / sgd's slope" in res.extra_report()
