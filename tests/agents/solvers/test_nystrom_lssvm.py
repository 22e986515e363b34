"""Tests of ``nystrom-lssvm`` and of the shared LS-SVM numerics (``lssvm_common``).

Known answers: Hermite closed forms, finite differences of the kernel and of the Nyström features,
the Nyström reproduction of ``K_mm`` on the landmarks, exact recovery of a solution in the span,
closed-form ODE solutions (linear, nonlinear, a system), the NystromODE-v0 suite's accuracy gate.
The primal-equals-dual test (m = n, landmarks = collocation times) lives with ``dual-lssvm``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.agents.base import get_solver_info, make_solver
from papergym.agents.solvers.lssvm_common import (
    DEFAULT_GAMMA_GRID,
    coarse_problem,
    default_sigma_grid,
    hermite,
    ic_violation,
    midpoint_times,
    ode_residual,
    rbf_derivative,
    rbf_derivative_stack,
    rbf_kernel,
    residual_score,
    select_hyperparameters,
)
from papergym.agents.solvers.nystrom_lssvm import (
    NystromFeatures,
    NystromLSSVM,
    fit_nystrom,
    make_landmarks,
)
from papergym.envs.tasks.base import Budget, BudgetExceeded
from papergym.envs.tasks.ode import LinearForm, ODEProblem

TASK = "NystromODE-v0"


# ------------------------------------------------------------------------------- problems
def _problem(name, kind, order, dim, tf, n, ic, rhs, jac, lf=None, t0=0.0):
    t_train = t0 + (tf - t0) * np.arange(1, n + 1) / n
    return ODEProblem(
        name,
        kind,
        order,
        dim,
        t0,
        tf,
        t_train,
        np.linspace(t0, tf, 1000),
        np.asarray(ic, dtype=float).reshape(order, dim),
        rhs,
        jac,
        lf,
        {},
    )


def _const(k, *vals):
    """Coefficient stack ``(len(vals), k, 1, 1)`` of constants."""
    return np.stack([np.full((k, 1, 1), v, dtype=float) for v in vals])


def decay(n=100, tf=1.0):
    """``y' + 2y = 0``, ``y(0) = 1``: ``exp(-2t)``."""
    lf = LinearForm(lambda t: _const(len(t), 2.0, 1.0), lambda t: np.zeros((len(t), 1)))
    pr = _problem(
        "decay",
        "linear",
        1,
        1,
        tf,
        n,
        [1.0],
        lambda t, y, dy=None: -2.0 * y,
        lambda t, y, dy=None: (np.full((len(t), 1, 1), -2.0), None),
        lf,
    )
    return pr, lambda t: np.exp(-2.0 * t)[:, None]


def oscillator(n=100):
    """``y'' + y = 0``, ``y(0) = 0``, ``y'(0) = 1`` on ``[0, 2 pi]``: ``sin t``."""
    lf = LinearForm(lambda t: _const(len(t), 1.0, 0.0, 1.0), lambda t: np.zeros((len(t), 1)))
    pr = _problem(
        "osc",
        "linear",
        2,
        1,
        2 * np.pi,
        n,
        [[0.0], [1.0]],
        lambda t, y, dy=None: -y,
        lambda t, y, dy=None: (np.full((len(t), 1, 1), -1.0), None),
        lf,
    )
    return pr, lambda t: np.sin(t)[:, None]


_ROT = np.array([[0.0, 1.0], [-1.0, 0.0]])  # y' = _ROT y: (sin t, cos t)


def _rot_coeffs(t):
    A = np.zeros((2, len(t), 2, 2))
    A[0] = -_ROT
    A[1] = np.eye(2)
    return A


def rotation(n=100):
    """``y1' = y2``, ``y2' = -y1``, ``y(0) = (0, 1)`` on ``[0, 2 pi]``: ``(sin t, cos t)``."""
    lf = LinearForm(_rot_coeffs, lambda t: np.zeros((len(t), 2)))
    pr = _problem(
        "rot",
        "linear",
        1,
        2,
        2 * np.pi,
        n,
        [0.0, 1.0],
        lambda t, y, dy=None: y @ _ROT.T,
        lambda t, y, dy=None: (np.broadcast_to(_ROT, (len(t), 2, 2)).copy(), None),
        lf,
    )
    return pr, lambda t: np.stack([np.sin(t), np.cos(t)], axis=1)


