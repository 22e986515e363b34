"""Shared numerics of the LS-SVM ODE solvers of ``NystromODE-v0`` (``nystrom-lssvm`` and ``dual-lssvm``).

Steps 1 and 8 of the method as listed in :mod:`papergym.agents.solvers.nystrom_lssvm`. Both solvers
import from here; the API below is
stable (change it only together with both solvers).

Kernel (step 1) [code: Mehrkanoon's ``LSSVM_ODE_Demo.m`` / LS-SVMlab parametrisation]
-----------------------------------------------------------------------------------
Gaussian RBF ``k(t, s) = exp(-(t - s)^2 / sigma^2)``. With ``u = (t - s) / sigma`` and the physicists'
Hermite polynomials ``H_j`` (``H_0 = 1``, ``H_1 = 2u``, ``H_{j+1} = 2u H_j - 2j H_{j-1}``) every mixed
derivative has one closed form::

    d^a/dt^a d^b/ds^b k(t, s) = (-1)^a sigma^-(a+b) H_{a+b}(u) k(t, s)

(because ``d^j/du^j exp(-u^2) = (-1)^j H_j(u) exp(-u^2)``, ``d/dt = (1/sigma) d/du`` and
``d/ds = -(1/sigma) d/du``). :func:`rbf_derivative_stack` returns all ``D_j = sigma^-j H_j(u) k``,
``j = 0..J``, from one exponential; then ``d_t^a d_s^b k = (-1)^a D_{a+b}``. Any ``a + b`` works (the
solvers need ``a + b <= 2`` in the primal and ``<= 4`` in the dual; tests check up to 4).

* :func:`hermite` ``(j, u)`` -- ``H_j(u)``, elementwise.
* :func:`rbf_kernel` ``(t, s, sigma)`` -- the ``(len(t), len(s))`` Gram block.
* :func:`rbf_derivative_stack` ``(t, s, sigma, max_order)`` -- array ``(max_order + 1, len(t), len(s))``.
* :func:`rbf_derivative` ``(t, s, sigma, a, b)`` -- the ``(len(t), len(s))`` block of
  ``d_t^a d_s^b k``.

Label-free hyperparameter selection (step 8) [design]
-----------------------------------------------------
``(sigma, gamma)`` minimises the RMS of the ODE residual of the fitted model at the midpoints between
consecutive collocation times, on a *coarse copy* of the problem (``n_sel = min(n, 200)`` equispaced
collocation times in ``(t0, tf]``, built by :func:`coarse_problem`), over the grid
``sigma = (tf - t0) 10^linspace(-2, 0, 9)`` (:func:`default_sigma_grid`) x ``gamma in {1e2, 1e4, ...,
1e12}`` (:data:`DEFAULT_GAMMA_GRID`). The solver then fits once at full ``n`` with the selected pair.

* :func:`coarse_problem` ``(problem, n_sel)`` -- the same ``ODEProblem`` (``dataclasses.replace``) with
  ``n_sel`` equispaced collocation times ``t0 + (tf - t0) i / n_sel``, ``i = 1..n_sel``; the problem
  itself when ``n <= n_sel``.
* :func:`midpoint_times` ``(problem)`` -- the ``n`` midpoints of ``[t0, t_1, ..., t_n]`` (``t0``
  counts as a node: it carries the initial condition).
* :func:`ode_residual` ``(problem, model, t)`` -- ``(len(t), p)`` residual of a fitted model: for a
  problem with a ``linear_form``, ``sum_k a_k(t) y^(k)(t) - r(t)``; otherwise
  ``y^(order)(t) - f(t, y, y')`` (``problem.rhs``).
* :func:`ic_violation` ``(problem, model)`` -- max abs error of the initial conditions (``~1e-15``
  for the hard-constrained fits; matters for ``ic="soft"``).
* :func:`residual_score` ``(problem, model)`` -- RMS of :func:`ode_residual` at
  :func:`midpoint_times` plus :func:`ic_violation` (the IC term [design] guards soft-IC fits; it is
  ``O(1e-15)`` for hard ICs); ``inf`` if anything is non-finite.
* :func:`select_hyperparameters` ``(problem, fit_fn, sigma_grid, gamma_grid, n_sel)`` -> :class:`Selection`.
  ``fit_fn(problem_coarse, sigma, gamma)`` returns a *model* -- any object with ``value(t) -> (k, p)``
  and ``derivative(t, j) -> (k, p)`` (the ``j``-th time derivative, ``j = 0..order``). A fit raising
  ``numpy.linalg.LinAlgError`` / ``ValueError`` / ``FloatingPointError`` / ``OverflowError`` or
  returning non-finite values scores ``inf``; ties go to the first grid point in ``sigma``-major order.
  The optional ``on_fit(sigma, gamma, score, model)`` callback runs after every fit (a solver may raise
  ``BudgetExceeded`` from it). The grid is swept ``sigma``-major in the given order, so a ``fit_fn`` may
  cache per-``sigma`` work (features) across the ``gamma`` values.

Everything is float64 numpy; the problem is duck-typed on the ``ODEProblem`` fields
(``order``, ``dim``, ``t0``, ``tf``, ``t_train``, ``ic``, ``rhs``, ``linear_form``).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from papergym.validate import positive_float

__all__ = [
    "DEFAULT_GAMMA_GRID",
    "FittedModel",
    "Selection",
    "hermite",
    "rbf_kernel",
    "rbf_derivative_stack",
    "rbf_derivative",
    "default_sigma_grid",
    "check_grid",
    "coarse_problem",
    "midpoint_times",
    "ode_residual",
    "ic_violation",
    "residual_score",
    "select_hyperparameters",
]

#: step 8's gamma grid {1e2, 1e4, ..., 1e12} [design]
DEFAULT_GAMMA_GRID: tuple[float, ...] = tuple(10.0 ** np.arange(2, 13, 2))

# fit failures that score ``inf`` during the grid search instead of aborting it
_FIT_ERRORS = (np.linalg.LinAlgError, ValueError, FloatingPointError, OverflowError, ZeroDivisionError)


class FittedModel(Protocol):
    """What ``fit_fn`` returns: ``value(t)`` and ``derivative(t, j)``, each ``(len(t), p)``."""

    def value(self, t: np.ndarray) -> np.ndarray: ...

    def derivative(self, t: np.ndarray, j: int) -> np.ndarray: ...


# ============================================================================== kernel (step 1)
def hermite(j: int, u: np.ndarray) -> np.ndarray:
    """Physicists' Hermite polynomial ``H_j(u)`` elementwise (three-term recurrence)."""
    j = int(j)
    if j < 0:
        raise ValueError(f"Hermite order j must be >= 0, got {j}")
    u = np.asarray(u, dtype=np.float64)
    h_prev = np.ones_like(u)
    if j == 0:
        return h_prev
    h = 2.0 * u
    for i in range(1, j):
        h_prev, h = h, 2.0 * u * h - 2.0 * i * h_prev
    return h


