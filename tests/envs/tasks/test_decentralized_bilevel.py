"""DecentralizedBilevel-v0 and its solvers: the mixing matrix is doubly stochastic with the ring's closed-form
spectral gap, the reference hypergradients equal finite differences of Φ, y* and v* solve their equations, the
oracle's HVP/JVP are the derivatives of its gradients, a complete graph reproduces an independently written
centralised method exactly, the lower levels converge to y*(x0), v*(x0) with x frozen, and the protocol,
budget, kwargs and solutions are checked."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.agents.base import list_solvers, make_solver
from papergym.envs.tasks.base import Budget, BudgetExceeded, make_task
from papergym.envs.tasks.decentralized_bilevel import (
    BilevelOracle,
    DigitsInstance,
    SynInstance,
    make_graph,
    metropolis_hastings,
    spectral_gap,
)

TASK = "DecentralizedBilevel-v0"
SOLVERS = ("adasdbo", "sldbo", "ma-dsbo", "mdbo", "dbo")


def _task(**kw):
    args = {
        "family": "syn",
        "graph": "ring",
        "agents": 6,
        "heterogeneity": 1.0,
        "scales": "1:1",
        "rounds": 300,
        "seeds": [0],
    }
    args.update(kw)
    return make_task(TASK, **args)


def _run(task, name, ref=None, **hp):
    ref = ref or task.instances()[0]
    problem, ev = task.make(ref)
    xs = []

    def report(x, iteration=None, work=None):
        xs.append((iteration, np.array(x)))
        ev.evaluate(x)

    solver = make_solver(name, TASK, seed=0, **hp)
    sol = solver.solve(problem, task.default_budget, report)
    return solver, sol, xs, ev, problem


def _initial(ev, problem):
    return ev.inst.reference(np.asarray(problem.x0, dtype=float))


def test_registered_solvers():
    roles = {s.name: s.role for s in list_solvers(TASK)}
    assert roles == {
        "adasdbo": "paper",
        "sldbo": "baseline",
        "ma-dsbo": "baseline",
        "mdbo": "baseline",
        "dbo": "baseline",
    }


# ------------------------------------------------------------------------------------------------ graphs
@pytest.mark.parametrize("graph,n", [("ring", 7), ("torus", 12), ("er", 10), ("complete", 5), ("ring", 2)])
def test_metropolis_hastings_is_symmetric_doubly_stochastic_on_the_graph(graph, n):
    A = make_graph(graph, n, seed=3)
    W = metropolis_hastings(A)
    np.testing.assert_allclose(W, W.T, atol=0)
    np.testing.assert_allclose(W.sum(axis=0), 1, atol=1e-14)
    np.testing.assert_allclose(W.sum(axis=1), 1, atol=1e-14)
    assert np.all(W >= 0) and np.all(W[(A == 0) & ~np.eye(n, dtype=bool)] == 0)
    assert 0 < spectral_gap(W) <= 1


@pytest.mark.parametrize("n", [4, 6, 10, 15])
def test_ring_spectral_gap_closed_form(n):
    """MH on a ring: weights 1/3, eigenvalues (1 + 2cos(2πk/n))/3, so the gap is 2(1 − cos(2π/n))/3 (n ≥ 4)."""
    W = metropolis_hastings(make_graph("ring", n))
    np.testing.assert_allclose(W[W > 0], 1 / 3)
    assert spectral_gap(W) == pytest.approx(2 * (1 - math.cos(2 * math.pi / n)) / 3, abs=1e-12)


def test_complete_graph_is_averaging_and_torus_degrees():
    W = metropolis_hastings(make_graph("complete", 8))
    np.testing.assert_allclose(W, np.full((8, 8), 1 / 8), atol=1e-15)
    assert spectral_gap(W) == pytest.approx(1.0)
    assert set(make_graph("torus", 12).sum(axis=1)) == {4.0}  # 3x4 periodic grid
    with pytest.raises(ValueError, match="agents"):
        make_graph("torus", 7)


# ----------------------------------------------------------------------------------------- known answers
def _phi(inst, x):
    if isinstance(inst, DigitsInstance):
        inst._y_warm = inst._v_warm = None
    return inst.reference(x)["val_loss"]


def test_syn_closed_form_hypergradient_equals_finite_differences():
    inst = SynInstance(5, 1.0, seed=4)
    rng = np.random.default_rng(0)
    x = 0.5 * rng.standard_normal(20)
    g = inst.reference(x)["hypergrad"]
    eps = 1e-5
    fd = np.array([(_phi(inst, x + eps * e) - _phi(inst, x - eps * e)) / (2 * eps) for e in np.eye(20)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-10)


def test_digits_reference_hypergradient_equals_finite_differences():
    inst = DigitsInstance(3, 1.0, seed=1)
    rng = np.random.default_rng(1)
    x = -1.0 + 0.3 * rng.standard_normal(64)
    g = inst.reference(x)["hypergrad"]
    eps = 1e-4
    for d in rng.standard_normal((3, 64)):
        fd = (_phi(inst, x + eps * d) - _phi(inst, x - eps * d)) / (2 * eps)
        assert g @ d == pytest.approx(fd, rel=1e-5, abs=1e-10)


@pytest.mark.parametrize("family", ["syn", "digits"])
def test_reference_y_and_v_solve_their_equations(family):
    """Independently of the evaluator's global arrays: the agents' own oracles, averaged, vanish at y* and
    satisfy ∇²_yy l v* = ∇_y f (c_l, c_f scaled)."""
    n, cl, cf = 4, 3.0, 0.5
    inst = SynInstance(n, 1.0, 2) if family == "syn" else DigitsInstance(n, 1.0, 2)
    o = BilevelOracle(inst, np.full((n, n), 1 / n), cl, cf, 10, None, 0)
    x = 0.2 * np.random.default_rng(3).standard_normal(inst.d_x)
    ref = inst.reference(x)
    X, Y, V = np.tile(x, (n, 1)), np.tile(ref["y"], (n, 1)), np.tile(ref["v"], (n, 1))
    gy = o.grad_y_l(X, Y).mean(axis=0)
    assert np.linalg.norm(gy) <= 1e-9 * cl
    Hv, gf = o.hvp_yy_l(X, Y, V).mean(axis=0) * cf / cl, o.grad_y_f(X, Y).mean(axis=0)
    np.testing.assert_allclose(Hv, gf, atol=1e-9 * np.linalg.norm(gf))
    hyper = -o.jvp_xy_l(X, Y, V).mean(axis=0) * cf / cl
    np.testing.assert_allclose(hyper / cf, ref["hypergrad"], atol=1e-12)


@pytest.mark.parametrize("family", ["syn", "digits"])
def test_hvp_and_jvp_are_derivatives_of_the_gradient(family):
    n = 3
    inst = SynInstance(n, 1.0, 5) if family == "syn" else DigitsInstance(n, 1.0, 5)
    o = BilevelOracle(inst, np.full((n, n), 1 / n), 2.0, 1.0, 10, None, 0)
    rng = np.random.default_rng(0)
    X = 0.3 * rng.standard_normal((n, inst.d_x))
    Y, V, D = (0.1 * rng.standard_normal((n, inst.d_y)) for _ in range(3))
    Dx = rng.standard_normal((n, inst.d_x))
    eps = 1e-6
    fd = (o.grad_y_l(X, Y + eps * D) - o.grad_y_l(X, Y - eps * D)) / (2 * eps)
    np.testing.assert_allclose(o.hvp_yy_l(X, Y, D), fd, rtol=1e-6, atol=1e-8)
    # <∇²_xy l v, dx> = d/dε <∇_y l(x + ε dx, y), v>, per agent
    fdx = np.sum((o.grad_y_l(X + eps * Dx, Y) - o.grad_y_l(X - eps * Dx, Y)) * V, axis=1) / (2 * eps)
    np.testing.assert_allclose(np.sum(o.jvp_xy_l(X, Y, V) * Dx, axis=1), fdx, rtol=1e-6, atol=1e-9)
    assert np.all(o.grad_x_f(X, Y) == 0)


def test_syn_oracle_matches_the_spec_objectives():
    """grad_y_l, grad_y_f against finite differences of l_i, f_i written from the task's formulas."""
    n, cl, cf = 3, 10.0, 0.1
    inst = SynInstance(n, 1.0, 7)
    o = BilevelOracle(inst, np.full((n, n), 1 / n), cl, cf, 10, None, 0)
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((n, 20)), rng.standard_normal((n, 20))

    def l_i(i, x, y):
        return cl * (np.sum((inst.A[i] @ y - inst.b[i]) ** 2) / 100 + 0.5 * np.sum(np.exp(x) * y**2))

    def f_i(i, y):
        return cf * np.sum((inst.Av[i] @ y - inst.bv[i]) ** 2) / 100

    eps = 1e-6
    for i in range(n):
        E = np.eye(20) * eps
        gl = [(l_i(i, X[i], Y[i] + e) - l_i(i, X[i], Y[i] - e)) / (2 * eps) for e in E]
        gf = [(f_i(i, Y[i] + e) - f_i(i, Y[i] - e)) / (2 * eps) for e in E]
        np.testing.assert_allclose(o.grad_y_l(X, Y)[i], gl, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(o.grad_y_f(X, Y)[i], gf, rtol=1e-6, atol=1e-7)


def test_minibatch_gradients_are_unbiased():
    inst = SynInstance(3, 1.0, 0)
    o = BilevelOracle(inst, np.full((3, 3), 1 / 3), 1.0, 1.0, 10**6, 5, seed=0)
    full = BilevelOracle(inst, np.full((3, 3), 1 / 3), 1.0, 1.0, 10, None, seed=0)
    rng = np.random.default_rng(2)
    X, Y = 0.1 * rng.standard_normal((3, 20)), rng.standard_normal((3, 20))
    g = np.array([o.grad_y_f(X, Y) for _ in range(4000)])
    se = g.std(axis=0) / np.sqrt(len(g))
    assert np.all(np.abs(g.mean(axis=0) - full.grad_y_f(X, Y)) < 5 * se + 1e-12)
    assert not np.allclose(g[0], g[1])  # fresh batches


def test_digits_partitions():
    iid, skew = DigitsInstance(10, 0.0, 0), DigitsInstance(10, 1.0, 0)
    assert iid.n_rows["train"].sum() == skew.n_rows["train"].sum() == 1000
    assert iid.n_rows["train"].max() - iid.n_rows["train"].min() <= 1
    assert skew.n_rows["train"].min() >= 5 and skew.n_rows["val"].min() >= 2

    def label_spread(inst):  # mean total-variation distance of the agents' label histograms from the pooled one
        T, w = inst.part["train"][1], inst.part["train"][2]
        hist = np.einsum("nrk,nr->nk", T, w)
        return float(np.mean(np.abs(hist - hist.mean(axis=0)).sum(axis=1)) / 2)

    assert label_spread(skew) > 2 * label_spread(iid)


# ------------------------------------------------------------------------------------ solver behaviour
def _central_syn(inst, cl, cf, T, step, report_every=10, x0=None):
    """Centralised reference on the averaged syn objective, written from the task's closed forms: global
    H̄, c̄ from the raw rows; ``step(t, g) -> (ηx, ηy, ηv)`` given the three global oracles."""
    A, b, Av, bv = inst.A, inst.b, inst.Av, inst.bv
    Hb = np.mean([a.T @ a / 50 for a in A], axis=0)
    cb = np.mean([a.T @ r / 50 for a, r in zip(A, b)], axis=0)
    Gv = np.mean([a.T @ a / 50 for a in Av], axis=0)
    cv = np.mean([a.T @ r / 50 for a, r in zip(Av, bv)], axis=0)
    x, y, v = (np.zeros(20) if x0 is None else x0.copy()), np.zeros(20), np.zeros(20)
    out = []
    for t in range(T):
        e = np.exp(x)
        gy = cl * (Hb @ y - cb + e * y)
        gv = cl * (Hb @ v + e * v) - cf * (Gv @ y - cv)
        gx = -cl * e * y * v
        ex, ey, ev = step(gx, gy, gv)
        x, y, v = x - ex * gx, y - ey * gy, v - ev * gv
        if (t + 1) % report_every == 0:
            out.append((t + 1, x.copy()))
    return out


@pytest.mark.parametrize("step_rule", ["hierarchical", "independent", "normalized"])
def test_adasdbo_on_a_complete_graph_is_the_centralised_method(step_rule):
    cl, cf, gamma, m0 = 2.0, 0.5, 0.7, 0.3
    task = _task(graph="complete", agents=5, scales=f"{cl}:{cf}", rounds=200)
    solver, _, xs, ev, _ = _run(task, "adasdbo", gamma=gamma, m0=m0, step_rule=step_rule)
    acc = np.full(3, m0**2)
    first: list[float] = []  # normalized: (r^y, r^v) = (m^y, m^v) after the first accumulation

    def step(gx, gy, gv):
        acc[:] += [gx @ gx, gy @ gy, gv @ gv]
        mx, my, mv = np.sqrt(acc)
        if step_rule == "hierarchical":
            return gamma / (mx * max(my, mv)), gamma / my, gamma / max(my, mv)
        if step_rule == "normalized":
            first[:] = first or [my, mv]
            mu = max(my / first[0], mv / first[1])
            return gamma / (mx * mu), gamma / my, gamma * (first[1] / first[0]) / max(mv, my * first[1] / first[0])
        return gamma / mx, gamma / my, gamma / mv

    ref = _central_syn(ev.inst, cl, cf, 200, step)
    assert len(xs) == len(ref) == 20
    for (it, X), (t, x) in zip(xs, ref):
        assert it == t
        assert np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1)) <= 1e-26  # consensus stays zero
        np.testing.assert_allclose(X, np.tile(x, (5, 1)), atol=1e-10, rtol=1e-10)
    assert np.linalg.norm(xs[-1][1][0]) > 1e-3  # x moved


