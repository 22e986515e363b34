"""LipschitzApprox-v0 integrity: the public problem reaches neither the private test set nor the target's
parameters, and the published statistics (train_seconds included) are the evaluator's or the runner's, never the
solver's own report."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.envs.tasks.base import make_task
from papergym.envs.tasks.lipschitz_approx import TASK_ID
from papergym_tests import find_private  # the helper of tests/conftest.py


def _identity_net(d):
    return {"layers": [{"type": "Linear", "A": np.eye(d)[:1], "c": np.zeros(1)}]}


@pytest.mark.parametrize("target,d", [("f1", 1), ("f2", 2), ("f3", 2), ("f4", 5)])
def test_approx_problem_reaches_no_private_state(target, d):
    task = make_task(TASK_ID, families=["approx"], dims=[d], targets=[target], seeds=[2007])
    problem, ev = task.make(task.instances()[0])
    assert find_private(problem, [ev, ev.X_test, ev.y_test]) == []
    assert not any(callable(getattr(problem, f)) for f in problem.__dataclass_fields__)
    # the target's parameters (centres, planes, direction) are not in the problem: only values at X_train are
    names = set(problem.__dataclass_fields__)
    assert names == {
        "family",
        "target",
        "X",
        "y",
        "d",
        "out_dim",
        "loss",
        "domain",
        "lipschitz_target",
        "epochs",
        "eps",
    }


def test_robust_problem_reaches_no_test_split():
    task = make_task(TASK_ID, families=["robust"], seeds=[2008])
    problem, ev = task.make(task.instances()[0])
    assert find_private(problem, [ev, ev.X_test, ev.y_test]) == []


def test_train_seconds_is_never_the_solvers_claim():
    task = make_task(TASK_ID, families=["approx"], dims=[2], targets=["f1"], seeds=[2009])
    problem, ev = task.make(task.instances()[0])
    sol = {**_identity_net(2), "meta": {"train_seconds": 1e-9, "cert_bound": 0.0}}
    m = ev.evaluate(sol)
    assert math.isnan(m["train_seconds"])  # the evaluator alone: unknown, not the claim
    assert m["cert_bound"] == pytest.approx(1.0)  # recomputed from the weights
    assert task.finalize(m, 2.5, "ok")["train_seconds"] == 2.5  # the runner's clock
