"""Baselines of ``PowerLawRandomFeatures-v0``, on DANA's momentum template
(:func:`papergym.agents.solvers.dana.momentum_template`):

* ``sgd``: ``γ3 ≡ 0``, ``γ2 = c2/T_r`` (``c2 = 0.5``; the task's tuning grid is {0.125, 0.25, 0.5, 1});
* ``sgd-momentum``: heavy ball, ``γ1 = 1``, ``γ2 = 0``, ``γ3 = η = c2(1 − β_m)/T_r``, ``Δ = 1 − β_m`` (``β_m = 0.9``):
  the same effective step ``c2/T_r`` as ``sgd``, constants independent of ``d``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.agents.solvers.dana import TASK, momentum_template
from papergym.validate import in_range

__all__ = ["SGD", "SGDMomentum"]


class SGD:
    def __init__(self, *, seed: Any = None, c2: float = 0.5):
        self.c2 = in_range(c2, "c2", 0)

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        g2 = self.c2 / float(problem.trace)
        return momentum_template(
            problem, report, gamma1=lambda t: 1.0, gamma2=lambda t: g2, gamma3=lambda t: 0.0, delta=lambda t: 1.0
        )


class SGDMomentum:
    def __init__(self, *, seed: Any = None, c2: float = 0.5, momentum: float = 0.9):
        self.c2, self.momentum = in_range(c2, "c2", 0), in_range(momentum, "momentum", 0, 1.0)

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> np.ndarray:
        eta = self.c2 * (1.0 - self.momentum) / float(problem.trace)
        dl = 1.0 - self.momentum
        return momentum_template(
            problem, report, gamma1=lambda t: 1.0, gamma2=lambda t: 0.0, gamma3=lambda t: eta, delta=lambda t: dl
        )


def _sgd(*, seed=None, **hp):
    return SGD(seed=seed, **hp)


def _sgd_momentum(*, seed=None, **hp):
    return SGDMomentum(seed=seed, **hp)


register_solver(
    "sgd", _sgd, tasks=[TASK], role="baseline", description="one-pass SGD with step c2/T_r", defaults={"c2": 0.5}
)
register_solver(
    "sgd-momentum",
    _sgd_momentum,
    tasks=[TASK],
    role="baseline",
    description="heavy-ball momentum, effective step c2/T_r (same as sgd)",
    defaults={"c2": 0.5, "momentum": 0.9},
)