def test_sldbo_on_a_complete_graph_is_the_centralised_method():
    gamma = 0.02
    task = _task(graph="complete", agents=4, rounds=150)
    _, _, xs, ev, _ = _run(task, "sldbo", gamma=gamma)
    ref = _central_syn(ev.inst, 1.0, 1.0, 150, lambda gx, gy, gv: (0.1 * gamma, gamma, gamma))
    for (it, X), (t, x) in zip(xs, ref):
        assert it == t and ev.evaluate(X)["consensus_x"] <= 1e-26
        np.testing.assert_allclose(X, np.tile(x, (4, 1)), atol=1e-10, rtol=1e-10)


def test_frozen_x_lower_levels_converge_to_y_star_and_v_star_on_a_ring():
    task = _task(graph="ring", agents=8, rounds=2000, heterogeneity=1.0)
    solver, X, _, ev, problem = _run(task, "adasdbo", gamma_x=0, gamma=1.0, step_rule="independent")
    np.testing.assert_array_equal(X, np.zeros_like(X))
    ref = ev.inst.reference(np.zeros(20))
    st = solver.last_state
    ybar, vbar = st["y"].mean(axis=0), st["v"].mean(axis=0)
    assert np.linalg.norm(ybar - ref["y"]) <= 1e-6 * np.linalg.norm(ref["y"])
    assert np.linalg.norm(vbar - ref["v"]) <= 1e-6 * np.linalg.norm(ref["v"])  # v* = [∇²_yy l]⁻¹ ∇_y f
    assert np.max(np.abs(st["y"] - ybar)) <= 1e-6 * np.linalg.norm(ref["y"])  # agents agree


