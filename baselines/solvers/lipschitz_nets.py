"""Baselines of ``LipschitzApprox-v0`` (``docs/papers/lipschitz-resnets.md``): certified 1-Lipschitz networks from the
literature, trained with the same optimiser schedule as ``lip-resnet`` (the shared
:func:`papergym.agents.solvers.lip_resnet.train_model`: Adam + OneCycle 5e−3 → 1e−1 → 5e−7, batch 256, the same
epochs, reports and time budget) and exported to the task's layer vocabulary with exact norms. torch extra.

* ``sn-mlp`` — ReLU MLP, every weight divided by its spectral norm ``σ = uᵀWv`` (Miyato et al., ICLR 2018): one
  power iteration per optimiser step with ``u, v`` carried over (``sn_power_iters_init = 50`` at construction), the
  gradient flowing through ``σ`` with ``u, v`` fixed; exported as ``W / ‖W‖₂`` (exact SVD).
* ``groupsort-bjorck`` — MaxMin activations (consecutive pairs) with Björck-orthonormalised weights (Anil, Lucas &
  Grosse, ICML 2019): ``bjorck_iters = 15`` iterations ``W ← (1 + β)W − β WWᵀW``, ``β = 0.5``, started from
  ``W / √(‖W‖₁‖W‖_∞)`` (so ``‖W‖₂ ≤ 1``: singular values ``s ↦ 1.5s − 0.5s³`` then stay in ``[0, 1]``; unscaled,
  the iteration diverges for ``‖W‖₂ > √5``), differentiated through; exported after the same iterations in float64,
  divided by ``max(1, ‖·‖₂)`` (exact) against rounding.
* ``aol`` — almost-orthogonal layers ``W · diag(Σ_j |WᵀW|_ij)^{−1/2}`` (Prach & Lampert, ECCV 2022), ReLU; every
  layer including the lifting and the readout (for a row ``v`` the rescaling gives ``‖·‖₂ = 1``).
* ``sll`` — SDP-based Lipschitz layers ``z − 2W T⁻¹ relu(Wᵀz + b)``, ``T = diag(Σ_j |WᵀW|_ij q_j/q_i)``, ``q =
  exp(log q) > 0`` learnable (Araujo et al., ICLR 2023); exported as ``SLL(W, b, q)`` (the evaluator recomputes
  ``T``).
* ``cpl`` — convex potential layers (Meunier et al., ICML 2022): the gradient step with ``h = 2/‖W‖₂²`` fixed
  (``σ`` by the same warm-started power iteration as ``lip-resnet``, exact at export).
* ``mlp-unconstrained`` — plain ReLU MLP (role ``reference``): its certified bound is the product of its layer
  norms, > 1 in general, so its ``error`` is 1.0 by the task's rule; it is the uncertified reference line
  (``rel_rmse`` and ``clean_acc`` show its actual fit).

Architectures [design]. MLP-type baselines (``sn-mlp``, ``groupsort-bjorck``, ``aol``, ``mlp-unconstrained``):
``d → m`` then ``depth − 1`` hidden ``m → m`` layers, each followed by the activation, and a readout ``m → out_dim``
(normalised like the other layers; a bias ``c``). Residual baselines (``sll``, ``cpl``): a lifting ``d → m`` kept at
``‖Q‖₂ ≤ 1`` by exact SVD rescaling after every step (as ``lip-resnet``'s), ``depth`` residual layers of width
``m``, a readout with ``‖v‖₂ ≤ 1`` by SVD rescaling. Initialisation: weights ``U(±1/√fan_in)`` (``nn.Linear``'s),
``cpl``'s ``W`` orthogonal like ``lip-resnet``'s blocks.

Same budget: ``depth = 8`` (``lip-resnet``'s default) and ``width = None`` picks the width ``m`` whose trainable
parameter count is closest to ``lip-resnet``'s architecture ``G`` at width ``ref_width = 16`` and the same depth
(within ±20 %; even ``m`` for MaxMin); an explicit ``width`` overrides it. The chosen width is in
``meta["width"]``, the trainable count in ``meta["n_trainable"]``.

Hyperparameters: those of :class:`papergym.agents.solvers.lip_resnet.LipschitzSolver` (``depth``, ``epochs``,
``batch_size``, ``lr_min``, ``lr_max``, ``final_div_factor``, ``pct_start``, ``onecycle_bug_compat``,
``report_fraction``, ``stop_fraction``, ``dtype``), plus ``width`` (None), ``ref_width`` (16), and
``sn_power_iters_init`` (50, ``sn-mlp``), ``bjorck_iters`` (15) and ``bjorck_beta`` (0.5) (``groupsort-bjorck``),
``power_iters_init`` (10,000, ``cpl``).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.agents.solvers.lip_resnet import (
    TASK,
    GradBlocks,
    Lifting,
    LipResNetG,
    LipschitzSolver,
    ProjectedHead,
    spectral_norm,
    to_numpy,
    uniform,
)
from papergym.validate import in_range, positive_int

__all__ = ["CPLBaseline", "MLPBaseline", "SLLBaseline", "aol_np", "bjorck_np", "count_params", "matched_width"]

MLP_KINDS = ("sn", "bjorck", "aol", "plain")


# ============================================================================================ numerics
def bjorck_np(W: np.ndarray, iters: int = 15, beta: float = 0.5) -> np.ndarray:
    """Björck orthonormalisation in numpy (float64), from ``W / √(‖W‖₁‖W‖_∞)``."""
    W = np.asarray(W, dtype=float)
    s = math.sqrt(max(np.abs(W).sum(axis=0).max() * np.abs(W).sum(axis=1).max(), 1e-300))
    W = W / s
    for _ in range(int(iters)):
        W = (1.0 + beta) * W - beta * W @ (W.T @ W)
    return W


def _bjorck_t(torch: Any, W: Any, iters: int, beta: float) -> Any:
    s = torch.sqrt(torch.clamp(W.abs().sum(dim=0).max() * W.abs().sum(dim=1).max(), min=1e-30))
    W = W / s
    for _ in range(iters):
        W = (1.0 + beta) * W - beta * W @ (W.T @ W)
    return W


def aol_np(W: np.ndarray) -> np.ndarray:
    """``W · diag(Σ_j |WᵀW|_ij)^{−1/2}`` (columns with zero sum stay zero)."""
    W = np.asarray(W, dtype=float)
    s = np.abs(W.T @ W).sum(axis=1)
    return W * np.where(s > 0, 1.0 / np.sqrt(np.where(s > 0, s, 1.0)), 0.0)[None, :]


def _aol_t(torch: Any, W: Any) -> Any:
    s = (W.T @ W).abs().sum(dim=1)
    return W * torch.rsqrt(s + 1e-12)[None, :]


def count_params(kind: str, d: int, m: int, depth: int, out_dim: int = 1) -> int:
    """Trainable parameters of a baseline (``kind``: sn, bjorck, aol, plain, sll, cpl) at width ``m``."""
    head = out_dim * m + out_dim
    if kind in MLP_KINDS:
        return d * m + m + (depth - 1) * (m * m + m) + head
    if kind == "sll":
        return d * m + m + depth * (m * m + 2 * m) + head
    if kind == "cpl":
        return d * m + m + depth * (m * m + m) + head
    raise ValueError(f"unknown baseline kind {kind!r}")


def matched_width(kind: str, d: int, depth: int, out_dim: int = 1, ref_width: int = 16, even: bool = False) -> int:
    """The width whose parameter count is closest to ``lip-resnet`` G's at ``ref_width`` and ``depth``."""
    target = LipResNetG.count(d, ref_width, depth, out_dim)
    cands = range(2, 1025, 2) if even else range(1, 1025)
    return min(cands, key=lambda m: (abs(count_params(kind, d, m, depth, out_dim) - target), m))