def logistic(n=100):
    """``y' = y (1 - y)``, ``y(0) = 1/2`` on ``[0, 10]``."""
    pr = _problem(
        "logistic",
        "nonlinear",
        1,
        1,
        10.0,
        n,
        [0.5],
        lambda t, y, dy=None: y * (1 - y),
        lambda t, y, dy=None: ((1 - 2 * y)[:, :, None], None),
    )
    return pr, lambda t: (1.0 / (1.0 + np.exp(-t)))[:, None]


def riccati(n=100):
    """``y' = 1 + y^2``, ``y(0) = 0`` on ``[0, 1]``: ``tan t``."""
    pr = _problem(
        "riccati",
        "nonlinear",
        1,
        1,
        1.0,
        n,
        [0.0],
        lambda t, y, dy=None: 1 + y * y,
        lambda t, y, dy=None: ((2 * y)[:, :, None], None),
    )
    return pr, lambda t: np.tan(t)[:, None]


def rel_rmse(y, y_exact):
    return float(np.sqrt(np.mean((y - y_exact) ** 2) / np.mean(y_exact**2)))


def solve(pr, budget=None, **hp):
    return NystromLSSVM(**hp).solve(pr, budget or Budget(max_seconds=60, max_iterations=50), lambda *a, **k: None)


# ==================================================================== kernel (lssvm_common)
def test_hermite_closed_forms():
    u = np.linspace(-2.5, 2.5, 11)
    want = [np.ones_like(u), 2 * u, 4 * u**2 - 2, 8 * u**3 - 12 * u, 16 * u**4 - 48 * u**2 + 12]
    for j, w in enumerate(want):
        np.testing.assert_allclose(hermite(j, u), w, rtol=1e-14, atol=1e-12)


def test_kernel_and_mixed_derivative_closed_forms():
    t, s, sig = np.array([0.3, -0.4, 1.2]), np.array([0.1, 0.5]), 0.7
    u = (t[:, None] - s[None, :]) / sig
    k = np.exp(-u * u)
    np.testing.assert_allclose(rbf_kernel(t, s, sig), k, rtol=1e-15)
    np.testing.assert_allclose(rbf_derivative(t, s, sig, 1, 0), -2 * u / sig * k, rtol=1e-13)
    np.testing.assert_allclose(rbf_derivative(t, s, sig, 0, 1), 2 * u / sig * k, rtol=1e-13)
    np.testing.assert_allclose(rbf_derivative(t, s, sig, 1, 1), (2 - 4 * u**2) / sig**2 * k, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        rbf_derivative(t, s, sig, 2, 2), (16 * u**4 - 48 * u**2 + 12) / sig**4 * k, rtol=1e-12, atol=1e-13
    )


@pytest.mark.parametrize("a,b", [(a, b) for a in range(5) for b in range(5) if 0 < a + b <= 4])
def test_kernel_derivatives_match_finite_differences(a, b):
    t, s, sig, h = np.linspace(-0.6, 0.9, 7), np.array([-0.2, 0.15, 0.5]), 0.45, 1e-4
    if a > 0:  # central difference in t of the (a-1, b) derivative
        fd = (rbf_derivative(t + h, s, sig, a - 1, b) - rbf_derivative(t - h, s, sig, a - 1, b)) / (2 * h)
    else:
        fd = (rbf_derivative(t, s + h, sig, a, b - 1) - rbf_derivative(t, s - h, sig, a, b - 1)) / (2 * h)
    exact = rbf_derivative(t, s, sig, a, b)
    assert np.max(np.abs(fd - exact)) <= 1e-6 * np.max(np.abs(exact))
    # symmetry of the kernel: d_t^a d_s^b k(t, s) = d_t^b d_s^a k(s, t)
    np.testing.assert_allclose(exact, rbf_derivative(s, t, sig, b, a).T, rtol=1e-13, atol=1e-13)


