"""DeepRegression-v0 fidelity: nothing private reachable from the problem, every published statistic recomputed
by the evaluator (the reports-to-tolerance count from its own record, the lifted objective from the solution's
auxiliary blocks), diverged runs flagged with the failure value, and the headline on fresh seeds."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.agents.base import make_solver
from papergym.envs.tasks.base import Budget, make_task
from papergym.envs.tasks.deep_regression import lifted_objective
from papergym_tests import find_private

TASK = "DeepRegression-v0"


def _make(seed=0, **kw):
    args = {"family": "teacher", "activation": "leaky-relu", "depth": 3, "n": 50, "width": 32, "seeds": [seed]}
    args.update(kw)
    task = make_task(TASK, **args)
    return task.make(task.instances()[0])


@pytest.mark.parametrize("family,act", [("teacher", "leaky-relu"), ("random", "relu"), ("digits", "tanh")])
def test_problem_holds_nothing_private(family, act):
    for seed in (0,) if family == "digits" else (0, 1):
        problem, ev = _make(seed, family=family, activation=act)
        assert find_private(problem, [ev.X_test, ev.Y_test]) == []


def _exact_identity_fit(problem):
    """Weights of a depth-2 linear net with zero training loss (``W_1 X`` has full column rank)."""
    W1 = problem.W0[0]
    H = W1 @ problem.X
    return [W1, problem.Y @ np.linalg.pinv(H)]


def test_reports_to_tolerance_comes_from_the_evaluators_own_record():
    problem, ev = _make(activation="identity", depth=2, n=20, width=32)
    exact = _exact_identity_fit(problem)
    assert ev.evaluate(exact)["rel_train_loss"] < 1e-20
    problem, ev = _make(activation="identity", depth=2, n=20, width=32)  # a fresh evaluator
    # whatever a solver writes into its solution about its own progress is ignored
    m1 = ev.evaluate({"weights": problem.W0, "reports_to_1e-6": 1.0, "solved": 1.0})
    assert m1["reports_to_1e-6"] == problem.max_reports + 1 and m1["solved"] == 0.0
    ev.evaluate([0.5 * w for w in problem.W0])
    m3 = ev.evaluate(exact)
    assert m3["reports_to_1e-6"] == 3.0 and m3["solved"] == 1.0
    assert ev.evaluate(exact)["reports_to_1e-6"] == 3.0  # the returned solution = last report: not a new one
    assert ev.history[:2] == pytest.approx([1.0, ev.history[1]]) and len(ev.history) == 3


def test_aux_objective_is_recomputed_not_declared():
    problem, ev = _make(depth=3)
    seen = []
    sol = make_solver("bcd", TASK).solve(problem, Budget(max_iterations=3), lambda s, **k: seen.append(s))
    F = lifted_objective(sol["weights"], [problem.X] + sol["V"], problem.Y, "leaky-relu", False, 1.0)
    lie = dict(sol, aux_objective=0.0)
    assert ev.evaluate(lie)["aux_objective"] == pytest.approx(F, rel=1e-12)
    assert np.isnan(ev.evaluate(sol["weights"])["aux_objective"])  # no V: nothing to recompute
    with pytest.raises(ValueError, match="V_1"):
        ev.evaluate(dict(sol, V=[sol["V"][0][:, :5], sol["V"][1]]))
    with pytest.raises(ValueError, match="gamma"):
        ev.evaluate(dict(sol, gamma=-1.0))


def test_diverged_runs_get_the_failure_value():
    problem, ev = _make()
    m = ev.evaluate([1e3 * w for w in problem.W0])
    assert m["diverged"] == 1.0 and m["rel_train_loss"] == 1.0 and m["train_loss"] == pytest.approx(ev.L0)
    assert m["solved"] == 0.0 and np.isnan(m["test_mse"])
    m = ev.evaluate([np.full_like(w, np.inf) for w in problem.W0])
    assert m["diverged"] == 1.0
    # exploded weights whose dead units leave the training loss at the zero-output loss are diverged too
    ws = [w.copy() for w in problem.W0]
    ws[0] *= 1e9
    ws[-1] = np.zeros_like(ws[-1])
    m = ev.evaluate(ws)
    from papergym.envs.tasks.deep_regression import network_loss

    assert network_loss(ws, problem.X, problem.Y, problem.activation, problem.skip) <= 100 * ev.L0
    assert m["diverged"] == 1.0
    # gd with a step far above its stable range diverges and is flagged, not stored as a result
    problem, ev = _make(depth=5)
    last = []
    make_solver("gd", TASK, lr=50.0).solve(
        problem, Budget(max_iterations=30), lambda s, **k: last.append(ev.evaluate(s))
    )
    assert last[-1]["diverged"] == 1.0


@pytest.mark.slow
def test_headline_bcd_drives_the_loss_down_monotonically_on_fresh_seeds():
    """Global convergence: the lifted objective (recomputed by the evaluator) never increases and the network loss
    falls by orders of magnitude (leaky-ReLU, the paper's main case; fresh seeds)."""
    for seed in (2000, 2001):
        problem, ev = _make(seed, depth=3, n=50, width=64)
        pts = []
        make_solver("bcd", TASK).solve(problem, Budget(max_iterations=150), lambda s, **k: pts.append(ev.evaluate(s)))
        F = np.array([p["aux_objective"] for p in pts])
        assert np.all(np.diff(F) <= 1e-12 * F[:-1])
        assert pts[-1]["rel_train_loss"] < HEADLINE_REL and pts[-1]["diverged"] == 0.0


HEADLINE_REL = 0.05  # seed 2000 reaches 0.012 after 150 sweeps; the claim tested is the monotone descent
