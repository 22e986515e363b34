"""``radagrad`` and ``radamw``: Riemannian optimisation on the manifold of rank-``r`` matrices with
AdaGrad-/AdamW-derived metrics (*Finding Low-Rank Matrix Weights in DNNs via Riemannian Optimization: RAdaGrad
and RAdamW*, NeurIPS 2025, OpenReview ``tiGFiCrmKm``; reference code ``cwb-clearwing/RAdaGrad``).

The iterate is ``W = U diag(s) Vᵀ`` (orthonormal ``U``, ``V``, rank ``r``). Each step:

1. ``G = ∇loss(W)`` (the Euclidean gradient, ``problem.oracle.loss_grad``);
2. a preconditioned direction ``D``:
   ``radagrad``: ``P_l = (εI + diag(GGᵀ))^{1/4}``, ``P_r = (εI + diag(GᵀG))^{1/4}`` (diagonal), ``D = P_l⁻¹ G P_r⁻¹``,
   ``ε = 0.01``; the code uses the current ``G`` only, ``accumulate=True`` uses running sums (AdaGrad reading);
   ``radamw``: ``M ← β1 M + (1 − β1)G``, ``V ← β2 V + (1 − β2)G⊙G``, ``D = M/(√V + eps)`` (``β = (0.9, 0.98)``,
   ``eps = 1e−6``, no bias correction), decoupled weight decay ``W ← (1 − ηλ)W`` (``λ = 0``);
   ``rgd`` (baseline): ``D = G``;
3. the tangent projection at ``W``: ``ξ = U(UᵀDV)Vᵀ + (I − UUᵀ)DVVᵀ + UUᵀD(I − VVᵀ)`` (the orthogonal projection
   of the preconditioned direction [design]);
4. the retraction ``W − ηξ`` → rank ``r`` by the small-SVD trick (:func:`retract`): with ``M_c = UᵀDV``,
   ``(I − UUᵀ)DV = Q_u R_u`` and ``(I − VVᵀ)DᵀU = Q_v R_v`` (thin QR),
   ``W − ηξ = [U Q_u] K [V Q_v]ᵀ``, ``K = [[diag(s) − ηM_c, −ηR_vᵀ], [−ηR_u, 0]]`` (``2r × 2r``); SVD of ``K``, keep
   the top ``r``. Cost ``O(mnr + (m + n)r² + r³)`` per step. Numerics: ``Q_u``, ``Q_v`` are made orthogonal to
   ``U``, ``V`` by a second projection (QR of a tiny or rank-deficient ``(I − UUᵀ)DV`` returns directions that
   are not), the new bases are re-orthonormalised by a QR and a ``r × r`` SVD, and an SVD that LAPACK's
   ``gesdd`` cannot converge is redone with ``gesvd`` (:func:`robust_svd`). Without these the bases drifted off
   the Stiefel manifold when ``r`` exceeds the iterate's rank, the iterates exploded and the SVD failed.

Step ``η`` (:meth:`RiemannianLowRank.step_size`): ``rgd``, ``lr / L_smooth`` (``lr`` default 1, from
{0.03, 0.1, 0.3, 1}); ``radagrad``, ``√ε / L_smooth`` unless ``lr`` is given (a rule from the public smoothness
constant: near the answer the AdaGrad direction is ``G/√ε`` and this makes the step ``rgd``'s ``1/L_smooth``);
``radamw``, ``lr`` (default 1e−2, from the grid {1e−3, 3e−3, 1e−2, 3e−2}). :class:`RiemannianLowRank` also serves as a
``torch.optim`` optimizer of a low-rank layer (:mod:`papergym.agents.solvers.riemannian_torch`).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.validate import one_of, positive_float

__all__ = ["tangent_project", "retract", "robust_svd", "Preconditioner", "RiemannianLowRank", "TASK"]

TASK = "LowRankRecovery-v0"


def tangent_project(U: np.ndarray, V: np.ndarray, D: np.ndarray) -> np.ndarray:
    """Orthogonal projection of ``D`` onto the tangent space at ``U diag(s) Vᵀ`` (dense, for checks)."""
    UtD = U.T @ D
    return U @ UtD + (D @ V) @ V.T - U @ (UtD @ V) @ V.T


def retract(
    U: np.ndarray, s: np.ndarray, V: np.ndarray, D: np.ndarray, eta: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rank-``r`` truncation of ``W − η P_T(D)`` (module docstring, step 4) as ``(U, s, V)``."""
    r = s.shape[0]
    Mc = U.T @ D @ V
    Up = D @ V - U @ Mc
    Vp = D.T @ U - V @ Mc.T
    Qu, Ru = _orth_complement_qr(U, Up)
    Qv, Rv = _orth_complement_qr(V, Vp)
    K = np.block([[np.diag(s) - eta * Mc, -eta * Rv.T], [-eta * Ru, np.zeros((r, r))]])
    if not np.all(np.isfinite(K)):  # a diverged iterate: nothing to decompose, the caller stops on it
        nan = np.full_like
        return nan(U, np.nan), nan(s, np.nan), nan(V, np.nan)
    Uk, sk, Vkt = robust_svd(K)
    A = np.hstack([U, Qu]) @ Uk[:, :r]
    B = np.hstack([V, Qv]) @ Vkt[:r].T
    # re-orthonormalise the new bases (the rounding of many steps, or directions of zero singular value picked
    # when the optimiser's rank exceeds the iterate's, would otherwise let U, V drift off the Stiefel manifold)
    Qa, Ra = np.linalg.qr(A)
    Qb, Rb = np.linalg.qr(B)
    Uc, sc, Vct = robust_svd((Ra * sk[:r]) @ Rb.T)
    return Qa @ Uc, sc, Qb @ Vct.T


