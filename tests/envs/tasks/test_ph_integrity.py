"""``PointCloudPH-v0`` integrity: the public problem holds no path to the evaluator's private state (the voids'
centres and radii, the class labels of the classification subtask, the evaluator itself)."""

from __future__ import annotations

import numpy as np

from papergym_tests import find_private, require


def _private(ev) -> list:
    out: list = [ev]
    truth = getattr(ev, "truth", None)
    if truth is not None:
        out += [truth] + [np.asarray(v) for k, v in truth.items() if k in ("centres", "radii")]
    labels = getattr(ev, "labels", None)
    if labels is not None:
        out.append(np.asarray(labels))
    return out


def test_ph_problems_hold_no_private_state():
    require("gudhi", "tda")
    from papergym.envs.tasks.persistent_homology import PHTask

    task = PHTask(shapes=("cheese", "torus", "annulus"), fidelity_n=(2000,), reference_max_n=0)
    refs = [r for r in task.instances("dev") if r.params["family"] == "fidelity"][:4]
    assert refs, "no fidelity instances"
    for ref in refs:
        problem, ev = task.make(ref)
        priv = _private(ev)
        if ref.params["shape"] == "cheese":
            assert len(ev.truth["radii"]) > 1  # the walker compares arrays of more than one entry
        assert find_private(problem, priv) == [], ref.name
    # a leak is found: the walker is not blind to this problem type
    assert find_private(problem, [problem.points]) == ["problem.points"]


def test_ph_classify_problem_holds_no_labels():
    require("gudhi", "tda")
    require("sklearn", "tda")
    from papergym.envs.tasks.persistent_homology import PHTask

    task = PHTask(subtask="classify", classify_n=200, classify_per_class=3)
    ref = task.instances("dev")[0]
    problem, ev = task.make(ref)
    assert len(np.unique(ev.labels)) > 1
    assert find_private(problem, _private(ev)) == [], ref.name
