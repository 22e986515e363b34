"""Fidelity of the bilevel tasks: the public problems hold no path to private state (sealed oracles), diverged
runs are flagged (``diverged = 1``, failure score), the evaluators' counters are their own, and the headline
behaviour on fresh seeds (2000+, used by no other test): DBGD reaches (1e-3, 1e-3)-stationarity from every circle
start, AdaSDBO does not diverge at a base step where the fixed-step baseline does."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.agents.base import make_solver
from papergym.envs.tasks.base import Budget, make_task
from papergym.envs.tasks.sealed import SealedCall
from papergym_tests import find_private, require

DEC, SIMPLE = "DecentralizedBilevel-v0", "SimpleBilevel-v0"


def _dec_private(ev) -> list:
    inst = ev.inst
    arrays = [v for v in vars(inst).values() if isinstance(v, np.ndarray) and v.size > 1]
    return [ev, ev.oracle, inst, *arrays]


@pytest.mark.parametrize("family", ["syn", "digits"])
def test_decentralized_problem_holds_no_private_state(family):
    require("networkx", "bilevel")
    if family == "digits":
        require("sklearn", "bilevel")
    task = make_task(
        DEC,
        family=family,
        graph=["ring", "er"],
        agents=4,
        scales=["1:1", "10:0.1"],
        heterogeneity=[1.0],
        rounds=10,
        seeds=[0],
    )
    for ref in task.instances()[:3]:
        problem, ev = task.make(ref)
        priv = _dec_private(ev)
        assert len(priv) > 6
        assert find_private(problem, priv) == [], ref.name
        for name in ("grad_x_f", "grad_y_f", "grad_y_l", "hvp_yy_l", "jvp_xy_l", "mix"):
            assert isinstance(getattr(problem.oracle, name), SealedCall)
        # the sealed oracle still works and counts in the evaluator
        X = np.zeros((problem.n, problem.d_x))
        assert problem.oracle.grad_y_l(X, np.zeros((problem.n, problem.d_y))).shape == (problem.n, problem.d_y)
        assert ev.oracle.work == problem.n


def test_simple_problem_holds_no_private_state():
    task = make_task(SIMPLE, seeds=[0, 1])
    for ref in task.instances():
        problem, ev = task.make(ref)
        inst = ev.inst
        priv = [ev, ev.oracle, inst] + [
            v for k, v in vars(inst).items() if isinstance(v, np.ndarray) and v.size > 1 and k != "x0"
        ]
        assert find_private(problem, priv) == [], ref.name
        assert isinstance(problem.oracle.grads, SealedCall)
    # the walker does see an unsealed bound method
    assert find_private(ev.oracle.grads, [inst]) != []


def test_decentralized_diverged_run_is_flagged():
    require("networkx", "bilevel")
    task = make_task(DEC, family="syn", graph="ring", agents=4, scales="1:1", rounds=20, seeds=[0])
    problem, ev = task.make(task.instances()[0])
    m = ev.evaluate(np.full((4, problem.d_x), np.nan))
    assert m["diverged"] == 1.0 and m["log10_hypergrad"] == 300.0 and m["val_loss"] >= 1e300
    X = np.zeros((4, problem.d_x))
    X[0] = 1e200
    m = ev.evaluate(X)  # finite, but the consensus error overflows
    assert m["diverged"] == 1.0
    m = ev.evaluate(np.zeros((4, problem.d_x)))
    assert m["diverged"] == 0.0 and m["log10_hypergrad"] < 1
    assert m["rounds"] == 0 and m["oracle_calls"] == 0  # the evaluator's own counters, not the solver's


def test_simple_diverged_run_is_flagged_and_gets_the_failure_score():
    task = make_task(SIMPLE, instance="circle", circle_dims=2, seeds=[0], max_work=1000)
    problem, ev = task.make(task.instances()[0])
    c = problem.oracle.grad_f(problem.x0)
    near = -c * (1 + 1e-6) + 1e-7 * np.array([c[1], -c[0]])  # just outside x*: stationary by the definition
    m = ev.evaluate(near)
    assert m["stationary"] == 1.0 and m["diverged"] == 0.0 and m["par2_calls"] < 2000
    m = ev.evaluate(np.full(2, 1e5))  # g = (2e10 - 1)^2: exploded
    assert m["diverged"] == 1.0 and m["par2_calls"] == 2000.0
    m = ev.evaluate(np.array([np.inf, 0.0]))
    assert m["diverged"] == 1.0 and m["r_f"] >= 1e300


def test_dbgd_reaches_stationarity_from_every_fresh_circle_start():
    """Headline (fresh seeds 2000-2019): DBGD with the paper's step 1/max(L_f, L_g) (line search only shortening
    it) reaches (1e-3, 1e-3)-stationarity near x* = -c from every start of G1."""
    task = make_task(SIMPLE, instance="circle", circle_dims=[2, 10], seeds=list(range(2000, 2010)))
    works = []
    for ref in task.instances():
        problem, ev = task.make(ref)
        x = make_solver("dbgd", SIMPLE, seed=0).solve(problem, task.default_budget, lambda x, **k: ev.evaluate(x))
        m = ev.evaluate(x)
        assert m["stationary"] == 1.0 and m["diverged"] == 0.0, (ref.name, m)
        assert m["dist_to_solution"] < 1e-2, (ref.name, m)
        works.append(m["par2_calls"])
    assert np.median(works) < 1000, works


def test_dbgd_line_search_never_lengthens_the_papers_step():
    """The circle start (seed 1005, d = 2) whose run cycled forever when the Armijo trial step could grow to 10/L:
    with the default (growth capped at the paper's step 1/L) it is solved; with growth 10 the cycle returns."""
    task = make_task(SIMPLE, instance="circle", circle_dims=2, seeds=[1005], max_work=5000)
    ref = task.instances()[0]
    out = {}
    for growth in (1.0, 10.0):
        problem, ev = task.make(ref)
        x = make_solver("dbgd", SIMPLE, seed=0, max_growth=growth).solve(
            problem, task.default_budget, lambda x, **k: ev.evaluate(x)
        )
        out[growth] = ev.evaluate(x)
    assert out[1.0]["stationary"] == 1.0
    assert out[10.0]["stationary"] == 0.0 and out[10.0]["par2_calls"] == 10000.0
    with pytest.raises(ValueError, match="max_growth"):
        make_solver("dbgd", SIMPLE, seed=0, max_growth=0.5)


def test_adasdbo_survives_the_step_that_diverges_the_fixed_step_baseline():
    """Headline, large-step side (fresh seed 2000): at base step gamma = 10 the fixed-step sldbo diverges (flagged)
    while AdaSDBO's cumulative-gradient-norm steps still bring the hypergradient down."""
    require("networkx", "bilevel")
    task = make_task(DEC, family="syn", graph="ring", agents=10, heterogeneity=1.0, scales="1:1", seeds=[2000])
    ref = task.instances()[0]
    res = {}
    for name in ("adasdbo", "sldbo"):
        problem, ev = task.make(ref)
        x0 = ev.evaluate(np.zeros((problem.n, problem.d_x)))["log10_hypergrad"]
        X = make_solver(name, DEC, seed=0, gamma=10.0).solve(problem, Budget(max_iterations=2000), lambda *a, **k: None)
        res[name] = ev.evaluate(X)
    assert res["sldbo"]["diverged"] == 1.0
    assert res["adasdbo"]["diverged"] == 0.0 and res["adasdbo"]["log10_hypergrad"] < x0 - 1, (x0, res["adasdbo"])
