"""NystromODE-v0 task: the 16-problem suite (closed forms against their ODEs and initial conditions,
linear forms, Jacobians, the N7 reference), grids, parameters, evaluator, task kwargs, splits, PAR-2."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from papergym.envs.tasks import base
from papergym.envs.tasks.base import Budget, InstanceRef, MissingSecretError, make_task
from papergym.envs.tasks.ode import task as ode

ALL = ode.PROBLEMS
CLOSED = [p for p in ALL if p != "N7"]
SEEDS = (0, 1, 12345)


# ------------------------------------------------------------------------------------------ helpers
def cauchy_derivs(f, t, r=0.05, N=64):
    """y, y', y'' of an analytic f at real t by the trapezoidal Cauchy integral on a circle of radius r
    (spectrally accurate; radius below the distance to every singularity of the suite)."""
    th = 2 * np.pi * np.arange(N) / N
    z = t[:, None] + r * np.exp(1j * th)[None, :]
    F = f(z.reshape(-1)).reshape(len(t), N, -1)
    out = [f(t)]
    for n in (1, 2):
        out.append(((F * np.exp(-1j * n * th)[None, :, None]).mean(axis=1) * math.factorial(n) / r**n).real)
    return out


def exact_fun(name, params):
    return lambda t: ode.exact_solution(name, params, t)


def test_cauchy_helper_on_known_function():
    t = np.linspace(-1, 3, 17)
    y, d1, d2 = cauchy_derivs(lambda z: np.stack([np.sin(z), np.exp(2 * z)], axis=-1), t)
    np.testing.assert_allclose(d1, np.stack([np.cos(t), 2 * np.exp(2 * t)], -1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(d2, np.stack([-np.sin(t), 4 * np.exp(2 * t)], -1), rtol=1e-11, atol=1e-11)


# ------------------------------------------------------------------------------------------- suite
SHAPES = {  # kind, order, dim, (t0, tf) at canonical params (the 16-problem suite)
    "L1": ("linear", 1, 1, (0, 1)),
    "L2": ("linear", 1, 1, (0, 10)),
    "L3": ("linear", 1, 1, (0, 2)),
    "L4": ("linear", 1, 1, (0, 2)),
    "L5": ("linear", 1, 1, (0, 5)),
    "L6": ("linear", 2, 1, (0, 2)),
    "L7": ("linear", 2, 1, (0, 2 * np.pi)),
    "L8": ("linear", 2, 1, (0, 10)),
    "L9": ("linear", 1, 2, (0, 2 * np.pi)),
    "N1": ("nonlinear", 1, 1, (0, 10)),
    "N2": ("nonlinear", 1, 1, (0, 1)),
    "N3": ("nonlinear", 1, 1, (0, 5)),
    "N4": ("nonlinear", 1, 1, (0, 3)),
    "N5": ("nonlinear", 1, 2, (0, 3)),
    "N6": ("nonlinear", 2, 1, (0, 2)),
    "N7": ("nonlinear", 1, 2, (0, 10)),
}

CANONICAL = {
    "L1": {"y0": 1.0},
    "L2": {"y0": 1.0},
    "L3": {"a": 0.2},
    "L4": {"c": 1.0, "y0": 1.0},
    "L5": {"k": 10.0},
    "L6": {"a": 0.2},
    "L7": {"omega": 1.0},
    "L8": {"zeta": 0.1, "omega": 2.0},
    "L9": {"omega": 1.0},
    "N1": {"r": 1.0, "y0": 0.5},
    "N2": {"y0": 0.0, "tf": 1.0},
    "N3": {"y0": 1.0},
    "N4": {"y0": 1.0},
    "N5": {"tf": 3.0},
    "N6": {"c": 1.0},
    "N7": {"a": 1.5, "b": 3.0, "s": 1.0},
}

RANGES = {
    "L1": {"y0": (0.5, 2)},
    "L2": {"y0": (0, 2)},
    "L3": {"a": (0.1, 0.5)},
    "L4": {"c": (0.5, 2), "y0": (0.5, 2)},
    "L5": {"k": (5, 20)},
    "L6": {"a": (0.1, 0.5)},
    "L7": {"omega": (0.5, 2)},
    "L8": {"zeta": (0.05, 0.3), "omega": (1, 3)},
    "L9": {"omega": (0.5, 2)},
    "N1": {"r": (0.5, 1.5), "y0": (0.1, 0.9)},
    "N2": {"y0": (-0.5, 0.5)},
    "N3": {"y0": (0.5, 2)},
    "N4": {"y0": (0.5, 2)},
    "N5": {"tf": (2, 4)},
    "N6": {"c": (0.75, 1.5)},
    "N7": {"a": (1, 2), "b": (2, 4), "s": (0.8, 1.2)},
}


def test_suite_lists_the_16_problems_with_their_shapes():
    assert ALL == tuple(SHAPES)
    assert ode.LINEAR_PROBLEMS == tuple(f"L{i}" for i in range(1, 10))
    assert ode.NONLINEAR_PROBLEMS == tuple(f"N{i}" for i in range(1, 8))
    for name, (kind, order, dim, (t0, tf)) in SHAPES.items():
        pr = ode.make_problem(name, 10)
        assert (pr.name, pr.kind, pr.order, pr.dim) == (name, kind, order, dim)
        assert (pr.t0, pr.tf) == pytest.approx((t0, tf), abs=1e-15)
        assert pr.ic.shape == (order, dim)
        assert (pr.linear_form is not None) == (kind == "linear")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", CLOSED)
def test_closed_form_satisfies_ode_and_initial_conditions(name, seed):
    pr = ode.make_problem(name, 20, seed)
    t = np.linspace(pr.t0, pr.tf, 201)
    y, d1, d2 = cauchy_derivs(exact_fun(name, pr.params), t)
    lhs = d1 if pr.order == 1 else d2
    res = lhs - pr.rhs(t, y, d1 if pr.order == 2 else None)
    assert np.max(np.abs(res)) <= 1e-8 * max(1.0, np.max(np.abs(lhs)))
    # initial conditions: y(t0) and, for order 2, y'(t0)
    np.testing.assert_allclose(y[0], pr.ic[0], rtol=1e-13, atol=1e-14)
    if pr.order == 2:
        np.testing.assert_allclose(d1[0], pr.ic[1], rtol=1e-10, atol=1e-12)


def test_l2_particular_part_by_hand_values():
    # y' + 2y = t^3 sin(t/2), y(0)=1: compare with an independent tight integration
    from scipy.integrate import solve_ivp

    sol = solve_ivp(
        lambda t, y: t**3 * np.sin(t / 2) - 2 * y,
        (0, 10),
        [1.0],
        method="DOP853",
        rtol=1e-12,
        atol=1e-12,
        dense_output=True,
    )
    t = np.linspace(0, 10, 50)
    np.testing.assert_allclose(ode.exact_solution("L2", {"y0": 1.0}, t)[:, 0], sol.sol(t)[0], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("seed", (0, 3))
@pytest.mark.parametrize("name", ode.LINEAR_PROBLEMS)
def test_linear_form_is_consistent_with_exact_solution_and_rhs(name, seed):
    pr = ode.make_problem(name, 20, seed)
    lf = pr.linear_form
    t = np.linspace(pr.t0, pr.tf, 101)
    A = lf.coeffs(t)
    r = lf.forcing(t)
    assert A.shape == (pr.order + 1, t.size, pr.dim, pr.dim)
    assert r.shape == (t.size, pr.dim)
    ders = cauchy_derivs(exact_fun(name, pr.params), t)
    lhs = sum(np.einsum("kij,kj->ki", A[k], ders[k]) for k in range(pr.order + 1))
    assert np.max(np.abs(lhs - r)) <= 1e-8 * max(1.0, np.max(np.abs(r)))
    # rhs = a_order^{-1} (r - sum_{k<order} a_k y^(k)) at arbitrary (y, y')
    rng = np.random.default_rng(1)
    yy = [rng.normal(size=(t.size, pr.dim)) for _ in range(pr.order)]
    acc = r - sum(np.einsum("kij,kj->ki", A[k], yy[k]) for k in range(pr.order))
    expect = np.linalg.solve(A[pr.order], acc[..., None])[..., 0]
    got = pr.rhs(t, yy[0], yy[1] if pr.order == 2 else None)
    np.testing.assert_allclose(got, expect, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", (0, 5))
@pytest.mark.parametrize("name", ALL)
def test_jacobian_matches_finite_differences(name, seed):
    pr = ode.make_problem(name, 20, seed)
    rng = np.random.default_rng(2)
    k, p = 7, pr.dim
    t = rng.uniform(pr.t0, pr.tf, k)
    y = rng.uniform(0.2, 1.5, (k, p))
    dy = rng.uniform(-1, 1, (k, p)) if pr.order == 2 else None
    f_y, f_dy = pr.jac(t, y, dy)
    assert f_y.shape == (k, p, p)
    h = 1e-6

    def fd(which):
        J = np.empty((k, p, p))
        for j in range(p):
            e = np.zeros(p)
            e[j] = h
            if which == "y":
                J[:, :, j] = (pr.rhs(t, y + e, dy) - pr.rhs(t, y - e, dy)) / (2 * h)
            else:
                J[:, :, j] = (pr.rhs(t, y, dy + e) - pr.rhs(t, y, dy - e)) / (2 * h)
        return J

    np.testing.assert_allclose(f_y, fd("y"), rtol=1e-7, atol=1e-7)
    if pr.order == 1:
        assert f_dy is None
    elif f_dy is None:  # f does not involve y'
        np.testing.assert_array_equal(pr.rhs(t, y, dy), pr.rhs(t, y, dy + 1.0))
    else:
        assert f_dy.shape == (k, p, p)
        np.testing.assert_allclose(f_dy, fd("dy"), rtol=1e-7, atol=1e-7)


def test_rhs_shapes_and_scalar_time():
    pr = ode.make_problem("N5", 10)
    assert pr.rhs(np.array([0.5, 1.0]), np.ones((2, 2))).shape == (2, 2)
    assert pr.rhs(0.5, np.ones(2)).shape == (1, 2)
    p1 = ode.make_problem("L1", 10)
    np.testing.assert_array_equal(
        p1.rhs(np.array([0.1, 0.2]), np.ones(2)), p1.rhs(np.array([0.1, 0.2]), np.ones((2, 1)))
    )


# -------------------------------------------------------------------------------------------- N7
def test_n7_reference_against_independent_radau_solve_and_first_integral():
    from scipy.integrate import solve_ivp

    pr = ode.make_problem("N7", 10)
    a, b, s = pr.params["a"], pr.params["b"], pr.params["s"]
    t = pr.t_query
    ref = ode.exact_solution("N7", pr.params, t)
    np.testing.assert_allclose(ref[0], [10 * s, 5 * s], rtol=1e-14)
    rad = solve_ivp(
        lambda _t, z: [a * z[0] - z[0] * z[1], -b * z[1] + z[0] * z[1]],
        (0, 10),
        [10 * s, 5 * s],
        method="Radau",
        rtol=1e-12,
        atol=1e-12,
        t_eval=t,
        jac=lambda _t, z: [[a - z[1], -z[0]], [z[1], -b + z[0]]],
    )
    assert np.max(np.abs(rad.y.T - ref)) <= 1e-8 * np.max(np.abs(ref))
    x, z = ref[:, 0], ref[:, 1]
    V = x - b * np.log(x) + y_ln(z, a)
    assert np.ptp(V) <= 1e-9 * abs(V[0])
    # cached per parameter set: the same dense solution object
    assert ode._n7_dense(a, b, s, 0.0, 10.0) is ode._n7_dense(a, b, s, 0.0, 10.0)


def y_ln(z, a):
    return z - a * np.log(z)


def test_n7_seeded_reference_first_integral():
    params = ode.problem_params("N7", 4)
    t = np.linspace(0, 10, 300)
    ref = ode.exact_solution("N7", params, t)
    V = ref[:, 0] - params["b"] * np.log(ref[:, 0]) + y_ln(ref[:, 1], params["a"])
    assert np.ptp(V) <= 1e-9 * abs(V[0])
    with pytest.raises(ValueError, match="N7"):
        ode.exact_solution("N7", params, [11.0])


# ------------------------------------------------------------------------------- grids and params
@pytest.mark.parametrize("name", ["L1", "N2", "N5", "L7"])
def test_collocation_and_query_grids(name):
    pr = ode.make_problem(name, 40, seed=3, n_query=250)
    h = (pr.tf - pr.t0) / 40
    assert pr.t_train.shape == (40,) and pr.t_query.shape == (250,)
    assert pr.t_train[0] == pytest.approx(pr.t0 + h) and pr.t_train[-1] == pytest.approx(pr.tf, abs=0)
    np.testing.assert_allclose(np.diff(pr.t_train), h, rtol=1e-12)
    assert pr.t_query[0] == pr.t0 and pr.t_query[-1] == pr.tf
    np.testing.assert_allclose(np.diff(pr.t_query), (pr.tf - pr.t0) / 249, rtol=1e-10)
    assert pr.n == 40
    with pytest.raises(ValueError):  # read-only: shared arrays cannot be mutated by a solver
        pr.t_train[0] = 0.0


def test_seed_zero_is_canonical_and_other_seeds_in_range_and_deterministic():
    for name in ALL:
        assert ode.problem_params(name, 0) == CANONICAL[name]
        draws = [ode.problem_params(name, s) for s in range(1, 30)]
        for d in draws:
            for k, (lo, hi) in RANGES[name].items():
                assert lo <= d[k] <= hi
        assert ode.problem_params(name, 17) == ode.problem_params(name, 17)
        key = next(iter(RANGES[name]))
        assert len({d[key] for d in draws}) == len(draws)
    # the documented draw: rng.uniform over the ranges in order
    rng = np.random.default_rng(9)
    expect = {"zeta": rng.uniform(0.05, 0.3), "omega": rng.uniform(1, 3)}
    assert ode.problem_params("L8", 9) == expect


def test_n2_tf_follows_y0():
    for s in range(1, 10):
        p = ode.problem_params("N2", s)
        assert p["tf"] == pytest.approx(0.65 * (np.pi / 2 - np.arctan(p["y0"])))
        pr = ode.make_problem("N2", 10, s)
        assert pr.tf == p["tf"] and pr.t_query[-1] == p["tf"]
        assert np.all(np.isfinite(ode.exact_solution("N2", p, pr.t_query)))
    assert ode.make_problem("N2", 10, 0).tf == 1.0


# ------------------------------------------------------------------------------------------ evaluator
@pytest.fixture(scope="module")
def task():
    return ode.ODETask()


def _ref(problem, n=100, seed=0):
    return InstanceRef(ode.TASK_ID, "dev", f"{problem}/n={n}/s{seed}", seed, {"problem": problem, "n": n})


@pytest.mark.parametrize("name", ALL)
def test_exact_solution_scores_zero_and_passes(task, name):
    pr, ev = task.make(_ref(name, 30, 2))
    y = ode.exact_solution(name, ode.problem_params(name, 2), pr.t_query)
    m = ev.evaluate(y)
    assert set(m) == set(task.metrics) - {"par2_seconds", "solve_seconds"}
    for k in ("rel_rmse", "rel_mae", "rel_linf", "rmse", "mae", "linf"):
        assert m[k] == 0.0
    assert m["passed_gate"] == 1.0 and m["diverged"] == 0.0


def test_constant_offset_known_errors(task):
    pr, ev = task.make(_ref("L3"))
    y = ode.exact_solution("L3", ode.problem_params("L3", 0), pr.t_query)
    c = 1e-3
    m = ev.evaluate({"y": y[:, 0] + c, "meta": {"fit_seconds": 0.25}})
    assert m["rmse"] == pytest.approx(c, rel=1e-9) and m["mae"] == pytest.approx(c, rel=1e-9)
    assert m["linf"] == pytest.approx(c, rel=1e-9)
    assert m["rel_rmse"] == pytest.approx(c / np.sqrt(np.mean(y**2)), rel=1e-9)
    assert m["rel_mae"] == pytest.approx(c / np.mean(np.abs(y)), rel=1e-9)
    assert m["rel_linf"] == pytest.approx(c / np.max(np.abs(y)), rel=1e-9)
    # the solver's claimed fit time is never published; a run outside the gate is diverged
    assert m["passed_gate"] == 0.0 and m["diverged"] == 1.0 and "fit_seconds" not in m
    # just inside / outside the 1e-4 gate
    rms = np.sqrt(np.mean(y**2))
    assert ev.evaluate(y + 0.99e-4 * rms)["passed_gate"] == 1.0
    assert ev.evaluate(y + 1.01e-4 * rms)["passed_gate"] == 0.0


def test_system_offset_on_one_component(task):
    pr, ev = task.make(_ref("L9"))
    y = ode.exact_solution("L9", ode.problem_params("L9", 0), pr.t_query).copy()
    y[:, 1] += 0.02
    m = ev.evaluate(y)
    assert m["rmse"] == pytest.approx(0.02 / np.sqrt(2), rel=1e-9)
    assert m["mae"] == pytest.approx(0.01, rel=1e-9) and m["linf"] == pytest.approx(0.02, rel=1e-9)


def test_gates_default_and_overrides():
    t = ode.ODETask()
    assert t.gate("L5") == t.gate("N7") == 1e-3
    assert all(t.gate(p) == 1e-4 for p in ALL if p not in ("L5", "N7"))
    t2 = ode.ODETask(accuracy_gate={"L1": 0.5})
    assert t2.gate("L1") == 0.5 and t2.gate("L5") == 1e-3
    t3 = ode.ODETask(accuracy_gate=1e-2)
    assert all(t3.gate(p) == 1e-2 for p in ALL)
    pr, ev = t2.make(_ref("L1"))
    y = ode.exact_solution("L1", ode.problem_params("L1", 0), pr.t_query)
    assert ev.evaluate(y * 1.4)["passed_gate"] == 1.0  # rel_rmse 0.4 <= 0.5
    assert ev.evaluate(y * 1.6)["passed_gate"] == 0.0


def test_non_finite_predictions_fail_without_error(task):
    pr, ev = task.make(_ref("N1"))
    y = ode.exact_solution("N1", ode.problem_params("N1", 0), pr.t_query).copy()
    y[3] = np.nan
    m = ev.evaluate(y)
    assert m["rmse"] == m["rel_rmse"] == m["linf"] == np.inf and m["passed_gate"] == 0.0
    y[3] = np.inf
    assert ev.evaluate(y)["rel_mae"] == np.inf


def test_malformed_solutions_raise(task):
    pr, ev = task.make(_ref("L9"))
    y = ode.exact_solution("L9", ode.problem_params("L9", 0), pr.t_query)
    with pytest.raises(ValueError, match="shape"):
        ev.evaluate(y[:, 0])  # p = 2 needs (1000, 2)
    with pytest.raises(ValueError, match="shape"):
        ev.evaluate(y[:-1])
    with pytest.raises(ValueError, match="numeric"):
        ev.evaluate("abc")
    with pytest.raises(ValueError, match="'y'"):
        ev.evaluate({"pred": y})
    assert "fit_seconds" not in ev.evaluate({"y": y, "meta": {"fit_seconds": "fast"}})  # meta is not scored
    with pytest.raises(ValueError, match="meta"):
        ev.evaluate({"y": y, "meta": 3})


def test_evaluator_holds_exact_values_on_query_grid(task):
    pr, ev = task.make(_ref("L8", 1000, 0))
    assert pr.t_query.shape == (1000,) and pr.t_train.shape == (1000,)
    np.testing.assert_array_equal(ev.t_query, pr.t_query)
    np.testing.assert_allclose(ev.y_exact, ode.exact_solution("L8", ode.problem_params("L8", 0), pr.t_query))


# ------------------------------------------------------------------------------------------------ task
def test_registered_task_protocol():
    assert ode.TASK_ID in base.list_tasks()
    t = make_task("NystromODE-v0")
    assert isinstance(t, ode.ODETask) and isinstance(t, base.Task)
    assert t.id == "NystromODE-v0" and t.primary == "par2_seconds"
    assert t.metrics == {
        "par2_seconds": "min",
        "rel_rmse": "min",
        "rel_mae": "min",
        "rel_linf": "min",
        "rmse": "min",
        "mae": "min",
        "linf": "min",
        "solve_seconds": "min",
        "passed_gate": "max",
        "diverged": "min",
    }
    assert t.default_budget == Budget(max_seconds=60, max_iterations=50)


def test_dev_instances():
    t = ode.ODETask()
    refs = t.instances("dev")
    assert len(refs) == 32 and refs[0].name == "L1/n=100/s0" and refs[0].params == {"problem": "L1", "n": 100}
    assert refs[1].name == "L1/n=1000/s0" and refs[-1].name == "N7/n=1000/s0"
    assert len({r.name for r in refs}) == 32
    t2 = ode.ODETask(problems=["N6", "L2"], sizes=[10], seeds=range(3), n_query=50)
    refs2 = t2.instances()
    assert [r.name for r in refs2] == [f"{p}/n=10/s{s}" for p in ("N6", "L2") for s in range(3)]
    assert all(r.as_dict() == InstanceRef.from_dict(r.as_dict()).as_dict() for r in refs2)
    pr, ev = t2.make(refs2[4])
    assert pr.params == {} and pr.t_query.shape == (50,) and pr.n == 10  # the parameters stay with the evaluator
    np.testing.assert_array_equal(ev.y_exact, ode.exact_solution("L2", ode.problem_params("L2", 1), pr.t_query))
    with pytest.raises(ValueError, match="split"):
        t2.instances("train")


def test_test_split_needs_secret_and_differs_from_dev(monkeypatch):
    t = ode.ODETask(problems=["L1", "N7"], sizes=(100,))
    monkeypatch.delenv(base.SECRET_ENV, raising=False)
    with pytest.raises(MissingSecretError):
        t.instances("test")
    monkeypatch.setenv(base.SECRET_ENV, "s3cret")
    refs = t.instances("test")
    assert [r.name for r in refs] == [f"{p}/n=100/t{i}" for p in ("L1", "N7") for i in range(5)]
    assert refs == t.instances("test")  # deterministic
    assert [r.seed for r in refs[:5]] == base.hidden_seeds(ode.TASK_ID, "L1/n=100", 5, secret="s3cret")
    assert {r.seed for r in refs}.isdisjoint(set(t.seeds))
    _, ev = t.make(refs[6])
    _, dev_ev = t.make(t.instances("dev")[1])
    assert not np.allclose(ev.y_exact, dev_ev.y_exact)
    params = ode.problem_params("N7", refs[6].seed)
    assert all(RANGES["N7"][k][0] <= params[k] <= RANGES["N7"][k][1] for k in RANGES["N7"])
    monkeypatch.setenv(base.SECRET_ENV, "other")
    assert [r.seed for r in t.instances("test")] != [r.seed for r in refs]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"problems": ["L1", "X9"]}, "X9.*valid problems: L1, L2"),
        ({"problems": []}, "empty"),
        ({"problems": 3}, "problems"),
        ({"sizes": (100, 0)}, "sizes"),
        ({"sizes": (1.5,)}, "sizes"),
        ({"sizes": (True,)}, "sizes"),
        ({"sizes": ()}, "sizes"),
        ({"seeds": (-1,)}, "seeds"),
        ({"n_query": 1}, "n_query"),
        ({"n_query": 10.0}, "n_query"),
        ({"accuracy_gate": -1e-4}, "accuracy_gate"),
        ({"accuracy_gate": float("nan")}, "accuracy_gate"),
        ({"accuracy_gate": {"Z1": 1e-3}}, "Z1.*valid problems"),
        ({"accuracy_gate": {"L1": 0}}, r"accuracy_gate\['L1'\]"),
    ],
)
def test_bad_kwargs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ode.ODETask(**kwargs)


def test_kwargs_normalised():
    t = ode.ODETask(problems="L4", sizes=50, seeds=np.arange(2))
    assert t.problems == ("L4",) and t.sizes == (50,) and t.seeds == (0, 1)


def test_bad_refs(task):
    with pytest.raises(ValueError, match="valid problems"):
        task.make(_ref("Q1"))
    with pytest.raises(ValueError, match=r"params\[.n.\]"):
        task.make(InstanceRef(ode.TASK_ID, "dev", "L1/n=0/s0", 0, {"problem": "L1", "n": 0}))
    with pytest.raises(ValueError, match="params need"):
        task.make(InstanceRef(ode.TASK_ID, "dev", "L1", 0, {"problem": "L1"}))
    with pytest.raises(ValueError, match="task"):
        task.make(InstanceRef("Other-v0", "dev", "L1/n=10/s0", 0, {"problem": "L1", "n": 10}))
    with pytest.raises(ValueError, match="seed"):
        task.make(InstanceRef(ode.TASK_ID, "dev", "L1/n=10/s-1", -1, {"problem": "L1", "n": 10}))


@pytest.mark.parametrize("name", ["L1", "L9", "N6", "N7"])
def test_problem_pickles_by_reference(task, name):
    served, ev = task.make(_ref(name, 20, 3))
    with pytest.raises(TypeError, match="runs in the evaluator"):  # the served view's callables are sealed
        pickle.dumps(served)
    pr = ode.make_problem(name, 20, seed=3)
    blob = pickle.dumps(pr)
    assert len(blob) < 20_000  # functions by reference, not by value
    q = pickle.loads(blob)
    t, y = pr.t_train, np.full((pr.n, pr.dim), 0.7)
    dy = np.full((pr.n, pr.dim), -0.2) if pr.order == 2 else None
    np.testing.assert_array_equal(q.rhs(t, y, dy), pr.rhs(t, y, dy))
    np.testing.assert_array_equal(q.jac(t, y, dy)[0], pr.jac(t, y, dy)[0])
    np.testing.assert_array_equal(q.ic, pr.ic)
    assert q.params == pr.params
    if pr.linear_form is not None:
        np.testing.assert_array_equal(q.linear_form.coeffs(t), pr.linear_form.coeffs(t))
        np.testing.assert_array_equal(q.linear_form.forcing(t), pr.linear_form.forcing(t))
    m = pickle.loads(pickle.dumps(ev)).evaluate(ev.y_exact)
    assert m["passed_gate"] == 1.0


def test_finalize_par2(task):
    m = {"rel_rmse": 1e-6, "passed_gate": 1.0}
    b = Budget(max_seconds=10)
    assert task.finalize(m, 1.5, "ok", b)["par2_seconds"] == 1.5
    assert task.finalize({**m, "passed_gate": 0.0}, 1.5, "ok", b)["par2_seconds"] == 20.0
    assert task.finalize(m, 1.5, "timeout", b)["par2_seconds"] == 20.0
    assert task.finalize(None, None, "error", b) == {"par2_seconds": 20.0}
    assert task.finalize(m, 1.5, "error", None)["par2_seconds"] == 120.0
    assert task.finalize(m, 1.5, "ok", Budget(max_iterations=3)) == {
        **m,
        "par2_seconds": 1.5,
        "solve_seconds": 1.5,
        "diverged": 0.0,
    }
    assert m == {"rel_rmse": 1e-6, "passed_gate": 1.0}  # not mutated
