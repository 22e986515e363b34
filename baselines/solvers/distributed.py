"""Baselines of ``DistributedRegression-v0`` (the comparisons of Patel, Zindari, Stich, Wang, NeurIPS 2025); every
machine talks to the others only through ``problem.oracle.communicate`` (one call per round).

* ``minibatch-sgd``: each round every machine evaluates ``K`` gradients at ``x̄_r``; one step
  ``x̄ ← x̄ − η′ · mean of the MK gradients`` (the comparison of Woodworth et al., NeurIPS 2020);
* ``accelerated-minibatch-sgd``: AC-SA (Ghadimi & Lan, SIAM J. Optim. 2012) with batch ``MK`` per round:
  ``x^md = x/β_t + (1 − 1/β_t) x^ag``, ``x ← x − γ_t ĝ(x^md)``, ``x^ag ← x/β_t + (1 − 1/β_t) x^ag``,
  ``β_t = (t + 1)/2``, ``γ_t = (t + 1)γ/2``, ``t = 1..R``, from ``x = x^ag = x_0``; reports ``x^ag``;
* ``scaffold``: SCAFFOLD option II (Karimireddy et al., ICML 2020): local steps
  ``x ← x − η(g_m(x) − c_m + c)``; after ``K`` steps ``c_m⁺ = c_m − c + (x̄ − x_m)/(Kη)``; the server sets
  ``x̄ ← x̄ + η_g mean(x_m − x̄)``, ``c ← c + mean(c_m⁺ − c_m)`` (``η_g = 1``); iterates and control variates
  travel in one ``communicate``.

Step sizes are ``lr / H`` from the grid ``{2^{−j}}``; defaults from a sweep on dev seeds (spread 0.1,
``K ∈ {1, 10, 50}``, ``τ ∈ {0, 0.08}``): the largest value that is stable for every ``K`` and within 0.1 decades of
the best (mini-batch 2^{−2}, AC-SA 2^{−4}, SCAFFOLD 2^{−5}); single-sample local steps need ``lr ≲ 1/tr(Σ)·H``.
Comparisons tune each method per ``K`` instead (``tune_lr`` in ``benchmarks/bench_optimizers.py``, dev seeds
0–1): at ``R = 10`` mini-batch takes 2^0 = the largest stable step ``1/H`` for ``K ≥ 10`` (2^{−2} at ``K = 1``),
AC-SA 2^{−1} / 2^0 at ``K = 10`` / 50, SCAFFOLD 2^{−4} / 2^{−5}.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.agents.solvers.local_sgd import TASK
from papergym.validate import positive_float

__all__ = ["MinibatchSGD", "AcceleratedMinibatchSGD", "Scaffold"]


def _round_gradient(problem: Any, x: np.ndarray) -> np.ndarray:
    """Every machine's ``K`` gradients at ``x`` summed, gathered in one round; the mean of all ``MK``."""
    M, K = int(problem.M), int(problem.K)
    grad = problem.oracle.grad
    sums = np.array([np.sum([np.asarray(grad(m, x)) for _ in range(K)], axis=0) for m in range(M)])
    return np.asarray(problem.oracle.communicate(sums)).sum(axis=0) / (M * K)


class MinibatchSGD:
    def __init__(self, *, seed: Any = None, lr: float = 0.25):
        self.lr = positive_float(lr, "lr")

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict:
        eta = self.lr / float(problem.H)
        x = np.array(problem.x0, dtype=float)
        for r in range(int(problem.R)):
            x = x - eta * _round_gradient(problem, x)
            report(x, iteration=r + 1, work=(r + 1) * int(problem.M) * int(problem.K))
        return {"theta": x, "consensus_error": 0.0}


class AcceleratedMinibatchSGD:
    def __init__(self, *, seed: Any = None, lr: float = 0.0625):
        self.lr = positive_float(lr, "lr")

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict:
        gamma = self.lr / float(problem.H)
        x = np.array(problem.x0, dtype=float)
        xag = x.copy()
        for t in range(1, int(problem.R) + 1):
            beta, gt = (t + 1) / 2.0, (t + 1) * gamma / 2.0
            xmd = x / beta + (1 - 1 / beta) * xag
            x = x - gt * _round_gradient(problem, xmd)
            xag = x / beta + (1 - 1 / beta) * xag
            report(xag, iteration=t, work=t * int(problem.M) * int(problem.K))
        return {"theta": xag, "consensus_error": 0.0}


class Scaffold:
    def __init__(self, *, seed: Any = None, lr: float = 0.03125, server_lr: float = 1.0):
        self.lr, self.server_lr = positive_float(lr, "lr"), positive_float(server_lr, "server_lr")

    @np.errstate(over="ignore", invalid="ignore")  # a too-large step diverges: scored, not warned about
    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict:
        M, K, R, d = int(problem.M), int(problem.K), int(problem.R), int(problem.d)
        eta = self.lr / float(problem.H)
        grad, comm = problem.oracle.grad, problem.oracle.communicate
        xbar = np.array(problem.x0, dtype=float)
        c, cm = np.zeros(d), np.zeros((M, d))
        cons = 0.0
        for r in range(R):
            xs = np.tile(xbar, (M, 1))
            for _ in range(K):
                for m in range(M):
                    xs[m] = xs[m] - eta * (np.asarray(grad(m, xs[m])) - cm[m] + c)
            cons += float(np.mean(np.sum((xs - xs.mean(axis=0)) ** 2, axis=1)))
            cplus = cm - c + (xbar[None] - xs) / (K * eta)
            back = np.asarray(comm(np.stack([xs, cplus], axis=1)))
            xs_all, cplus_all = back[:, 0], back[:, 1]
            xbar = xbar + self.server_lr * (xs_all - xbar[None]).mean(axis=0)
            c = c + (cplus_all - cm).mean(axis=0)
            cm = cplus_all
            report(xbar, iteration=r + 1, work=(r + 1) * M * K)
        return {"theta": xbar, "consensus_error": cons / R}


def _mb(*, seed=None, **hp):
    return MinibatchSGD(seed=seed, **hp)


def _acc(*, seed=None, **hp):
    return AcceleratedMinibatchSGD(seed=seed, **hp)


def _scaffold(*, seed=None, **hp):
    return Scaffold(seed=seed, **hp)


register_solver(
    "minibatch-sgd",
    _mb,
    tasks=[TASK],
    role="baseline",
    description="mini-batch SGD: one step per round with the mean of all MK gradients",
    defaults={"lr": 0.25},
)
register_solver(
    "accelerated-minibatch-sgd",
    _acc,
    tasks=[TASK],
    role="baseline",
    description="AC-SA (Ghadimi & Lan 2012) with batch MK per round",
    defaults={"lr": 0.0625},
)
register_solver(
    "scaffold",
    _scaffold,
    tasks=[TASK],
    role="baseline",
    description="SCAFFOLD option II (control variates), server step 1",
    defaults={"lr": 0.03125, "server_lr": 1.0},
)
