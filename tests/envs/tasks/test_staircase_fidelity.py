"""FeatureStaircase-v0 fidelity: the public problem reaches none of the evaluator's ground truth, the published
statistics are the evaluator's, and the modular-addition instance is the authors' notebook's (template scale,
step size), under which gradient descent learns all three frequencies 1, 3, 5 -- in that order -- within the
horizon; AGF predicts them (on seed 0 in that order)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.agents.base import make_solver
from papergym.envs.tasks.base import make_task
from papergym.envs.tasks.staircase import TASK_ID
from papergym.envs.tasks.staircase.modular import (
    AMPLITUDES,
    modular_instance,
    modular_lr,
)
from papergym_tests import find_private  # the helper of tests/conftest.py


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE", str(tmp_path / "cache"))


def _private(ev):
    tr = ev.truth
    return [ev, tr, *(v for v in tr.values() if isinstance(v, np.ndarray) and v.size > 1)]


@pytest.mark.parametrize(
    "setting,kw",
    [
        ("diagonal-linear", dict(d=[5], a=[1.0], alpha=[1e-4], horizon=20_000, lr=1e-2)),
        ("linear", dict(linear_d=[4], linear_samples=200, linear_init=[1e-4], linear_horizon=5_000, linear_lr=1e-2)),
        ("modular-addition", dict(mod_horizon=3_000)),
    ],
)
def test_problem_reaches_no_ground_truth(setting, kw):
    task = make_task(TASK_ID, setting=[setting], seeds=[2003], **kw)
    problem, ev = task.make(task.instances()[0])
    ev.prepare()
    assert find_private(problem, _private(ev)) == []
    assert not any(callable(getattr(problem, f)) for f in problem.__dataclass_fields__)


def test_published_statistics_are_the_evaluators():
    task = make_task(
        TASK_ID, setting=["diagonal-linear"], d=[5], a=[1.0], alpha=[1e-4], horizon=20_000, lr=1e-2, seeds=[2004]
    )
    problem, ev = task.make(task.instances()[0])
    sol = make_solver("agf", TASK_ID).solve(problem, task.default_budget, None)
    m = ev.evaluate({"steps": sol, "n_measured": 0, "gd_seconds": 0.0, "n_predicted": 99})
    assert m["n_measured"] == len(ev.truth["steps"]) and m["gd_seconds"] == ev.truth["seconds"] > 0
    assert m["n_predicted"] == sum(1 for t, _, _ in sol if t <= problem.horizon)
    fin = task.finalize(m, 0.5, "ok")
    assert fin["time_s"] == 0.5 and fin["cost_ratio"] == pytest.approx(0.5 / m["gd_seconds"])


def test_modular_instance_is_the_notebooks():
    """The notebook's template is ifft(spectrum) with 10, 5, 2.5 at ±1, ±3, ±5 (cosine amplitudes 2A/p), and its
    SGD lr 0.01 on nn.MSELoss (mean over pairs and outputs) is lr 0.02/p on this task's ½-sum loss."""
    p = 20
    X, Y, tau = modular_instance(p, 2005)
    spec = np.fft.fft(tau)
    for k, a in AMPLITUDES.items():
        assert abs(spec[k]) == pytest.approx(a) and abs(spec[-k]) == pytest.approx(a)
    assert np.sum(tau**2) == pytest.approx(p / 2 * sum((2 * a / p) ** 2 for a in AMPLITUDES.values()))
    assert abs(tau.mean()) < 1e-12
    assert modular_lr(p) == pytest.approx(1e-3)
    task = make_task(TASK_ID, setting=["modular-addition"], seeds=[2005], mod_horizon=100)
    problem, _ = task.make(task.instances()[0])
    assert problem.lr == pytest.approx(1e-3) and problem.momentum == 0.9
    # one heavy-ball step on this loss at lr 0.02/p equals one on the notebook's MSE at lr 0.01
    Wi, Wo = problem.init["W_in"], problem.init["W_out"]
    h = X @ Wi.T
    r = Y - (h * h) @ Wo.T
    g_sum = -(r.T @ (h * h)) / X.shape[0]  # ∇ of ½ mean_pairs ‖r‖²
    g_mse = -2.0 * (r.T @ (h * h)) / (X.shape[0] * p)  # ∇ of mean over pairs and outputs of r²
    assert np.allclose(problem.lr * g_sum, 0.01 * g_mse)


@pytest.mark.slow
def test_modular_staircase_learns_1_3_5_and_agf_predicts_it_fresh_seed():
    """Headline on a fresh seed: GD learns frequencies 1, 3, 5 in decreasing amplitude order within 2e5
    iterations (the last plateau well below the energy of frequency 5); AGF predicts all three within the
    horizon and beats the baselines."""
    task = make_task(TASK_ID, setting=["modular-addition"], seeds=[2006])
    problem, ev = task.make(task.instances()[0])
    emp = ev.empirical()
    freqs = list(dict.fromkeys(f for _, _, f in emp))
    assert freqs == [1, 3, 5], emp
    level_after_1_3 = problem.l0 * AMPLITUDES[5] ** 2 / sum(a * a for a in AMPLITUDES.values())
    assert emp[-1][1] < 0.5 * level_after_1_3  # frequency 5 learned (at least its first sub-drop) in the horizon
    sc = {}
    for name in ("agf", "greedy-memoryless", "independent-modes", "one-jump"):
        sol = make_solver(name, TASK_ID).solve(problem, task.default_budget, None)
        m = ev.evaluate(sol)
        sc[name] = m["staircase_error"]
        if name == "agf":
            # all three frequencies within the horizon; the order term is not asserted: on this seed AGF's first
            # activation (a 2 % drop, before the measured first drop) is attributed to frequency 3 (order error 1/3)
            assert {f for t, _, f in sol if t <= problem.horizon} == {1, 3, 5}
            assert m["time_error"] < 1.0
    assert sc["agf"] == min(sc.values()) and math.isfinite(sc["agf"]), sc