def _as_times(x: Any, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of times, got shape {a.shape}")
    return a


def rbf_kernel(t: np.ndarray, s: np.ndarray, sigma: float) -> np.ndarray:
    """``k(t_i, s_j) = exp(-(t_i - s_j)^2 / sigma^2)``, shape ``(len(t), len(s))``."""
    sigma = positive_float(float(sigma), "sigma")  # float(): a 0-d array is a sigma too
    u = (_as_times(t, "t")[:, None] - _as_times(s, "s")[None, :]) / sigma
    return np.exp(-u * u)


def rbf_derivative_stack(t: np.ndarray, s: np.ndarray, sigma: float, max_order: int) -> np.ndarray:
    """``D[j] = sigma^-j H_j((t - s)/sigma) k(t, s)`` for ``j = 0..max_order``: shape
    ``(max_order + 1, len(t), len(s))``. Then ``d_t^a d_s^b k = (-1)^a D[a + b]``."""
    sigma = positive_float(float(sigma), "sigma")  # float(): a 0-d array is a sigma too
    J = int(max_order)
    if J < 0:
        raise ValueError(f"max_order must be >= 0, got {max_order}")
    u = (_as_times(t, "t")[:, None] - _as_times(s, "s")[None, :]) / sigma
    out = np.empty((J + 1,) + u.shape)
    k = np.exp(-u * u)
    out[0] = k
    if J >= 1:
        # recurrence on the scaled products P_j = sigma^-j H_j(u) k:
        # P_{j+1} = (2u/sigma) P_j - (2j/sigma^2) P_{j-1}
        two_u_s = (2.0 / sigma) * u
        out[1] = two_u_s * k
        inv_s2 = 1.0 / (sigma * sigma)
        for j in range(1, J):
            np.multiply(two_u_s, out[j], out=out[j + 1])
            out[j + 1] -= (2.0 * j * inv_s2) * out[j - 1]
    return out


def rbf_derivative(t: np.ndarray, s: np.ndarray, sigma: float, a: int, b: int) -> np.ndarray:
    """``d^a/dt^a d^b/ds^b k(t, s)`` as a ``(len(t), len(s))`` block."""
    a, b = int(a), int(b)
    if a < 0 or b < 0:
        raise ValueError(f"derivative orders a, b must be >= 0, got a={a}, b={b}")
    D = rbf_derivative_stack(t, s, sigma, a + b)[a + b]
    return -D if a % 2 else D


# ================================================================ hyperparameter selection (step 8)
def default_sigma_grid(problem: Any) -> np.ndarray:
    """Step 8's ``sigma = (tf - t0) 10^linspace(-2, 0, 9)`` [design]."""
    return (float(problem.tf) - float(problem.t0)) * 10.0 ** np.linspace(-2.0, 0.0, 9)


def check_grid(name: str, values: Any) -> np.ndarray:
    """A non-empty 1-D array of positive finite floats, or ``ValueError`` naming ``name``."""
    try:
        a = np.atleast_1d(np.asarray(values, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of positive finite numbers, got {values!r}") from None
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of positive finite numbers, got {values!r}")
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name} must contain only positive finite numbers, got {values!r}")
    return a


def coarse_problem(problem: Any, n_sel: int) -> Any:
    """The same problem with ``n_sel`` equispaced collocation times ``t0 + (tf - t0) i / n_sel``
    (``i = 1..n_sel``); ``problem`` itself when it has ``<= n_sel`` collocation times."""
    n_sel = int(n_sel)
    if n_sel < 2:
        raise ValueError(f"n_sel must be an integer >= 2, got {n_sel}")
    if len(problem.t_train) <= n_sel:
        return problem
    t0, tf = float(problem.t0), float(problem.tf)
    t_new = t0 + (tf - t0) * np.arange(1, n_sel + 1, dtype=np.float64) / n_sel
    return dataclasses.replace(problem, t_train=t_new)


def midpoint_times(problem: Any) -> np.ndarray:
    """Midpoints of consecutive nodes ``[t0, t_1, ..., t_n]`` (sorted collocation times): ``n`` points."""
    nodes = np.concatenate([[float(problem.t0)], np.sort(np.asarray(problem.t_train, dtype=np.float64))])
    return 0.5 * (nodes[1:] + nodes[:-1])


def _derivs(model: Any, t: np.ndarray, order: int, p: int) -> list[np.ndarray]:
    out = []
    for j in range(order + 1):
        d = model.value(t) if j == 0 else model.derivative(t, j)
        out.append(np.asarray(d, dtype=np.float64).reshape(len(t), p))
    return out


def ode_residual(problem: Any, model: Any, t: np.ndarray) -> np.ndarray:
    """ODE residual of ``model`` at times ``t``, shape ``(len(t), p)``: ``sum_k a_k y^(k) - r`` when the
    problem has a ``linear_form``, else ``y^(order) - f(t, y[, y'])``."""
    t = _as_times(t, "t")
    order, p = int(problem.order), int(problem.dim)
    ys = _derivs(model, t, order, p)
    lf = getattr(problem, "linear_form", None)
    if lf is not None:
        A = np.asarray(lf.coeffs(t), dtype=np.float64)  # (order+1, k, p, p)
        res = -np.asarray(lf.forcing(t), dtype=np.float64).reshape(len(t), p)
        for k in range(order + 1):
            res = res + np.einsum("iec,ic->ie", A[k], ys[k])
        return res
    f = problem.rhs(t, ys[0], ys[1]) if order == 2 else problem.rhs(t, ys[0])
    return ys[order] - np.asarray(f, dtype=np.float64).reshape(len(t), p)


def ic_violation(problem: Any, model: Any) -> float:
    """``max |y^(l)(t0) - ic[l]|`` over ``l < order`` and the components."""
    order, p = int(problem.order), int(problem.dim)
    t0 = np.array([float(problem.t0)])
    ys = _derivs(model, t0, max(order - 1, 0), p)
    ic = np.asarray(problem.ic, dtype=np.float64).reshape(order, p)
    return float(max(np.max(np.abs(ys[l][0] - ic[l])) for l in range(order)))


def residual_score(problem: Any, model: Any) -> float:
    """Selection score: RMS ODE residual at :func:`midpoint_times` + :func:`ic_violation`; ``inf`` when
    non-finite."""
    with np.errstate(all="ignore"):
        res = ode_residual(problem, model, midpoint_times(problem))
        score = float(np.sqrt(np.mean(res * res))) + ic_violation(problem, model)
    return score if math.isfinite(score) else math.inf


@dataclass(frozen=True)
class Selection:
    """Result of :func:`select_hyperparameters`.

    ``scores[i, j]`` is the score of ``(sigma_grid[i], gamma_grid[j])`` (``inf`` for a failed fit);
    ``n_fits`` the number of fits made, ``n_sel`` the coarse size used, ``work`` the sum of the
    ``work`` attribute of the fitted models (``0`` where a model has none) plus one unit per midpoint
    residual evaluated.
    """

    sigma: float
    gamma: float
    score: float
    scores: np.ndarray
    sigma_grid: np.ndarray
    gamma_grid: np.ndarray
    n_sel: int
    n_fits: int
    work: float


def select_hyperparameters(
    problem: Any,
    fit_fn: Callable[[Any, float, float], Any],
    sigma_grid: Sequence[float] | np.ndarray | None = None,
    gamma_grid: Sequence[float] | np.ndarray | None = None,
    n_sel: int = 200,
    *,
    on_fit: Callable[[float, float, float, Any], None] | None = None,
) -> Selection:
    """Label-free ``(sigma, gamma)`` selection (step 8): fit ``fit_fn(coarse, sigma, gamma)`` on
    :func:`coarse_problem` ``(problem, n_sel)`` for every grid pair (``sigma``-major) and keep the pair
    with the smallest :func:`residual_score`. ``None`` grids mean the module's default grids. Raises
    ``RuntimeError`` (with the first fit error) if every fit fails."""
    sg = default_sigma_grid(problem) if sigma_grid is None else check_grid("sigma_grid", sigma_grid)
    gg = np.asarray(DEFAULT_GAMMA_GRID) if gamma_grid is None else check_grid("gamma_grid", gamma_grid)
    coarse = coarse_problem(problem, n_sel)
    n_mid = len(coarse.t_train)
    scores = np.full((len(sg), len(gg)), np.inf)
    work = 0.0
    first_error: BaseException | None = None
    n_fits = 0
    for i, sigma in enumerate(sg):
        for j, gamma in enumerate(gg):
            n_fits += 1
            model = None
            try:
                with np.errstate(all="ignore"):
                    model = fit_fn(coarse, float(sigma), float(gamma))
                scores[i, j] = residual_score(coarse, model)
                work += float(getattr(model, "work", 0.0)) + n_mid
            except _FIT_ERRORS as exc:
                if first_error is None:
                    first_error = exc
            if on_fit is not None:
                on_fit(float(sigma), float(gamma), float(scores[i, j]), model)
    if not np.any(np.isfinite(scores)):
        raise RuntimeError(
            f"hyperparameter selection failed: no (sigma, gamma) grid point gave a finite "
            f"residual (first error: {first_error!r})"
        )
    i, j = np.unravel_index(int(np.argmin(scores)), scores.shape)
    return Selection(float(sg[i]), float(gg[j]), float(scores[i, j]), scores, sg, gg, len(coarse.t_train), n_fits, work)
