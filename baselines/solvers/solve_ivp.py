"""``solve-ivp``: a classical adaptive Runge--Kutta integrator, the reference line of ``NystromODE-v0``.

A classical reference line (``docs/papers/nystrom-ode.md``).
:func:`scipy.integrate.solve_ivp` with the explicit Runge--Kutta
method of order 8(5,3) of Dormand & Prince (``DOP853``, Hairer, Norsett & Wanner's implementation),
``rtol = atol = 1e-10``, the solution read off the integrator's dense output at ``t_query``
(``t_eval``). Only the **public** problem is used: the explicit right-hand side
``y^(order) = f(t, y[, y'])`` (``problem.rhs``) and the initial conditions ``problem.ic``. An order-2
problem is integrated as the first-order system of ``p + p`` unknowns ``(y, y')``::

    d/dt (y, v) = (v, f(t, y, v)),     (y, v)(t0) = (ic[0], ic[1])

The collocation times ``t_train`` are not used (an integrator chooses its own steps). It is a
different problem class (marching, not collocation), hence role ``reference``: drawn on plots, never
ranked.

Budget: ``max_seconds`` is checked at every right-hand-side evaluation (an integration that runs past
it raises :class:`~papergym.envs.tasks.base.BudgetExceeded`, recorded as ``timeout``); ``max_work``
bounds the right-hand-side evaluations (one evaluation at one time is one work unit, the task's unit);
``max_iterations`` is not used (no outer iterations).

Solution: ``{"y": (1000, p) or (1000,), "meta": {"fit_seconds", "iterations" (accepted steps),
"work" (rhs evaluations, as ``nfev``), "method", "rtol", "atol"}}``.

Hyperparameters (enter the cell key)
------------------------------------
==========  ============  ==========================================================================
name        default       provenance
==========  ============  ==========================================================================
``method``  ``"DOP853"``  [design]; any of ``solve_ivp``'s explicit or implicit
                          methods (``RK45``, ``RK23``, ``DOP853``, ``Radau``, ``BDF``, ``LSODA``)
``rtol``    ``1e-10``     [design]
``atol``    ``1e-10``     [design]
==========  ============  ==========================================================================

Deviations: none (the method and tolerances are fixed above). The implicit methods use
``problem.jac`` for their Newton iterations.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

from papergym.agents.base import register_solver
from papergym.envs.tasks.base import Budget, BudgetExceeded
from papergym.validate import one_of, positive_float

__all__ = ["METHODS", "SolveIVP", "first_order_system"]

TASK_ID = "NystromODE-v0"
METHODS: tuple[str, ...] = ("DOP853", "RK45", "RK23", "Radau", "BDF", "LSODA")
_IMPLICIT = ("Radau", "BDF", "LSODA")


def first_order_system(
    problem: Any,
) -> tuple[Callable[[float, np.ndarray], np.ndarray], Callable[[float, np.ndarray], np.ndarray], np.ndarray]:
    """``(fun, jac, x0)`` of the first-order system of ``problem``: state ``x = y`` (order 1) or
    ``x = (y, y')`` (order 2, ``2p`` entries); ``fun(t, x) -> dx/dt`` and its Jacobian ``(d, d)``."""
    order, p = int(problem.order), int(problem.dim)
    ic = np.asarray(problem.ic, dtype=np.float64).reshape(order, p)
    rhs, pjac = problem.rhs, problem.jac
    if order == 1:

        def fun(t: float, x: np.ndarray) -> np.ndarray:
            return np.asarray(rhs(np.array([t]), x.reshape(1, p)), dtype=np.float64).reshape(p)

        def jac(t: float, x: np.ndarray) -> np.ndarray:
            f_y, _ = pjac(np.array([t]), x.reshape(1, p))
            return np.asarray(f_y, dtype=np.float64).reshape(p, p)

        return fun, jac, ic[0].copy()
    if order != 2:
        raise ValueError(f"problem.order must be 1 or 2, got {order}")

    def fun2(t: float, x: np.ndarray) -> np.ndarray:
        y, v = x[:p].reshape(1, p), x[p:].reshape(1, p)
        out = np.empty(2 * p)
        out[:p] = x[p:]
        out[p:] = np.asarray(rhs(np.array([t]), y, v), dtype=np.float64).reshape(p)
        return out

    def jac2(t: float, x: np.ndarray) -> np.ndarray:
        y, v = x[:p].reshape(1, p), x[p:].reshape(1, p)
        f_y, f_dy = pjac(np.array([t]), y, v)
        J = np.zeros((2 * p, 2 * p))
        J[:p, p:] = np.eye(p)
        J[p:, :p] = np.asarray(f_y, dtype=np.float64).reshape(p, p)
        if f_dy is not None:
            J[p:, p:] = np.asarray(f_dy, dtype=np.float64).reshape(p, p)
        return J

    return fun2, jac2, ic.reshape(2 * p).copy()


class SolveIVP:
    """``solve_ivp`` reference (module docstring). ``SolveIVP(seed=None, method="DOP853", rtol=1e-10,
    atol=1e-10)``; deterministic (``seed`` is accepted and unused)."""

    def __init__(self, *, seed: Any = None, method: str = "DOP853", rtol: float = 1e-10, atol: float = 1e-10):
        self.method = one_of(method, "method", METHODS)
        self.rtol = positive_float(rtol, "rtol")
        self.atol = positive_float(atol, "atol")
        self.seed = seed

    def solve(self, problem: Any, budget: Budget | None = None, report: Callable[..., None] | None = None) -> dict:
        budget = budget if budget is not None else Budget()
        start = time.perf_counter()
        fun, jac, x0 = first_order_system(problem)
        p = int(problem.dim)
        max_s, max_w = budget.max_seconds, budget.max_work
        nfev = [0]

        def guarded(t: float, x: np.ndarray) -> np.ndarray:
            nfev[0] += 1
            if max_w is not None and nfev[0] > max_w:
                raise BudgetExceeded(f"solve-ivp: more than max_work={max_w} right-hand-side evaluations")
            if max_s is not None and time.perf_counter() - start > max_s:
                raise BudgetExceeded(f"solve-ivp: integration ran past max_seconds={max_s}")
            return fun(t, x)

        t_query = np.asarray(problem.t_query, dtype=np.float64)
        kw = {"jac": jac} if self.method in _IMPLICIT else {}
        sol = solve_ivp(
            guarded,
            (float(problem.t0), float(problem.tf)),
            x0,
            method=self.method,
            t_eval=t_query,
            dense_output=True,
            rtol=self.rtol,
            atol=self.atol,
            **kw,
        )
        if sol.status != 0:
            raise RuntimeError(f"solve-ivp ({self.method}) failed on {getattr(problem, 'name', '?')}: {sol.message}")
        y = sol.y[:p].T.copy()  # (n_query, p): the first p states are y
        if p == 1:
            y = y[:, 0]
        fit_seconds = time.perf_counter() - start
        n_steps = len(sol.sol.ts) - 1  # accepted steps: one dense-output segment each
        meta = {
            "fit_seconds": fit_seconds,
            "iterations": n_steps,
            "work": float(nfev[0]),
            "method": self.method,
            "rtol": self.rtol,
            "atol": self.atol,
        }
        solution = {"y": y, "meta": meta}
        if report is not None:
            report(solution, iteration=n_steps, work=float(nfev[0]))
        return solution


register_solver(
    "solve-ivp",
    SolveIVP,
    tasks=[TASK_ID],
    role="reference",
    description="scipy solve_ivp (DOP853, rtol = atol = 1e-10) at t_query; order 2 as a first-order system",
    defaults={"method": "DOP853", "rtol": 1e-10, "atol": 1e-10},
)