def test_adasdbo_reaches_a_small_hypergradient_at_every_scale_with_one_setting():
    """One hyperparameter setting, the default rounds (T = 2,000), c_l:c_f ∈ {1:1, 10:0.1, 0.1:10}: the final
    hypergradient is below 1e-3 of the initial one on every scale (the parameter-free claim)."""
    task = make_task(TASK, family="syn", graph="ring", heterogeneity=1.0, seeds=[0])
    for ref in task.instances():
        _, X, _, ev, problem = _run(task, "adasdbo", ref=ref, report_every=500)  # the default setting
        m = ev.evaluate(X)
        h0 = float(np.sum(_initial(ev, problem)["hypergrad"] ** 2))
        assert m["hypergrad_sq"] <= 1e-3 * h0, ref.name
        assert m["val_loss"] < _initial(ev, problem)["val_loss"]


@pytest.mark.parametrize("name", SOLVERS)
def test_every_solver_makes_progress_within_its_budget(name):
    task = _task(graph="er", agents=6, rounds=2000)
    _, X, xs, ev, problem = _run(task, name)
    m = ev.evaluate(X)
    init = _initial(ev, problem)
    assert np.isfinite(X).all() and len(xs) >= 2
    assert m["hypergrad_sq"] < 0.9 * float(np.sum(init["hypergrad"] ** 2))
    assert m["val_loss"] < init["val_loss"]
    assert m["rounds"] <= 2000 and m["oracle_calls"] <= 10 * 6 * 2000
    assert m["floats_sent"] > 0 and xs[-1][0] == m["rounds"]


