"""DistributedRegression-v0 and its solvers: the generator's heterogeneity is exact, the closed-form optimum is
stationary, the protocol is enforced, and the known equivalences of local and mini-batch SGD hold."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.agents.base import list_solvers, make_solver
from papergym.envs.tasks.base import BudgetExceeded, make_task
from papergym.envs.tasks.distributed_regression import DistributedInstance, FederatedOracle, ProtocolError

TASK = "DistributedRegression-v0"
SOLVERS = ("local-sgd", "minibatch-sgd", "accelerated-minibatch-sgd", "scaffold")


def _task(**kw):
    args = {"tau": 0.03, "spread": 0.1, "local_steps": 5, "d": 10, "machines": 4, "rounds": 20, "seeds": [0]}
    args.update(kw)
    return make_task(TASK, **args)


def _solve(task, name, **hp):
    problem, ev = task.make(task.instances()[0])
    xs = []

    def report(x, iteration=None, work=None):
        xs.append(np.array(x))
        ev.evaluate(x)

    sol = make_solver(name, TASK, **hp).solve(problem, task.default_budget, report)
    return sol, xs, ev


def test_registered_solvers():
    roles = {s.name: s.role for s in list_solvers(TASK)}
    assert roles == {
        "local-sgd": "paper",
        "minibatch-sgd": "baseline",
        "accelerated-minibatch-sgd": "baseline",
        "scaffold": "baseline",
    }


@pytest.mark.parametrize("tau", [0.0, 0.01, 0.08])
def test_second_order_heterogeneity_is_exactly_tau(tau):
    inst = DistributedInstance(d=12, M=6, tau=tau, spread=0.5, sigma=0.5, seed=3)
    mean = inst.Sigmas.mean(axis=0)
    assert max(np.linalg.norm(S - mean, 2) for S in inst.Sigmas) == pytest.approx(tau, abs=1e-12)
    np.testing.assert_allclose(inst.E.sum(axis=0), 0, atol=1e-12)
    assert inst.mu > 0
    u = (inst.w - inst.w.mean(axis=0)) / 0.5  # optimum spread: centred, unit mean-square norm
    assert np.mean(np.sum(u**2, axis=1)) == pytest.approx(1.0)


def test_closed_form_optimum_is_stationary_and_zeta():
    inst = DistributedInstance(d=10, M=5, tau=0.05, spread=1.0, sigma=0.3, seed=1)
    g = np.mean([inst.grad_m(m, inst.x_star) for m in range(5)], axis=0)
    assert np.abs(g).max() < 1e-12
    zeta = np.sqrt(np.mean([np.sum(inst.grad_m(m, inst.x_star) ** 2) for m in range(5)]))
    assert inst.zeta_star == pytest.approx(zeta, rel=1e-12)
    rng = np.random.default_rng(0)
    assert all(inst.F(inst.x_star + 0.1 * rng.normal(size=10)) > inst.F_star for _ in range(10))


def test_stochastic_gradient_is_unbiased():
    inst = DistributedInstance(d=6, M=3, tau=0.05, spread=0.5, sigma=0.5, seed=2)
    o = FederatedOracle(inst, K=10**9, R=1, seed=2)
    x = np.linspace(-1, 1, 6)
    g = np.array([o.grad(1, x) for _ in range(60_000)])
    se = g.std(axis=0) / np.sqrt(len(g))
    assert np.all(np.abs(g.mean(axis=0) - inst.grad_m(1, x)) < 5 * se)


def test_protocol_and_budget():
    inst = DistributedInstance(d=4, M=2, tau=0.0, spread=0.0, sigma=0.1, seed=0)
    o = FederatedOracle(inst, K=2, R=1, seed=0)
    o.grad(0, np.zeros(4))
    o.grad(0, np.zeros(4))
    with pytest.raises(ProtocolError, match="more than K"):
        o.grad(0, np.zeros(4))
    o.grad(1, np.zeros(4))
    back = o.communicate(np.ones((2, 4)))
    np.testing.assert_array_equal(back, np.ones((2, 4)))
    with pytest.raises(BudgetExceeded):
        o.grad(0, np.zeros(4))
    with pytest.raises(BudgetExceeded):
        o.communicate(np.ones((2, 4)))
    with pytest.raises(ValueError, match="shape"):
        FederatedOracle(inst, 2, 1, 0).communicate(np.ones((3, 4)))
    with pytest.raises(ValueError, match="machine"):
        FederatedOracle(inst, 2, 1, 0).grad(5, np.zeros(4))


def test_local_gd_equals_centralised_gd_without_heterogeneity():
    """tau = 0 and exact gradients: averaging K local GD steps equals K centralised GD steps (to 1e-10)."""
    task = _task(tau=0.0, spread=1.0, exact_gradients=True, local_steps=7, rounds=15, sigma=0.0)
    sol, xs, ev = _solve(task, "local-sgd", lr=0.5)
    inst = ev.inst
    eta = 0.5 / inst.H
    x = np.zeros(inst.d)
    for r in range(15):
        for _ in range(7):
            x = x - eta * np.mean([inst.grad_m(m, x) for m in range(inst.M)], axis=0)
        np.testing.assert_allclose(xs[r], x, atol=1e-10)


def test_k1_local_sgd_is_minibatch_sgd_on_the_same_samples():
    task = _task(local_steps=1, rounds=30)
    a, xa, _ = _solve(task, "local-sgd", lr=0.25)
    b, xb, _ = _solve(task, "minibatch-sgd", lr=0.25)
    for u, v in zip(xa, xb):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-14)


def test_scaffold_removes_client_drift_with_exact_gradients():
    """With exact gradients SCAFFOLD's corrected local steps follow the global gradient: it converges to x*
    while local GD with the same step stalls at a drifted point when the optima are spread out."""
    task = _task(tau=0.08, spread=3.0, exact_gradients=True, local_steps=20, rounds=200, sigma=0.0)
    sol_s, _, ev_s = _solve(task, "scaffold", lr=0.25)
    sol_l, _, ev_l = _solve(task, "local-sgd", lr=0.25)
    assert ev_s.evaluate(sol_s)["subopt_ratio"] < 1e-8
    assert ev_l.evaluate(sol_l)["subopt_ratio"] > 1e-6


@pytest.mark.parametrize("name", SOLVERS)
def test_every_solver_makes_progress_and_reports_each_round(name):
    task = _task()
    sol, xs, ev = _solve(task, name)
    m = ev.evaluate(sol)
    assert len(xs) == 20 and m["rounds"] == 20
    assert m["subopt_ratio"] < 0.2
    assert m["consensus_error"] >= 0
    if name in ("minibatch-sgd", "accelerated-minibatch-sgd"):
        assert m["consensus_error"] == 0


def test_evaluator_rejects_malformed_solutions():
    task = _task()
    _, ev = task.make(task.instances()[0])
    with pytest.raises(ValueError, match="shape"):
        ev.evaluate(np.zeros(3))
    with pytest.raises(ValueError, match="theta"):
        ev.evaluate({"x": np.zeros(10)})
    assert ev.evaluate(np.full(10, np.nan))["subopt_ratio"] > 1e100


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"tau": 0.2}, "tau"),
        ({"local_steps": 0}, "local_steps"),
        ({"machines": 1}, "machines"),
        ({"spread": -1}, "spread"),
    ],
)
def test_bad_task_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        make_task(TASK, **kw)


def test_bench_end_to_end(tmp_path):
    from papergym.leaderboard import bench

    res = bench(
        TASK,
        solvers=list(SOLVERS),
        task_kwargs={
            "tau": [0.0, 0.08],
            "spread": 0.1,
            "local_steps": 5,
            "d": 8,
            "machines": 4,
            "rounds": 10,
            "seeds": [0],
        },
        backend="serial",
        out=tmp_path / "cells",
    )
    assert (res.runs.status == "ok").all()
    folder = res.save(tmp_path / "out")
    assert (folder / "subopt_vs_tau.png").exists()
    assert "local - mb" in res.extra_report()
