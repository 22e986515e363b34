"""``dual-lssvm``: the classical (dual) LS-SVM ODE solver, the baseline of ``NystromODE-v0``.

Mehrkanoon, Falck & Suykens, *Approximate solutions to ordinary differential equations using least
squares support vector machines*, IEEE TNNLS 23(9):1356-1367, 2012 [paper]; their public MATLAB demo
``SMehrkanoon/LSSVM-ODE-Solver/LSSVM_ODE_Demo.m`` [code] (read, not ported). Described in
``docs/papers/nystrom-ode.md`` (tags: see docs/conventions.md).
The kernel, its mixed derivatives and the label-free ``(sigma, gamma)`` selection are shared
with ``nystrom-lssvm`` (:mod:`papergym.agents.solvers.lssvm_common`):

    k(t, s) = exp(-(t - s)^2 / sigma^2),   d_t^a d_s^b k = (-1)^a D_{a+b},  D_j = sigma^-j H_j(u) k.

Model: one ``y_c(t) = w_c^T phi(t) + b_c`` per component ``c`` (``phi`` the kernel's feature map, never
formed); ``w`` is eliminated through the KKT conditions, so every system below is ``O(n)`` in size and
costs ``O(n^3)`` to solve (the paper's ``a n^3``).

Linear problems ``sum_k a_k(t) y^(k) = r(t)`` (Mehrkanoon et al. 2012)
----------------------------------------------------------------------
Primal: minimise ``1/2 sum_c ||w_c||^2 + gamma/2 ||e||^2`` subject to, for every collocation time
``t_i`` and equation ``e``, ``sum_c L^(c)_{i,e}[w_c^T phi + b_c] = r_e(t_i) + e_{i,e}``
(``L^(c)_{i,e} = sum_k a_k[e, c](t_i) d^k/dt^k``), and the hard initial conditions
``B_l[y_{c_l}] = ic_l`` (``B_l`` the value or first derivative at ``t0`` of component ``c_l``;
``l = d p + c`` for ``ic[d, c]``); ``b`` is not regularised. The Lagrangian's stationarity gives
``w_c = sum_{j,e} alpha_{j,e} L^(c)_{j,e} phi + sum_{l: c_l = c} beta_l B_l phi``, ``e = -alpha/gamma``
and the symmetric KKT system of size ``n p + q + p``::

    [ Omega + I/gamma   H    A0 ] [alpha]   [ r    ]      Omega_{(i,e),(j,e')} = sum_c L^(c)_{i,e} L^(c)_{j,e'} k
    [ H^T               G    C  ] [beta ] = [ ic   ]      H_{(i,e),l} = L^(c_l)_{i,e} B_l k
    [ A0^T              C^T  0  ] [b    ]   [ 0    ]      G_{l,l'} = [c_l = c_l'] B_l B_l' k

with ``A0_{(i,e),c} = a_0[e, c](t_i)`` and ``C_{l,c} = 1`` for a value condition on ``c``. (For ``p = 1``,
first order: ``n + 2`` unknowns, the demo's system.) Prediction
``y_c(t) = sum_{j,e} alpha_{j,e} L^(c)_{j,e,s} k(t, s) + sum_{l: c_l = c} beta_l B_{l,s} k(t, s) + b_c``
(operators acting on the second argument), and its derivatives by differentiating ``k`` in ``t``.

Nonlinear problems ``y^(K) = f(t, y[, y'])`` [design, consistent with the paper's ``a = 27``]
------------------------------------------------------------------------------------------
The collocation values become unknowns ``Y_{i,c,d}`` (``d = 0``, and ``d = 1`` when an order-2 ``f``
involves ``y'``, i.e. ``problem.jac`` returns ``df/dy' is not None``). Primal: minimise
``1/2 sum ||w_c||^2 + gamma/2 (||e||^2 + ||xi||^2)`` subject to

    w_e^T phi^(K)(t_i)            = f_e(t_i, Y_i) + e_{i,e}          (multiplier alpha_{i,e})
    w_c^T phi^(d)(t_i) + b_c [d=0] = Y_{i,c,d} + xi_{i,c,d}            (multiplier eta_{i,c,d})
    w_{c_l}^T phi^(d_l)(t0) + b_{c_l} [d_l=0] = ic_l                  (multiplier beta_l)

Eliminating ``w = sum alpha phi^(K) + sum eta phi^(d) + sum beta phi^(d_l)(t0)``, ``e = -alpha/gamma``,
``xi = -eta/gamma`` leaves ``F(x) = 0`` in ``x = (alpha, eta, Y, beta, b)`` (``n p (1 + 2 |D|) + q + p``
unknowns; ``3n + 2`` for a scalar first-order problem)::

    E_{i,e}    = [w_e^T phi^(K)](t_i) - f_e(t_i, Y_i) + alpha_{i,e}/gamma
    X_{i,c,d}  = [w_c^T phi^(d)](t_i) + b_c [d=0] - Y_{i,c,d} + eta_{i,c,d}/gamma
    Yeq_{i,c,d} = -sum_e alpha_{i,e} df_e/dY_{c,d}(t_i, Y_i) - eta_{i,c,d}          (dL/dY = 0)
    IC_l       = [w_{c_l}^T phi^(d_l)](t0) + b_{c_l} [d_l=0] - ic_l
    B_c        = sum_i eta_{i,c,0} + sum_{l: c_l = c, d_l = 0} beta_l                 (dL/db = 0)

``F = -grad Psi`` of the reduced Lagrangian ``Psi``, so its Jacobian is **symmetric** (indefinite):
the kernel Gram blocks of the functionals ``(K, t_i, e)``, ``(d, t_i, c)``, ``(d_l, t0, c_l)`` plus
``I/gamma``, ``-I`` couplings, the per-point blocks ``-df/dY`` and ``-sum_e alpha_{i,e} d^2 f_e/dY^2``.
The second derivatives of ``f`` are not public: they are central finite differences of
``problem.jac`` (``hessian="fd"``, step ``fd_step (1 + |Y|)``) or dropped (``hessian="none"``,
a Gauss-Newton iteration). Eliminating ``e`` and ``xi`` through the constraints, the primal is the
nonlinear least-squares problem

    min_{w, b, Y}  P = 1/2 ||w||^2 + gamma/2 (sum_{i,e} (w_e^T phi^(K)(t_i) - f_e(t_i, Y_i))^2
                                             + sum_{i,c,d} (y_c^(d)(t_i) - Y_{i,c,d})^2)

under the linear IC constraints, and ``F = 0`` is its KKT system; ``P`` is computable from ``x``
(``||w||^2 = theta^T G theta``, ``theta`` the dual unknowns, ``G`` their Gram block). Globalised
Newton [design; the step-7 damping of ``nystrom-lssvm`` adapted, see Deviations]: start ``alpha = eta = beta = 0``,
``b = y0``, ``Y = (y0, 0)`` (``w = 0, b = y0``); the first step (the solution of the problem linearised
at the start) is always taken; afterwards the Newton step is taken when it lowers ``P``, else the
Newton step times 1/2, 1/4, 1/8, else the Gauss-Newton step (the linearised problem's solution, a
descent direction of ``P``; one more factorisation) halved until ``P`` decreases (at most ``max_halvings`` times; no
decrease left ends the fit). Near the solution ``P`` is only known to ~1e-6 relative (``||w||^2`` is a quadratic form of
large, cancelling dual coefficients), so a step is also accepted when it lowers the KKT residual ``||F||`` while raising
``P`` by less than that. Stop when the collocation values move by ``||dY|| <= newton_tol (1 + ||Y||)`` (the
dual coefficients themselves are ill-determined at large ``gamma``; the values are not), or by
``<= sqrt(newton_tol) (1 + ||Y||)`` while ``||F||`` no longer halves (the round-off floor), or after
``newton_max_iter`` iterations (also capped by ``Budget.max_iterations``); a fit that does not
converge returns its last iterate (``meta["converged"]``).

Hyperparameter selection, budget, cost
--------------------------------------
``(sigma, gamma)``: :func:`~papergym.agents.solvers.lssvm_common.select_hyperparameters` (step 8 of
``nystrom-lssvm``: grid, midpoint ODE residual on a coarse copy with ``n_sel`` points), then one fit at full
``n``. Fixed ``sigma`` and/or ``gamma`` skip their part of the search.

Dense ``O(N^2)`` memory and ``O(N^3)`` time (``N`` the system size): before the final fit the solver
estimates both -- memory ``~ c 8 N^2`` bytes (``c = 1`` linear: the system is assembled in row blocks and
LU-factorised in place; ``c = 3`` nonlinear: constant part, Jacobian, LU copy) against
``max_memory_gb``, and time ``(2/3) N^3 / (gflops 1e9)`` for one factorisation against
``Budget.max_seconds`` -- and raises :class:`~papergym.envs.tasks.base.BudgetExceeded` (recorded as
``timeout``) when the final fit cannot fit. (At ``n = 10^4`` a linear scalar problem needs 0.8 GB and
one ~17 s factorisation on one core; the nonlinear system, ``N ~ 3 10^4``, needs ~22 GB.) During the
selection and the Newton iterations the elapsed time is checked against ``Budget.max_seconds`` and
``Budget.max_work`` (``BudgetExceeded`` once the next iteration cannot finish in time).

Solution: ``{"y": (1000, p) or (1000,), "meta": {"fit_seconds" (final fit only: assembly and solves),
"sigma", "gamma", "iterations" (Newton iterations of the final fit; 1 for linear), "work",
"converged", "n_unknowns", "selection_seconds", "gn_steps" (Gauss-Newton fallbacks)}}``. Work: ``n``
units per residual evaluation (one linear solve, one Newton iteration, one line-search trial), summed over the selection
fits, their midpoint residuals and the final fit.

Hyperparameters (enter the cell key)
------------------------------------
===================  ==========  ==================================================================
name                 default     provenance
===================  ==========  ==================================================================
``sigma``            ``None``    [design] fixed ``sigma`` (``None``: selected)
``gamma``            ``None``    [design] fixed ``gamma`` (``None``: selected)
``sigma_grid``       ``None``    [design] ``None``: ``(tf - t0) 10^linspace(-2, 0, 9)`` (step 8)
``gamma_grid``       ``None``    [design] ``None``: ``{1e2, 1e4, ..., 1e12}`` (step 8)
``n_sel``            ``200``     [design] coarse size of the selection (step 8)
``newton_tol``       ``1e-10``   [design] relative tolerance on the collocation values' step
``newton_max_iter``  ``50``      [design] Newton iterations of the final fit
``select_max_iter``  ``20``      [design] Newton iterations of each selection fit (a grid point that
                                 has not converged by then is scored as it stands: it is almost
                                 always a poor one, and 50 iterations on each would triple the
                                 selection's cost)
``hessian``          ``"fd"``    [design] ``"fd"`` (finite differences of ``jac``) or ``"none"``
``fd_step``          ``1e-5``    [design] relative step of the finite differences
``max_halvings``     ``40``      [design] step halvings of a Gauss-Newton fallback
``max_memory_gb``    ``4.0``     [design] memory the dense final system may take
``gflops``           ``20.0``    [design] assumed single-core LU speed for the time estimate
===================  ==========  ==================================================================

Deviations
----------
* The linear KKT system is solved by LU with partial pivoting (``scipy.linalg.lu_factor``, in place),
  not a symmetric-indefinite factorisation (same solution; LU is faster in LAPACK here and pivots
  robustly at ``gamma = 1e12``).
* The demo's grids (``sigma`` in ``logspace(-3, 3)``, ``gamma`` in ``logspace(0, 15)``, validation at
  midpoints) are replaced by the shared step-8 selection, so that both LS-SVMs select the same way.
* The nonlinear formulation is a reconstruction (consistent with the paper's ``a = 27`` cost). Its globalisation is not
  Levenberg-Marquardt on ``||F||``: the KKT residual norm is a poor merit here (the first steps
  raise it by orders of magnitude while converging), and ``J^T J`` would double the ``O(N^3)`` cost;
  the iteration monitors the primal objective ``P`` instead (Newton step if it descends, else a
  damped Gauss-Newton step). Second derivatives of ``f`` by finite differences of the public ``jac``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg as sla

from papergym.agents.base import register_solver
from papergym.agents.solvers.lssvm_common import (
    check_grid,
    rbf_derivative_stack,
    select_hyperparameters,
)
from papergym.envs.tasks.base import Budget, BudgetExceeded
from papergym.validate import one_of, positive_float, positive_int

__all__ = [
    "HESSIANS",
    "DualLSSVM",
    "DualModel",
    "NonlinearKKT",
    "fit_linear",
    "fit_nonlinear",
    "linear_kkt",
    "system_size",
]

TASK_ID = "NystromODE-v0"
HESSIANS: tuple[str, ...] = ("fd", "none")
_ROW_BLOCK_BYTES = 64 * 2**20  # temporaries of one row block of the kernel assembly
_NEWTON_MIN_STEP = 0.2  # damped Newton steps tried: 1/2, 1/4, 1/8, then the Gauss-Newton fallback
_P_ROUNDOFF = 1e-6  # relative round-off of the nonlinear objective P at large gamma (module docstring)


# =========================================================================================== model
@dataclass
class DualModel:
    """A fitted dual LS-SVM: ``y_c(t) = sum_d sum_j coef[d][j, c] d_s^d k(t, s_j) + b_c``.

    ``centres`` ``(M,)`` (the collocation times, then ``t0``), ``coef`` ``(K + 1, M, p)`` (by the
    derivative order ``d`` of the functional on the second argument), ``b`` ``(p,)``.
    ``value(t)`` / ``derivative(t, j)`` -> ``(len(t), p)`` (the model protocol of ``lssvm_common``).
    """

    sigma: float
    centres: np.ndarray
    coef: np.ndarray
    b: np.ndarray
    work: float = 0.0
    iterations: int = 1
    converged: bool = True
    gn_steps: int = 0
    n_unknowns: int = 0

    def derivative(self, t: np.ndarray, j: int) -> np.ndarray:
        t = np.atleast_1d(np.asarray(t, dtype=np.float64))
        j = int(j)
        n_d = self.coef.shape[0]
        used = [d for d in range(n_d) if np.any(self.coef[d])]
        out = np.zeros((len(t), self.coef.shape[2]))
        if j == 0:
            out += self.b
        if not used:
            return out
        sign = -1.0 if j % 2 else 1.0
        # d_t^j d_s^d k = (-1)^j D_{j+d}; evaluate in blocks of t (len(t) x M temporaries)
        step = max(1, int(_ROW_BLOCK_BYTES // (8 * (j + max(used) + 1) * max(len(self.centres), 1))))
        for lo in range(0, len(t), step):
            Dst = rbf_derivative_stack(t[lo : lo + step], self.centres, self.sigma, j + max(used))
            for d in used:
                out[lo : lo + step] += sign * (Dst[j + d] @ self.coef[d])
        return out

    def value(self, t: np.ndarray) -> np.ndarray:
        return self.derivative(t, 0)


def system_size(problem: Any) -> int:
    """Unknowns of the dual system of ``problem``: ``n p + q + p`` (linear) or
    ``n p (1 + 2|D|) + q + p`` (nonlinear; ``|D| = 1`` unless an order-2 ``f`` involves ``y'``)."""
    n, p, K = len(problem.t_train), int(problem.dim), int(problem.order)
    q = K * p
    if problem.linear_form is not None:
        return n * p + q + p
    return n * p * (1 + 2 * len(_state_orders(problem))) + q + p


def _state_orders(problem: Any) -> tuple[int, ...]:
    """Derivative orders ``D`` of the collocation unknowns: ``(0,)``, or ``(0, 1)`` when an order-2
    ``f`` involves ``y'`` (``problem.jac`` returns ``df/dy'`` not ``None``)."""
    if int(problem.order) == 1:
        return (0,)
    p = int(problem.dim)
    t = np.array([float(problem.t0)])
    ic = np.asarray(problem.ic, dtype=np.float64).reshape(2, p)
    _, f_dy = problem.jac(t, ic[0:1], ic[1:2])
    return (0,) if f_dy is None else (0, 1)


# ============================================================================ linear (Mehrkanoon)
def linear_kkt(
    problem: Any, sigma: float, gamma: float, out: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The symmetric KKT matrix ``M`` ``(N, N)`` and right-hand side ``(N,)`` of the linear dual
    (module docstring), ``N = n p + q + p``; unknowns ordered ``(alpha[e, i], beta[l], b[c])``
    (``alpha`` component-major). ``out``: a preallocated ``(N, N)`` array to assemble into."""
    lf = problem.linear_form
    t = np.asarray(problem.t_train, dtype=np.float64)
    n, p, K = len(t), int(problem.dim), int(problem.order)
    q = K * p
    N = n * p + q + p
    A = np.asarray(lf.coeffs(t), dtype=np.float64).reshape(K + 1, n, p, p)  # A[a, i, e, c]
    r = np.asarray(lf.forcing(t), dtype=np.float64).reshape(n, p)
    M = np.empty((N, N)) if out is None else out
    M.fill(0.0)
    inv_g = 1.0 / float(gamma)
    # Omega, in row blocks (temporaries (2K + 1) x rows x n):
    #   Omega[(e,i),(e',j)] = sum_c sum_{a,b} (-1)^a D_{a+b}(t_i, t_j) A[a,i,e,c] A[b,j,e',c]
    rows = max(1, int(_ROW_BLOCK_BYTES // (8 * (2 * K + 2) * n)))
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        Dst = rbf_derivative_stack(t[lo:hi], t, sigma, 2 * K)
        for e in range(p):
            for e2 in range(p):
                blk = M[e * n + lo : e * n + hi, e2 * n : (e2 + 1) * n]
                for c in range(p):
                    for a in range(K + 1):
                        Ai = A[a, lo:hi, e, c]
                        if not np.any(Ai):
                            continue
                        sa = -1.0 if a % 2 else 1.0
                        for b_ in range(K + 1):
                            Aj = A[b_, :, e2, c]
                            if not np.any(Aj):
                                continue
                            blk += (sa * Ai)[:, None] * Dst[a + b_] * Aj[None, :]
    idx = np.arange(n * p)
    M[idx, idx] += inv_g
    # H, G, A0, C: functionals B_l = d_s^{d_l} at t0 on component c_l, l = d p + c
    Dt0 = rbf_derivative_stack(t, np.array([float(problem.t0)]), sigma, 2 * K)[:, :, 0]  # (2K+1, n)
    D00 = rbf_derivative_stack(np.array([0.0]), np.array([0.0]), sigma, 2 * K)[:, 0, 0]
    ob, oc = n * p, n * p + q
    for l in range(q):
        dl, cl = divmod(l, p)
        for e in range(p):
            col = np.zeros(n)
            for a in range(K + 1):
                col += (-1.0 if a % 2 else 1.0) * A[a, :, e, cl] * Dt0[a + dl]
            M[e * n : (e + 1) * n, ob + l] = col
            M[ob + l, e * n : (e + 1) * n] = col
        for l2 in range(q):
            d2, c2 = divmod(l2, p)
            if c2 == cl:
                M[ob + l, ob + l2] = (-1.0 if dl % 2 else 1.0) * D00[dl + d2]
        if dl == 0:
            M[ob + l, oc + cl] = M[oc + cl, ob + l] = 1.0
    for e in range(p):
        for c in range(p):
            M[e * n : (e + 1) * n, oc + c] = A[0, :, e, c]
            M[oc + c, e * n : (e + 1) * n] = A[0, :, e, c]
    rhs = np.zeros(N)
    rhs[: n * p] = r.T.reshape(-1)
    rhs[ob:oc] = np.asarray(problem.ic, dtype=np.float64).reshape(q)
    return M, rhs


def _model_from_linear(problem: Any, sigma: float, x: np.ndarray) -> DualModel:
    """Expansion coefficients of the linear dual's solution ``x = (alpha, beta, b)``."""
    t = np.asarray(problem.t_train, dtype=np.float64)
    n, p, K = len(t), int(problem.dim), int(problem.order)
    q = K * p
    A = np.asarray(problem.linear_form.coeffs(t), dtype=np.float64).reshape(K + 1, n, p, p)
    alpha = x[: n * p].reshape(p, n)  # [e, i]
    beta = x[n * p : n * p + q]
    coef = np.zeros((K + 1, n + 1, p))
    # w_c = sum_{j,e} alpha_{j,e} sum_d A[d, j, e, c] phi^(d)(t_j) + sum_{l: c_l = c} beta_l phi^(d_l)(t0)
    coef[:, :n, :] = np.einsum("ej,djec->djc", alpha, A)
    for l in range(q):
        dl, cl = divmod(l, p)
        coef[dl, n, cl] += beta[l]
    return DualModel(
        sigma, np.concatenate([t, [float(problem.t0)]]), coef, x[n * p + q :].copy(), work=float(n), n_unknowns=len(x)
    )


def _lu_solve_inplace(M: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve ``M x = rhs`` for the (numerically) symmetric ``M`` by LU, factorising in place (``M.T``
    is Fortran-ordered: no copy; ``M`` is destroyed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sla.LinAlgWarning)
        lu, piv = sla.lu_factor(M.T, overwrite_a=True, check_finite=False)
        # lu_factor of M^T = M (symmetric up to round-off); solve M^T x = rhs with the factors
        x = sla.lu_solve((lu, piv), rhs, check_finite=False)
    if not np.all(np.isfinite(x)):
        raise np.linalg.LinAlgError("dual LS-SVM system is singular to working precision")
    return x


def fit_linear(problem: Any, sigma: float, gamma: float) -> DualModel:
    """Fit the linear dual LS-SVM with fixed ``(sigma, gamma)``."""
    M, rhs = linear_kkt(problem, sigma, gamma)
    x = _lu_solve_inplace(M, rhs)
    return _model_from_linear(problem, sigma, x)


# ====================================================================== nonlinear (reconstructed)
class NonlinearKKT:
    """The nonlinear dual's ``F(x)`` and its symmetric Jacobian (module docstring).

    Layout of ``x``: ``alpha[e, i]`` (``p n``), ``eta[c, dd, i]`` (``p |D| n``), ``Y[c, dd, i]``
    (``p |D| n``), ``beta[l]`` (``q``), ``b[c]`` (``p``); ``dd`` indexes ``D``.
    """

    def __init__(self, problem: Any, sigma: float, gamma: float, *, hessian: str = "fd", fd_step: float = 1e-5):
        self.problem = problem
        self.sigma, self.gamma = float(sigma), float(gamma)
        self.hessian, self.fd_step = hessian, float(fd_step)
        t = np.asarray(problem.t_train, dtype=np.float64)
        self.t = t
        n, p, K = len(t), int(problem.dim), int(problem.order)
        self.n, self.p, self.K = n, p, K
        self.D = _state_orders(problem)
        nD = len(self.D)
        self.q = K * p
        self.o_eta = n * p
        self.o_Y = self.o_eta + n * p * nD
        self.o_beta = self.o_Y + n * p * nD
        self.o_b = self.o_beta + self.q
        self.N = self.o_b + p
        self.ic = np.asarray(problem.ic, dtype=np.float64).reshape(K, p)
        self.Kmat = self._constant_part()

    # ---- index helpers
    def i_alpha(self, e: int) -> slice:
        return slice(e * self.n, (e + 1) * self.n)

    def i_eta(self, c: int, dd: int) -> slice:
        o = self.o_eta + (c * len(self.D) + dd) * self.n
        return slice(o, o + self.n)

    def i_Y(self, c: int, dd: int) -> slice:
        o = self.o_Y + (c * len(self.D) + dd) * self.n
        return slice(o, o + self.n)

    def _constant_part(self) -> np.ndarray:
        n, p, K, D, q = self.n, self.p, self.K, self.D, self.q
        t, sigma = self.t, self.sigma
        M = np.zeros((self.N, self.N))
        Dst = rbf_derivative_stack(t, t, sigma, 2 * K)  # D_j(t_i, t_j)
        Dt0 = rbf_derivative_stack(t, np.array([float(self.problem.t0)]), sigma, 2 * K)[:, :, 0]
        D00 = rbf_derivative_stack(np.array([0.0]), np.array([0.0]), sigma, 2 * K)[:, 0, 0]
        inv_g = 1.0 / self.gamma
        sg = lambda a: -1.0 if a % 2 else 1.0
        eye_n = np.arange(n)
        # functionals of the dual unknowns: alpha_{i,e} ~ (K, t_i, e), eta_{i,c,d} ~ (d, t_i, c),
        # beta_l ~ (d_l, t0, c_l); Gram[u, v] = [c_u = c_v] (-1)^{d_u} D_{d_u + d_v}(s_u, s_v)
        groups = [(self.i_alpha(c), K, c) for c in range(p)]
        groups += [(self.i_eta(c, dd), d, c) for c in range(p) for dd, d in enumerate(D)]
        for ru, du, cu in groups:
            for rv, dv, cv in groups:
                if cu == cv:
                    M[ru, rv] = sg(du) * Dst[du + dv]
            M[ru.start + eye_n, ru.start + eye_n] += inv_g
            for l in range(q):
                dl, cl = divmod(l, p)
                if cl == cu:
                    M[ru, self.o_beta + l] = sg(du) * Dt0[du + dl]
                    M[self.o_beta + l, ru] = sg(dl) * sg(du + dl) * Dt0[du + dl]  # D(t0, t_i) = (-1)^m D(t_i, t0)
        for l in range(q):
            dl, cl = divmod(l, p)
            for l2 in range(q):
                d2, c2 = divmod(l2, p)
                if c2 == cl:
                    M[self.o_beta + l, self.o_beta + l2] = sg(dl) * D00[dl + d2]
            if dl == 0:
                M[self.o_beta + l, self.o_b + cl] = M[self.o_b + cl, self.o_beta + l] = 1.0
        for c in range(p):
            for dd, d in enumerate(D):
                re, rY = self.i_eta(c, dd), self.i_Y(c, dd)
                M[re.start + eye_n, rY.start + eye_n] = -1.0  # X: -Y
                M[rY.start + eye_n, re.start + eye_n] = -1.0  # Yeq: -eta
                if d == 0:
                    M[re, self.o_b + c] = 1.0  # X: + b_c
                    M[self.o_b + c, re] = 1.0  # B_c: sum_i eta_{i,c,0}
        return M

    # ---- state
    def start(self) -> np.ndarray:
        """``alpha = eta = beta = 0``, ``b = y0``, ``Y = (y0, 0)``: the model ``w = 0, b = y0``."""
        x = np.zeros(self.N)
        x[self.o_b :] = self.ic[0]
        for c in range(self.p):
            x[self.i_Y(c, 0)] = self.ic[0, c]
        return x

    def _Y(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        y = np.stack([x[self.i_Y(c, 0)] for c in range(self.p)], axis=1)
        dy = np.stack([x[self.i_Y(c, 1)] for c in range(self.p)], axis=1) if len(self.D) == 2 else None
        return y, dy

    def _f_and_jac(self, y: np.ndarray, dy: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """``f`` ``(n, p)`` and ``F[i, e, (c, dd)] = df_e/dY_{c, D[dd]}`` ``(n, p, p |D|)``."""
        n, p, nD = self.n, self.p, len(self.D)
        args = (self.t, y) if self.K == 1 else (self.t, y, y * 0.0 if dy is None else dy)
        f = np.asarray(self.problem.rhs(*args), dtype=np.float64).reshape(n, p)
        f_y, f_dy = self.problem.jac(*args)
        F = np.zeros((n, p, p, nD))
        F[:, :, :, 0] = np.asarray(f_y, dtype=np.float64).reshape(n, p, p)
        if nD == 2:
            F[:, :, :, 1] = np.asarray(f_dy, dtype=np.float64).reshape(n, p, p)
        return f, F.reshape(n, p, p * nD)

    def residual(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(F(x), dfdY)`` (the second reused by :meth:`jacobian`)."""
        y, dy = self._Y(x)
        f, F = self._f_and_jac(y, dy)
        r = self.Kmat @ x
        alpha = x[: self.n * self.p].reshape(self.p, self.n)  # [e, i]
        for e in range(self.p):
            r[self.i_alpha(e)] -= f[:, e]
        # Yeq_{i,c,d} -= sum_e alpha_{i,e} F[i, e, (c, d)]
        aF = np.einsum("ei,iek->ki", alpha, F)  # (p |D|, n)
        for c in range(self.p):
            for dd in range(len(self.D)):
                r[self.i_Y(c, dd)] -= aF[c * len(self.D) + dd]
        for l in range(self.q):
            dl, cl = divmod(l, self.p)
            r[self.o_beta + l] -= self.ic[dl, cl]
        return r, F

    def objective(self, x: np.ndarray) -> float:
        """The primal objective at ``x`` with ``e`` and ``xi`` eliminated through the constraints:
        ``P = 1/2 ||w||^2 + gamma/2 (sum_i ||w^T phi^(K)(t_i) - f(t_i, Y_i)||^2
        + sum_{i,c,d} (y_c^(d)(t_i) - Y_{i,c,d})^2)``, ``||w||^2 = theta^T G theta`` (``theta`` the dual
        unknowns, ``G`` their Gram matrix). The KKT system is its stationarity condition (under the
        linear IC constraints), so ``P`` is the merit of the globalised Newton iteration."""
        th = x.copy()
        th[self.o_Y : self.o_beta] = 0.0
        th[self.o_b :] = 0.0
        v = self.Kmat @ th  # dual rows: functionals of w (plus I/gamma on alpha, eta)
        v[: self.o_Y] -= th[: self.o_Y] / self.gamma
        w2 = float(th[: self.o_Y] @ v[: self.o_Y] + th[self.o_beta : self.o_b] @ v[self.o_beta : self.o_b])
        y, dy = self._Y(x)
        args = (self.t, y) if self.K == 1 else (self.t, y, y * 0.0 if dy is None else dy)
        f = np.asarray(self.problem.rhs(*args), dtype=np.float64).reshape(self.n, self.p)
        sq = 0.0
        for c in range(self.p):
            e = v[self.i_alpha(c)] - f[:, c]
            sq += float(e @ e)
            for dd, d in enumerate(self.D):
                xi = v[self.i_eta(c, dd)] + (x[self.o_b + c] if d == 0 else 0.0) - x[self.i_Y(c, dd)]
                sq += float(xi @ xi)
        out = 0.5 * w2 + 0.5 * self.gamma * sq
        return out if math.isfinite(out) else math.inf

    def hessian_term(self, x: np.ndarray) -> np.ndarray | None:
        """``S[i] = sum_e alpha_{i,e} d^2 f_e / dY dY`` ``(n, p|D|, p|D|)`` by central differences of
        ``jac`` (symmetrised); ``None`` for ``hessian="none"``."""
        n, p, nD = self.n, self.p, len(self.D)
        kk = p * nD
        S = np.zeros((n, kk, kk))
        if self.hessian == "none":
            return None
        alpha = x[: n * p].reshape(p, n)
        y, dy = self._Y(x)
        for m in range(kk):
            c, dd = divmod(m, nD)
            base = y if dd == 0 else dy
            h = self.fd_step * (1.0 + np.abs(base[:, c]))
            plus, minus = base.copy(), base.copy()
            plus[:, c] += h
            minus[:, c] -= h
            if dd == 0:
                _, Fp = self._f_and_jac(plus, dy)
                _, Fm = self._f_and_jac(minus, dy)
            else:
                _, Fp = self._f_and_jac(y, plus)
                _, Fm = self._f_and_jac(y, minus)
            dF = (Fp - Fm) / (2.0 * h)[:, None, None]  # (n, e, k): d F[i, e, k] / dY_m
            S[:, :, m] = np.einsum("ei,iek->ik", alpha, dF)
        return 0.5 * (S + S.transpose(0, 2, 1))

    def jacobian(self, x: np.ndarray, F: np.ndarray, S: np.ndarray | None = None) -> np.ndarray:
        """The symmetric Jacobian of :meth:`residual` at ``x`` (``F = dfdY`` from it); ``S`` from
        :meth:`hessian_term` (``None``: the Gauss-Newton Jacobian, second derivatives of ``f`` dropped)."""
        n, p, nD = self.n, self.p, len(self.D)
        J = self.Kmat.copy()
        idx = np.arange(n)
        for e in range(p):
            ra = self.i_alpha(e).start + idx
            for c in range(p):
                for dd in range(nD):
                    rY = self.i_Y(c, dd).start + idx
                    v = -F[:, e, c * nD + dd]
                    J[ra, rY] += v  # dE/dY
                    J[rY, ra] += v  # dYeq/dalpha
        if S is not None:
            for m1 in range(p * nD):
                r1 = self.i_Y(*divmod(m1, nD)).start + idx
                for m2 in range(p * nD):
                    r2 = self.i_Y(*divmod(m2, nD)).start + idx
                    J[r1, r2] -= S[:, m1, m2]
        return J

    def model(self, x: np.ndarray) -> DualModel:
        """The fitted function: ``w_c = sum alpha phi^(K) + sum eta phi^(d) + sum beta phi^(d_l)(t0)``."""
        n, p, K = self.n, self.p, self.K
        coef = np.zeros((K + 1, n + 1, p))
        for c in range(p):
            coef[K, :n, c] = x[self.i_alpha(c)]
            for dd, d in enumerate(self.D):
                coef[d, :n, c] += x[self.i_eta(c, dd)]
        for l in range(self.q):
            dl, cl = divmod(l, p)
            coef[dl, n, cl] += x[self.o_beta + l]
        return DualModel(
            self.sigma,
            np.concatenate([self.t, [float(self.problem.t0)]]),
            coef,
            x[self.o_b :].copy(),
            n_unknowns=self.N,
        )


def _solve_dense(J: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sla.LinAlgWarning)
        x = sla.solve(J, rhs, check_finite=False)
    if not np.all(np.isfinite(x)):
        raise np.linalg.LinAlgError("dual LS-SVM Newton system is singular to working precision")
    return x


def fit_nonlinear(
    problem: Any,
    sigma: float,
    gamma: float,
    *,
    tol: float = 1e-10,
    max_iter: int = 50,
    hessian: str = "fd",
    fd_step: float = 1e-5,
    max_halvings: int = 40,
    deadline: float | None = None,
) -> DualModel:
    """Globalised Newton on the nonlinear dual KKT system (module docstring). ``deadline``: a
    ``time.perf_counter()`` value; ``BudgetExceeded`` once the next iteration would end after it."""
    sys_ = NonlinearKKT(problem, sigma, gamma, hessian=hessian, fd_step=fd_step)
    x = sys_.start()
    obj = math.inf  # the first (linearised) step is always taken: the start is not IC-feasible for order 2
    F, dF = sys_.residual(x)
    fnorm = float(np.linalg.norm(F))
    it, converged, gn_steps = 0, False, 0
    n = len(sys_.t)
    work = float(n)
    t_iter = 0.0
    fun = slice(sys_.o_Y, sys_.o_beta)  # the collocation values Y: the well-determined part of x

    def accept(obj_new: float, fnorm_new: float) -> bool:
        # the objective decreases, or (within its round-off, ~1e-6 relative at large gamma: ||w||^2 is a
        # quadratic form of large, cancelling dual coefficients) the KKT residual does
        return obj_new < obj or (fnorm_new < fnorm and obj_new <= obj + _P_ROUNDOFF * abs(obj))

    while it < max_iter:
        t_start = time.perf_counter()
        if deadline is not None and t_start + t_iter > deadline:
            raise BudgetExceeded(f"dual-lssvm: Newton iteration {it + 1} (N = {sys_.N}) would end past max_seconds")
        S = sys_.hessian_term(x)
        J = sys_.jacobian(x, dF, S)
        dx = _solve_dense(J, -F)
        x_new = x + dx
        obj_new = sys_.objective(x_new)
        F_new, dF_new = sys_.residual(x_new)
        fnorm_new = float(np.linalg.norm(F_new))
        work += n
        s_n = 1.0
        while not accept(obj_new, fnorm_new) and s_n > _NEWTON_MIN_STEP:
            s_n *= 0.5  # damped Newton: the Newton direction is usually still a descent direction
            x_new = x + s_n * dx
            obj_new = sys_.objective(x_new)
            F_new, dF_new = sys_.residual(x_new)
            fnorm_new = float(np.linalg.norm(F_new))
            work += n
        if not accept(obj_new, fnorm_new):
            # Gauss-Newton direction (the linearised problem's solution; a descent direction of the
            # objective), step halved until accepted
            gn_steps += 1
            if S is not None:
                dx = _solve_dense(sys_.jacobian(x, dF, None), -F)
            s = 1.0
            for _ in range(max_halvings):
                x_new = x + s * dx
                obj_new = sys_.objective(x_new)
                F_new, dF_new = sys_.residual(x_new)
                fnorm_new = float(np.linalg.norm(F_new))
                work += n
                if accept(obj_new, fnorm_new):
                    break
                s *= 0.5
            else:  # no descent left at round-off level
                it += 1
                converged = float(np.linalg.norm(s * dx[fun])) <= math.sqrt(tol) * (1.0 + float(np.linalg.norm(x[fun])))
                break
        dY = float(np.linalg.norm(x_new[fun] - x[fun]))
        stalled = fnorm_new >= 0.5 * fnorm  # no quadratic (not even linear) progress on the KKT residual
        x, obj, F, dF, fnorm = x_new, obj_new, F_new, dF_new, fnorm_new
        it += 1
        t_iter = time.perf_counter() - t_start
        scale = 1.0 + float(np.linalg.norm(x[fun]))
        # converged: the collocation values no longer move, or they move only at the round-off level
        # of the ill-conditioned system while the KKT residual has stopped decreasing
        if dY <= tol * scale or (stalled and dY <= math.sqrt(tol) * scale):
            converged = True
            break
    model = sys_.model(x)
    model.work, model.iterations, model.converged, model.gn_steps = work, it, converged, gn_steps
    return model


# ========================================================================================= solver
class DualLSSVM:
    """Dual LS-SVM ODE solver (module docstring). ``DualLSSVM(seed=None, sigma=None, gamma=None,
    sigma_grid=None, gamma_grid=None, n_sel=200, newton_tol=1e-10, newton_max_iter=50, select_max_iter=20,
    hessian="fd",
    fd_step=1e-5, max_halvings=40, max_memory_gb=4.0, gflops=20.0)``; deterministic (``seed`` unused)."""

    def __init__(
        self,
        *,
        seed: Any = None,
        sigma: float | None = None,
        gamma: float | None = None,
        sigma_grid: Any = None,
        gamma_grid: Any = None,
        n_sel: int = 200,
        newton_tol: float = 1e-10,
        newton_max_iter: int = 50,
        select_max_iter: int = 20,
        hessian: str = "fd",
        fd_step: float = 1e-5,
        max_halvings: int = 40,
        max_memory_gb: float = 4.0,
        gflops: float = 20.0,
    ):
        self.sigma = positive_float(sigma, "sigma", allow_none=True)
        self.gamma = positive_float(gamma, "gamma", allow_none=True)
        self.sigma_grid = None if sigma_grid is None else check_grid("sigma_grid", sigma_grid)
        self.gamma_grid = None if gamma_grid is None else check_grid("gamma_grid", gamma_grid)
        self.n_sel = positive_int(n_sel, "n_sel", 2)
        self.newton_tol = positive_float(newton_tol, "newton_tol")
        self.newton_max_iter = positive_int(newton_max_iter, "newton_max_iter", 1)
        self.max_halvings = positive_int(max_halvings, "max_halvings", 0)
        self.select_max_iter = positive_int(select_max_iter, "select_max_iter", 1)
        self.hessian = one_of(hessian, "hessian", HESSIANS)
        self.fd_step = positive_float(fd_step, "fd_step")
        self.max_memory_gb = positive_float(max_memory_gb, "max_memory_gb")
        self.gflops = positive_float(gflops, "gflops")
        self.seed = seed

    def _fit(self, problem: Any, sigma: float, gamma: float, max_iter: int, deadline: float | None) -> DualModel:
        if problem.linear_form is not None:
            return fit_linear(problem, sigma, gamma)
        return fit_nonlinear(
            problem,
            sigma,
            gamma,
            tol=self.newton_tol,
            max_iter=max_iter,
            hessian=self.hessian,
            fd_step=self.fd_step,
            max_halvings=self.max_halvings,
            deadline=deadline,
        )

    def check_budget(self, problem: Any, budget: Budget | None = None) -> None:
        """``BudgetExceeded`` when the final dense system cannot fit in ``max_memory_gb`` or one
        factorisation would take longer than ``budget.max_seconds`` (module docstring)."""
        N = system_size(problem)
        copies = 1 if problem.linear_form is not None else 3
        need_gb = copies * 8.0 * N * N / 2**30
        if need_gb > self.max_memory_gb:
            raise BudgetExceeded(
                f"dual-lssvm: the dense {'linear' if copies == 1 else 'nonlinear'} KKT system of "
                f"{problem.name} at n = {len(problem.t_train)} has N = {N} unknowns and needs "
                f"~{need_gb:.1f} GB > max_memory_gb = {self.max_memory_gb:g}"
            )
        if budget is not None and budget.max_seconds is not None:
            est = (2.0 / 3.0) * float(N) ** 3 / (self.gflops * 1e9)
            if est > budget.max_seconds:
                raise BudgetExceeded(
                    f"dual-lssvm: one factorisation of the N = {N} system of {problem.name} takes "
                    f"~{est:.0f} s at {self.gflops:g} GFLOP/s > max_seconds = {budget.max_seconds:g}"
                )

    def solve(self, problem: Any, budget: Budget | None = None, report: Callable[..., None] | None = None) -> dict:
        budget = budget if budget is not None else Budget()
        start = time.perf_counter()
        if int(problem.order) not in (1, 2):
            raise ValueError(f"problem.order must be 1 or 2, got {problem.order}")
        self.check_budget(problem, budget)
        deadline = None if budget.max_seconds is None else start + float(budget.max_seconds)
        max_iter = self.newton_max_iter
        if budget.max_iterations is not None:
            max_iter = max(1, min(max_iter, int(budget.max_iterations)))
        work = 0.0

        # ---- step 8: (sigma, gamma) by the midpoint residual on a coarse copy (shared with nystrom-lssvm)
        if self.sigma is not None and self.gamma is not None:
            sigma, gamma = self.sigma, self.gamma
        else:
            sgrid = [self.sigma] if self.sigma is not None else self.sigma_grid
            ggrid = [self.gamma] if self.gamma is not None else self.gamma_grid

            def on_fit(s: float, g: float, score: float, model: Any) -> None:
                if deadline is not None and time.perf_counter() > deadline:
                    raise BudgetExceeded("dual-lssvm: the (sigma, gamma) selection ran past max_seconds")

            sel_iter = min(max_iter, self.select_max_iter)
            sel = select_hyperparameters(
                problem,
                lambda pr, s, g: self._fit(pr, s, g, sel_iter, deadline),
                sgrid,
                ggrid,
                self.n_sel,
                on_fit=on_fit,
            )
            sigma, gamma = sel.sigma, sel.gamma
            work += sel.work
            if budget.max_work is not None and work > budget.max_work:
                raise BudgetExceeded(f"dual-lssvm: the selection used {work:g} > max_work = {budget.max_work:g} units")
        selection_seconds = time.perf_counter() - start

        # ---- final fit at full n
        t_fit = time.perf_counter()
        model = self._fit(problem, sigma, gamma, max_iter, deadline)
        fit_seconds = time.perf_counter() - t_fit
        work += model.work
        y = model.value(np.asarray(problem.t_query, dtype=np.float64))
        if int(problem.dim) == 1:
            y = y[:, 0]
        meta = {
            "fit_seconds": fit_seconds,
            "sigma": sigma,
            "gamma": gamma,
            "iterations": model.iterations,
            "work": work,
            "converged": bool(model.converged),
            "n_unknowns": model.n_unknowns,
            "selection_seconds": selection_seconds,
            "gn_steps": int(model.gn_steps),
        }
        return {"y": y, "meta": meta}


register_solver(
    "dual-lssvm",
    DualLSSVM,
    tasks=[TASK_ID],
    role="baseline",
    description="classical dual LS-SVM (Mehrkanoon et al. 2012): O(n^3) KKT solve; nonlinear by Newton on ~3n unknowns",
    defaults={
        "sigma": None,
        "gamma": None,
        "sigma_grid": None,
        "gamma_grid": None,
        "n_sel": 200,
        "newton_tol": 1e-10,
        "newton_max_iter": 50,
        "select_max_iter": 20,
        "hessian": "fd",
        "fd_step": 1e-5,
        "max_halvings": 40,
        "max_memory_gb": 4.0,
        "gflops": 20.0,
    },
)
