"""``dana-decaying`` and ``dana-constant``: Dimension-Adapted Nesterov Acceleration on
``PowerLawRandomFeatures-v0`` (Paquette, Ferbach, Paquette, Gidel, Everett, *Dimension-adapted Momentum
Outscales SGD*, NeurIPS 2025, arXiv 2505.16098; constants from the authors'
PLRF scripts [code]).

The generic momentum template, with ``y_{−1} = 0``, ``θ_0 = 0`` and the stochastic gradient ``g_t`` at ``θ_t``
(``t = 0, 1, ..., T − 1``, so every schedule is evaluated at ``t = 0`` first):

    y_t     = (1 − Δ(t)) y_{t−1} + γ1(t) g_t                                     (momentum buffer)
    θ_{t+1} = θ_t − γ2(t) g_t − γ3(t) y_t                                        (gradient + momentum step)

``dana-decaying``: ``γ1 = 1``, ``γ2 = c2/T_r`` (``c2 = 0.5``), ``γ3(t) = c3/T_r · (1 + t)^{−1/(2α)}`` (``c3 = 0.1``),
``Δ(t) = (1 + t/δ)^{−1}`` with ``δ = 4 + (α + β)/α``. ``dana-constant`` (the code's "exponent −1" variant):
``γ3 = g3_scale · (B/d) · min(1, B/T_r)`` constant (``g3_scale = 0.1``; the ``1/d`` is the dimension
adaptation), ``γ1``, ``γ2``, ``Δ`` as above. ``T_r = Σ_{j ≤ v} j^{−2α}`` is the public step normaliser. The
baselines ``sgd`` (``γ3 ≡ 0``) and ``sgd-momentum`` (heavy ball) run the same template
(:func:`momentum_template`). Every solver reports ``θ`` at the problem's log-spaced ``checkpoints``.

The momentum term overtakes the gradient term only after ``t_x = (c2·δ·(2 − 1/(2α))/c3)^{1/(1 − 1/(2α))}``
steps (≈ 1.8·10³ at ``α = 1``, ``β = 0.7``), so DANA's improved exponent needs ``d`` large enough that the
``d``-limited floor comes well after ``t_x`` (README, PowerLawRandomFeatures-v0). The authors' later notebook
settings (``γ2 = 0.375/T_r``, ``γ3 = 0.1·(1 + t)^{−1/(2α)}``, ``δ = max(2 + (2β − 1)/α, 2 − 1/α) + 1``) are
``c2 = 0.375``, ``c3 = 0.1·T_r``, ``delta`` = that value here.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.validate import one_of, positive_float

__all__ = ["momentum_template", "DANA", "TASK"]

TASK = "PowerLawRandomFeatures-v0"


def momentum_template(
    problem: Any,
    report: Callable[..., None],
    *,
    gamma1: Callable[[int], float],
    gamma2: Callable[[int], float],
    gamma3: Callable[[int], float],
    delta: Callable[[int], float],
) -> np.ndarray:
    """Run the template for ``problem.steps`` steps; report at ``problem.checkpoints``. Returns ``θ_T``.
    A run whose iterate stops being finite reports it once and stops (the evaluator scores it as diverged)."""
    theta = np.array(problem.theta0, dtype=float)
    y = np.zeros_like(theta)
    grad = problem.oracle.grad
    marks = set(int(c) for c in np.asarray(problem.checkpoints))
    B = int(problem.batch)
    for t in range(int(problem.steps)):
        g = grad(theta)
        y = (1.0 - delta(t)) * y + gamma1(t) * g
        theta = theta - gamma2(t) * g - gamma3(t) * y
        if (t + 1) in marks:
            report(theta, iteration=t + 1, work=(t + 1) * B)
        if not np.all(np.isfinite(theta)):
            report(theta, iteration=t + 1, work=(t + 1) * B)
            break
    return theta


class DANA:
    """``schedule="decaying"`` (``dana-decaying``) or ``"constant"`` (``dana-constant``); module docstring."""

    def __init__(
        self,
        *,
        seed: Any = None,
        schedule: str = "decaying",
        c2: float = 0.5,
        c3: float = 0.1,
        g3_scale: float = 0.1,
        delta: float | None = None,
    ):
        self.schedule = one_of(schedule, "schedule", ("decaying", "constant"))
        self.c2 = positive_float(c2, "c2", allow_zero=True)
        self.c3 = positive_float(c3, "c3", allow_zero=True)
        self.g3_scale = positive_float(g3_scale, "g3_scale", allow_zero=True)
        self.delta = positive_float(delta, "delta", allow_none=True)

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        a, b, Tr = float(problem.alpha), float(problem.beta), float(problem.trace)
        dl = self.delta if self.delta is not None else 4.0 + (a + b) / a
        g2 = self.c2 / Tr
        if self.schedule == "decaying":
            c3, p = self.c3 / Tr, 1.0 / (2.0 * a)

            def gamma3(t: int) -> float:
                return c3 * (1.0 + t) ** (-p)
        else:
            B, d = float(problem.batch), float(problem.d)
            g3 = self.g3_scale * (B / d) * min(1.0, B / Tr)

            def gamma3(t: int) -> float:
                return g3

        return momentum_template(
            problem,
            report,
            gamma1=lambda t: 1.0,
            gamma2=lambda t: g2,
            gamma3=gamma3,
            delta=lambda t: 1.0 / (1.0 + t / dl),
        )


def _dana_decaying(*, seed=None, **hp):
    return DANA(seed=seed, schedule="decaying", **hp)


def _dana_constant(*, seed=None, **hp):
    return DANA(seed=seed, schedule="constant", **hp)


register_solver(
    "dana-decaying",
    _dana_decaying,
    tasks=[TASK],
    role="paper",
    description="DANA: momentum with gamma3(t) = c3/T_r (1+t)^(-1/(2 alpha)), Delta(t) = 1/(1 + t/delta)",
    defaults={"c2": 0.5, "c3": 0.1, "delta": "4 + (alpha + beta)/alpha"},
)
register_solver(
    "dana-constant",
    _dana_constant,
    tasks=[TASK],
    role="paper",
    description="DANA with constant gamma3 = 0.1 (B/d) min(1, B/T_r) (dimension-adapted)",
    defaults={"c2": 0.5, "g3_scale": 0.1, "delta": "4 + (alpha + beta)/alpha"},
)