# ============================================================================================== models
class MLPBaseline:
    """``sn``, ``bjorck``, ``aol`` or ``plain`` MLP (module docstring)."""

    def __init__(
        self,
        torch: Any,
        kind: str,
        d: int,
        out_dim: int,
        m: int,
        depth: int,
        rng: np.random.Generator,
        dtype: Any,
        *,
        sn_iters: int = 50,
        bjorck_iters: int = 15,
        bjorck_beta: float = 0.5,
    ):
        self.torch, self.kind, self.rng = torch, kind, rng
        self.bjorck_iters, self.bjorck_beta = bjorck_iters, bjorck_beta
        dims = [d] + [m] * depth + [out_dim]
        self.W = [
            torch.tensor(uniform(rng, dims[i], (dims[i + 1], dims[i])), dtype=dtype, requires_grad=True)
            for i in range(len(dims) - 1)
        ]
        self.b = [
            torch.tensor(uniform(rng, dims[i], (dims[i + 1],)), dtype=dtype, requires_grad=True)
            for i in range(len(dims) - 1)
        ]
        self.params = [*self.W, *self.b]
        self.act = "maxmin" if kind == "bjorck" else "relu"
        if kind == "sn":  # Miyato's u (left) and v (right) singular-vector estimates, carried over
            self.u = [rng.standard_normal(w.shape[0]) for w in self.W]
            self.v = [rng.standard_normal(w.shape[1]) for w in self.W]
            self._power(sn_iters)

    def _power(self, k: int) -> None:
        for i, W in enumerate(self.W):
            A = to_numpy(W)
            u = self.u[i]
            for _ in range(k):
                v = A.T @ u
                v /= max(np.linalg.norm(v), 1e-300)
                u = A @ v
                u /= max(np.linalg.norm(u), 1e-300)
            self.u[i], self.v[i] = u, v

    def weight(self, i: int) -> Any:
        torch, W = self.torch, self.W[i]
        if self.kind == "sn":
            u = torch.tensor(self.u[i], dtype=W.dtype)
            v = torch.tensor(self.v[i], dtype=W.dtype)
            return W / torch.clamp(u @ W @ v, min=1e-12)
        if self.kind == "bjorck":
            return _bjorck_t(torch, W, self.bjorck_iters, self.bjorck_beta)
        if self.kind == "aol":
            return _aol_t(torch, W)
        return W

    def weight_np(self, i: int) -> np.ndarray:
        W = to_numpy(self.W[i])
        if self.kind == "sn":
            return W / max(spectral_norm(W), 1e-300)
        if self.kind == "bjorck":
            W = bjorck_np(W, self.bjorck_iters, self.bjorck_beta)
            return W / max(1.0, spectral_norm(W))
        if self.kind == "aol":
            return aol_np(W)
        return W

    def _act(self, z: Any) -> Any:
        if self.act == "relu":
            return self.torch.relu(z)
        m = (z.shape[1] // 2) * 2
        a, b = z[:, 0:m:2], z[:, 1:m:2]
        pair = self.torch.stack([self.torch.maximum(a, b), self.torch.minimum(a, b)], dim=2).reshape(z.shape[0], m)
        return self.torch.cat([pair, z[:, m:]], dim=1) if m < z.shape[1] else pair

    def forward(self, x: Any) -> Any:
        z = x
        for i in range(len(self.W)):
            z = z @ self.weight(i).T + self.b[i]
            if i < len(self.W) - 1:
                z = self._act(z)
        return z

    def after_step(self) -> None:
        if self.kind == "sn":
            self._power(1)

    def export(self) -> list[dict]:
        out: list[dict] = []
        n = len(self.W)
        for i in range(n):
            A, c = self.weight_np(i), to_numpy(self.b[i])
            if i == n - 1 and A.shape[0] == 1:
                out.append({"type": "Output", "v": A[0], "c": float(c[0])})
            else:
                out.append({"type": "Linear", "A": A, "c": c})
            if i < n - 1:
                out.append({"type": "Act", "fn": self.act})
        return out


class SLLBaseline:
    """``sll``: lifting, ``depth`` SDP-based Lipschitz layers, readout (module docstring)."""

    def __init__(self, torch: Any, d: int, out_dim: int, m: int, depth: int, rng: np.random.Generator, dtype: Any):
        self.torch = torch
        self.lift = Lifting(torch, d, m, rng, dtype, code_init=False, svd=True)
        self.W = [torch.tensor(uniform(rng, m, (m, m)), dtype=dtype, requires_grad=True) for _ in range(depth)]
        self.b = [torch.tensor(uniform(rng, m, (m,)), dtype=dtype, requires_grad=True) for _ in range(depth)]
        self.logq = [torch.zeros(m, dtype=dtype, requires_grad=True) for _ in range(depth)]
        self.head = ProjectedHead(torch, m, out_dim, rng, dtype)
        self.params = [*self.lift.params, *self.W, *self.b, *self.logq, *self.head.params]

    def forward(self, x: Any) -> Any:
        torch = self.torch
        z = self.lift.forward(x)
        for W, b, lq in zip(self.W, self.b, self.logq):
            q = torch.exp(lq)
            T = ((W.T @ W).abs() @ q) / q + 1e-12  # T_ii = Σ_j |WᵀW|_ij q_j / q_i
            z = z - 2.0 * (torch.relu(z @ W + b) / T) @ W.T
        return self.head.forward(z)

    def after_step(self) -> None:
        self.lift.after_step()
        self.head.after_step()

    def export(self) -> list[dict]:
        layers = [self.lift.export()]
        for W, b, lq in zip(self.W, self.b, self.logq):
            layers.append({"type": "SLL", "W": to_numpy(W), "b": to_numpy(b), "q": np.exp(to_numpy(lq))})
        return layers + self.head.export()


class CPLBaseline:
    """``cpl``: lifting, ``depth`` convex potential layers ``h = 2/‖W‖₂²``, readout (module docstring)."""

    def __init__(
        self,
        torch: Any,
        d: int,
        out_dim: int,
        m: int,
        depth: int,
        rng: np.random.Generator,
        dtype: Any,
        power_iters: int = 10_000,
    ):
        self.torch = torch
        self.lift = Lifting(torch, d, m, rng, dtype, code_init=False, svd=True)
        self.blocks = GradBlocks(torch, m, depth, rng, dtype, power_iters)
        self.blocks.h.requires_grad_(False)
        self.head = ProjectedHead(torch, m, out_dim, rng, dtype)
        self.params = [*self.lift.params, *self.blocks.W, *self.blocks.b, *self.head.params]

    def forward(self, x: Any) -> Any:
        torch = self.torch
        z = self.lift.forward(x)
        for i, (W, b) in enumerate(zip(self.blocks.W, self.blocks.b)):
            h = 2.0 / max(self.blocks.sigma[i], 1e-12) ** 2  # Meunier et al.: h = 2 / ‖W‖₂²
            z = z - h * torch.relu(z @ W.T + b) @ W
        return self.head.forward(z)

    def after_step(self) -> None:
        self.blocks.update_norms(1)
        self.lift.after_step()
        self.head.after_step()

    def export(self) -> list[dict]:
        layers = [self.lift.export()]
        for W, b in zip(self.blocks.W, self.blocks.b):
            Wn = to_numpy(W)
            s = spectral_norm(Wn)
            layers.append({"type": "GradStep", "W": Wn, "b": to_numpy(b), "h": np.full(Wn.shape[0], 2.0 / s**2)})
        return layers + self.head.export()


# ============================================================================================= solvers
class _Baseline(LipschitzSolver):
    kind = ""

    def __init__(self, *, seed: Any = None, width: int | None = None, ref_width: int = 16, **common: Any):
        self.width = None if width is None else positive_int(width, "width")
        self.ref_width = positive_int(ref_width, "ref_width")
        super().__init__(seed=seed, **common)

    def _width(self, problem: Any) -> int:
        if self.width is not None:
            return self.width
        return matched_width(
            self.kind, int(problem.d), self.depth, int(problem.out_dim), self.ref_width, even=self.kind == "bjorck"
        )

    def describe(self, problem: Any) -> dict[str, Any]:
        return {"width": self._width(problem), "kind": self.kind}


class _MLPSolver(_Baseline):
    def __init__(
        self,
        *,
        seed: Any = None,
        sn_power_iters_init: int = 50,
        bjorck_iters: int = 15,
        bjorck_beta: float = 0.5,
        **rest: Any,
    ):
        self.sn_iters = positive_int(sn_power_iters_init, "sn_power_iters_init")
        self.bjorck_iters = positive_int(bjorck_iters, "bjorck_iters")
        self.bjorck_beta = in_range(bjorck_beta, "bjorck_beta", 0.0, 1.0, high_closed=True)
        super().__init__(seed=seed, **rest)

    def build(self, torch: Any, problem: Any, rng: np.random.Generator, dtype: Any) -> Any:
        return MLPBaseline(
            torch,
            self.kind,
            int(problem.d),
            int(problem.out_dim),
            self._width(problem),
            self.depth,
            rng,
            dtype,
            sn_iters=self.sn_iters,
            bjorck_iters=self.bjorck_iters,
            bjorck_beta=self.bjorck_beta,
        )


class SNMLP(_MLPSolver):
    kind = "sn"


class GroupSortBjorck(_MLPSolver):
    kind = "bjorck"


class AOL(_MLPSolver):
    kind = "aol"


class PlainMLP(_MLPSolver):
    """The uncertified reference line. Its OneCycle peak is 1e−2 (from 5e−4), a tenth of the shared schedule's:
    at the shared peak 1e−1 the depth-8 ReLU MLP dies (constant output, ``rel_rmse`` ≈ 1 on every instance), which
    would make the line uninformative; at 1e−2 it fits (``rel_rmse`` 0.05 on ``f2``, d = 2) [design]."""

    kind = "plain"

    def __init__(self, *, seed: Any = None, lr_min: float = 5e-4, lr_max: float = 1e-2, **rest: Any):
        super().__init__(seed=seed, lr_min=lr_min, lr_max=lr_max, **rest)


class SLL(_Baseline):
    kind = "sll"

    def build(self, torch: Any, problem: Any, rng: np.random.Generator, dtype: Any) -> Any:
        return SLLBaseline(torch, int(problem.d), int(problem.out_dim), self._width(problem), self.depth, rng, dtype)


class CPL(_Baseline):
    kind = "cpl"

    def __init__(self, *, seed: Any = None, power_iters_init: int = 10_000, **rest: Any):
        self.power_iters_init = positive_int(power_iters_init, "power_iters_init")
        super().__init__(seed=seed, **rest)

    def build(self, torch: Any, problem: Any, rng: np.random.Generator, dtype: Any) -> Any:
        return CPLBaseline(
            torch,
            int(problem.d),
            int(problem.out_dim),
            self._width(problem),
            self.depth,
            rng,
            dtype,
            self.power_iters_init,
        )


_COMMON = {
    "width": None,
    "ref_width": 16,
    "depth": 8,
    "epochs": None,
    "batch_size": 256,
    "lr_min": 5e-3,
    "lr_max": 1e-1,
    "final_div_factor": 1e4,
    "pct_start": 0.5,
    "onecycle_bug_compat": False,
    "report_fraction": 0.1,
    "stop_fraction": 0.9,
    "dtype": "float32",
}
_MLP = {**_COMMON, "sn_power_iters_init": 50, "bjorck_iters": 15, "bjorck_beta": 0.5}

register_solver(
    "sn-mlp",
    SNMLP,
    tasks=[TASK],
    role="baseline",
    requires=("torch",),
    defaults=_MLP,
    description="spectrally normalised ReLU MLP (Miyato et al. 2018), parameter-matched to lip-resnet",
)
register_solver(
    "groupsort-bjorck",
    GroupSortBjorck,
    tasks=[TASK],
    role="baseline",
    requires=("torch",),
    defaults=_MLP,
    description="MaxMin MLP with Bjorck-orthonormalised weights (Anil et al. 2019)",
)
register_solver(
    "aol",
    AOL,
    tasks=[TASK],
    role="baseline",
    requires=("torch",),
    defaults=_MLP,
    description="almost-orthogonal layers, ReLU (Prach & Lampert 2022)",
)
register_solver(
    "sll",
    SLL,
    tasks=[TASK],
    role="baseline",
    requires=("torch",),
    defaults=_COMMON,
    description="SDP-based Lipschitz layers (Araujo et al. 2023)",
)
register_solver(
    "cpl",
    CPL,
    tasks=[TASK],
    role="baseline",
    requires=("torch",),
    defaults={**_COMMON, "power_iters_init": 10_000},
    description="convex potential layers, h = 2/||W||^2 (Meunier et al. 2022)",
)
register_solver(
    "mlp-unconstrained",
    PlainMLP,
    tasks=[TASK],
    role="reference",
    requires=("torch",),
    defaults={**_MLP, "lr_min": 5e-4, "lr_max": 1e-2},
    description="plain ReLU MLP, no certificate (reference line, error 1.0 by the rule)",
)
