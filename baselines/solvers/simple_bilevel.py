"""Baselines of ``SimpleBilevel-v0`` (``docs/papers/dbgd.md``), ``min f s.t. x ∈ argmin g``; every solver uses
``problem.oracle`` (work: ``grads`` 1, ``grad_f``/``grad_g``/``values`` ½, ``f``/``g`` ¼) and the budget, stopping
and reporting rules of :class:`~papergym.agents.solvers.dbgd.IterationLoop` (stop at the first iterate that is
``(ε_f, ε_g)``-stationary by its own gradients, or when the work cap or 95 % of the wall time is reached; report
every ``report_every`` = 100 iterations and at the end).

* ``penalty`` — gradient descent on ``f + ρ_k g`` with ``ρ_k = ρ_0 · 2^{⌊k/K_0⌋}`` (``rho0 = 1``,
  ``K0 = 1000``): ``x ← x − η_k(∇f + ρ_k∇g)``, ``η_k = 1/(L_f + ρ_k L_g)`` (``eta``: a fixed step instead)
  [step size design: the smoothness constant of the penalised function];
* ``a-irg`` — iteratively regularised gradient (Kaushik & Yousefian, SIAM J. Optim. 2021):
  ``x ← x − η(∇g + σ_k∇f)``, ``σ_k = σ_0/(k+1)^{1/4}`` (``sigma0 = 1``, ``exponent = 0.25``),
  ``η = 1/(L_g + σ_0 L_f)``; ``output="average"`` reports the running uniform average ``x̄_k`` instead of
  ``x_k`` (its stationarity is checked at the reports only, with one extra ``grads`` call there);
* ``dbgd-original`` — DBGD of Gong, Liu & Liu (NeurIPS 2021) as in ``Raymond30/CG-BiO``
  ``over_parametrized/DBGD.m``: the :mod:`~papergym.agents.solvers.dbgd` iteration with the barrier
  ``φ(x) = min{α(g(x) − ĝ), β‖∇g(x)‖²}`` (``alpha = beta = 1``); ``ĝ = problem.g_star`` where the task knows it
  (0 on ``circle``, ``balanced-factorisation``, ``min-norm-regression``) and the running minimum of the observed
  ``g`` otherwise (``g_hat``: a number overrides both); ``g(x_k)`` costs ¼ unit unless the line search already
  evaluated it. Same step rule as ``dbgd`` (Armijo on ``f + λ_k g`` by default, ``line_search=False``: the fixed
  step of ``DBGD.m``), so the comparison isolates the barrier;
* ``two-phase`` — phase 1: ``x ← x − η∇g`` (``grad_g``, ½ unit) until ``‖∇g‖ ≤ ε_g``; phase 2:
  ``x ← x − η P_k∇f`` with ``P_k = I − ∇g∇gᵀ/‖∇g‖²`` (``grads``, 1 unit), back to phase 1 whenever
  ``‖∇g‖ > reenter·ε_g`` (``reenter = 10``); ``η = 1/max(L_f, L_g)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.agents.solvers.dbgd import (
    DBGD,
    TASK,
    IterationLoop,
    step_size,
)
from papergym.envs.tasks.base import BudgetExceeded
from papergym.validate import finite_float, in_range, one_of, positive_float, positive_int

__all__ = ["Penalty", "AIRG", "DBGDOriginal", "TwoPhase"]


def _finite_grads(o: Any, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    gf, gg = o.grads(x)
    return np.asarray(gf, dtype=float), np.asarray(gg, dtype=float)


class Penalty:
    def __init__(
        self,
        *,
        seed: Any = None,
        rho0: float = 1.0,
        K0: int = 1000,
        eta: float | None = None,
        report_every: int = 100,
        stop_at_stationary: bool = True,
    ):
        self.rho0 = positive_float(rho0, "rho0")
        self.K0 = positive_int(K0, "K0")
        self.eta = positive_float(eta, "eta", allow_none=True)
        self.report_every = positive_int(report_every, "report_every")
        self.stop_at_stationary = bool(stop_at_stationary)

    @np.errstate(over="ignore", invalid="ignore")
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        o = problem.oracle
        loop = IterationLoop(problem, budget, report, self.report_every, self.stop_at_stationary)
        L_f, L_g = float(problem.L_f), float(problem.L_g)
        x = np.array(problem.x0, dtype=float)
        k = 0
        try:
            while loop.afford(1.0):
                gf, gg = _finite_grads(o, x)
                if loop.check(x, k, gf, gg):
                    break
                rho = self.rho0 * 2.0 ** (k // self.K0)  # ρ_k = ρ_0 2^{⌊k/K_0⌋}
                eta = self.eta if self.eta is not None else 1.0 / (L_f + rho * L_g)
                x = x - eta * (gf + rho * gg)  # GD on f + ρ_k g
                k += 1
                if not np.all(np.isfinite(x)):
                    break
        except BudgetExceeded:
            pass
        return loop.finish(x, k)


class AIRG:
    def __init__(
        self,
        *,
        seed: Any = None,
        sigma0: float = 1.0,
        exponent: float = 0.25,
        eta: float | None = None,
        output: str = "last",
        report_every: int = 100,
        stop_at_stationary: bool = True,
    ):
        self.sigma0 = positive_float(sigma0, "sigma0")
        self.exponent = positive_float(exponent, "exponent", allow_zero=True)
        self.eta = positive_float(eta, "eta", allow_none=True)
        self.output = one_of(output, "output", ("last", "average"))
        self.report_every = positive_int(report_every, "report_every")
        self.stop_at_stationary = bool(stop_at_stationary)

    @np.errstate(over="ignore", invalid="ignore")
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        o = problem.oracle
        loop = IterationLoop(problem, budget, report, self.report_every, self.stop_at_stationary)
        L_f, L_g = float(problem.L_f), float(problem.L_g)
        eta = self.eta if self.eta is not None else 1.0 / (L_g + self.sigma0 * L_f)
        x = np.array(problem.x0, dtype=float)
        avg = x.copy()
        k = 0
        try:
            while loop.afford(1.0):
                gf, gg = _finite_grads(o, x)
                if self.output == "last":
                    if loop.check(x, k, gf, gg):
                        break
                elif k % self.report_every == 0 and k > 0 and loop.afford(2.0):
                    if loop.check(avg, k, *_finite_grads(o, avg)):
                        break
                elif k == 0:
                    loop.tick(avg, k)
                if not (np.all(np.isfinite(gf)) and np.all(np.isfinite(gg))):
                    break
                sigma = self.sigma0 / (k + 1) ** self.exponent  # σ_k = σ_0/(k+1)^{1/4}
                x = x - eta * (gg + sigma * gf)
                k += 1
                avg = avg + (x - avg) / (k + 1)  # x̄_k = mean(x_0..x_k)
                if not np.all(np.isfinite(x)):
                    break
        except BudgetExceeded:
            pass
        return loop.finish(x if self.output == "last" else avg, k)


class DBGDOriginal(DBGD):
    def __init__(
        self,
        *,
        seed: Any = None,
        alpha: float = 1.0,
        beta: float = 1.0,
        g_hat: float | None = None,
        eta: float | None = None,
        line_search: bool = True,
        c_armijo: float = 1e-4,
        report_every: int = 100,
        stop_at_stationary: bool = True,
    ):
        super().__init__(
            seed=seed,
            beta=beta,
            q=2.0,
            eta=eta,
            p=None,
            line_search=line_search,
            c_armijo=c_armijo,
            report_every=report_every,
            stop_at_stationary=stop_at_stationary,
        )
        self.alpha = positive_float(alpha, "alpha")
        self.g_hat = None if g_hat is None else finite_float(g_hat, "g_hat")

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        self._ghat = self.g_hat if self.g_hat is not None else problem.g_star
        self._running = self._ghat is None
        return super().solve(problem, budget, report)

    def barrier(
        self, o: Any, loop: IterationLoop, x: np.ndarray, grad_g: np.ndarray, vals: tuple[float, float] | None
    ) -> tuple[float | None, tuple[float, float] | None]:
        """``φ = min{α(g(x) − ĝ), β‖∇g‖²}`` (``DBGD.m``); ``g(x)`` from the line search's values or ``oracle.g``."""
        if vals is not None:
            gx = float(vals[1])
        elif loop.afford(0.25):
            gx = float(o.g(x))
        else:
            return None, vals
        if self._running:
            self._ghat = gx if self._ghat is None else min(self._ghat, gx)  # ĝ = running minimum of g
        return min(self.alpha * (gx - self._ghat), self.beta * float(grad_g @ grad_g)), vals


