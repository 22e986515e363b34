"""AdaSDBO's scale-invariant step rules (``normalized``, ``normalized-max``, ``independent-scaled``; module
docstring of ``agents/solvers/adasdbo.py``, step 4): scaling ``f`` by ``c_f`` and ``l`` by ``c_l`` leaves the ``x``
iterates unchanged and scales the step sizes exactly by ``1/c_f`` (``x``) and ``1/c_l`` (``y``, ``v``) as ``m0 → 0``;
the ``x`` (and ``v``) step shrinks when the lower-level accumulators grow with ``m^x`` held fixed; the references
cost two floats per agent from round 2 on."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.agents.base import make_solver
from papergym.envs.tasks.base import make_task

TASK = "DecentralizedBilevel-v0"
SCALE_FREE = ("normalized", "normalized-max", "independent-scaled")


def _run(scale, rounds=150, **hp):
    task = make_task(
        TASK, family="syn", graph="ring", agents=6, heterogeneity=1.0, scales=scale, rounds=rounds, seeds=[0]
    )
    problem, ev = task.make(task.instances()[0])
    xs = []
    solver = make_solver("adasdbo", TASK, seed=0, report_every=10, **hp)
    record = []
    steps = solver.steps

    def spy(m2, r2=None):
        out = steps(m2, r2)
        record.append(np.stack(out))
        return out

    solver.steps = spy
    X = solver.solve(problem, task.default_budget, lambda x, iteration=None, work=None: xs.append(np.array(x)))
    return solver, X, np.array(xs), np.array(record), ev


@pytest.mark.parametrize("rule", SCALE_FREE)
def test_iterates_and_steps_are_invariant_to_the_scales(rule):
    base = _run("1:1", step_rule=rule, m0=1e-12, gamma=1.0)
    for cl, cf in [(10.0, 0.1), (0.1, 10.0), (3.0, 0.5)]:
        other = _run(f"{cl}:{cf}", step_rule=rule, m0=1e-12, gamma=1.0)
        assert len(other[2]) == len(base[2]) == 15 and np.linalg.norm(base[1]) > 1e-2  # x moved
        np.testing.assert_allclose(other[2], base[2], rtol=1e-9, atol=1e-12)  # x iterates
        np.testing.assert_allclose(other[0].last_state["y"], base[0].last_state["y"], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(
            other[0].last_state["v"], cf / cl * base[0].last_state["v"], rtol=1e-9, atol=1e-12 * cf / cl
        )  # v ~ c_f/c_l
        # step sizes: η^x ~ 1/c_f, η^y ~ 1/c_l, η^v ~ 1/c_l (round 0 skipped: h^x = 0 there, η^x ~ 1/m0)
        ex, ey, ev = (other[3][1:, k] for k in range(3))
        bx, by, bv = (base[3][1:, k] for k in range(3))
        np.testing.assert_allclose(ex * cf, bx, rtol=1e-9)
        np.testing.assert_allclose(ey * cl, by, rtol=1e-9)
        np.testing.assert_allclose(ev * cl, bv, rtol=1e-9)
        assert other[4].evaluate(other[1])["hypergrad_sq"] == pytest.approx(
            base[4].evaluate(base[1])["hypergrad_sq"], rel=1e-6
        )


@pytest.mark.parametrize("rule", ["independent", "hierarchical"])
def test_the_older_rules_are_not_invariant(rule):
    """Control: the same comparison separates the older rules (their v or x steps carry the wrong units)."""
    base = _run("1:1", step_rule=rule, m0=1e-12, gamma=1.0)
    other = _run("10:0.1", step_rule=rule, m0=1e-12, gamma=1.0)
    assert np.max(np.abs(other[2] - base[2])) > 1e-3 * np.max(np.abs(base[2]))


@pytest.mark.parametrize("rule", ["normalized", "normalized-max"])
def test_x_and_v_steps_shrink_when_the_lower_accumulators_grow(rule):
    solver = make_solver("adasdbo", TASK, seed=0, step_rule=rule, gamma=1.0)
    r2 = np.array([[4.0, 9.0]])  # r^y = 2, r^v = 3
    mx = 1.0 if rule == "normalized" else 2.0  # normalized-max: once r^v μ exceeds m^x
    ex_prev, ev_prev = np.inf, np.inf
    for grow in [1.0, 1.5, 2.0, 4.0, 10.0]:  # m^y grows, m^x held fixed
        ex, ey, ev = solver.steps(np.array([[mx**2, (2.0 * grow) ** 2, 9.0]]), r2)
        assert ey[0] == pytest.approx(1.0 / (2.0 * grow))
        if grow > 1.0:
            assert ex[0] < ex_prev and ev[0] < ev_prev
        ex_prev, ev_prev = ex[0], ev[0]
    ex_prev = np.inf
    for grow in [1.0, 1.5, 2.0, 4.0, 10.0]:  # m^v grows, m^x and m^y held fixed
        ex, ey, ev = solver.steps(np.array([[mx**2, 4.0, (3.0 * grow) ** 2]]), r2)
        assert ey[0] == pytest.approx(0.5)
        if grow > 1.0:
            assert ex[0] < ex_prev and ev[0] < ev_prev
        ex_prev, ev_prev = ex[0], ev[0]
    # closed forms: μ = max(m^y/r^y, m^v/r^v)
    ex, ey, ev = solver.steps(np.array([[mx**2, 36.0, 9.0]]), r2)  # μ = 3
    assert ev[0] == pytest.approx(1.0 / (2.0 * 3.0))
    assert ex[0] == pytest.approx(1.0 / (mx * 3.0) if rule == "normalized" else 1.0 / max(mx, 3.0 * 3.0))


def test_steps_scale_with_the_units_of_their_variables():
    for rule in SCALE_FREE:
        solver = make_solver("adasdbo", TASK, seed=0, step_rule=rule, gamma=0.7)
        rng = np.random.default_rng(0)
        m2, r2 = rng.uniform(0.5, 3.0, (4, 3)), rng.uniform(0.1, 1.0, (4, 2))
        cl, cf = 7.0, 0.03
        e0 = solver.steps(m2, r2)
        e1 = solver.steps(m2 * np.array([cf, cl, cf]) ** 2, r2 * np.array([cl, cf]) ** 2)
        np.testing.assert_allclose(e1[0] * cf, e0[0], rtol=1e-12)
        np.testing.assert_allclose(e1[1] * cl, e0[1], rtol=1e-12)
        np.testing.assert_allclose(e1[2] * cl, e0[2], rtol=1e-12)
        with pytest.raises(ValueError, match="r2"):
            solver.steps(m2)


def test_references_cost_two_floats_per_agent_from_round_two():
    T, n, d = 30, 6, 20
    _, _, _, _, ev = _run("1:1", rounds=T, step_rule="normalized")
    k = 2 * (d + 2 * d) + 3
    assert ev.evaluate(np.zeros((n, d)))["floats_sent"] == n * (k * T + 2 * (T - 1))
    _, _, _, _, ev = _run("1:1", rounds=T, step_rule="independent")
    assert ev.evaluate(np.zeros((n, d)))["floats_sent"] == n * k * T


def test_unknown_step_rule_is_rejected():
    with pytest.raises(ValueError, match="step_rule"):
        make_solver("adasdbo", TASK, seed=0, step_rule="nested")