def test_derivative_stack_is_the_hermite_form():
    t, s, sig = np.array([0.0, 0.8]), np.array([0.3]), 0.5
    D = rbf_derivative_stack(t, s, sig, 4)
    u = (t[:, None] - s[None, :]) / sig
    for j in range(5):
        np.testing.assert_allclose(D[j], sig**-j * hermite(j, u) * np.exp(-u * u), rtol=1e-13)
    with pytest.raises(ValueError, match="sigma"):
        rbf_kernel(t, s, 0.0)


# ============================================================== selection helpers (lssvm_common)
class _ExactModel:
    """A 'fitted model' that is the closed form itself (derivatives by complex-free formulas)."""

    def __init__(self, derivs):
        self.derivs = derivs

    def value(self, t):
        return self.derivs[0](t)

    def derivative(self, t, j):
        return self.derivs[j](t)


def test_coarse_problem_midpoints_and_residual_of_the_exact_solution():
    pr, _ = decay(n=1000, tf=2.0)
    c = coarse_problem(pr, 200)
    assert c.n == 200 and c.t_train[-1] == pytest.approx(2.0) and c.t_train[0] == pytest.approx(0.01)
    assert c.t_query is pr.t_query and coarse_problem(c, 200) is c  # already small: unchanged
    mid = midpoint_times(c)
    assert len(mid) == 200 and mid[0] == pytest.approx(0.005) and mid[-1] == pytest.approx(1.995)
    exact = _ExactModel([lambda t: np.exp(-2 * t)[:, None], lambda t: -2 * np.exp(-2 * t)[:, None]])
    assert np.max(np.abs(ode_residual(c, exact, mid))) < 1e-14
    assert ic_violation(c, exact) == 0.0 and residual_score(c, exact) < 1e-14
    # nonlinear path (rhs) and a wrong model
    lo, _ = logistic()
    sig = _ExactModel(
        [lambda t: (1 / (1 + np.exp(-t)))[:, None], lambda t: (np.exp(-t) / (1 + np.exp(-t)) ** 2)[:, None]]
    )
    assert residual_score(lo, sig) < 1e-14
    wrong = _ExactModel([lambda t: np.full((len(t), 1), 0.5), lambda t: np.zeros((len(t), 1))])
    # residual of the constant 1/2: 0 - 1/4 everywhere
    assert residual_score(lo, wrong) == pytest.approx(0.25)


def test_select_hyperparameters_picks_the_grid_minimum_and_survives_failures():
    pr, _ = decay(n=500)
    calls = []

    def fit_fn(prob, sigma, gamma):
        calls.append((prob.n, sigma, gamma))
        if gamma == 1e4:
            raise np.linalg.LinAlgError("singular")
        # y = exp(-2t) + eps sin(t) with eps = |log10(sigma * gamma) - 3|: residual minimised at sigma*gamma=1e3
        eps = abs(math.log10(sigma * gamma) - 3.0) + 1e-3
        return _ExactModel(
            [
                lambda t: (np.exp(-2 * t) + eps * np.sin(t))[:, None],
                lambda t: (-2 * np.exp(-2 * t) + eps * np.cos(t))[:, None],
            ]
        )

    sel = select_hyperparameters(pr, fit_fn, [0.1, 1.0, 10.0], [1e2, 1e3, 1e4], n_sel=50)
    assert (sel.sigma, sel.gamma) == (1.0, 1e3)
    assert sel.n_sel == 50 and sel.n_fits == 9 and all(n == 50 for n, _, _ in calls)
    assert np.all(np.isinf(sel.scores[:, 2])) and np.isfinite(sel.scores[:, :2]).all()
    # sigma-major order (a fit_fn may cache per-sigma work)
    assert [c[1] for c in calls] == [0.1] * 3 + [1.0] * 3 + [10.0] * 3
    with pytest.raises(RuntimeError, match="no \\(sigma, gamma\\)"):
        select_hyperparameters(pr, fit_fn, [1.0], [1e4], n_sel=50)
    with pytest.raises(ValueError, match="gamma_grid"):
        select_hyperparameters(pr, fit_fn, [1.0], [-1.0])
    np.testing.assert_allclose(default_sigma_grid(pr), 10 ** np.linspace(-2, 0, 9))
    assert DEFAULT_GAMMA_GRID == (1e2, 1e4, 1e6, 1e8, 1e10, 1e12)


