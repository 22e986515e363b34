"""``torch.optim`` versions of ``radagrad`` / ``radamw`` / ``rgd``: keep 2-D parameters on the manifold of
rank-``r`` matrices (torch extra).

Any ``(out, in)`` weight given to the optimizer is kept at rank ``rank``: at its first step the optimizer takes
the truncated SVD of the weight as ``U diag(s) Vᵀ``; every ``step()`` reads the Euclidean gradient
``p.grad`` from autograd, forms the metric's direction, projects it on the tangent space and retracts with
the small-SVD trick — the numerics of :mod:`papergym.agents.solvers.radagrad`, run on CPU numpy (a
reference implementation; parameters on another device are copied) — and writes ``U diag(s) Vᵀ`` back into
the parameter. A fine-tuning example::

    layer = torch.nn.Linear(64, 32, bias=False)
    opt = RAdaGrad([layer.weight], rank=4, lr=1e-2)
    for x, y in data:
        opt.zero_grad(); torch.nn.functional.mse_loss(layer(x), y).backward(); opt.step()
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from papergym.agents.solvers.radagrad import Preconditioner, retract
from papergym.validate import positive_float, positive_int

__all__ = ["RiemannianLowRankOptimizer", "RAdaGrad", "RAdamW", "RiemannianSGD"]


class RiemannianLowRankOptimizer(torch.optim.Optimizer):
    """Riemannian descent on rank-``rank`` matrices with metric ``"adagrad"``, ``"adamw"`` or ``"identity"``;
    ``precond`` options as :class:`~papergym.agents.solvers.radagrad.Preconditioner`'s, ``weight_decay``
    decoupled (``W ← (1 − lr·λ) W``)."""

    def __init__(
        self,
        params: Any,
        *,
        rank: int,
        lr: float = 1e-2,
        metric: str = "adagrad",
        weight_decay: float = 0.0,
        **precond: Any,
    ):
        rank = positive_int(rank, "rank")
        lr = positive_float(lr, "lr")
        Preconditioner(metric, (2, 2), **precond)  # validate the options
        super().__init__(
            params,
            {
                "rank": rank,
                "lr": float(lr),
                "metric": metric,
                "weight_decay": float(weight_decay),
                "precond": dict(precond),
            },
        )
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2 or min(p.shape) < group["rank"]:
                    raise ValueError(
                        f"parameters must be matrices with min(shape) >= rank = {group['rank']}, "
                        f"got shape {tuple(p.shape)}"
                    )

    @torch.no_grad()
    def step(self, closure: Any = None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            r = group["rank"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    U, s, Vt = np.linalg.svd(p.detach().cpu().double().numpy(), full_matrices=False)
                    st["U"], st["s"], st["V"] = U[:, :r], s[:r], Vt[:r].T
                    st["P"] = Preconditioner(group["metric"], tuple(p.shape), **group["precond"])
                G = p.grad.detach().cpu().double().numpy()
                D = st["P"](G)
                s = st["s"] * (1.0 - group["lr"] * group["weight_decay"]) if group["weight_decay"] else st["s"]
                st["U"], st["s"], st["V"] = retract(st["U"], s, st["V"], D, group["lr"])
                W = (st["U"] * st["s"]) @ st["V"].T
                p.copy_(torch.from_numpy(W).to(dtype=p.dtype, device=p.device))
        return loss


class RAdaGrad(RiemannianLowRankOptimizer):
    def __init__(self, params: Any, *, rank: int, lr: float = 1e-2, **kw: Any):
        super().__init__(params, rank=rank, lr=lr, metric="adagrad", **kw)


class RAdamW(RiemannianLowRankOptimizer):
    def __init__(self, params: Any, *, rank: int, lr: float = 1e-3, **kw: Any):
        super().__init__(params, rank=rank, lr=lr, metric="adamw", **kw)


class RiemannianSGD(RiemannianLowRankOptimizer):
    def __init__(self, params: Any, *, rank: int, lr: float = 1e-2, **kw: Any):
        super().__init__(params, rank=rank, lr=lr, metric="identity", **kw)