def robust_svd(M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``numpy.linalg.svd`` (LAPACK ``gesdd``), falling back to ``gesvd`` (scipy) where the divide-and-conquer
    driver reports ``SVD did not converge`` (badly scaled or nearly rank-deficient matrices)."""
    try:
        return np.linalg.svd(M)
    except np.linalg.LinAlgError:
        import scipy.linalg

        return scipy.linalg.svd(M, lapack_driver="gesvd")


def _orth_complement_qr(U: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Thin QR ``P = Q R`` of ``P = (I − UUᵀ)·`` with ``Q ⟂ U``: the projection is applied once more ("twice is
    enough") and the QR's basis projected again and completed, so that ``[U Q]`` is orthonormal even where
    ``P`` is tiny or rank-deficient (QR then returns arbitrary directions for the null columns)."""
    P = P - U @ (U.T @ P)
    Q, R = np.linalg.qr(P)
    Q = Q - U @ (U.T @ Q)
    Q, R2 = np.linalg.qr(Q)
    # R2 is the identity up to rounding where Q was already orthogonal to U; null columns of P (R's zero rows)
    # become unit directions orthogonal to U, with R's rows there ~0, so Q R still equals P
    sign = np.where(np.diag(R2) < 0, -1.0, 1.0)
    return Q * sign, (sign[:, None] * R2) @ R


class Preconditioner:
    """The metric's direction ``D(G)`` (module docstring, step 2); ``state_floats`` its state size."""

    def __init__(
        self,
        kind: str,
        shape: tuple[int, int],
        *,
        eps: float | None = None,
        accumulate: bool = False,
        betas: tuple[float, float] = (0.9, 0.98),
        bias_correction: bool = False,
    ):
        self.kind = one_of(kind, "kind", ("identity", "adagrad", "adamw"))
        self.accumulate, self.bias_correction = bool(accumulate), bool(bias_correction)
        self.eps = float(eps if eps is not None else (0.01 if kind == "adagrad" else 1e-6))
        self.b1, self.b2 = float(betas[0]), float(betas[1])
        m, n = shape
        self.t = 0
        if kind == "adagrad":
            self.row, self.col = np.zeros(m), np.zeros(n)
            self.state_floats = m + n if accumulate else 0
        elif kind == "adamw":
            self.M, self.V = np.zeros(shape), np.zeros(shape)
            self.state_floats = 2 * m * n
        else:
            self.state_floats = 0

    def __call__(self, G: np.ndarray) -> np.ndarray:
        self.t += 1
        if self.kind == "identity":
            return G
        if self.kind == "adagrad":
            row, col = np.sum(G * G, axis=1), np.sum(G * G, axis=0)
            if self.accumulate:
                self.row += row
                self.col += col
                row, col = self.row, self.col
            return G / ((self.eps + row) ** 0.25)[:, None] / ((self.eps + col) ** 0.25)[None, :]
        self.M = self.b1 * self.M + (1 - self.b1) * G
        self.V = self.b2 * self.V + (1 - self.b2) * G * G
        M, V = self.M, self.V
        if self.bias_correction:
            M, V = M / (1 - self.b1**self.t), V / (1 - self.b2**self.t)
        return M / (np.sqrt(V) + self.eps)


class RiemannianLowRank:
    """Riemannian descent on the rank-``r`` manifold with a preconditioner (``radagrad``, ``radamw``, ``rgd``)."""

    def __init__(
        self,
        *,
        seed: Any = None,
        metric: str = "adagrad",
        lr: float | None = None,
        weight_decay: float = 0.0,
        report_every: int = 10,
        **precond: Any,
    ):
        self.metric = metric
        self.lr = positive_float(lr, "lr", allow_none=True)
        self.weight_decay = float(weight_decay)
        self.report_every = int(report_every)
        self.precond = precond
        Preconditioner(metric, (2, 2), **precond)  # validate the options early

    def step_size(self, problem: Any) -> float:
        """``η``: ``rgd``, ``lr / L_smooth`` (``lr`` default 1); ``radagrad``, ``lr`` when given, else
        ``√ε / L_smooth``; ``radamw``, ``lr`` (default 1e−2). The ``radagrad`` rule: where the gradient is small
        (``diag(GGᵀ) ≪ ε``, every iterate near the answer) the direction is ``G/√ε``, plain gradient descent with
        step ``η/√ε``, stable only for ``η/√ε < 2/L_smooth``; the rule makes that step ``1/L_smooth`` (``rgd``'s),
        and far from the answer the direction's entries are at most 1 in absolute value, so each entry moves by
        at most ``η``. It uses the public ``L_smooth`` only."""
        if self.metric == "identity":  # rgd: lr / L_smooth, lr from {0.03, 0.1, 0.3, 1}
            return (self.lr if self.lr is not None else 1.0) / float(problem.L_smooth)
        if self.metric == "adagrad" and self.lr is None:
            eps = Preconditioner("adagrad", (1, 1), **self.precond).eps
            return math.sqrt(eps) / float(problem.L_smooth)
        return self.lr if self.lr is not None else 1e-2

    @np.errstate(over="ignore", invalid="ignore")
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict:
        U, s, V = (
            np.array(problem.U0, dtype=float),
            np.array(problem.s0, dtype=float),
            np.array(problem.V0, dtype=float),
        )
        P = Preconditioner(self.metric, (int(problem.m), int(problem.n)), **self.precond)
        eta = self.step_size(problem)
        calls = int(getattr(budget, "max_work", None) or problem.max_calls)
        for k in range(calls):
            _, G = problem.oracle.loss_grad((U, s, V))
            D = P(np.asarray(G, dtype=float))
            if self.weight_decay:
                s = (1.0 - eta * self.weight_decay) * s
            U, s, V = retract(U, s, V, D, eta)
            if not np.all(np.isfinite(s)):
                break
            if (k + 1) % self.report_every == 0:
                report({"U": U, "s": s, "V": V, "state_floats": P.state_floats}, iteration=k + 1, work=k + 1)
        return {"U": U, "s": s, "V": V, "state_floats": P.state_floats}


def _radagrad(*, seed=None, **hp):
    return RiemannianLowRank(seed=seed, metric="adagrad", **hp)


def _radamw(*, seed=None, **hp):
    return RiemannianLowRank(seed=seed, metric="adamw", **hp)


register_solver(
    "radagrad",
    _radagrad,
    tasks=[TASK],
    role="paper",
    description="Riemannian GD on rank-r matrices, AdaGrad-type diagonal two-sided metric, QR + small-SVD "
    "retraction; step sqrt(eps)/L_smooth unless lr is given",
    defaults={"lr": None, "eps": 0.01, "accumulate": False},
)
register_solver(
    "radamw",
    _radamw,
    tasks=[TASK],
    role="paper",
    description="Riemannian GD on rank-r matrices with an AdamW direction (beta = 0.9, 0.98)",
    defaults={"lr": 1e-2, "betas": [0.9, 0.98], "eps": 1e-6, "weight_decay": 0.0},
)
