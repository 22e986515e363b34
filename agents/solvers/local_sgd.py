"""``local-sgd`` (FedAvg) on ``DistributedRegression-v0`` — the method analysed by Patel, Zindari, Stich and
Wang, *Revisiting Consensus Error: A Fine-grained Analysis of Local SGD under Second-order Data
Heterogeneity*, NeurIPS 2025 (OpenReview ``u1QFeoxnhW``):

1. every round ``r = 0..R−1`` each machine starts from the average ``x̄_r``;
2. ``K`` local steps ``x_m ← x_m − η · grad(m, x_m)`` on its own data;
3. ``x̄_{r+1} = (1/M) Σ_m x_m`` through one ``communicate`` (reported each round).

``η = lr / H`` with ``lr`` from the grid ``{2^{−j} : j = 0..10}`` (default 2^{−5}: the largest value stable
for every ``K`` in a sweep on dev seeds — single-sample local steps need ``lr ≲ H/tr(Σ)``; the per-``K`` tuned
values of ``benchmarks/bench_optimizers.py`` are 2^{−3} at ``K = 10`` and 2^{−5} at ``K = 50``; set one with
``--hp local-sgd.lr=...``); ``average="uniform"`` returns the mean of the round averages instead of the last.
The solution also carries the solver's own mean within-round consensus error ``(1/M) Σ_m ‖x_m − x̄‖²`` at
``k = K`` (the quantity the paper's refined analysis bounds) for the solver's use; the published
``consensus_error`` metric is measured by the task's oracle, not read from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.validate import one_of, positive_float

__all__ = ["LocalSGD", "TASK"]

TASK = "DistributedRegression-v0"


class LocalSGD:
    def __init__(self, *, seed: Any = None, lr: float = 0.03125, average: str = "last"):
        self.lr = positive_float(lr, "lr")  # the step size times H
        self.average = one_of(average, "average", ("last", "uniform"))

    @np.errstate(over="ignore", invalid="ignore")  # a too-large step diverges: scored, not warned about
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict:
        M, K, R = int(problem.M), int(problem.K), int(problem.R)
        eta = self.lr / float(problem.H)
        grad, comm = problem.oracle.grad, problem.oracle.communicate
        xbar = np.array(problem.x0, dtype=float)
        acc, cons = np.zeros_like(xbar), 0.0
        for r in range(R):
            xs = np.tile(xbar, (M, 1))
            for _ in range(K):
                for m in range(M):
                    xs[m] = xs[m] - eta * np.asarray(grad(m, xs[m]))
            cons += float(np.mean(np.sum((xs - xs.mean(axis=0)) ** 2, axis=1)))
            xbar = np.asarray(comm(xs)).mean(axis=0)
            acc += xbar
            out = xbar if self.average == "last" else acc / (r + 1)
            report(out, iteration=r + 1, work=(r + 1) * M * K)
        return {"theta": out, "consensus_error": cons / R}


def _local_sgd(*, seed=None, **hp):
    return LocalSGD(seed=seed, **hp)


register_solver(
    "local-sgd",
    _local_sgd,
    tasks=[TASK],
    role="paper",
    description="local SGD / FedAvg: K local steps per machine, then average (step lr/H)",
    defaults={"lr": 0.03125, "average": "last"},
)
