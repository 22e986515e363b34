"""PowerLawRandomFeatures-v0 fidelity: the public problem holds no private state, a diverged run is scored as
diverged (and stays so), the exponent-fitting window follows its documented rule, and the paper's headline on
fresh seeds at the scale this file can afford."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.agents.base import make_solver
from papergym.envs.tasks.base import make_task
from papergym.envs.tasks.power_law_features import population_trace, slope_window
from papergym.envs.tasks.sealed import SealedCall
from papergym_tests import find_private

TASK = "PowerLawRandomFeatures-v0"


def _run(task, ref, name, **hp):
    problem, ev = task.make(ref)
    last = {}

    def report(th, **k):
        last.update(ev.evaluate(th))

    make_solver(name, TASK, **hp).solve(problem, task.default_budget, report)
    return last, ev


def test_problem_holds_no_private_state():
    task = make_task(TASK, d=[12, 20], steps=50, seeds=[0, 1])
    refs = task.instances()
    assert len(refs) == 16
    for ref in refs[::3]:
        problem, ev = task.make(ref)
        m, o = ev.model, ev.oracle
        private = [m.W, m.b, m.theta_star, o._R, m, o, ev]
        assert isinstance(problem.oracle.grad, SealedCall)
        assert find_private(problem, private) == [], ref.name
        g = problem.oracle.grad(np.zeros(problem.d))  # the sealed callable still draws from the evaluator's oracle
        assert g.shape == (problem.d,) and o.count == problem.batch
        np.testing.assert_allclose(g, -(o._buf[0, :-1] * o._buf[0, -1]), rtol=1e-12)


def test_exploding_run_is_diverged_and_gets_the_failure_value():
    task = make_task(TASK, alpha=1.0, beta=0.7, d=[20], steps=400, seeds=[0])
    ref = task.instances()[0]
    last, _ = _run(task, ref, "sgd", c2=40.0)  # step 80x too large: the iterate explodes
    assert last["diverged"] == 1.0 and last["stable"] == 0.0
    assert last["excess_ratio"] == 1.0 and last["log10_excess"] == 0.0
    ok, _ = _run(task, ref, "sgd")
    assert ok["diverged"] == 0.0 and ok["excess_ratio"] < 0.5


def test_diverged_is_sticky():
    task = make_task(TASK, alpha=1.0, beta=0.7, d=[20], steps=10, seeds=[0])
    problem, ev = task.make(task.instances()[0])
    problem.oracle.grad(np.zeros(20))
    assert ev.evaluate(np.zeros(20))["diverged"] == 0.0
    assert ev.evaluate(np.full(20, 1e6))["diverged"] == 1.0  # finite but 10 x P(theta_0) exceeded
    after = ev.evaluate(np.zeros(20))  # a later sane report does not clear it
    assert after["diverged"] == 1.0 and after["excess_ratio"] == 1.0
    assert ev.evaluate(np.full(20, np.nan))["diverged"] == 1.0


def test_slope_window_rule():
    tr = population_trace(1.0, 400)
    assert slope_window(1.0, 100, 400, 100_000) == (100.0, pytest.approx(tr * 1e4))
    assert slope_window(1.0, 400, 1600, 100_000) == (100.0, 100_000.0)  # capped by the horizon
    lo, hi = slope_window(0.3, 100, 400, 100_000)  # T_r grows like v^(1-2 alpha): t_sat ~ 4.4 d
    assert hi == pytest.approx(population_trace(0.3, 400) * 100**0.6) and 300 < hi < 600
    assert lo == pytest.approx(hi / 10)  # less than two decades after 10: the window keeps one decade
    lo, hi = slope_window(1.0, 5, 20, 100_000)  # a tiny model saturates early: still one decade
    assert hi == pytest.approx(population_trace(1.0, 20) * 25) and lo == pytest.approx(hi / 10)


def test_slope_is_fitted_inside_the_window_only():
    task = make_task(TASK, alpha=1.0, beta=0.7, d=[30], steps=100_000, seeds=[0])
    _, ev = task.make(task.instances()[0])
    lo, hi = ev.window
    assert (lo, hi) == slope_window(1.0, 30, 120, 100_000)
    ts = np.geomspace(1, 1e5, 101)
    # power law t^-1.3 inside the window, a flat floor after it and a steep drop before it
    ev.history = [(t, (t / lo) ** -3.0 if t < lo else (t**-1.3 if t <= hi else hi**-1.3)) for t in ts]
    assert ev.slope() == pytest.approx(-1.3, abs=1e-9)


@pytest.mark.slow
def test_headline_on_fresh_seeds():
    """The measured result the README reports, on seeds no other test uses: at d = 100, alpha = 1, beta = 0.7,
    T = 2e4 (the d-limited regime of this scale, t_sat = T_r d^(2 alpha) ~ 1.6e4), DANA-decaying with the
    authors' constants has SGD's loss exponent (no outscaling: its momentum overtakes the gradient step only at
    t ~ 2e3) and SGD-M equals SGD; every run is stable."""
    task = make_task(TASK, alpha=1.0, beta=0.7, d=[100], steps=20_000, seeds=[2000, 2001, 2002])
    slopes = {"sgd": [], "sgd-momentum": [], "dana-decaying": []}
    for ref in task.instances():
        for name, got in slopes.items():
            last, _ = _run(task, ref, name)
            assert last["diverged"] == 0.0
            got.append(last["slope"])
    med = {k: float(np.median(v)) for k, v in slopes.items()}
    assert all(math.isfinite(v) and v < -0.4 for v in med.values()), med
    assert abs(med["sgd-momentum"] / med["sgd"] - 1) < 0.15, med
    assert 0.85 < med["dana-decaying"] / med["sgd"] < 1.25, med  # not the paper's 2 - 1/(2 alpha) = 1.5


def test_outscaling_regime_formula():
    from papergym.envs.tasks.power_law_features.report import outscaling_regime

    r = outscaling_regime(1.0, 0.7, 100, 400, 100_000)
    assert r["t_x"] == pytest.approx((0.5 * 5.7 * 1.5 / 0.1) ** 2)  # alpha = 1: exponent 1/(1 - 1/2) = 2
    assert r["t_floor"] == pytest.approx((population_trace(1.0, 400) * 1e4) ** (1 / 1.5))
    assert r["decades"] < 0  # the task's d = 100: DANA hits the floor before its momentum takes over
    assert outscaling_regime(1.0, 0.7, 1600, 6400, 10**7)["decades"] > 1  # the paper's scale: a decade or more
    assert outscaling_regime(0.3, 0.7, 100, 400, 100_000)["t_x"] == math.inf  # alpha <= 1/2: never
    assert outscaling_regime(1.0, 0.7, 100, 400, 100_000, c3=1.0)["t_x"] < r["t_x"] / 99


def test_report_counts_diverged_runs_and_states_the_regime():
    import pandas as pd

    from papergym.envs.tasks.power_law_features.report import slope_table

    base = {"param_alpha": 1.0, "param_beta": 0.7, "param_d": 100, "param_v": 400, "param_steps": 100_000}
    rows = [
        dict(
            base,
            instance=f"a=1,b=0.7/d=100/s{s}",
            label=lab,
            status=st,
            slope=sl,
            log10_excess=ex,
            diverged=float(st == "diverged"),
        )
        for s, lab, st, sl, ex in [
            (0, "sgd", "ok", -0.8, -3.6),
            (1, "sgd", "ok", -0.7, -3.5),
            (0, "dana-constant", "diverged", float("nan"), 0.0),
            (1, "dana-constant", "ok", -0.9, -3.7),
        ]
    ]
    text = slope_table(pd.DataFrame(rows))
    line = next(ln for ln in text.splitlines() if "dana-constant" in ln)
    assert line.split()[-1] == "1/2" and "-0.900" in line  # the diverged run is counted, not in the median
    assert "no outscaling range" in text


@pytest.mark.slow
def test_dana_wins_where_the_outscaling_range_exists():
    """At (alpha, beta, d) = (1.2, 0.7, 200) the outscaling range [t_x, t_floor] of dana-decaying spans ~0.8
    decades (``outscaling_regime``), and there DANA-decaying ends clearly below SGD on fresh seeds (the loss-level
    form of the paper's claim; single-run slopes over < 1 decade are too noisy to test the exponent ratio)."""
    from papergym.envs.tasks.power_law_features.report import outscaling_regime

    assert outscaling_regime(1.2, 0.7, 200, 800, 20_000)["decades"] > 0.5
    task = make_task(TASK, alpha=1.2, beta=0.7, d=[200], steps=20_000, seeds=[2100, 2101, 2102])
    gains = []
    for ref in task.instances():
        sgd, _ = _run(task, ref, "sgd")
        dana, _ = _run(task, ref, "dana-decaying")
        assert sgd["diverged"] == dana["diverged"] == 0.0
        gains.append(sgd["excess"] / dana["excess"])
    assert np.median(gains) > 2.0, gains
