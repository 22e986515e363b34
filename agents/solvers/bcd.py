"""``bcd`` and ``bcd-skip``: block coordinate descent on the lifted objective of Akiyama, *Block Coordinate
Descent for Neural Networks Provably Finds Global Minima* (NeurIPS 2025, arXiv 2510.22667; the block order is
the paper's, the step-size and backtracking details are this implementation's design).

Auxiliary variables ``V_j ∈ ℝ^{r×n}`` (``V_0 = X``) decouple the layers:

    F(W, V) = ‖W_L V_{L−1} − Y‖_F² + γ Σ_{j=1}^{L−1} ‖σ(W_j V_{j−1}) − V_j‖_F²                  (lifted objective)

(``bcd-skip``: ``σ(W_j V_{j−1}) + V_{j−1}`` for ``j ≥ 2`` and the projection ``V ← max(V, 0)`` after every
``V``-update, the paper's modification for ReLU). ``V`` starts at a forward pass (so ``F`` starts at the network
loss ``n·ℓ``). One sweep, backward over the blocks:

1. ``W_L``: a gradient step on ``‖W_L V_{L−1} − Y‖²`` with step ``1/(2 λ_max(V_{L−1}V_{L−1}ᵀ))`` (exact Lipschitz;
   ``exact_last=True``: the least-squares solution);
2. ``V_{L−1}``: gradient ``2W_Lᵀ(W_L V − Y) + 2γ(V − σ(W_{L−1}V_{L−2}))``, step ``1/(2(‖W_L‖₂² + γ))``;
3. for ``j = L−1, ..., 1``: ``W_j`` on ``γ‖σ(W_j V_{j−1}) − V_j‖²`` (initial step ``1/(2γ s′² λ_max(V_{j−1}V_{j−1}ᵀ))``,
   ``s′ = sup|σ′|``), then (``j ≥ 2``) ``V_{j−1}`` on the two terms that contain it (initial step
   ``1/(2γ(1 + s′²‖W_j‖₂²))``); both with Armijo backtracking — the step is halved until the block's objective
   does not increase (at most ``max_halvings`` times; otherwise the block is left unchanged).

So ``F`` never increases. ``bcd-skip`` on an instance without skip connections (a strictly monotone activation)
is plain ``bcd``; ``bcd`` refuses the ReLU instances. ``inner_steps`` repeats each block update; ``γ = 1`` by default
(grid {0.1, 1, 10}). After every sweep the weights are reported with the auxiliary blocks ``V`` and ``γ`` (the evaluator
recomputes ``F`` from them) and ``aux_objective = F`` (the solver's own value, for callers; the evaluator ignores it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.envs.tasks.deep_regression import activation, lifted_objective
from papergym.validate import positive_float, positive_int

__all__ = ["BCD", "lifted_objective", "TASK"]  # lifted_objective re-exported from the task

TASK = "DeepRegression-v0"


def _lam_max(V: np.ndarray) -> float:
    return float(np.linalg.norm(V, 2) ** 2)


class BCD:
    def __init__(
        self,
        *,
        seed: Any = None,
        gamma: float = 1.0,
        inner_steps: int = 1,
        exact_last: bool = False,
        max_halvings: int = 30,
        skip: bool | None = None,
    ):
        self.gamma = positive_float(gamma, "gamma")
        self.inner_steps = positive_int(inner_steps, "inner_steps")
        self.exact_last = bool(exact_last)
        self.max_halvings, self.skip = int(max_halvings), skip

    def _armijo(
        self, f: Callable[[np.ndarray], float], x: np.ndarray, g: np.ndarray, step: float, project: bool
    ) -> np.ndarray:
        f0 = f(x)
        t = step
        for _ in range(self.max_halvings):
            xn = x - t * g
            if project:
                xn = np.maximum(xn, 0.0)
            if f(xn) <= f0:
                return xn
            t *= 0.5
        return x

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict:
        act, gamma = str(problem.activation), self.gamma
        skip = bool(problem.skip) if self.skip is None else self.skip
        if not skip and act == "relu":
            raise ValueError("bcd needs a strictly increasing activation; ReLU networks are trained by bcd-skip")
        if skip and not bool(problem.skip):
            skip = False  # bcd-skip on a strictly monotone instance: the modification is not needed, plain BCD
        s, ds, sp = activation(act)
        X, Y = np.asarray(problem.X, dtype=float), np.asarray(problem.Y, dtype=float)
        W = [np.array(w, dtype=float) for w in problem.W0]
        L = len(W)
        V = [X]
        for j in range(1, L):
            z = s(W[j - 1] @ V[j - 1])
            V.append(z + V[j - 1] if skip and j >= 2 else z)

        def pre(j: int) -> np.ndarray:  # the layer-j map of V_{j-1}: what V_j should equal
            return s(W[j - 1] @ V[j - 1]) + (V[j - 1] if skip and j >= 2 else 0.0)

        sweeps = int(getattr(budget, "max_iterations", None) or problem.max_reports)
        F = lifted_objective(W, V, Y, act, skip, gamma)
        for sweep in range(sweeps):
            for _ in range(self.inner_steps):  # 1. W_L
                if self.exact_last:
                    W[-1] = np.linalg.lstsq(V[L - 1].T, Y.T, rcond=None)[0].T
                else:
                    g = 2.0 * (W[-1] @ V[L - 1] - Y) @ V[L - 1].T
                    W[-1] = W[-1] - g / (2.0 * _lam_max(V[L - 1]) + 1e-300)
            for _ in range(self.inner_steps):  # 2. V_{L-1}
                target = pre(L - 1)
                g = 2.0 * W[-1].T @ (W[-1] @ V[L - 1] - Y) + 2.0 * gamma * (V[L - 1] - target)
                v = V[L - 1] - g / (2.0 * (np.linalg.norm(W[-1], 2) ** 2 + gamma))
                V[L - 1] = np.maximum(v, 0.0) if skip else v
            for j in range(L - 1, 0, -1):  # 3. W_j, then V_{j-1}
                for _ in range(self.inner_steps):
                    Vp, Vj = V[j - 1], V[j]
                    extra = Vp if skip and j >= 2 else 0.0

                    def f_w(w):
                        return gamma * float(np.sum((s(w @ Vp) + extra - Vj) ** 2))

                    Z = W[j - 1] @ Vp
                    g = 2.0 * gamma * ((s(Z) + extra - Vj) * ds(Z)) @ Vp.T
                    W[j - 1] = self._armijo(
                        f_w, W[j - 1], g, 1.0 / (2.0 * gamma * sp**2 * _lam_max(Vp) + 1e-300), project=False
                    )
                if j >= 2:
                    for _ in range(self.inner_steps):
                        Wj, Vj, target = W[j - 1], V[j], pre(j - 1)
                        use = skip  # the identity path of layer j when skip (j >= 2 here)

                        def f_v(v):
                            r1 = s(Wj @ v) + (v if use else 0.0) - Vj
                            return gamma * float(np.sum(r1 * r1) + np.sum((target - v) ** 2))

                        v0 = V[j - 1]
                        Z = Wj @ v0
                        R = s(Z) + (v0 if use else 0.0) - Vj
                        g = 2.0 * gamma * (Wj.T @ (R * ds(Z)) + (R if use else 0.0) + (v0 - target))
                        nw = np.linalg.norm(Wj, 2)
                        lip = 2.0 * gamma * (((1.0 + sp * nw) ** 2 if use else sp**2 * nw**2) + 1.0)
                        V[j - 1] = self._armijo(f_v, v0, g, 1.0 / lip, project=skip)
            F = lifted_objective(W, V, Y, act, skip, gamma)
            report(
                {"weights": [w.copy() for w in W], "V": [v.copy() for v in V[1:]], "gamma": gamma, "aux_objective": F},
                iteration=sweep + 1,
                work=(sweep + 1) * 3 * L,
            )
        return {"weights": W, "V": V[1:], "gamma": gamma, "aux_objective": F}


def _bcd(*, seed=None, **hp):
    return BCD(seed=seed, **hp)


def _bcd_skip(*, seed=None, **hp):
    return BCD(seed=seed, **{"skip": True, **hp})


register_solver(
    "bcd",
    _bcd,
    tasks=[TASK],
    role="paper",
    description="block coordinate descent on the lifted objective (strictly monotone activations)",
    defaults={"gamma": 1.0, "inner_steps": 1, "exact_last": False},
)
register_solver(
    "bcd-skip",
    _bcd_skip,
    tasks=[TASK],
    role="paper",
    description="BCD with skip connections and V >= 0 projection (ReLU; the paper's modification)",
    defaults={"gamma": 1.0, "inner_steps": 1, "exact_last": False},
)
