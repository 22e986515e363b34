"""Baselines of ``DeepRegression-v0``: full-batch ``gd`` and ``adam`` on the network
loss ``(1/n) Σ_i ‖f(x_i) − y_i‖²``, gradients by backpropagation in numpy (one epoch = one full-batch step,
reported after every epoch).

Defaults from a dev-split sweep over the grids (teacher family, leaky-ReLU, L = 3 and 5, seed 0, 500
epochs, final log10 training loss): ``gd`` lr 0.3 of {1e−2, 3e−2, ..., 1} (−3.21 / −1.16; lr 1 diverges at L = 5),
``adam`` lr 3e−3 of {1e−4, ..., 1e−2} (−18.6 / −5.2) with β = (0.9, 0.999), ε = 1e−8.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.agents.solvers.bcd import TASK
from papergym.envs.tasks.deep_regression import activation
from papergym.validate import in_range, positive_float

__all__ = ["network_gradients", "GradientDescent", "Adam"]


def network_gradients(
    W: list[np.ndarray], X: np.ndarray, Y: np.ndarray, act: str, skip: bool
) -> tuple[float, list[np.ndarray]]:
    """``(loss, [∂loss/∂W_j])`` of ``loss = (1/n) Σ ‖f(x_i) − y_i‖²`` by backpropagation."""
    s, ds, _ = activation(act)
    n, L = X.shape[1], len(W)
    H, Z = [X], []
    for j in range(L - 1):
        z = W[j] @ H[j]
        Z.append(z)
        H.append(s(z) + (H[j] if skip and j >= 1 else 0.0))
    r = W[-1] @ H[-1] - Y
    loss = float(np.sum(r * r) / n)
    dF = 2.0 * r / n
    grads: list[np.ndarray] = [np.empty(0)] * L
    grads[-1] = dF @ H[-1].T
    dH = W[-1].T @ dF
    for j in range(L - 2, -1, -1):
        dZ = dH * ds(Z[j])
        grads[j] = dZ @ H[j].T
        dH = W[j].T @ dZ + (dH if skip and j >= 1 else 0.0)
    return loss, grads


class GradientDescent:
    def __init__(self, *, seed: Any = None, lr: float = 0.3):
        self.lr = positive_float(lr, "lr")

    @np.errstate(over="ignore", invalid="ignore")
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> list:
        W = [np.array(w, dtype=float) for w in problem.W0]
        X, Y = np.asarray(problem.X, dtype=float), np.asarray(problem.Y, dtype=float)
        for ep in range(int(getattr(budget, "max_iterations", None) or problem.max_reports)):
            _, g = network_gradients(W, X, Y, problem.activation, bool(problem.skip))
            W = [w - self.lr * gw for w, gw in zip(W, g)]
            report([w.copy() for w in W], iteration=ep + 1, work=(ep + 1) * 3 * len(W))
        return W


class Adam:
    def __init__(
        self, *, seed: Any = None, lr: float = 3e-3, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8
    ):
        self.lr, self.eps = positive_float(lr, "lr"), positive_float(eps, "eps")
        self.b1 = in_range(beta1, "beta1", 0, 1, low_closed=True)
        self.b2 = in_range(beta2, "beta2", 0, 1, low_closed=True)

    @np.errstate(over="ignore", invalid="ignore")
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> list:
        W = [np.array(w, dtype=float) for w in problem.W0]
        X, Y = np.asarray(problem.X, dtype=float), np.asarray(problem.Y, dtype=float)
        m = [np.zeros_like(w) for w in W]
        v = [np.zeros_like(w) for w in W]
        for ep in range(int(getattr(budget, "max_iterations", None) or problem.max_reports)):
            _, g = network_gradients(W, X, Y, problem.activation, bool(problem.skip))
            t = ep + 1
            for i, gi in enumerate(g):
                m[i] = self.b1 * m[i] + (1 - self.b1) * gi
                v[i] = self.b2 * v[i] + (1 - self.b2) * gi * gi
                W[i] = W[i] - self.lr * (m[i] / (1 - self.b1**t)) / (np.sqrt(v[i] / (1 - self.b2**t)) + self.eps)
            report([w.copy() for w in W], iteration=t, work=t * 3 * len(W))
        return W


def _gd(*, seed=None, **hp):
    return GradientDescent(seed=seed, **hp)


def _adam(*, seed=None, **hp):
    return Adam(seed=seed, **hp)


register_solver(
    "gd", _gd, tasks=[TASK], role="baseline", description="full-batch gradient descent (backprop)", defaults={"lr": 0.3}
)
register_solver(
    "adam", _adam, tasks=[TASK], role="baseline", description="full-batch Adam (backprop)", defaults={"lr": 3e-3}
)
