"""The ``diverged`` metric of RLDataSelection-v0, FeatureStaircase-v0 and LipschitzApprox-v0: 1.0 with the task's
failure value for a run whose outputs are non-finite or whose loss explodes, 0.0 otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.envs.tasks.base import make_task


# ------------------------------------------------------------------------------------------ LipschitzApprox-v0
def _lip(family="approx"):
    kw = dict(families=[family], seeds=[2001])
    if family == "approx":
        kw.update(dims=[2], targets=["f2"])
    task = make_task("LipschitzApprox-v0", **kw)
    return task.make(task.instances("dev")[0])


def _out(v, c=0.0):
    return {"type": "Output", "v": np.asarray(v, float), "c": float(c)}


@pytest.mark.parametrize("family", ["approx", "robust"])
def test_lipschitz_diverged(family):
    problem, ev = _lip(family)
    fine = ev.evaluate([_out([0.3, -0.2], 0.1)])
    assert fine["diverged"] == 0.0 and fine["certified"] == 1.0
    # an exploded fit: certified (bound 0.36) but its training loss is 10⁶× beyond the constant predictor's
    boom = ev.evaluate([_out([0.3, -0.2], 1e8)])
    assert boom["diverged"] == 1.0 and boom["error"] == 1.0 and boom["certified"] == 1.0
    # non-finite outputs: finite weights whose forward pass overflows
    big = {"type": "Linear", "A": np.full((2, 2), 1e200), "c": np.zeros(2)}
    inf = ev.evaluate([big, big, _out([1.0, 1.0])])
    assert inf["diverged"] == 1.0 and inf["error"] == 1.0
    if family == "approx":
        assert boom["rel_rmse"] == 1e300 and fine["rel_rmse"] < 10
    else:
        assert boom["clean_acc"] == 0.0 and boom["cert_acc@0.1"] == 0.0


# ------------------------------------------------------------------------------------------ FeatureStaircase-v0
def test_staircase_diverged_prediction_scores_as_the_null_prediction():
    task = make_task(
        "FeatureStaircase-v0", setting="diagonal-linear", d=5, a=1.0, alpha=1e-8, horizon=40_000, seeds=[2002]
    )
    _, ev = task.make(task.instances("dev")[0])
    emp = ev.empirical()
    l0 = ev.truth["l0"]
    good = ev.evaluate(emp)
    assert good["diverged"] == 0.0 and good["staircase_error"] == pytest.approx(0.0, abs=1e-12)
    null = ev.evaluate([(40_000.0, l0)])
    assert null["diverged"] == 0.0
    for bad in (
        [*emp[:-1], (emp[-1][0], float("nan"), None)],
        [(float("inf"), 1.0)],
        [(emp[0][0], float("inf"))],
        [*emp, (50_000.0, 1e7 * l0)],
    ):
        m = ev.evaluate(bad)
        assert m["diverged"] == 1.0, bad
        assert m["staircase_error"] == pytest.approx(null["staircase_error"]) and m["staircase_error"] > 0.5


# --------------------------------------------------------------------------------------------- RLDataSelection-v0
def test_data_selection_diverged_rl_update():
    from papergym_tests import require

    torch = require("torch", "torch")
    kw = dict(pool_size=40, test_size=30, max_digits=3, rl_epochs=1, batch_prompts=8, group_size=2, seeds=[2003])
    task = make_task("RLDataSelection-v0", **kw)
    _, ev = task.make(task.instances()[0])
    m = ev.evaluate(np.arange(4))
    assert m["diverged"] == 0.0 and 0.0 <= m["test_acc"] <= 1.0
    # an exploding recipe (Adam at lr 1e20): the policy's logits overflow and sampling from it fails
    task = make_task("RLDataSelection-v0", **{**kw, "rl_lr": 1e20})
    _, ev = task.make(task.instances()[0])
    bad = ev.evaluate(np.arange(4))
    assert bad["diverged"] == 1.0 and bad["test_acc"] == 0.0
    assert bad["acc_gain"] == pytest.approx(-bad["acc_before"]) and bad["acc_before"] == m["acc_before"]
    assert all(torch.isfinite(p).all() for p in ev.server.net.parameters())  # the served policy is untouched