class TwoPhase:
    def __init__(
        self,
        *,
        seed: Any = None,
        eta: float | None = None,
        reenter: float = 10.0,
        report_every: int = 100,
        stop_at_stationary: bool = True,
    ):
        self.eta = positive_float(eta, "eta", allow_none=True)
        self.reenter = in_range(reenter, "reenter", 1, low_closed=True)  # phase 1 ends at ||grad g|| <= eps_g
        self.report_every = positive_int(report_every, "report_every")
        self.stop_at_stationary = bool(stop_at_stationary)

    @np.errstate(over="ignore", invalid="ignore")
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        o = problem.oracle
        loop = IterationLoop(problem, budget, report, self.report_every, self.stop_at_stationary)
        eta, eps_g = step_size(problem, self.eta), float(problem.eps_g)
        x = np.array(problem.x0, dtype=float)
        phase, k = 1, 0
        try:
            while True:
                if phase == 1:  # phase 1: GD on g
                    if not loop.afford(0.5):
                        break
                    gg = np.asarray(o.grad_g(x), dtype=float)
                    ng = float(np.linalg.norm(gg))
                    if not math.isfinite(ng):
                        break
                    if ng <= eps_g:
                        phase = 2
                        continue
                    loop.tick(x, k)
                    x = x - eta * gg
                else:  # phase 2: projected GD on f
                    if not loop.afford(1.0):
                        break
                    gf, gg = _finite_grads(o, x)
                    if loop.check(x, k, gf, gg):
                        break
                    ng2 = float(gg @ gg)
                    if math.sqrt(ng2) > self.reenter * eps_g:
                        phase = 1
                        continue
                    d = gf - (float(gf @ gg) / ng2) * gg if ng2 > 0 else gf  # P_k ∇f
                    x = x - eta * d
                k += 1
                if not np.all(np.isfinite(x)):
                    break
        except BudgetExceeded:
            pass
        return loop.finish(x, k)


