"""``NystromODE-v0``: initial-value problems solved by collocation, scored against exact solutions.

Public problem (what a solver sees)
----------------------------------
:class:`ODEProblem`: ``name``, ``kind`` (``"linear"`` / ``"nonlinear"``), ``order`` (1 or 2), ``dim``
``p``, the interval ``[t0, tf]``, the collocation times ``t_train`` (``n``, in ``(t0, tf]``), the query
times ``t_query`` (``1000`` on ``[t0, tf]``), the initial conditions ``ic`` (``(order, p)``: ``y(t0)``
and, for order 2, ``y'(t0)``), the explicit right-hand side ``y^(order) = rhs(t, y, dy)`` with its
Jacobians ``jac(t, y, dy) -> (df/dy, df/dy')`` and, for linear problems, ``linear_form``
(:class:`LinearForm`: ``sum_k a_k(t) y^(k) = r(t)``). :func:`make_problem` also fills ``params`` (the
family parameters) and binds them into module-level functions with :func:`functools.partial`, so its
problem pickles by reference. The task serves a solver :func:`served_problem` of it instead: ``params``
empty and every callable sealed (:func:`papergym.envs.tasks.sealed.seal`), because the parameters *are*
the answer (``exact_solution(name, params, t)``) and a partial carries them in ``.keywords``. The board's
sandbox sends the same view (no ``params``; callables served by messages).

Solution: the predictions at ``t_query``, an array ``(1000, p)`` (or ``(1000,)`` when ``p = 1``), or a
dict ``{"y": array, "meta": {...}}`` with optional ``meta`` (``fit_seconds``, ``sigma``, ``gamma``,
``m``, ``iterations``, ``work``).

The suite
---------
Sixteen parametric families, :data:`PROBLEMS` (closed forms checked symbolically / by residual tests):

====  ==========================================================  ==========  ==========================
id    equation (initial conditions)                               interval    canonical; seeded range
====  ==========================================================  ==========  ==========================
L1    y' + (t + q) y = t^3 + 2t + t^2 q, q = (1+3t^2)/(1+t+t^3)   [0, 1]      y0 = 1; [0.5, 2]
L2    y' + 2y = t^3 sin(t/2), y(0) = y0                           [0, 10]     y0 = 1; [0, 2]
L3    y' + a y = e^{-at} cos t, y(0) = 0                          [0, 2]      a = 0.2; [0.1, 0.5]
L4    y' = -2 c t y, y(0) = y0                                    [0, 2]      c = 1, y0 = 1; [0.5, 2]^2
L5    y' + k y = k cos t, y(0) = 0 (stiff)                        [0, 5]      k = 10; [5, 20]
L6    y'' + a y' + y = -a e^{-at} cos t, (0, 1)                   [0, 2]      a = 0.2; [0.1, 0.5]
L7    y'' + omega^2 y = 0, (0, 1)                                 [0, 2 pi]   omega = 1; [0.5, 2]
L8    y'' + 2 zeta omega y' + omega^2 y = 0, (1, 0)               [0, 10]     zeta = 0.1, omega = 2;
                                                                              [0.05, 0.3] x [1, 3]
L9    y1' = omega y2, y2' = -omega y1, (0, 1)                     [0, 2 pi]   omega = 1; [0.5, 2]
N1    y' = r y (1 - y), y(0) = y0                                 [0, 10]     r = 1, y0 = 0.5;
                                                                              [0.5, 1.5] x [0.1, 0.9]
N2    y' = 1 + y^2, y(0) = y0                                     [0, tf]     y0 = 0, tf = 1; y0 in
                                                                              [-0.5, 0.5], tf = 0.65
                                                                              (pi/2 - arctan y0)
N3    y' = -y^2, y(0) = y0                                        [0, 5]      y0 = 1; [0.5, 2]
N4    y' = -2 t y^2, y(0) = y0                                    [0, 3]      y0 = 1; [0.5, 2]
N5    y1' = cos t + y1^2 + y2 - (1+t^2+sin^2 t),                  [0, tf]     tf = 3; [2, 4]
      y2' = 2t - (1+t^2) sin t + y1 y2, (0, 1)
N6    y'' = 2 y^3, (1/c, -1/c^2)                                  [0, 2]      c = 1; [0.75, 1.5]
N7    x' = a x - x y, y' = -b y + x y, (10, 5) s                  [0, 10]     a = 1.5, b = 3, s = 1;
                                                                              [1,2] x [2,4] x [0.8,1.2]
====  ==========================================================  ==========  ==========================

* Parameters (:func:`problem_params`): seed 0 gives the canonical parameters; any other seed draws each
  parameter uniformly from its range, in the table's order, with ``np.random.default_rng(seed)`` (the
  same seed gives the same draws in every family that shares a range, e.g. L3 and L6). [design]
* N7 has no closed form: its reference is ``scipy.integrate.solve_ivp`` DOP853 at rtol = atol = 1e-12
  (dense output, cached per parameter set). [design]
* Grids: ``t_train`` = ``n`` equispaced points in ``(t0, tf]``; ``t_query`` = ``n_query`` (default 1000)
  equispaced points on ``[t0, tf]``.

Task (:class:`ODETask`, registered as ``NystromODE-v0``)
--------------------------------------------------------
``ODETask(problems=None, sizes=(100, 1000), seeds=(0,), n_query=1000, accuracy_gate=None)``.
Dev instances: one per (problem, n, seed), ``"L1/n=100/s0"``, params ``{"problem", "n"}``. Test
instances: 5 hidden seeds per (problem, n) (``hidden_seeds(TASK_ID, "L1/n=100", 5)``), ``"L1/n=100/t0"``
... ``"t4"``; needs ``$PAPERGYM_TEST_SECRET``. The task's default dev split is ``seeds=(0,)``
(the canonical problems); ``seeds=range(5)`` gives five parameter draws per problem.

Metrics (``docs/papers/nystrom-ode.md``), over the query grid and all components: ``par2_seconds`` (primary, min:
the solve's wall time if ``status == "ok"`` and the gate passed, else ``2 * Budget.max_seconds``; added
by :meth:`ODETask.finalize`, the runner's call), ``rel_rmse`` = RMSE / RMS(y), ``rel_mae`` = MAE /
mean|y|, ``rel_linf`` = max|e| / max|y|, ``rmse``, ``mae``, ``linf``, ``passed_gate`` (max: 1 if
``rel_rmse <= gate``), ``diverged`` (``1 - passed_gate``: a run that leaves its gate, non-finite
predictions included, is stored as diverged, never ``ok``) and ``solve_seconds`` (the caller's wall
clock around ``solve()``, added by :meth:`ODETask.finalize`; the solver's own ``meta["fit_seconds"]``
is never published: it is the solver's claim, not a measurement). Gate
[design]: 1e-4, 1e-3 for L5 and N7 (``accuracy_gate``). Decision: a solution with non-finite
predictions is a failed answer, not an error (every error metric ``inf``, ``passed_gate`` 0); a
malformed one (not numeric, wrong shape, bad ``meta``) raises ``ValueError``. ``peak_mem_mb`` is the
runner's measurement, not the evaluator's. Default budget: 60 s, 50 iterations.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["TASK_ID", "ODEProblem", "LinearForm", "solution_array"]

TASK_ID = "NystromODE-v0"


@dataclass(frozen=True)
class LinearForm:
    """``sum_{k=0}^{order} a_k(t) y^(k)(t) = r(t)`` for a linear problem.

    ``coeffs(t)``: ``t`` of shape ``(k,)`` -> array ``(order + 1, k, p, p)``: ``a_k(t)`` acting on the
    ``p``-vector ``y^(k)`` (row = equation, column = component). ``forcing(t)`` -> ``(k, p)``.
    """

    coeffs: Callable[[np.ndarray], np.ndarray]
    forcing: Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class ODEProblem:
    """One public initial-value problem (module docstring).

    ``rhs(t, y, dy=None)``: ``t`` ``(k,)``, ``y`` ``(k, p)``, ``dy`` ``(k, p)`` (order 2 only) ->
    ``(k, p)``. ``jac(t, y, dy=None)`` -> ``(f_y, f_dy)``, each ``(k, p, p)`` (``f_dy`` is ``None`` for
    order 1 and for order-2 problems whose ``f`` does not involve ``y'``).
    """

    name: str
    kind: str
    order: int
    dim: int
    t0: float
    tf: float
    t_train: np.ndarray
    t_query: np.ndarray
    ic: np.ndarray
    rhs: Callable[..., np.ndarray]
    jac: Callable[..., tuple[np.ndarray, np.ndarray | None]]
    linear_form: LinearForm | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(len(self.t_train))


def solution_array(solution: Any, n_query: int, dim: int) -> np.ndarray:
    """The ``(n_query, dim)`` float64 predictions of a solution (array, or dict with ``"y"``); a clear
    ``ValueError`` for a malformed one."""
    if isinstance(solution, Mapping):
        if "y" not in solution:
            raise ValueError(f"a solution dict needs the key 'y' (predictions at t_query); got keys {sorted(solution)}")
        solution = solution["y"]
    try:
        y = np.asarray(solution, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"the solution must be a numeric array of shape ({n_query}, {dim}); got {type(solution).__name__}"
        ) from None
    if dim == 1 and y.shape == (n_query,):
        y = y.reshape(n_query, 1)
    if y.shape != (n_query, dim):
        raise ValueError(f"the solution must have shape ({n_query}, {dim}) (predictions at t_query), got {y.shape}")
    return y


# =====================================================================================================
# The 16-problem suite
# =====================================================================================================
# Every family is a set of module-level functions of ``t`` (and ``y``, ``y'``) with the family
# parameters as keyword-only arguments, bound with functools.partial. Closed forms accept complex ``t``
# (the tests differentiate them by Cauchy integrals in the complex plane). Shapes: ``t`` (k,), ``y`` and
# ``dy`` (k, p); rhs -> (k, p); jac -> ((k, p, p), (k, p, p) | None); coeffs -> (order + 1, k, p, p);
# forcing -> (k, p); exact -> (k, p).

import dataclasses
import functools
import math
import numbers

from papergym.envs.spec import check_seed
from papergym.envs.tasks.base import Budget, InstanceRef, hidden_seeds, instance_params, register_task
from papergym.envs.tasks.sealed import seal
from papergym.validate import positive_float, positive_int

__all__ += [
    "PROBLEMS",
    "LINEAR_PROBLEMS",
    "NONLINEAR_PROBLEMS",
    "DEFAULT_GATE",
    "DEFAULT_GATES",
    "N_TEST_SEEDS",
    "ODETask",
    "ODEEvaluator",
    "family",
    "problem_params",
    "served_problem",
    "make_problem",
    "exact_solution",
    "collocation_times",
    "query_times",
]


def _t(t: Any) -> np.ndarray:
    """``t`` as a 1-D array: float64, or complex128 when complex (closed forms only)."""
    t = np.asarray(t)
    return (t.astype(np.complex128) if np.iscomplexobj(t) else t.astype(np.float64)).reshape(-1)


def _ty(t: Any, y: Any, p: int) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    return t, np.asarray(y, dtype=np.float64).reshape(t.size, p)


def _col(*cols: np.ndarray) -> np.ndarray:
    """Columns (k,) -> (k, p)."""
    return np.stack(cols, axis=-1)


def _scalar_jac(v: Any, k: int) -> np.ndarray:
    """A scalar problem's df/dy (k,) (or a constant) -> (k, 1, 1)."""
    return np.broadcast_to(np.asarray(v, dtype=np.float64), (k,)).reshape(k, 1, 1).copy()


def _scalar_form(k: int, *a: Any) -> np.ndarray:
    """A scalar linear form's coefficients a_0(t), ..., a_order(t) (each (k,) or constant) ->
    (order + 1, k, 1, 1)."""
    return np.stack([np.broadcast_to(np.asarray(ai, dtype=np.float64), (k,)) for ai in a]).reshape(len(a), k, 1, 1)


# ------------------------------------------------------------------------------------------------ L1
# y' + p(t) y = t^3 + 2t + t^2 q(t), p = t + q, q = (1 + 3t^2)/(1 + t + t^3)   (Lagaris et al. 1998,
# problem 1, with y(0) = y0). Check: h = e^{-t^2/2}/D, D = 1 + t + t^3, D' = 1 + 3t^2 gives
# h' = -(t + D'/D) h = -p h; and (t^2)' + p t^2 = 2t + t^3 + q t^2.
def _l1_q(t):
    return (1.0 + 3.0 * t**2) / (1.0 + t + t**3)


def _l1_r(t):
    return t**3 + 2.0 * t + t**2 * _l1_q(t)


def _l1_rhs(t, y, dy=None, **_):
    t, y = _ty(t, y, 1)
    return (_l1_r(t) - (t + _l1_q(t)) * y[:, 0])[:, None]


def _l1_jac(t, y, dy=None, **_):
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    return _scalar_jac(-(t + _l1_q(t)), t.size), None


def _l1_coeffs(t, **_):
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    return _scalar_form(t.size, t + _l1_q(t), 1.0)


def _l1_forcing(t, **_):
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    return _l1_r(t)[:, None]


def _l1_exact(t, *, y0):
    t = _t(t)
    return (y0 * np.exp(-(t**2) / 2) / (1.0 + t + t**3) + t**2)[:, None]


# ------------------------------------------------------------------------------------------------ L2
# y' + 2y = t^3 sin(t/2), y(0) = y0: y = (y0 - 23040/83521) e^{-2t} + P(t)/83521 (83521 = 17^4),
# P(t) = (39304t^3 - 52020t^2 + 42432t - 15456) sin(t/2) + (-9826t^3 + 27744t^2 - 38352t + 23040) cos(t/2)
# (checked symbolically: residual 0, y(0) = y0).
_L2_DEN = 83521.0


def _l2_P(t):
    return (39304.0 * t**3 - 52020.0 * t**2 + 42432.0 * t - 15456.0) * np.sin(t / 2) + (
        -9826.0 * t**3 + 27744.0 * t**2 - 38352.0 * t + 23040.0
    ) * np.cos(t / 2)


def _l2_rhs(t, y, dy=None, **_):
    t, y = _ty(t, y, 1)
    return (t**3 * np.sin(t / 2) - 2.0 * y[:, 0])[:, None]


def _l2_jac(t, y, dy=None, **_):
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    return _scalar_jac(-2.0, t.size), None


def _l2_coeffs(t, **_):
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    return _scalar_form(t.size, 2.0, 1.0)


def _l2_forcing(t, **_):
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    return (t**3 * np.sin(t / 2))[:, None]


def _l2_exact(t, *, y0):
    t = _t(t)
    return ((y0 - 23040.0 / _L2_DEN) * np.exp(-2.0 * t) + _l2_P(t) / _L2_DEN)[:, None]


# ------------------------------------------------------------------------------------------------ L3
# y' + a y = e^{-at} cos t, y(0) = 0: y = e^{-at} sin t.
def _l3_rhs(t, y, dy=None, *, a):
    t, y = _ty(t, y, 1)
    return (np.exp(-a * t) * np.cos(t) - a * y[:, 0])[:, None]


def _l3_jac(t, y, dy=None, *, a):
    return _scalar_jac(-a, np.asarray(t).size), None


def _l3_coeffs(t, *, a):
    return _scalar_form(np.asarray(t).size, a, 1.0)


def _l3_forcing(t, *, a):
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    return (np.exp(-a * t) * np.cos(t))[:, None]


def _l3_exact(t, *, a):
    t = _t(t)
    return (np.exp(-a * t) * np.sin(t))[:, None]


# ------------------------------------------------------------------------------------------------ L4
# y' = -2c t y, y(0) = y0: y = y0 e^{-c t^2}.
def _l4_rhs(t, y, dy=None, *, c, **_):
    t, y = _ty(t, y, 1)
    return (-2.0 * c * t * y[:, 0])[:, None]


def _l4_jac(t, y, dy=None, *, c, **_):
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    return _scalar_jac(-2.0 * c * t, t.size), None


def _l4_coeffs(t, *, c, **_):
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    return _scalar_form(t.size, 2.0 * c * t, 1.0)


def _l4_forcing(t, **_):
    return np.zeros((np.asarray(t).size, 1))


def _l4_exact(t, *, c, y0):
    t = _t(t)
    return (y0 * np.exp(-c * t**2))[:, None]


# ------------------------------------------------------------------------------------------------ L5
# y' + k y = k cos t, y(0) = 0 (stiff for large k): y = (k^2 cos t + k sin t - k^2 e^{-kt})/(k^2 + 1).
def _l5_rhs(t, y, dy=None, *, k):
    t, y = _ty(t, y, 1)
    return (k * np.cos(t) - k * y[:, 0])[:, None]


def _l5_jac(t, y, dy=None, *, k):
    return _scalar_jac(-k, np.asarray(t).size), None


def _l5_coeffs(t, *, k):
    return _scalar_form(np.asarray(t).size, k, 1.0)


def _l5_forcing(t, *, k):
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    return (k * np.cos(t))[:, None]


def _l5_exact(t, *, k):
    t = _t(t)
    return ((k**2 * np.cos(t) + k * np.sin(t) - k**2 * np.exp(-k * t)) / (k**2 + 1.0))[:, None]


# ------------------------------------------------------------------------------------------------ L6
# y'' + a y' + y = -a e^{-at} cos t, y(0) = 0, y'(0) = 1: y = e^{-at} sin t
# (y'' = e^{-at}((a^2 - 1) sin t - 2a cos t), y' = e^{-at}(cos t - a sin t)).
def _l6_rhs(t, y, dy, *, a):
    t, y = _ty(t, y, 1)
    dy = np.asarray(dy, dtype=np.float64).reshape(t.size, 1)
    return (-a * np.exp(-a * t) * np.cos(t) - a * dy[:, 0] - y[:, 0])[:, None]


def _l6_jac(t, y, dy=None, *, a):
    k = np.asarray(t).size
    return _scalar_jac(-1.0, k), _scalar_jac(-a, k)


def _l6_coeffs(t, *, a):
    return _scalar_form(np.asarray(t).size, 1.0, a, 1.0)


def _l6_forcing(t, *, a):
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    return (-a * np.exp(-a * t) * np.cos(t))[:, None]


def _l6_exact(t, *, a):
    t = _t(t)
    return (np.exp(-a * t) * np.sin(t))[:, None]


# ------------------------------------------------------------------------------------------------ L7
# y'' + w^2 y = 0, y(0) = 0, y'(0) = 1: y = sin(w t)/w.
def _l7_rhs(t, y, dy=None, *, omega):
    t, y = _ty(t, y, 1)
    return -(omega**2) * y


def _l7_jac(t, y, dy=None, *, omega):
    return _scalar_jac(-(omega**2), np.asarray(t).size), None


def _l7_coeffs(t, *, omega):
    return _scalar_form(np.asarray(t).size, omega**2, 0.0, 1.0)


def _zero_forcing_1(t, **_):
    return np.zeros((np.asarray(t).size, 1))


def _l7_exact(t, *, omega):
    t = _t(t)
    return (np.sin(omega * t) / omega)[:, None]


# ------------------------------------------------------------------------------------------------ L8
# y'' + 2 zeta w y' + w^2 y = 0, y(0) = 1, y'(0) = 0 (under-damped):
# y = e^{-zeta w t}(cos w_d t + (zeta w / w_d) sin w_d t), w_d = w sqrt(1 - zeta^2).
def _l8_rhs(t, y, dy, *, zeta, omega):
    t, y = _ty(t, y, 1)
    dy = np.asarray(dy, dtype=np.float64).reshape(t.size, 1)
    return -2.0 * zeta * omega * dy - omega**2 * y


def _l8_jac(t, y, dy=None, *, zeta, omega):
    k = np.asarray(t).size
    return _scalar_jac(-(omega**2), k), _scalar_jac(-2.0 * zeta * omega, k)


def _l8_coeffs(t, *, zeta, omega):
    return _scalar_form(np.asarray(t).size, omega**2, 2.0 * zeta * omega, 1.0)


def _l8_exact(t, *, zeta, omega):
    t = _t(t)
    wd = omega * math.sqrt(1.0 - zeta**2)
    return (np.exp(-zeta * omega * t) * (np.cos(wd * t) + (zeta * omega / wd) * np.sin(wd * t)))[:, None]


# ------------------------------------------------------------------------------------------------ L9
# y1' = w y2, y2' = -w y1, y(0) = (0, 1): y = (sin w t, cos w t). Linear form: I y' + A y = 0,
# A = [[0, -w], [w, 0]].
def _l9_rhs(t, y, dy=None, *, omega):
    t, y = _ty(t, y, 2)
    return _col(omega * y[:, 1], -omega * y[:, 0])


def _l9_jac(t, y, dy=None, *, omega):
    k = np.asarray(t).size
    return np.broadcast_to(np.array([[0.0, omega], [-omega, 0.0]]), (k, 2, 2)).copy(), None


def _l9_coeffs(t, *, omega):
    k = np.asarray(t).size
    out = np.zeros((2, k, 2, 2))
    out[0] = np.array([[0.0, -omega], [omega, 0.0]])
    out[1] = np.eye(2)
    return out


def _l9_forcing(t, **_):
    return np.zeros((np.asarray(t).size, 2))


def _l9_exact(t, *, omega):
    t = _t(t)
    return _col(np.sin(omega * t), np.cos(omega * t))


# ------------------------------------------------------------------------------------------------ N1
# Logistic y' = r y (1 - y), y(0) = y0: y = 1/(1 + (1/y0 - 1) e^{-rt}).
def _n1_rhs(t, y, dy=None, *, r, **_):
    t, y = _ty(t, y, 1)
    return r * y * (1.0 - y)


def _n1_jac(t, y, dy=None, *, r, **_):
    t, y = _ty(t, y, 1)
    return (r * (1.0 - 2.0 * y)).reshape(t.size, 1, 1), None


def _n1_exact(t, *, r, y0):
    t = _t(t)
    return (1.0 / (1.0 + (1.0 / y0 - 1.0) * np.exp(-r * t)))[:, None]


# ------------------------------------------------------------------------------------------------ N2
# Riccati y' = 1 + y^2, y(0) = y0: y = tan(t + arctan y0); pole at t = pi/2 - arctan y0, hence the
# seeded tf = 0.65 (pi/2 - arctan y0).
def _n2_rhs(t, y, dy=None, **_):
    t, y = _ty(t, y, 1)
    return 1.0 + y**2


def _n2_jac(t, y, dy=None, **_):
    t, y = _ty(t, y, 1)
    return (2.0 * y).reshape(t.size, 1, 1), None


def _n2_exact(t, *, y0, **_):
    t = _t(t)
    return np.tan(t + math.atan(y0))[:, None]


# ------------------------------------------------------------------------------------------------ N3
# y' = -y^2, y(0) = y0: y = y0/(1 + y0 t).
def _n3_rhs(t, y, dy=None, **_):
    t, y = _ty(t, y, 1)
    return -(y**2)


def _n3_jac(t, y, dy=None, **_):
    t, y = _ty(t, y, 1)
    return (-2.0 * y).reshape(t.size, 1, 1), None


def _n3_exact(t, *, y0):
    t = _t(t)
    return (y0 / (1.0 + y0 * t))[:, None]


# ------------------------------------------------------------------------------------------------ N4
# y' = -2t y^2, y(0) = y0: y = y0/(1 + y0 t^2).
def _n4_rhs(t, y, dy=None, **_):
    t, y = _ty(t, y, 1)
    return -2.0 * t[:, None] * y**2


def _n4_jac(t, y, dy=None, **_):
    t, y = _ty(t, y, 1)
    return (-4.0 * t[:, None] * y).reshape(t.size, 1, 1), None


def _n4_exact(t, *, y0):
    t = _t(t)
    return (y0 / (1.0 + y0 * t**2))[:, None]


# ------------------------------------------------------------------------------------------------ N5
# y1' = cos t + y1^2 + y2 - (1 + t^2 + sin^2 t), y2' = 2t - (1 + t^2) sin t + y1 y2, y(0) = (0, 1):
# y = (sin t, 1 + t^2).
def _n5_rhs(t, y, dy=None, **_):
    t, y = _ty(t, y, 2)
    s = np.sin(t)
    f1 = np.cos(t) + y[:, 0] ** 2 + y[:, 1] - (1.0 + t**2 + s**2)
    f2 = 2.0 * t - (1.0 + t**2) * s + y[:, 0] * y[:, 1]
    return _col(f1, f2)


def _n5_jac(t, y, dy=None, **_):
    t, y = _ty(t, y, 2)
    J = np.empty((t.size, 2, 2))
    J[:, 0, 0] = 2.0 * y[:, 0]
    J[:, 0, 1] = 1.0
    J[:, 1, 0] = y[:, 1]
    J[:, 1, 1] = y[:, 0]
    return J, None


def _n5_exact(t, **_):
    t = _t(t)
    return _col(np.sin(t), 1.0 + t**2)


# ------------------------------------------------------------------------------------------------ N6
# y'' = 2 y^3, y(0) = 1/c, y'(0) = -1/c^2: y = 1/(c + t) (y'' = 2/(c + t)^3).
def _n6_rhs(t, y, dy=None, **_):
    t, y = _ty(t, y, 1)
    return 2.0 * y**3


def _n6_jac(t, y, dy=None, **_):
    t, y = _ty(t, y, 1)
    return (6.0 * y**2).reshape(t.size, 1, 1), None


def _n6_exact(t, *, c):
    t = _t(t)
    return (1.0 / (c + t))[:, None]


# ------------------------------------------------------------------------------------------------ N7
# Lotka-Volterra x' = a x - x y, y' = -b y + x y, (x, y)(0) = (10, 5) s. No closed form: the reference
# is solve_ivp DOP853 at rtol = atol = 1e-12 (dense output), cached per parameter set. First integral
# (a check): V = x - b ln x + y - a ln y.
N7_REFERENCE_TOL = 1e-12


def _n7_rhs(t, y, dy=None, *, a, b, **_):
    t, y = _ty(t, y, 2)
    x, z = y[:, 0], y[:, 1]
    return _col(a * x - x * z, -b * z + x * z)


def _n7_jac(t, y, dy=None, *, a, b, **_):
    t, y = _ty(t, y, 2)
    x, z = y[:, 0], y[:, 1]
    J = np.empty((t.size, 2, 2))
    J[:, 0, 0] = a - z
    J[:, 0, 1] = -x
    J[:, 1, 0] = z
    J[:, 1, 1] = -b + x
    return J, None


@functools.lru_cache(maxsize=64)
def _n7_dense(a: float, b: float, s: float, t0: float, tf: float):
    from scipy.integrate import solve_ivp

    def f(_t, z):
        return [a * z[0] - z[0] * z[1], -b * z[1] + z[0] * z[1]]

    sol = solve_ivp(
        f,
        (t0, tf),
        [10.0 * s, 5.0 * s],
        method="DOP853",
        rtol=N7_REFERENCE_TOL,
        atol=N7_REFERENCE_TOL,
        dense_output=True,
    )
    if not sol.success:  # pragma: no cover - a smooth bounded orbit
        raise RuntimeError(f"N7 reference solve failed: {sol.message}")
    return sol.sol


def _n7_exact(t, *, a, b, s):
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    ref = _n7_dense(float(a), float(b), float(s), 0.0, 10.0)
    if t.size and (t.min() < 0.0 - 1e-12 or t.max() > 10.0 + 1e-12):
        raise ValueError("the N7 reference covers [0, 10] only")
    return ref(np.clip(t, 0.0, 10.0)).T.copy()


# ---------------------------------------------------------------------------------------- families
@dataclass(frozen=True)
class _Family:
    """A parametric problem family: functions take the family parameters as keyword arguments."""

    name: str
    kind: str
    order: int
    dim: int
    t0: float
    tf: float | None  # None: params["tf"]
    canonical: Mapping[str, float]
    ranges: Mapping[str, tuple[float, float]]  # drawn in this order with rng.uniform
    ic: Callable[..., list]  # params -> (order, p) nested list
    rhs: Callable[..., np.ndarray]
    jac: Callable[..., tuple]
    exact: Callable[..., np.ndarray]
    coeffs: Callable[..., np.ndarray] | None = None
    forcing: Callable[..., np.ndarray] | None = None
    derived: Callable[[dict], dict] | None = None  # params computed from the drawn ones (N2's tf)
    equation: str = ""


def _n2_derived(p: dict) -> dict:
    return {"tf": 0.65 * (math.pi / 2 - math.atan(p["y0"]))}


_FAMILIES: dict[str, _Family] = {
    f.name: f
    for f in [
        _Family(
            "L1",
            "linear",
            1,
            1,
            0.0,
            1.0,
            {"y0": 1.0},
            {"y0": (0.5, 2.0)},
            lambda y0: [[y0]],
            _l1_rhs,
            _l1_jac,
            _l1_exact,
            _l1_coeffs,
            _l1_forcing,
            equation="y' + (t + q) y = t^3 + 2t + t^2 q, q = (1 + 3t^2)/(1 + t + t^3)",
        ),
        _Family(
            "L2",
            "linear",
            1,
            1,
            0.0,
            10.0,
            {"y0": 1.0},
            {"y0": (0.0, 2.0)},
            lambda y0: [[y0]],
            _l2_rhs,
            _l2_jac,
            _l2_exact,
            _l2_coeffs,
            _l2_forcing,
            equation="y' + 2y = t^3 sin(t/2)",
        ),
        _Family(
            "L3",
            "linear",
            1,
            1,
            0.0,
            2.0,
            {"a": 0.2},
            {"a": (0.1, 0.5)},
            lambda a: [[0.0]],
            _l3_rhs,
            _l3_jac,
            _l3_exact,
            _l3_coeffs,
            _l3_forcing,
            equation="y' + a y = e^{-at} cos t",
        ),
        _Family(
            "L4",
            "linear",
            1,
            1,
            0.0,
            2.0,
            {"c": 1.0, "y0": 1.0},
            {"c": (0.5, 2.0), "y0": (0.5, 2.0)},
            lambda c, y0: [[y0]],
            _l4_rhs,
            _l4_jac,
            _l4_exact,
            _l4_coeffs,
            _l4_forcing,
            equation="y' = -2 c t y",
        ),
        _Family(
            "L5",
            "linear",
            1,
            1,
            0.0,
            5.0,
            {"k": 10.0},
            {"k": (5.0, 20.0)},
            lambda k: [[0.0]],
            _l5_rhs,
            _l5_jac,
            _l5_exact,
            _l5_coeffs,
            _l5_forcing,
            equation="y' + k y = k cos t",
        ),
        _Family(
            "L6",
            "linear",
            2,
            1,
            0.0,
            2.0,
            {"a": 0.2},
            {"a": (0.1, 0.5)},
            lambda a: [[0.0], [1.0]],
            _l6_rhs,
            _l6_jac,
            _l6_exact,
            _l6_coeffs,
            _l6_forcing,
            equation="y'' + a y' + y = -a e^{-at} cos t",
        ),
        _Family(
            "L7",
            "linear",
            2,
            1,
            0.0,
            2 * math.pi,
            {"omega": 1.0},
            {"omega": (0.5, 2.0)},
            lambda omega: [[0.0], [1.0]],
            _l7_rhs,
            _l7_jac,
            _l7_exact,
            _l7_coeffs,
            _zero_forcing_1,
            equation="y'' + omega^2 y = 0",
        ),
        _Family(
            "L8",
            "linear",
            2,
            1,
            0.0,
            10.0,
            {"zeta": 0.1, "omega": 2.0},
            {"zeta": (0.05, 0.3), "omega": (1.0, 3.0)},
            lambda zeta, omega: [[1.0], [0.0]],
            _l8_rhs,
            _l8_jac,
            _l8_exact,
            _l8_coeffs,
            _zero_forcing_1,
            equation="y'' + 2 zeta omega y' + omega^2 y = 0",
        ),
        _Family(
            "L9",
            "linear",
            1,
            2,
            0.0,
            2 * math.pi,
            {"omega": 1.0},
            {"omega": (0.5, 2.0)},
            lambda omega: [[0.0, 1.0]],
            _l9_rhs,
            _l9_jac,
            _l9_exact,
            _l9_coeffs,
            _l9_forcing,
            equation="y1' = omega y2, y2' = -omega y1",
        ),
        _Family(
            "N1",
            "nonlinear",
            1,
            1,
            0.0,
            10.0,
            {"r": 1.0, "y0": 0.5},
            {"r": (0.5, 1.5), "y0": (0.1, 0.9)},
            lambda r, y0: [[y0]],
            _n1_rhs,
            _n1_jac,
            _n1_exact,
            equation="y' = r y (1 - y)",
        ),
        _Family(
            "N2",
            "nonlinear",
            1,
            1,
            0.0,
            None,
            {"y0": 0.0, "tf": 1.0},
            {"y0": (-0.5, 0.5)},
            lambda y0, tf: [[y0]],
            _n2_rhs,
            _n2_jac,
            _n2_exact,
            derived=_n2_derived,
            equation="y' = 1 + y^2",
        ),
        _Family(
            "N3",
            "nonlinear",
            1,
            1,
            0.0,
            5.0,
            {"y0": 1.0},
            {"y0": (0.5, 2.0)},
            lambda y0: [[y0]],
            _n3_rhs,
            _n3_jac,
            _n3_exact,
            equation="y' = -y^2",
        ),
        _Family(
            "N4",
            "nonlinear",
            1,
            1,
            0.0,
            3.0,
            {"y0": 1.0},
            {"y0": (0.5, 2.0)},
            lambda y0: [[y0]],
            _n4_rhs,
            _n4_jac,
            _n4_exact,
            equation="y' = -2 t y^2",
        ),
        _Family(
            "N5",
            "nonlinear",
            1,
            2,
            0.0,
            None,
            {"tf": 3.0},
            {"tf": (2.0, 4.0)},
            lambda tf: [[0.0, 1.0]],
            _n5_rhs,
            _n5_jac,
            _n5_exact,
            equation="y1' = cos t + y1^2 + y2 - (1 + t^2 + sin^2 t), y2' = 2t - (1 + t^2) sin t + y1 y2",
        ),
        _Family(
            "N6",
            "nonlinear",
            2,
            1,
            0.0,
            2.0,
            {"c": 1.0},
            {"c": (0.75, 1.5)},
            lambda c: [[1.0 / c], [-1.0 / c**2]],
            _n6_rhs,
            _n6_jac,
            _n6_exact,
            equation="y'' = 2 y^3",
        ),
        _Family(
            "N7",
            "nonlinear",
            1,
            2,
            0.0,
            10.0,
            {"a": 1.5, "b": 3.0, "s": 1.0},
            {"a": (1.0, 2.0), "b": (2.0, 4.0), "s": (0.8, 1.2)},
            lambda a, b, s: [[10.0 * s, 5.0 * s]],
            _n7_rhs,
            _n7_jac,
            _n7_exact,
            equation="x' = a x - x y, y' = -b y + x y (Lotka-Volterra)",
        ),
    ]
}

PROBLEMS: tuple[str, ...] = tuple(_FAMILIES)
LINEAR_PROBLEMS: tuple[str, ...] = tuple(k for k, f in _FAMILIES.items() if f.kind == "linear")
NONLINEAR_PROBLEMS: tuple[str, ...] = tuple(k for k, f in _FAMILIES.items() if f.kind == "nonlinear")

DEFAULT_GATE = 1e-4
DEFAULT_GATES: dict[str, float] = {k: (1e-3 if k in ("L5", "N7") else DEFAULT_GATE) for k in PROBLEMS}
N_TEST_SEEDS = 5


def _check_problem(name: Any, field_name: str = "problem") -> str:
    if not isinstance(name, str) or name not in _FAMILIES:
        raise ValueError(f"unknown {field_name} {name!r} of {TASK_ID}; valid problems: {', '.join(PROBLEMS)}")
    return name


def family(name: str) -> _Family:
    """The family record of problem ``name`` (kind, order, dim, canonical parameters, ranges, the
    unbound functions)."""
    return _FAMILIES[_check_problem(name)]


def problem_params(name: str, seed: int = 0) -> dict[str, float]:
    """The family parameters of problem ``name`` for ``seed``: seed 0 gives the canonical parameters;
    any other seed draws each parameter uniformly from its range, in the order of the suite's table,
    with ``np.random.default_rng(seed)`` (derived parameters, N2's ``tf``, follow)."""
    fam = family(name)
    seed = check_seed(seed)
    if seed == 0:
        return {k: float(v) for k, v in fam.canonical.items()}
    rng = np.random.default_rng(seed)
    p = {k: float(rng.uniform(lo, hi)) for k, (lo, hi) in fam.ranges.items()}
    if fam.derived is not None:
        p.update(fam.derived(p))
    return p


def _interval(fam: _Family, params: Mapping[str, float]) -> tuple[float, float]:
    return float(fam.t0), float(fam.tf if fam.tf is not None else params["tf"])


def collocation_times(t0: float, tf: float, n: int) -> np.ndarray:
    """``n`` equispaced collocation times in ``(t0, tf]`` (``t0`` carries the initial condition)."""
    return t0 + (tf - t0) * np.arange(1, n + 1, dtype=np.float64) / n


def query_times(t0: float, tf: float, n_query: int = 1000) -> np.ndarray:
    """``n_query`` equispaced query times on ``[t0, tf]``."""
    return np.linspace(t0, tf, n_query)


def exact_solution(name: str, params: Mapping[str, float], t: Any) -> np.ndarray:
    """The exact solution (N7: the DOP853 reference) of problem ``name`` at times ``t`` -> ``(k, p)``
    (evaluator side; closed forms also accept complex ``t``)."""
    return family(name).exact(t, **params)


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def make_problem(
    name: str, n: int, seed: int = 0, n_query: int = 1000, params: Mapping[str, float] | None = None
) -> ODEProblem:
    """The public :class:`ODEProblem` of ``name`` with ``n`` collocation times and ``n_query`` query
    times; parameters from ``seed`` (:func:`problem_params`) unless given."""
    fam = family(name)
    n = positive_int(n, "n")
    n_query = positive_int(n_query, "n_query", 2)
    params = problem_params(name, seed) if params is None else {k: float(v) for k, v in params.items()}
    missing = set(fam.canonical) - set(params)
    if missing:
        raise ValueError(f"params of {name} miss {sorted(missing)}; expected {sorted(fam.canonical)}")
    t0, tf = _interval(fam, params)
    bind = functools.partial
    lf = None
    if fam.kind == "linear":
        lf = LinearForm(coeffs=bind(fam.coeffs, **params), forcing=bind(fam.forcing, **params))
    ic_args = {k: params[k] for k in fam.canonical}
    return ODEProblem(
        name=name,
        kind=fam.kind,
        order=fam.order,
        dim=fam.dim,
        t0=t0,
        tf=tf,
        t_train=_frozen(collocation_times(t0, tf, n)),
        t_query=_frozen(query_times(t0, tf, n_query)),
        ic=_frozen(np.array(fam.ic(**ic_args), dtype=np.float64).reshape(fam.order, fam.dim)),
        rhs=bind(fam.rhs, **params),
        jac=bind(fam.jac, **params),
        linear_form=lf,
        params=dict(params),
    )


def served_problem(problem: ODEProblem) -> ODEProblem:
    """What a solver receives: ``problem`` with ``params`` emptied and ``rhs``, ``jac`` and the linear
    form's callables sealed (module docstring), so nothing reachable from it gives the family parameters."""
    lf = problem.linear_form
    if lf is not None:
        lf = LinearForm(
            coeffs=seal(lf.coeffs, f"{problem.name}.coeffs"), forcing=seal(lf.forcing, f"{problem.name}.forcing")
        )
    return dataclasses.replace(
        problem,
        rhs=seal(problem.rhs, f"{problem.name}.rhs"),
        jac=seal(problem.jac, f"{problem.name}.jac"),
        linear_form=lf,
        params={},
    )


# -------------------------------------------------------------------------------------------- scoring
class ODEEvaluator:
    """Private scorer of one instance: holds the exact solution at ``t_query`` and the gate.

    ``evaluate(solution)`` (an array ``(n_query, p)`` / ``(n_query,)`` or ``{"y": ..., "meta": ...}``)
    -> ``rel_rmse``, ``rel_mae``, ``rel_linf``, ``rmse``, ``mae``, ``linf`` over the query grid and all
    components, ``passed_gate`` (1.0 if ``rel_rmse <= gate``) and ``diverged`` (``1 - passed_gate``).
    ``meta`` is checked to be a dict and otherwise ignored. ``par2_seconds`` and ``solve_seconds`` need
    the solve's wall time: :meth:`ODETask.finalize` adds them.
    A malformed solution (not numeric, wrong shape) raises ``ValueError``; non-finite predictions are
    a valid but failed answer: every error metric is ``inf`` and ``passed_gate`` is 0.
    """

    def __init__(self, name: str, t_query: np.ndarray, y_exact: np.ndarray, gate: float):
        self.name = name
        self.t_query = _frozen(t_query)
        self.y_exact = _frozen(np.asarray(y_exact, dtype=np.float64).reshape(len(t_query), -1))
        self.gate = float(gate)
        ye = self.y_exact
        self._rms = float(np.sqrt(np.mean(ye**2)))
        self._mean_abs = float(np.mean(np.abs(ye)))
        self._max_abs = float(np.max(np.abs(ye)))

    @property
    def dim(self) -> int:
        return int(self.y_exact.shape[1])

    @staticmethod
    def _check_meta(solution: Any) -> None:
        # ``meta`` is the solver's own account (fit time, sigma, gamma, ...): checked for shape, never scored
        if isinstance(solution, Mapping):
            meta = solution.get("meta") or {}
            if not isinstance(meta, Mapping):
                raise ValueError(f"solution['meta'] must be a dict, got {type(meta).__name__}")

    def evaluate(self, solution: Any) -> dict[str, float]:
        y = solution_array(solution, len(self.t_query), self.dim)
        self._check_meta(solution)
        if not np.all(np.isfinite(y)):
            inf = float("inf")
            return {
                "rel_rmse": inf,
                "rel_mae": inf,
                "rel_linf": inf,
                "rmse": inf,
                "mae": inf,
                "linf": inf,
                "passed_gate": 0.0,
                "diverged": 1.0,
            }
        err = np.abs(y - self.y_exact)
        rmse = float(np.sqrt(np.mean(err**2)))
        mae = float(np.mean(err))
        linf = float(np.max(err))

        def rel(e: float, s: float) -> float:
            return e / s if s > 0 else (0.0 if e == 0 else float("inf"))

        rel_rmse = rel(rmse, self._rms)
        passed = float(rel_rmse <= self.gate)
        return {
            "rel_rmse": rel_rmse,
            "rel_mae": rel(mae, self._mean_abs),
            "rel_linf": rel(linf, self._max_abs),
            "rmse": rmse,
            "mae": mae,
            "linf": linf,
            "passed_gate": passed,
            "diverged": 1.0 - passed,
        }


# ----------------------------------------------------------------------------------------------- task
class ODETask:
    """``NystromODE-v0`` (module docstring): the 16-problem suite at sizes ``sizes``.

    * ``problems``: names (default: all 16, :data:`PROBLEMS`); ``sizes``: collocation counts ``n``;
      ``seeds``: dev seeds (seed 0 = canonical parameters); ``n_query``: query-grid size;
      ``accuracy_gate``: ``None`` (:data:`DEFAULT_GATES`: ``rel_rmse <= 1e-4``, ``1e-3`` for L5 and
      N7), a positive number for every problem, or a mapping ``{problem: gate}`` overriding the
      defaults of the problems it names.
    * ``instances("dev")``: one per (problem, n, seed), named ``"L1/n=100/s0"``;
      ``instances("test")``: :data:`N_TEST_SEEDS` hidden seeds per (problem, n) (HMAC of the
      evaluator's secret, key ``"L1/n=100"``), named ``"L1/n=100/t0"`` ... ``"/t4"``.
    * ``make(ref)`` -> ``(ODEProblem, ODEEvaluator)``; ``finalize(metrics, seconds, status, budget)``
      adds ``par2_seconds``.
    """

    id = TASK_ID
    primary = "par2_seconds"
    default_budget = Budget(max_seconds=60, max_iterations=50)

    def __init__(
        self,
        problems: Any = None,
        sizes: Any = (100, 1000),
        seeds: Any = (0,),
        n_query: int = 1000,
        accuracy_gate: float | Mapping[str, float] | None = None,
    ):
        self.metrics: dict[str, str] = {
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
        if problems is None:
            problems = PROBLEMS
        elif isinstance(problems, str):
            problems = [problems]
        try:
            problems = list(problems)
        except TypeError:
            raise ValueError(f"problems must be a list of names from {', '.join(PROBLEMS)}; got {problems!r}") from None
        if not problems:
            raise ValueError(f"problems must not be empty; valid problems: {', '.join(PROBLEMS)}")
        bad = [p for p in problems if not isinstance(p, str) or p not in _FAMILIES]
        if bad:
            raise ValueError(f"unknown problems {bad} of {TASK_ID}; valid problems: {', '.join(PROBLEMS)}")
        self.problems: tuple[str, ...] = tuple(dict.fromkeys(problems))
        self.sizes: tuple[int, ...] = self._int_tuple(sizes, "sizes", 1)
        self.seeds: tuple[int, ...] = self._int_tuple(seeds, "seeds", 0)
        self.n_query = positive_int(n_query, "n_query", 2)
        self.gates: dict[str, float] = dict(DEFAULT_GATES)
        if accuracy_gate is not None:
            if isinstance(accuracy_gate, Mapping):
                unknown = [k for k in accuracy_gate if k not in _FAMILIES]
                if unknown:
                    raise ValueError(
                        f"accuracy_gate names unknown problems {unknown}; valid problems: {', '.join(PROBLEMS)}"
                    )
                for k, v in accuracy_gate.items():
                    self.gates[k] = positive_float(v, f"accuracy_gate[{k!r}]")
            else:
                g = positive_float(accuracy_gate, "accuracy_gate")
                self.gates = {k: g for k in PROBLEMS}

    # ------------------------------------------------------------------ validation helpers
    @staticmethod
    def _int_tuple(v: Any, field_name: str, minimum: int) -> tuple[int, ...]:
        if isinstance(v, numbers.Integral) and not isinstance(v, bool):
            v = (v,)
        try:
            vals = list(v)
        except TypeError:
            raise ValueError(f"{field_name} must be a list of integers >= {minimum}, got {v!r}") from None
        if not vals:
            raise ValueError(f"{field_name} must not be empty")
        out = [positive_int(x, field_name, minimum) for x in vals]
        return tuple(dict.fromkeys(out))

    # ------------------------------------------------------------------------- protocol
    def gate(self, problem: str) -> float:
        """The ``rel_rmse`` threshold of ``problem``."""
        return self.gates[_check_problem(problem)]

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        if split == "dev":
            return [
                InstanceRef(TASK_ID, "dev", f"{p}/n={n}/s{s}", s, {"problem": p, "n": n})
                for p in self.problems
                for n in self.sizes
                for s in self.seeds
            ]
        if split == "test":
            out = []
            for p in self.problems:
                for n in self.sizes:
                    for i, s in enumerate(hidden_seeds(TASK_ID, f"{p}/n={n}", N_TEST_SEEDS)):
                        out.append(InstanceRef(TASK_ID, "test", f"{p}/n={n}/t{i}", s, {"problem": p, "n": n}))
            return out
        raise ValueError(f"split must be 'dev' or 'test', got {split!r}")

    def make(self, ref: InstanceRef) -> tuple[ODEProblem, ODEEvaluator]:
        params = instance_params(ref, TASK_ID)
        if "problem" not in params or "n" not in params:
            raise ValueError(f"instance {ref.name!r}: params need 'problem' and 'n', got {sorted(params)}")
        name = _check_problem(params["problem"], "params['problem']")
        n = positive_int(params["n"], "params['n']")
        seed = check_seed(ref.seed, "ref.seed")
        problem = make_problem(name, n, seed=seed, n_query=self.n_query)
        y_exact = exact_solution(name, problem.params, problem.t_query)
        return served_problem(problem), ODEEvaluator(name, problem.t_query, y_exact, self.gates[name])

    def finalize(
        self, metrics: Mapping[str, float] | None, seconds: float | None, status: str, budget: Budget | None = None
    ) -> dict[str, float]:
        """``metrics`` plus ``par2_seconds``: the solve's wall ``seconds`` if ``status == "ok"`` and the
        gate passed, else ``2 * budget.max_seconds`` (PAR-2: errors and timeouts count as failures;
        without a ``max_seconds``, the default budget's). The other metrics are left as given."""
        out = dict(metrics or {})
        b = budget if budget is not None and budget.max_seconds is not None else self.default_budget
        penalty = 2.0 * float(b.max_seconds)  # type: ignore[arg-type]
        timed = seconds is not None and math.isfinite(float(seconds))
        ok = status == "ok" and timed and float(out.get("passed_gate", 0.0) or 0.0) >= 1.0
        out["par2_seconds"] = float(seconds) if ok else penalty
        # the time statistic comes from the caller's clock around solve(), never from the solution's meta
        if status == "ok" and timed:
            out["solve_seconds"] = float(seconds)
        if "passed_gate" in out:
            out["diverged"] = 1.0 - float(out["passed_gate"] or 0.0)
        return out

    #: metrics printed by ``papergym bench`` (all are stored): the paper's three errors, solve time, gate
    table_metrics = ("rmse", "mae", "linf", "rel_rmse", "solve_seconds", "passed_gate")

    def report(self, runs: Any) -> str:
        """Paper-style statistics of benchmark runs (:func:`papergym.envs.tasks.ode.report.paper_statistics`:
        speed-up over ``dual-lssvm`` and ``pinn``, relative RMSE gap, gate passes, time-vs-n slopes)."""
        from papergym.envs.tasks.ode.report import paper_statistics

        return paper_statistics(runs)

    def figures(self, runs: Any, folder: Any) -> list[Any]:
        """``time_vs_n`` and ``error_vs_m`` figures (PNG + SVG) in ``folder``
        (:func:`papergym.envs.tasks.ode.report.figures`)."""
        from papergym.envs.tasks.ode.report import figures

        return figures(runs, folder)


register_task(TASK_ID, ODETask)
