"""``agf`` numerical core for ``FeatureStaircase-v0`` — Alternating Gradient Flows (Kunin, Marchetti, Chen,
Karkada, Simon, DeWeese, Ganguli, Miolane, *Alternating Gradient Flows: A Theory of Feature Learning in
Two-layer Neural Networks*, NeurIPS 2025, arXiv:2506.06489; spec ``learning-dynamics.md`` §1.4; authors' code
``danielkunin/alternating-gradient-flows``, notebook ``diagonal-linear-network``).

Diagonal linear network (this module's track)
----------------------------------------------
``β = u ⊙ v`` with loss ``L(β) = ½·mean_j (y_j − x_jᵀβ)²`` and gradient flow from ``u = √2·α·1``, ``v = 0``.
With ``g = Xᵀr/n`` (``r = y − Xβ``) each coordinate obeys ``u̇_i = g_i v_i``, ``v̇_i = g_i u_i``: a hyperbolic
rotation of ``(u_i, v_i)``. Writing ``u_i ± v_i = √2 α e^{±s_i/2}`` defines the **phase** ``s_i`` with

    ṡ_i = 2 g_i,   ‖θ_i‖² = u_i² + v_i² = 2α² cosh(s_i),   β_i = α² sinh(s_i).

A coordinate stays negligible (dormant) until ``‖θ_i‖ = 1``, i.e. ``|s_i| = S = arccosh(1/(2α²))``
(``≈ 2 log(1/α)``), and then fits within a time ``O(1)`` (active). AGF [paper] alternates:

1. **Utility maximisation** (dormant coordinates, residual frozen): the utility of dormant ``i`` is
   ``U_i = |g_i|/2``; its phase moves at speed ``2|g_i| = 4U_i``. The time until ``i`` activates is
   ``τ_i = (S − |s_i|)/(2|g_i|)`` if ``s_i g_i ≥ 0`` else ``(S + |s_i|)/(2|g_i|)``; ``i* = argmin τ_i``,
   the clock advances by ``τ* = τ_{i*}``.
2. **Memory**: every dormant phase advances ``s_i ← s_i + 2 g_i τ*`` (accumulated utility is kept).
3. **Cost minimisation** (active set ``A``, instantaneous): ``β_A`` = least squares of ``y`` on ``X_A`` with
   each coordinate's sign fixed by its activation direction (``scipy.optimize.lsq_linear`` with one-sided
   bounds). A coordinate the constraint pins at 0 leaves ``A`` and returns to the dormant set with phase
   ``±S`` (the sign of its last activation): it re-activates at once if the gradient pushes it the same way,
   and with the opposite sign only after its phase has travelled ``2S``.
4. ``r ← y − X_A β_A``; record ``(t/lr, ½ mean r², i*)``. Stop when ``max_i |g_i| < grad_tol`` on the
   dormant set or every coordinate is active.

Times are gradient-flow times; ``t/lr`` converts to iterations of gradient descent with step ``lr``. As
``α → 0`` with time rescaled by ``log(1/α)`` this is the saddle-to-saddle limit of Pesme & Flammarion
(NeurIPS 2023) [paper: AGF → gradient flow, proved for diagonal nets].

Not here yet (issue 13): the task ``FeatureStaircase-v0``, the linear-network and modular-addition tracks,
the baselines and the solver registration.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Step", "agf_diagonal", "activation_phase", "check_data"]


class Step(NamedTuple):
    """One predicted drop: the iteration ``t`` it happens at, the loss ``level`` after it, the ``feature``
    (coordinate) that activated."""

    t: float
    level: float
    feature: int


def activation_phase(alpha: float) -> float:
    """``S = arccosh(1/(2α²))``: the phase at which a coordinate started at ``u = √2α, v = 0`` reaches norm 1.
    Defined for ``0 < α < 1/√2``."""
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0 / np.sqrt(2.0):
        raise ValueError(f"alpha must be in (0, 1/sqrt(2)) for the activation phase to exist; got {alpha!r}")
    # arccosh(1/w) = log((1 + sqrt(1 − w²))/w) with w = 2α²: no overflow for tiny α
    w = 2.0 * alpha * alpha
    return float(np.log1p(np.sqrt(1.0 - w * w)) - np.log(w))


def check_data(X, y) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` as float64 ``(n, d)`` and ``(n,)``; ``ValueError`` naming the problem."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if X.ndim != 2 or X.shape[0] != y.shape[0] or X.shape[0] == 0:
        raise ValueError(f"X must be (n, d) and y (n,); got {X.shape} and {y.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("X and y must be finite")
    return X, y


def _signed_lstsq(X: np.ndarray, y: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Least squares of ``y`` on ``X`` with ``sign(β_i) ∈ {0, signs_i}``."""
    from scipy.optimize import lsq_linear

    lb = np.where(signs > 0, 0.0, -np.inf)
    ub = np.where(signs > 0, np.inf, 0.0)
    return lsq_linear(X, y, bounds=(lb, ub), method="bvls", tol=1e-12).x


def agf_diagonal(X, y, alpha: float, lr: float = 1.0, max_steps: int | None = None,
                 grad_tol: float = 1e-12, zero_tol: float = 1e-12, phase: float | None = None) -> list[Step]:
    """The AGF staircase of a diagonal linear network (module docstring): the list of predicted drops
    ``Step(t, level, feature)`` with ``t`` in iterations of GD with step ``lr`` (``lr = 1``: flow time).
    ``phase`` overrides the activation phase ``S`` (the ``α → 0`` baseline uses ``2 log(1/α)``)."""
    X, y = check_data(X, y)
    n, d = X.shape
    S = activation_phase(alpha) if phase is None else float(phase)
    if not S > 0:
        raise ValueError(f"phase must be positive; got {phase!r}")
    if not lr > 0:
        raise ValueError(f"lr must be positive; got {lr!r}")
    max_steps = 4 * d + 4 if max_steps is None else int(max_steps)
    s = np.zeros(d)  # phases
    active = np.zeros(d, dtype=bool)
    sign = np.zeros(d)  # activation direction of each coordinate (0: never active)
    beta = np.zeros(d)
    r = y.copy()
    t = 0.0
    steps: list[Step] = []
    for _ in range(max_steps):
        g = X.T @ r / n
        dorm = ~active & (np.abs(g) > grad_tol)
        if not dorm.any():
            break
        gd, sd = g[dorm], s[dorm]
        with np.errstate(divide="ignore"):
            tau = np.where(sd * gd >= 0, S - np.abs(sd), S + np.abs(sd)) / (2.0 * np.abs(gd))
        tau = np.maximum(tau, 0.0)
        k = int(np.argmin(tau))
        i = int(np.flatnonzero(dorm)[k])
        t += float(tau[k])
        s[dorm] += 2.0 * gd * tau[k]  # memory: every dormant phase keeps its accumulated utility
        s[i] = np.sign(g[i]) * S
        active[i], sign[i] = True, np.sign(g[i])
        while True:  # cost minimisation with the activation signs; pinned coordinates leave
            idx = np.flatnonzero(active)
            b = _signed_lstsq(X[:, idx], y, sign[idx])
            pinned = np.abs(b) <= zero_tol * max(1.0, float(np.max(np.abs(b))))
            pinned[idx == i] = False  # the newcomer stays (it activated because it lowers the loss)
            if not pinned.any():
                break
            for j in idx[pinned]:
                active[j] = False
                s[j] = sign[j] * S
        beta[:] = 0.0
        beta[idx] = b
        r = y - X @ beta
        steps.append(Step(t / lr, 0.5 * float(np.mean(r ** 2)), i))
        if active.all():
            break
    return steps