@pytest.mark.parametrize("name", SOLVERS[1:])
def test_a_diverging_run_is_scored_not_raised(name):
    """A fixed step far too large: the run stops once its state is non-finite and scores 1e300 (never raises)."""
    task = _task(rounds=200, scales="10:1")
    _, X, _, ev, _ = _run(task, name, gamma=1e4)
    m = ev.evaluate(X)
    assert m["hypergrad_sq"] == 1e300 and m["log10_hypergrad"] == 300.0


def test_adasdbo_survives_a_huge_base_step():
    """The accumulators absorb an overestimated base step (the parameter-free mechanism): no divergence."""
    task = _task(rounds=400, scales="10:1")
    _, X, _, ev, problem = _run(task, "adasdbo", gamma=1e4)
    assert np.isfinite(X).all() and ev.evaluate(X)["val_loss"] < _initial(ev, problem)["val_loss"]


# --------------------------------------------------------------------------------- protocol and errors
def test_protocol_and_budget():
    task = _task(rounds=3, agents=3)
    problem, ev = task.make(task.instances()[0])
    o = problem.oracle
    X, Y = np.zeros((3, 20)), np.zeros((3, 20))
    with pytest.raises(ValueError, match="Y must have shape"):
        o.grad_y_l(X, np.zeros((2, 20)))
    with pytest.raises(ValueError, match="X must have shape"):
        o.grad_x_f(np.zeros(20), Y)
    with pytest.raises(ValueError, match="V must have shape"):
        o.hvp_yy_l(X, Y, np.zeros((3, 5)))
    with pytest.raises(ValueError, match="mix"):
        o.mix(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="mix"):
        o.mix("abc")
    Z = np.arange(12.0).reshape(3, 2, 2)
    np.testing.assert_allclose(o.mix(Z), np.einsum("ij,jkl->ikl", problem.W, Z))
    o.mix(np.ones((3, 1)))
    o.mix(np.ones((3, 1)))
    with pytest.raises(BudgetExceeded, match="rounds"):
        o.mix(np.ones((3, 1)))
    m = ev.evaluate(np.zeros((3, 20)))
    assert m["rounds"] == 3 and m["floats_sent"] == 3 * 4 + 3 + 3
    for _ in range(10 * 3):
        o.grad_y_l(X, Y)
    with pytest.raises(BudgetExceeded, match="work"):
        o.grad_y_l(X, Y)
    assert ev.evaluate(np.zeros((3, 20)))["oracle_calls"] == 10 * 3 * 3


