"""SimpleBilevel-v0 and its solvers: the stationarity measure against brute force, the known answers of the
generators (nuclear norm, A⁺b, x* = −c), exact gradients, the oracle's accounting and checks, the DBGD step rule,
and DBGD reaching the known optima."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.agents.base import list_solvers, make_solver
from papergym.agents.solvers.dbgd import dbgd_direction
from papergym.envs.tasks.base import Budget, BudgetExceeded, MissingSecretError, make_task
from papergym.envs.tasks.simple_bilevel.task import (
    CircleInstance,
    FactorisationInstance,
    NetworkInstance,
    RegressionInstance,
    SimpleBilevelOracle,
    stationarity,
)

TASK = "SimpleBilevel-v0"
SOLVERS = ("dbgd", "penalty", "a-irg", "dbgd-original", "two-phase")


def _make(instance, **kw):
    args = {"instance": instance, "seeds": [0]}
    args.update(kw)
    task = make_task(TASK, **args)
    return task, task.instances()


def _solve(task, ref, name, budget=None, **hp):
    problem, ev = task.make(ref)
    pts = []

    def report(x, iteration=None, work=None):
        pts.append((iteration, work, np.array(x)))
        ev.evaluate(x)

    sol = make_solver(name, TASK, **hp).solve(problem, budget or task.default_budget, report)
    return np.asarray(sol), ev.evaluate(sol), pts, problem, ev


def test_registered_solvers():
    roles = {s.name: s.role for s in list_solvers(TASK)}
    assert roles == {
        "dbgd": "paper",
        "penalty": "baseline",
        "a-irg": "baseline",
        "dbgd-original": "baseline",
        "two-phase": "baseline",
    }


# ------------------------------------------------------------------------------------------ stationarity
def test_stationarity_matches_brute_force_minimisation_over_lambda():
    rng = np.random.default_rng(0)
    cases = [(rng.normal(size=6), rng.normal(size=6)) for _ in range(30)]
    gf = rng.normal(size=6)
    cases += [(gf, -2.5 * gf), (gf, 3.0 * gf), (gf, np.zeros(6)), (np.zeros(6), gf)]
    lams = np.concatenate([[0.0], np.geomspace(1e-6, 1e6, 20001)])
    for gf, gg in cases:
        r_f, r_g, lam = stationarity(gf, gg)
        brute = np.linalg.norm(gf[None] + lams[:, None] * gg[None], axis=1)
        assert r_g == pytest.approx(np.linalg.norm(gg))
        assert r_f <= brute.min() + 1e-12
        assert r_f >= brute.min() - 1e-3 * max(1.0, brute.min())  # the grid's resolution
        assert lam >= 0 and np.linalg.norm(gf + lam * gg) == pytest.approx(r_f, abs=1e-12)
    assert stationarity(gf, np.zeros(6))[0] == pytest.approx(np.linalg.norm(gf))  # ∇g = 0: λ̂ = 0
    assert stationarity(gf, -gf)[0] == pytest.approx(0.0, abs=1e-12)
    assert stationarity(np.array([np.nan, 0.0]), np.ones(2))[:2] == (math.inf, math.inf)


# ---------------------------------------------------------------------------------------- known answers
@pytest.mark.parametrize("r", [5, 8])
def test_balanced_factors_attain_the_nuclear_norm(r):
    inst = FactorisationInstance(30, r, seed=3)
    nuc = np.linalg.norm(inst.M, "nuc")
    assert inst.f_star == pytest.approx(nuc, rel=1e-12) and nuc == pytest.approx(15.0)
    root = np.sqrt(inst.sigma)
    U = np.zeros((30, r))
    V = np.zeros((30, r))
    U[:, :5], V[:, :5] = inst.P * root, inst.Q * root
    x = np.concatenate([U.ravel(), V.ravel()])
    assert inst.g(x) == pytest.approx(0.0, abs=1e-24)
    assert inst.f(x) == pytest.approx(nuc, rel=1e-12)
    # any other exact factorisation U R, V R^{-T} is feasible and costs at least the nuclear norm
    rng = np.random.default_rng(1)
    for _ in range(5):
        R = np.eye(r) + 0.3 * rng.normal(size=(r, r))
        y = np.concatenate([(U @ R).ravel(), (V @ np.linalg.inv(R).T).ravel()])
        assert inst.g(y) < 1e-20
        assert inst.f(y) >= nuc - 1e-10


def test_min_norm_regression_solution_is_pinv_and_satisfies_kkt():
    inst = RegressionInstance(40, 100, seed=2)
    A, b, xs = inst.A, inst.b, inst.x_star
    np.testing.assert_allclose(A @ xs, b, atol=1e-10)  # feasible: g(x*) = 0
    w = np.linalg.lstsq(A.T, xs, rcond=None)[0]
    np.testing.assert_allclose(A.T @ w, xs, atol=1e-10)  # ∇f(x*) = x* ∈ range(Aᵀ): KKT
    null = np.linalg.svd(A)[2][40:]
    assert np.abs(null @ xs).max() < 1e-10
    rng = np.random.default_rng(0)
    for _ in range(5):
        y = xs + null.T @ rng.normal(size=60)
        assert inst.g(y) < 1e-20 and inst.f(y) > inst.f(xs)
    assert inst.f_star == pytest.approx(0.5 * xs @ xs)


def test_circle_answer():
    inst = CircleInstance(10, seed=4)
    assert np.linalg.norm(inst.c) == pytest.approx(1.0)
    assert inst.g(inst.x_star) == pytest.approx(0.0, abs=1e-28) and inst.f(inst.x_star) == pytest.approx(-1.0)


@pytest.mark.parametrize(
    "inst",
    [CircleInstance(5, 0), FactorisationInstance(8, 6, 1), NetworkInstance(7, 3, 6, 2, 2), RegressionInstance(5, 9, 3)],
    ids=lambda i: i.family,
)
def test_gradients_equal_finite_differences(inst):
    rng = np.random.default_rng(7)
    x = inst.x0 + 0.3 * rng.normal(size=inst.dim)
    h = 1e-6
    E = np.eye(inst.dim) * h
    fd_f = np.array([(inst.f(x + e) - inst.f(x - e)) / (2 * h) for e in E])
    fd_g = np.array([(inst.g(x + e) - inst.g(x - e)) / (2 * h) for e in E])
    np.testing.assert_allclose(inst.grad_f(x), fd_f, atol=1e-6)
    np.testing.assert_allclose(inst.grad_g(x), fd_g, atol=1e-6 * max(1.0, np.abs(fd_g).max()))
    assert inst.dim == sum(int(np.prod(s)) for s in inst.shapes)


# -------------------------------------------------------------------------------------------- the oracle
def test_oracle_work_accounting_and_budget():
    inst = RegressionInstance(5, 9, 0)
    o = SimpleBilevelOracle(inst, max_work=3.0)
    x = np.ones(9)
    gf, gg = o.grads(x)
    np.testing.assert_allclose(gg, inst.A.T @ (inst.A @ x - inst.b))
    assert o.work_used() == 1.0 and o.grad_points == 1
    o.grad_f(x), o.grad_g(x)  # same point: still one gradient point
    assert o.work_used() == 2.0 and o.grad_points == 1
    o.values(x)
    o.f(2 * x)
    assert o.work_used() == 2.75 and o.grad_points == 1
    with pytest.raises(BudgetExceeded):
        o.grad_f(2 * x)  # 2.75 + 0.5 > 3
    o.g(2 * x)
    assert o.work_used() == 3.0
    o3 = SimpleBilevelOracle(inst, max_work=10.0)
    o3.grad_f(x), o3.grad_g(2 * x), o3.grads(2 * x)
    assert o3.grad_points == 3  # a new point, and grads always counts
    o2 = SimpleBilevelOracle(inst, max_work=1.0)
    o2.grad_g(x)
    o2.g(x)
    with pytest.raises(BudgetExceeded):
        o2.grad_f(x)  # 0.75 + 0.5 > 1
    assert o2.work_used() == 0.75  # a refused call is not charged
    o2.f(x)
    with pytest.raises(BudgetExceeded):
        o2.g(x)


@pytest.mark.parametrize(
    "bad,msg",
    [
        (np.ones(8), "shape"),
        (np.ones((9, 1)), "shape"),
        ("abc", "real"),
        (np.full(9, np.nan), "finite"),
        (np.ones(9) * 1j, "real"),
        (np.ones(9, dtype=bool), "real"),
        ([None] * 9, "real"),
    ],
)
def test_oracle_rejects_bad_input(bad, msg):
    o = SimpleBilevelOracle(RegressionInstance(5, 9, 0), max_work=10.0)
    for call in (o.grads, o.grad_f, o.grad_g, o.values, o.f, o.g):
        with pytest.raises(ValueError, match=msg):
            call(bad)
    assert o.work_used() == 0.0


# ------------------------------------------------------------------------------------------- evaluator
def test_evaluator_par2_counts_work_at_first_stationary_report_and_the_side_of_approach():
    task, refs = _make("circle", circle_dims=3, max_work=50.0)
    problem, ev = task.make(refs[0])
    c = ev.inst.c
    m = ev.evaluate(problem.x0)
    assert m["par2_calls"] == 100.0 and m["stationary"] == 0 and math.isnan(m["iters_to_stationary"])
    for _ in range(3):
        problem.oracle.grads(problem.x0)
    near = -c * (1 + 1e-5)  # outside the circle, ∇g anti-parallel to ∇f: stationary
    m = ev.evaluate(near)
    assert m["stationary"] == 1 and m["r_f"] < 1e-12 and m["r_g"] < 1e-3
    assert m["par2_calls"] == 3.0 and m["iters_to_stationary"] == 3.0
    assert m["dist_to_solution"] == pytest.approx(1e-5, rel=1e-6) and m["f_gap"] == pytest.approx(1e-5, rel=1e-6)
    problem.oracle.grads(problem.x0)
    assert ev.evaluate(near)["par2_calls"] == 3.0  # the first stationary report counts
    inside = ev.evaluate(-c * (1 - 1e-5))  # f and g both decrease outward
    assert inside["r_f"] == pytest.approx(1.0) and inside["stationary"] == 0


def test_evaluator_rejects_malformed_and_scores_non_finite():
    task, refs = _make("min-norm-network", hidden=4, net_points=5)
    problem, ev = task.make(refs[0])
    with pytest.raises(ValueError, match="shape"):
        ev.evaluate(np.zeros(problem.dim + 1))
    with pytest.raises(ValueError, match="real"):
        ev.evaluate(["a"] * problem.dim)
    m = ev.evaluate(np.full(problem.dim, np.inf))
    assert m["r_f"] >= 1e300 and m["g_gap"] >= 1e300 and m["stationary"] == 0
    m = ev.evaluate(np.full(problem.dim, 1e200))  # overflow inside f, g: scored
    assert m["stationary"] == 0
    assert math.isnan(ev.evaluate(problem.x0)["f_gap"]) and problem.g_star is None


# ---------------------------------------------------------------------------------------------- DBGD
def test_dbgd_direction_is_grad_f_when_inner_product_exceeds_barrier():
    rng = np.random.default_rng(3)
    for _ in range(20):
        gf, gg = rng.normal(size=7), rng.normal(size=7)
        ip = float(gf @ gg)
        d, lam = dbgd_direction(gf, gg, phi=ip if ip >= 0 else 0.0)
        if ip >= 0:
            assert lam == 0.0 and np.array_equal(d, gf)
        phi = abs(ip) + 1.0  # barrier active: d is the projection onto {⟨d, ∇g⟩ ≥ φ}
        d, lam = dbgd_direction(gf, gg, phi)
        assert lam > 0 and float(d @ gg) == pytest.approx(phi)
        np.testing.assert_allclose(d - gf, lam * gg)
    # inside the solver: a circle instance whose first step has ⟨∇f, ∇g⟩ ≥ φ is a plain gradient step on f
    for seed in range(20):
        task = make_task(TASK, instance="circle", circle_dims=2, seeds=[seed], max_work=2.0)
        problem, ev = task.make(task.instances()[0])
        x0, inst = problem.x0, ev.inst
        gg = inst.grad_g(x0)
        if float(inst.c @ gg) >= 0.01 * float(gg @ gg):  # beta = 0.01
            break
    else:
        pytest.fail("no seed with <grad f, grad g> >= phi at x0")
    pts = []
    make_solver("dbgd", TASK, beta=0.01, line_search=False, report_every=1).solve(
        problem, task.default_budget, lambda x, iteration=None, work=None: pts.append((iteration, np.array(x)))
    )
    eta = 1.0 / max(problem.L_f, problem.L_g)
    assert pts[1][0] == 1 and np.array_equal(pts[1][1], x0 - eta * inst.c)


@pytest.mark.parametrize("line_search", [False, True])
def test_dbgd_reaches_minus_c_on_the_circle(line_search):
    task, refs = _make("circle", circle_dims=[2, 10])
    for ref in refs:
        sol, m, *_ = _solve(task, ref, "dbgd", line_search=line_search)
        assert m["stationary"] == 1 and m["par2_calls"] < 5000
        assert m["dist_to_solution"] < 2e-3 and m["g_gap"] < 1e-6


def test_dbgd_reaches_the_nuclear_norm_on_balanced_factorisation():
    task, refs = _make("balanced-factorisation", ranks=5)
    sol, m, pts, problem, ev = _solve(task, refs[0], "dbgd")
    assert m["stationary"] == 1 and m["par2_calls"] < task.max_work
    assert abs(m["f"] - ev.inst.f_star) <= 1e-3 * ev.inst.f_star and m["g_gap"] < 1e-6
    U, V = ev.inst.split(sol)
    np.testing.assert_allclose(U.T @ U, V.T @ V, atol=2e-3)  # the optimum is balanced


def test_dbgd_reaches_pinv_on_min_norm_regression():
    task, refs = _make("min-norm-regression")
    sol, m, pts, problem, ev = _solve(task, refs[0], "dbgd")
    assert m["stationary"] == 1
    assert np.linalg.norm(sol - np.linalg.pinv(ev.inst.A) @ ev.inst.b) < 1e-4 * np.linalg.norm(ev.inst.x_star) + 2e-3


# --------------------------------------------------------------------------------------- every solver
@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("family", ["circle", "min-norm-regression"])
def test_every_solver_runs_and_makes_progress(name, family):
    task, refs = _make(family, circle_dims=3, regression_rows=8, regression_dim=20, max_work=3000.0)
    sol, m, pts, problem, ev = _solve(task, refs[0], name)
    m0 = ev.evaluate(problem.x0)
    assert sol.shape == (problem.dim,) and np.all(np.isfinite(sol))
    if family == "circle":
        assert m["g_gap"] < m0["g_gap"] and m["f"] < m0["f"] and m["dist_to_solution"] < 0.1
    else:
        assert m["g_gap"] < 0.1 * m0["g_gap"] and m["dist_to_solution"] < 0.5 * m0["dist_to_solution"]
    assert 0 < m["work"] <= 3000.0
    works = [w for _, w, _ in pts]
    assert works == sorted(works) and len(pts) >= 2


@pytest.mark.parametrize("name", SOLVERS)
def test_solvers_respect_a_smaller_work_budget(name):
    task, refs = _make("min-norm-network", hidden=6, net_points=5)
    sol, m, *_ = _solve(task, refs[0], name, budget=Budget(max_work=123.0))
    assert m["work"] <= 123.0 and m["work"] > 100.0


def test_airg_average_and_dbgd_original_running_minimum():
    task, refs = _make("min-norm-network", hidden=6, net_points=5, max_work=500.0)
    _, m, pts, problem, ev = _solve(task, refs[0], "a-irg", output="average")
    xs = [x for _, _, x in pts]
    assert np.allclose(xs[0], problem.x0) and m["work"] <= 500.0
    _, m2, *_ = _solve(task, refs[0], "dbgd-original")  # g_star unknown: running min of g
    assert m2["f"] < ev.inst.f(problem.x0)


@pytest.mark.parametrize(
    "name,hp,msg",
    [
        ("dbgd", {"beta": 0}, "beta"),
        ("dbgd", {"q": -1}, "q"),
        ("dbgd", {"p": -1}, "p"),
        ("dbgd", {"line_search": "yes"}, "line_search"),
        ("penalty", {"K0": 0}, "K0"),
        ("a-irg", {"output": "best"}, "output"),
        ("dbgd-original", {"g_hat": float("nan")}, "g_hat"),
        ("two-phase", {"reenter": 0.5}, "reenter"),
        ("dbgd", {"report_every": 0}, "report_every"),
    ],
)
def test_bad_hyperparameters(name, hp, msg):
    with pytest.raises(ValueError, match=msg):
        make_solver(name, TASK, **hp)


# ------------------------------------------------------------------------------------------------ task
@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"instance": "torus"}, "instance"),
        ({"ranks": 4}, "ranks"),
        ({"eps_f": 0}, "eps_f"),
        ({"eps_g": -1}, "eps_g"),
        ({"regression_rows": 200}, "regression_rows"),
        ({"paper_scale": "yes"}, "paper_scale"),
        ({"max_work": 0}, "max_work"),
        ({"circle_dims": 0}, "circle_dims"),
        ({"seeds": [-1]}, "seeds"),
        ({"hidden": 0}, "hidden"),
    ],
)
def test_bad_task_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        make_task(TASK, **kw)


def test_instances_and_sizes(monkeypatch):
    task = make_task(TASK)
    names = [r.name for r in task.instances()]
    assert len(names) == 6 * 5 and "balanced-factorisation/r=5/s0" in names and "circle/d=10/s4" in names
    fams = {n.split("/")[0] for n in names}
    assert fams == {"circle", "balanced-factorisation", "min-norm-network", "min-norm-regression"}
    net = [r for r in task.instances() if r.name.startswith("min-norm-network")][0]
    problem, _ = task.make(net)
    assert problem.dim == 351 and problem.shapes == ((50, 5), (50,), (50,), (1,))
    big = make_task(TASK, instance=["balanced-factorisation", "min-norm-network"], paper_scale=True, seeds=[0])
    dims = sorted(big.make(r)[0].dim for r in big.instances())
    assert dims == sorted([2 * 100 * 5, 2 * 100 * 8, 200 * 5 + 2 * 200 + 1])
    monkeypatch.delenv("PAPERGYM_TEST_SECRET", raising=False)
    with pytest.raises(MissingSecretError):
        task.instances("test")


def test_bench_end_to_end(tmp_path):
    from papergym.leaderboard import bench

    res = bench(
        TASK,
        solvers=list(SOLVERS),
        task_kwargs={
            "instance": ["circle", "min-norm-regression"],
            "circle_dims": 2,
            "regression_rows": 8,
            "regression_dim": 20,
            "max_work": 3000.0,
            "seeds": [0],
        },
        backend="serial",
        out=tmp_path / "cells",
    )
    assert (res.runs.status == "ok").all()
    assert (res.runs.par2_calls <= 6000).all() and (res.runs.work <= 3000).all()
    dbgd = res.runs[(res.runs.label == "dbgd") & (res.runs.param_family == "circle")]
    assert (dbgd.par2_calls < 3000).all() and (dbgd.stationary == 1).all()
    folder = res.save(tmp_path / "out")
    assert (folder / "stationarity_vs_work.png").exists() and (folder / "stationarity_vs_work.svg").exists()
    text = res.extra_report()
    assert "reached" in text and "dbgd" in text and "min-norm-regression" in text
