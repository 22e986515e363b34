"""``NystromODE-v0``: initial-value problems solved by collocation, scored against exact solutions.

Public problem (what a solver sees; spec ``papers/ode.md`` section 3)
--------------------------------------------------------------------
:class:`ODEProblem`: ``name``, ``kind`` (``"linear"`` / ``"nonlinear"``), ``order`` (1 or 2), ``dim``
``p``, the interval ``[t0, tf]``, the collocation times ``t_train`` (``n``, in ``(t0, tf]``), the query
times ``t_query`` (``1000`` on ``[t0, tf]``), the initial conditions ``ic`` (``(order, p)``: ``y(t0)``
and, for order 2, ``y'(t0)``), the explicit right-hand side ``y^(order) = rhs(t, y, dy)`` with its
Jacobians ``jac(t, y, dy) -> (df/dy, df/dy')`` and, for linear problems, ``linear_form``
(:class:`LinearForm`: ``sum_k a_k(t) y^(k) = r(t)``), and the family ``params``. Callables are
module-level functions bound to ``params`` with :func:`functools.partial`, so a problem pickles by
reference.

Solution: the predictions at ``t_query``, an array ``(1000, p)`` (or ``(1000,)`` when ``p = 1``), or a
dict ``{"y": array, "meta": {...}}`` with optional ``meta`` (``fit_seconds``, ``sigma``, ``gamma``,
``m``, ``iterations``, ``work``).
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
        raise ValueError(f"the solution must be a numeric array of shape ({n_query}, {dim}); got {type(solution).__name__}") from None
    if dim == 1 and y.shape == (n_query,):
        y = y.reshape(n_query, 1)
    if y.shape != (n_query, dim):
        raise ValueError(f"the solution must have shape ({n_query}, {dim}) (predictions at t_query), got {y.shape}")
    return y