# ====================================================================== Nyström features
def test_nystrom_feature_derivatives_match_finite_differences():
    c = np.linspace(0.0, 2.0, 12)
    feats = NystromFeatures(c, sigma=0.5, eig_tol=1e-12)
    t, h = np.linspace(0.05, 1.95, 23), 1e-5
    P = feats(t, 2)
    Pp, Pm = feats(t + h, 1), feats(t - h, 1)
    for j in (1, 2):
        fd = (Pp[j - 1] - Pm[j - 1]) / (2 * h)
        assert np.max(np.abs(fd - P[j])) <= 1e-6 * np.max(np.abs(P[j]))


def test_nystrom_features_reproduce_the_kernel_on_the_landmarks():
    c = np.linspace(0.0, 1.0, 10)
    feats = NystromFeatures(c, sigma=0.15, eig_tol=1e-12)
    assert feats.m_eff == 10  # well-conditioned K_mm: nothing truncated
    Phi = feats(c, 0)[0]
    np.testing.assert_allclose(Phi @ Phi.T, rbf_kernel(c, c, 0.15), atol=1e-10)
    # truncation: a wide kernel keeps fewer eigenpairs, all above eig_tol * lambda_max
    wide = NystromFeatures(np.linspace(0.0, 1.0, 50), sigma=1.0, eig_tol=1e-12)
    assert 2 <= wide.m_eff < 50 and wide.eigenvalues.min() > 1e-12 * wide.eigenvalues.max()


def test_exact_recovery_when_the_solution_is_in_the_span():
    """``y = sum_a alpha_a k(., c_a) + b`` solves ``y' + y = r`` with ``r = y' + y``: a huge gamma
    drives the collocation residual to ~0 and recovers ``y``."""
    c, sig = np.linspace(0.0, 1.0, 8), 0.25
    alpha, b0 = np.array([0.3, -1.1, 0.4, 0.9, -0.2, 0.5, -0.7, 0.6]), 0.8
    y = lambda t: rbf_kernel(t, c, sig) @ alpha + b0
    dy = lambda t: rbf_derivative(t, c, sig, 1, 0) @ alpha
    lf = LinearForm(lambda t: _const(len(t), 1.0, 1.0), lambda t: (dy(t) + y(t))[:, None])
    pr = _problem("span", "linear", 1, 1, 1.0, 60, [y(np.array([0.0]))[0]], None, None, lf)
    feats = NystromFeatures(c, sig, eig_tol=1e-14)
    assert feats.m_eff == 8
    model = fit_nystrom(pr, feats, gamma=1e14)
    assert np.max(np.abs(ode_residual(pr, model, pr.t_train))) < 1e-6
    assert np.max(np.abs(model.value(pr.t_query)[:, 0] - y(pr.t_query))) < 1e-7
    assert ic_violation(pr, model) < 1e-12


# ===================================================================== accuracy of solves
@pytest.mark.parametrize("make", [decay, oscillator, rotation])
def test_linear_problems_are_solved_to_1e_6(make):
    pr, exact = make()
    sol = solve(pr)
    y, meta = sol["y"], sol["meta"]
    assert y.shape == (1000, pr.dim)
    assert rel_rmse(y, exact(pr.t_query)) < 1e-6
    np.testing.assert_allclose(y[0], pr.ic[0], atol=1e-10)  # hard IC: exact at t0 = t_query[0]
    assert meta["iterations"] == 1 and meta["converged"] and 2 <= meta["m"] <= 50
    assert meta["sigma"] in default_sigma_grid(pr) and meta["gamma"] in DEFAULT_GAMMA_GRID
    assert meta["fit_seconds"] > 0 and meta["work"] > pr.n