def test_evaluator_rejects_malformed_solutions():
    task = _task(agents=4)
    _, ev = task.make(task.instances()[0])
    with pytest.raises(ValueError, match="shape"):
        ev.evaluate(np.zeros(20))
    with pytest.raises(ValueError, match="'x'"):
        ev.evaluate({"theta": np.zeros((4, 20))})
    with pytest.raises(ValueError, match="float array"):
        ev.evaluate([["a"] * 20] * 4)
    ok = ev.evaluate({"x": np.zeros((4, 20))})
    assert ok["consensus_x"] == 0 and math.isnan(ok["test_acc"])
    bad = ev.evaluate(np.full((4, 20), np.nan))
    assert bad["hypergrad_sq"] == 1e300 and bad["consensus_x"] == 1e300
    far = ev.evaluate(np.full((4, 20), 1e6))  # clipped to +30: finite, hypergradient ≈ 0
    assert 0 <= far["hypergrad_sq"] < 1e-10


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"family": "mnist"}, "family"),
        ({"graph": "star"}, "graph"),
        ({"agents": 1}, "agents"),
        ({"graph": "torus", "agents": 7}, "agents"),
        ({"heterogeneity": -1.0}, "heterogeneity"),
        ({"scales": "1:0"}, "scales"),
        ({"scales": ["1:1", "abc"]}, "scales"),
        ({"rounds": 0}, "rounds"),
        ({"batch": 0}, "batch"),
        ({"step_size_grid": [0.1, -1.0]}, "step_size_grid"),
        ({"seeds": [-1]}, "seeds"),
        ({"max_seconds": 0}, "max_seconds"),
    ],
)
def test_bad_task_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        make_task(TASK, **kw)


