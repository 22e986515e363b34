"""DeepRegression-v0 and its solvers: BCD's lifted objective never increases, a deep linear net is fitted to
round-off, backpropagation matches finite differences, the evaluator recomputes the loss from the weights."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.agents.base import list_solvers, make_solver
from papergym.agents.solvers.bcd import lifted_objective
from papergym.baselines.solvers.deep_gd import network_gradients
from papergym.envs.tasks.base import Budget, make_task
from papergym.envs.tasks.deep_regression import forward, network_loss

TASK = "DeepRegression-v0"


def _make(**kw):
    args = {"family": "teacher", "activation": "leaky-relu", "depth": 3, "n": 50, "width": 32, "seeds": [0]}
    args.update(kw)
    task = make_task(TASK, **args)
    return task, task.make(task.instances()[0])


def test_registered_solvers():
    roles = {s.name: s.role for s in list_solvers(TASK)}
    assert roles == {"bcd": "paper", "bcd-skip": "paper", "gd": "baseline", "adam": "baseline"}


@pytest.mark.parametrize("act,gamma", [("leaky-relu", 1.0), ("tanh", 0.1), ("softplus", 10.0), ("identity", 1.0)])
def test_bcd_lifted_objective_is_non_increasing(act, gamma):
    _, (problem, ev) = _make(activation=act, depth=4)
    Fs = []
    make_solver("bcd", TASK, gamma=gamma).solve(
        problem, Budget(max_iterations=40), lambda s, **k: Fs.append(s["aux_objective"])
    )
    F0 = lifted_objective(problem.W0, _forward_V(problem), problem.Y, act, False, gamma)
    seq = np.array([F0] + Fs)
    assert np.all(np.diff(seq) <= 1e-12 * seq[:-1])
    assert seq[-1] < 0.5 * seq[0]


def _forward_V(problem):
    from papergym.envs.tasks.deep_regression import activation

    s, _, _ = activation(problem.activation)
    V = [problem.X]
    for j in range(1, problem.depth):
        z = s(problem.W0[j - 1] @ V[j - 1])
        V.append(z + V[j - 1] if problem.skip and j >= 2 else z)
    return V


def test_lifted_objective_starts_at_the_network_loss():
    _, (problem, _) = _make()
    F = lifted_objective(problem.W0, _forward_V(problem), problem.Y, "leaky-relu", False, 1.0)
    assert F == pytest.approx(problem.X.shape[1] * network_loss(problem.W0, problem.X, problem.Y, "leaky-relu", False))


def test_deep_linear_net_reaches_zero_loss():
    _, (problem, ev) = _make(activation="identity", depth=3)
    sol = make_solver("bcd", TASK).solve(problem, Budget(max_iterations=400), lambda *a, **k: None)
    assert sol["aux_objective"] < 1e-8
    assert ev.evaluate(sol)["train_loss"] < 1e-8


def test_bcd_skip_on_relu_decreases_and_keeps_v_nonnegative():
    _, (problem, ev) = _make(activation="relu", depth=4)
    assert problem.skip
    Fs = []
    sol = make_solver("bcd-skip", TASK).solve(
        problem, Budget(max_iterations=60), lambda s, **k: Fs.append(s["aux_objective"])
    )
    assert np.all(np.diff(Fs) <= 1e-12 * np.array(Fs[:-1]))
    assert ev.evaluate(sol)["rel_train_loss"] < 0.5
    with pytest.raises(ValueError, match="strictly increasing"):
        make_solver("bcd", TASK, skip=False).solve(problem, Budget(max_iterations=1), lambda *a, **k: None)
    _, (plain, _) = _make()  # on a leaky-ReLU instance bcd-skip is plain bcd
    a = make_solver("bcd-skip", TASK).solve(plain, Budget(max_iterations=5), lambda *a, **k: None)
    b = make_solver("bcd", TASK).solve(plain, Budget(max_iterations=5), lambda *a, **k: None)
    for wa, wb in zip(a["weights"], b["weights"]):
        np.testing.assert_array_equal(wa, wb)


@pytest.mark.parametrize("act,skip", [("leaky-relu", False), ("tanh", False), ("relu", True), ("softplus", False)])
def test_backprop_matches_finite_differences(act, skip):
    rng = np.random.default_rng(0)
    W = [rng.normal(size=(6, 5)) / 2, rng.normal(size=(6, 6)) / 2, rng.normal(size=(3, 6)) / 2]
    X, Y = rng.normal(size=(5, 7)), rng.normal(size=(3, 7))
    loss, grads = network_gradients(W, X, Y, act, skip)
    assert loss == pytest.approx(network_loss(W, X, Y, act, skip))
    for j in range(3):
        for _ in range(4):
            a, b = rng.integers(W[j].shape[0]), rng.integers(W[j].shape[1])
            Wp = [w.copy() for w in W]
            Wm = [w.copy() for w in W]
            Wp[j][a, b] += 1e-6
            Wm[j][a, b] -= 1e-6
            fd = (network_loss(Wp, X, Y, act, skip) - network_loss(Wm, X, Y, act, skip)) / 2e-6
            assert grads[j][a, b] == pytest.approx(fd, rel=1e-4, abs=1e-7)


@pytest.mark.parametrize("name", ["bcd", "gd", "adam"])
def test_every_solver_decreases_the_training_loss(name):
    _, (problem, ev) = _make()
    n = []
    sol = make_solver(name, TASK).solve(problem, Budget(max_iterations=100), lambda s, **k: n.append(ev.evaluate(s)))
    assert len(n) == 100
    assert ev.evaluate(sol)["rel_train_loss"] < 0.2


def test_evaluator_recomputes_from_the_weights_and_rejects_bad_solutions():
    _, (problem, ev) = _make()
    m = ev.evaluate(problem.W0)
    assert m["rel_train_loss"] == pytest.approx(1.0)
    assert m["train_loss"] == pytest.approx(
        np.mean(np.sum((forward(problem.W0, problem.X, "leaky-relu", False) - problem.Y) ** 2, axis=0))
    )
    with pytest.raises(ValueError, match="3 weight matrices"):
        ev.evaluate(problem.W0[:2])
    with pytest.raises(ValueError, match="shape"):
        ev.evaluate([problem.W0[0].T, problem.W0[1], problem.W0[2]])
    with pytest.raises(ValueError, match="weights"):
        ev.evaluate({"w": problem.W0})
    bad = ev.evaluate([np.full_like(w, np.nan) for w in problem.W0])
    assert bad["diverged"] == 1.0 and bad["rel_train_loss"] == 1.0 and m["diverged"] == 0.0


def test_digits_family_has_independent_inputs():
    _, (problem, ev) = _make(family="digits", depth=3)
    assert problem.X.shape == (512, 500) and problem.Y.shape == (10, 500)
    assert np.linalg.matrix_rank(problem.X) == 500
    assert ev.X_test.shape[1] == 1797 - 500


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"n": 300}, "linearly independent"),
        ({"activation": "gelu"}, "activation"),
        ({"depth": 1}, "depth"),
        ({"family": "mnist"}, "family"),
    ],
)
def test_bad_task_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        make_task(TASK, **kw)


def test_bench_end_to_end(tmp_path):
    from papergym.leaderboard import bench

    res = bench(
        TASK,
        solvers=["bcd", "gd", "adam"],
        task_kwargs={"family": "teacher", "depth": 3, "n": 40, "width": 16, "seeds": [0], "max_sweeps": 20},
        backend="serial",
        out=tmp_path / "cells",
    )
    assert (res.runs.status == "ok").all()
    folder = res.save(tmp_path / "out")
    assert (folder / "loss_vs_sweeps.png").exists()