@pytest.mark.parametrize("make,max_it", [(logistic, 15), (riccati, 10)])
def test_nonlinear_problems_converge(make, max_it):
    pr, exact = make()
    sol = solve(pr)
    meta = sol["meta"]
    assert rel_rmse(sol["y"], exact(pr.t_query)) < 1e-5
    assert meta["converged"] and meta["stop_reason"] in ("step", "predicted_decrease")
    assert meta["iterations"] <= max_it
    assert meta["work"] >= meta["iterations"] * pr.n


def test_lm_fallback_on_a_hard_start_still_converges():
    pr, exact = riccati()
    feats = NystromFeatures(make_landmarks(pr, 50, "equispaced"), 0.316, 1e-12)
    easy = fit_nystrom(pr, feats, 1e10)
    assert not easy.lm_used and easy.converged
    rng = np.random.default_rng(0)
    theta0 = 30.0 * rng.standard_normal(easy.theta.shape)  # far from the solution
    hard = fit_nystrom(pr, feats, 1e10, theta0=theta0)
    assert hard.lm_used and hard.converged and hard.iterations > easy.iterations
    y_easy, y_hard = easy.value(pr.t_query), hard.value(pr.t_query)
    assert rel_rmse(y_hard, exact(pr.t_query)) < 1e-5
    np.testing.assert_allclose(y_hard, y_easy, atol=1e-7)
    # the logistic from its constant start: the first Gauss-Newton step overshoots (LM takes over)
    lo, lo_exact = logistic()
    m = fit_nystrom(lo, NystromFeatures(make_landmarks(lo, 50, "equispaced"), 1.78, 1e-12), 1e12)
    assert m.lm_used and m.converged and rel_rmse(m.value(lo.t_query), lo_exact(lo.t_query)) < 1e-6


def test_linearised_init_and_soft_ic():
    pr, exact = logistic()
    a = solve(pr, init="linearised", sigma=1.778, gamma=1e12)
    b = solve(pr, init="constant", sigma=1.778, gamma=1e12)
    np.testing.assert_allclose(a["y"], b["y"], atol=1e-8)  # same minimiser, other start
    assert a["meta"]["iterations"] < b["meta"]["iterations"]  # a better start: fewer iterations
    assert rel_rmse(a["y"], exact(pr.t_query)) < 1e-6
    pr2, exact2 = oscillator()
    s = solve(pr2, ic="soft")
    assert rel_rmse(s["y"], exact2(pr2.t_query)) < 1e-6
    assert abs(s["y"][0, 0]) < 1e-6  # IC only approximately (weight gamma)


def test_fixed_sigma_gamma_skip_selection_and_budget_caps_iterations():
    pr, _ = logistic()
    calls = []
    sol = NystromLSSVM(sigma=1.0, gamma=1e8).solve(
        pr, Budget(max_iterations=3), lambda s, iteration=None, work=None: calls.append((iteration, work))
    )
    meta = sol["meta"]
    assert meta["sigma"] == 1.0 and meta["gamma"] == 1e8 and meta["selection_seconds"] < 0.05
    assert meta["iterations"] == 3 and not meta["converged"] and meta["stop_reason"] == "max_iter"
    assert calls == [(3, meta["work"])] and meta["work"] == pr.n * 4  # start + 3 trials
    # only sigma fixed: gamma selected on its grid
    sol = NystromLSSVM(sigma=1.0, gamma_grid=[1e4, 1e8]).solve(pr, None, None)
    assert sol["meta"]["sigma"] == 1.0 and sol["meta"]["gamma"] in (1e4, 1e8)
    with pytest.raises(BudgetExceeded):
        NystromLSSVM().solve(pr, Budget(max_seconds=1e-6), None)


