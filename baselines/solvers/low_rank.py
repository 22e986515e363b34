"""Baselines of ``LowRankRecovery-v0``:

* ``rgd``: Riemannian gradient descent on the rank-``r`` manifold (identity metric; Vandereycken 2013; Wei,
  Cai, Chan & Leung 2016), the loop of :class:`~papergym.agents.solvers.radagrad.RiemannianLowRank`, step
  ``lr / L_smooth``;
* ``scaled-gd``: ScaledGD on the factors of ``X = ABᵀ`` (Tong, Ma & Chi, JMLR 2021):
  ``A ← A − η ∇_A (BᵀB + λI)⁻¹``, ``B ← B − η ∇_B (AᵀA + λI)⁻¹`` (simultaneous; ``λ > 0`` is the Riemannian-
  preconditioned LoRA of Zhang & Pilanci 2024), ``η = lr / L_smooth``;
* ``lora-adam``: Adam on ``A``, ``B`` (``lr`` from {1e−3, 3e−3, 1e−2});
* ``factorized-gd``: plain gradient descent on ``A``, ``B`` (Burer–Monteiro) with the optional balancing term
  ``(λ_b/4)‖AᵀA − BᵀB‖_F²``, ``η = lr / (L_smooth σ_1(X_0))``.

All factorised methods start from the balanced factors ``A = U_0√S_0``, ``B = V_0√S_0`` of the common ``X_0``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.agents.solvers.radagrad import TASK, RiemannianLowRank
from papergym.validate import one_of, positive_float

__all__ = ["FactorSolver"]


class FactorSolver:
    """``method``: ``scaled-gd``, ``adam`` or ``gd`` on the factors (module docstring)."""

    def __init__(
        self,
        *,
        seed: Any = None,
        method: str = "scaled-gd",
        lr: float | None = None,
        lam: float = 0.0,
        balance: float = 0.0,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        report_every: int = 10,
    ):
        one_of(method, "method", ("scaled-gd", "adam", "gd"))
        positive_float(lr, "lr", allow_none=True)
        self.method, self.lr, self.lam, self.balance = method, lr, float(lam), float(balance)
        self.b1, self.b2, self.eps, self.report_every = float(betas[0]), float(betas[1]), float(eps), int(report_every)

    @np.errstate(over="ignore", invalid="ignore")
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict:
        root = np.sqrt(np.asarray(problem.s0, dtype=float))
        A, B = np.asarray(problem.U0, dtype=float) * root, np.asarray(problem.V0, dtype=float) * root
        L = float(problem.L_smooth)
        if self.method == "scaled-gd":
            eta = (self.lr if self.lr is not None else 0.5) / L
        elif self.method == "gd":
            eta = (self.lr if self.lr is not None else 0.5) / (L * float(np.max(problem.s0)))
        else:
            eta = self.lr if self.lr is not None else 1e-2
        r = A.shape[1]
        mA, vA, mB, vB = (np.zeros_like(A), np.zeros_like(A), np.zeros_like(B), np.zeros_like(B))
        state = 4 * A.size if self.method == "adam" else 0
        calls = int(getattr(budget, "max_work", None) or problem.max_calls)
        for k in range(calls):
            _, G = problem.oracle.loss_grad((A, B))
            G = np.asarray(G, dtype=float)
            gA, gB = G @ B, G.T @ A
            if self.balance:
                Dlt = A.T @ A - B.T @ B
                gA, gB = gA + self.balance * A @ Dlt, gB - self.balance * B @ Dlt
            if self.method == "scaled-gd":
                A, B = (
                    A - eta * gA @ np.linalg.pinv(B.T @ B + self.lam * np.eye(r)),
                    B - eta * gB @ np.linalg.pinv(A.T @ A + self.lam * np.eye(r)),
                )
            elif self.method == "gd":
                A, B = A - eta * gA, B - eta * gB
            else:
                t = k + 1
                mA, vA = self.b1 * mA + (1 - self.b1) * gA, self.b2 * vA + (1 - self.b2) * gA * gA
                mB, vB = self.b1 * mB + (1 - self.b1) * gB, self.b2 * vB + (1 - self.b2) * gB * gB
                cA, cB = 1 - self.b1**t, 1 - self.b2**t
                A = A - eta * (mA / cA) / (np.sqrt(vA / cB) + self.eps)
                B = B - eta * (mB / cA) / (np.sqrt(vB / cB) + self.eps)
            if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
                break
            if (k + 1) % self.report_every == 0:
                report({"A": A, "B": B, "state_floats": state}, iteration=k + 1, work=k + 1)
        return {"A": A, "B": B, "state_floats": state}


def _rgd(*, seed=None, **hp):
    return RiemannianLowRank(seed=seed, metric="identity", **hp)


def _scaled(*, seed=None, **hp):
    return FactorSolver(seed=seed, method="scaled-gd", **hp)


def _lora_adam(*, seed=None, **hp):
    return FactorSolver(seed=seed, method="adam", **hp)


def _fgd(*, seed=None, **hp):
    return FactorSolver(seed=seed, method="gd", **hp)


register_solver(
    "rgd",
    _rgd,
    tasks=[TASK],
    role="baseline",
    description="Riemannian GD on the rank-r manifold (identity metric), step lr/L",
    defaults={"lr": 1.0},
)
register_solver(
    "scaled-gd",
    _scaled,
    tasks=[TASK],
    role="baseline",
    description="ScaledGD on the factors (Tong, Ma & Chi 2021), step lr/L",
    defaults={"lr": 0.5, "lam": 0.0},
)
register_solver(
    "lora-adam",
    _lora_adam,
    tasks=[TASK],
    role="baseline",
    description="Adam on the factors A, B of X = AB^T",
    defaults={"lr": 1e-2},
)
register_solver(
    "factorized-gd",
    _fgd,
    tasks=[TASK],
    role="baseline",
    description="gradient descent on the factors (Burer-Monteiro), step lr/(L sigma_1)",
    defaults={"lr": 0.5, "balance": 0.0},
)