def _penalty(*, seed=None, **hp):
    return Penalty(seed=seed, **hp)


def _airg(*, seed=None, **hp):
    return AIRG(seed=seed, **hp)


def _dbgd_original(*, seed=None, **hp):
    return DBGDOriginal(seed=seed, **hp)


def _two_phase(*, seed=None, **hp):
    return TwoPhase(seed=seed, **hp)


register_solver(
    "penalty",
    _penalty,
    tasks=[TASK],
    role="baseline",
    description="GD on f + rho_k g, rho doubling every K0 iterations, step 1/(L_f + rho L_g)",
    defaults={"rho0": 1.0, "K0": 1000, "eta": None, "report_every": 100, "stop_at_stationary": True},
)
register_solver(
    "a-irg",
    _airg,
    tasks=[TASK],
    role="baseline",
    description="iteratively regularised gradient (Kaushik & Yousefian 2021): GD on g + sigma_k f",
    defaults={
        "sigma0": 1.0,
        "exponent": 0.25,
        "eta": None,
        "output": "last",
        "report_every": 100,
        "stop_at_stationary": True,
    },
)
register_solver(
    "dbgd-original",
    _dbgd_original,
    tasks=[TASK],
    role="baseline",
    description="DBGD of Gong et al. 2021: barrier min(alpha (g - g_hat), beta ||grad g||^2)",
    defaults={
        "alpha": 1.0,
        "beta": 1.0,
        "g_hat": None,
        "eta": None,
        "line_search": True,
        "c_armijo": 1e-4,
        "report_every": 100,
        "stop_at_stationary": True,
    },
)
register_solver(
    "two-phase",
    _two_phase,
    tasks=[TASK],
    role="baseline",
    description="GD on g to ||grad g|| <= eps_g, then GD on f projected orthogonally to grad g",
    defaults={"eta": None, "reenter": 10.0, "report_every": 100, "stop_at_stationary": True},
)