def test_random_landmarks_are_seeded():
    pr, exact = decay(n=200)
    a = solve(pr, landmarks="random", seed=7)
    b = solve(pr, landmarks="random", seed=7)
    c = solve(pr, landmarks="random", seed=8)
    np.testing.assert_array_equal(a["y"], b["y"])
    assert not np.array_equal(a["y"], c["y"])
    assert rel_rmse(c["y"], exact(pr.t_query)) < 1e-5
    lm = make_landmarks(pr, 50, "random", np.random.default_rng(7))
    assert len(set(lm)) == 50 and set(lm) <= set(pr.t_train) and np.all(np.diff(lm) > 0)


def test_deterministic_default():
    pr, _ = riccati()
    np.testing.assert_array_equal(solve(pr)["y"], solve(pr)["y"])


# ===================================================================== input validation
@pytest.mark.parametrize(
    "hp,field",
    [
        (dict(m=1), "m"),
        (dict(m=2.5), "m"),
        (dict(m=True), "m"),
        (dict(sigma=float("nan")), "sigma"),
        (dict(gamma=float("inf")), "gamma"),
        (dict(gamma=-1.0), "gamma"),
        (dict(landmarks="grid"), "landmarks"),
        (dict(init="zero"), "init"),
        (dict(ic="weak"), "ic"),
        (dict(sigma_grid=[]), "sigma_grid"),
        (dict(gamma_grid=[1.0, float("nan")]), "gamma_grid"),
        (dict(n_sel=1), "n_sel"),
        (dict(eig_tol=0.0), "eig_tol"),
        (dict(gn_max_iter=0), "gn_max_iter"),
        (dict(select_on="labels"), "select_on"),
        (dict(gn_tol=-1e-3), "gn_tol"),
    ],
)
def test_bad_hyperparameters_name_the_field(hp, field):
    with pytest.raises(ValueError, match=f"^{field} "):
        NystromLSSVM(**hp)


def test_bad_choice_lists_valid_values_and_m_larger_than_n():
    with pytest.raises(ValueError, match="'equispaced', 'random'"):
        NystromLSSVM(landmarks="grid")
    pr, _ = decay(n=30)
    with pytest.raises(ValueError, match=r"m = 50 .* n = 30"):
        NystromLSSVM(m=50).solve(pr, None, None)
    assert NystromLSSVM(m=30).solve(pr, None, None)["meta"]["m"] <= 30


def test_registration():
    info = get_solver_info("nystrom-lssvm", TASK)
    assert info.role == "paper" and info.factory is NystromLSSVM
    import inspect

    sig = inspect.signature(NystromLSSVM.__init__).parameters
    assert info.defaults == {k: sig[k].default for k in info.defaults}
    assert set(info.defaults) == set(sig) - {"self", "seed"}
    s = make_solver("nystrom-lssvm", TASK, seed=0, m=20)
    assert isinstance(s, NystromLSSVM) and s.m == 20


# ==================================================================== the NystromODE-v0 suite
# Known failures at n = 100, m = 50 (see the module docstring of the solver):
# N5 (unstable coupled system: Gauss-Newton from the constant start does not reach the basin) and
# N7 (Lotka-Volterra spikes on [0, 10]: the best L2 approximation by 50 Gaussian features is 1.5 % off).
KNOWN_HARD = {"N5", "N7"}


def test_canonical_suite_passes_the_accuracy_gate():
    from papergym.envs.tasks.base import make_task

    task = make_task(TASK, sizes=(100,), seeds=(0,))
    refs = task.instances("dev")
    assert len(refs) == 16
    failed = {}
    for ref in refs:
        pr, ev = task.make(ref)
        # the default budget (60 s) holds with a wide margin (~1-2 s for N5, N7), but not on a
        # heavily loaded test machine: timing is not what this test checks
        sol = NystromLSSVM().solve(pr, Budget(max_seconds=600, max_iterations=50), lambda *a, **k: None)
        metrics = ev.evaluate(sol)
        if not metrics["passed_gate"]:
            failed[pr.name] = metrics["rel_rmse"]
    assert set(failed) <= KNOWN_HARD, failed
    assert len(refs) - len(failed) >= 14