def test_task_arguments_and_instances():
    t = make_task(
        TASK,
        graph=["erdos-renyi", "er", "torus"],
        agents=12,
        scales=[(10, 0.1), "1:1"],
        step_size_grid=True,
        seeds=[0, 1],
    )
    assert t.graph == ("er", "torus") and t.scales == ((10.0, 0.1), (1.0, 1.0))
    assert t.solver_sweep() == {"gamma": [1e-3, 1e-2, 1e-1, 1.0, 10.0]}
    assert make_task(TASK).solver_sweep() == {}
    refs = t.instances()
    assert len(refs) == 2 * 2 * 1 * 2 * 2 * 2
    p, _ = t.make(refs[0])
    assert p.n == 12 and p.d_x == 20 and p.rounds == 2000 and p.W.shape == (12, 12)
    assert t.default_budget == Budget(max_seconds=60.0, max_iterations=2000, max_work=10 * 12 * 2000)
    pd_, _ = t.make(next(r for r in refs if r.params["family"] == "digits"))
    assert (pd_.d_x, pd_.d_y, pd_.rounds) == (64, 650, 1000)


@pytest.mark.parametrize(
    "name,hp,msg",
    [
        ("adasdbo", {"gamma": 0}, "gamma"),
        ("adasdbo", {"m0": -1}, "m0"),
        ("adasdbo", {"step_rule": "x"}, "step_rule"),
        ("adasdbo", {"combine": "x"}, "combine"),
        ("sldbo", {"gamma": float("nan")}, "gamma"),
        ("ma-dsbo", {"beta": 2.0}, "beta"),
        ("mdbo", {"momentum": 1.0}, "momentum"),
        ("dbo", {"neumann": 0}, "neumann"),
    ],
)
def test_bad_solver_hyperparameters(name, hp, msg):
    with pytest.raises(ValueError, match=msg):
        make_solver(name, TASK, **hp)


def test_bench_end_to_end(tmp_path):
    from papergym.leaderboard import bench

    kw = {
        "family": ["syn", "digits"],
        "graph": ["ring", "complete"],
        "agents": 4,
        "heterogeneity": 0.0,
        "scales": "1:1",
        "rounds": 40,
        "seeds": [0],
        "step_size_grid": [0.01, 0.1],
    }
    res = bench(TASK, solvers=list(SOLVERS), task_kwargs=kw, backend="serial", out=tmp_path / "cells")
    assert (res.runs.status == "ok").all()
    # the task's step-size grid sweeps every solver's base step gamma
    assert sorted(res.summary.label) == sorted(f"{s}[gamma={g}]" for s in SOLVERS for g in (0.01, 0.1))
    folder = res.save(tmp_path / "out")
    assert (folder / "curves_syn.png").exists() and (folder / "curves_digits.svg").exists()
    text = res.extra_report()
    assert "worst" in text and "adasdbo" in text and "[digits]" in text
    from papergym.envs.tasks.decentralized_bilevel.report import config_of

    assert config_of("adasdbo[step_rule=independent,gamma=0.01]") == "adasdbo[step_rule=independent]"
    assert config_of("sldbo[gamma=10]") == "sldbo" and config_of("dbo") == "dbo"
    # a second adasdbo configuration is its own row of the grid report, not pooled with the default
    two = bench(
        TASK,
        solvers=["adasdbo"],
        task_kwargs={**kw, "family": "syn"},
        backend="serial",
        sweep={"adasdbo": {"step_rule": ["normalized", "independent"]}},
        out=tmp_path / "cells",
    )
    rows = [line.split()[0] for line in two.extra_report().splitlines() if line.startswith("adasdbo")]
    assert {"adasdbo[step_rule=normalized]", "adasdbo[step_rule=independent]"} <= set(rows)
    plain = bench(
        TASK,
        solvers=["adasdbo", "sldbo"],
        task_kwargs={**kw, "step_size_grid": False},
        backend="serial",
        out=tmp_path / "cells",
    )
    assert "median over" in plain.extra_report()
