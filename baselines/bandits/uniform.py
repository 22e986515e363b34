"""``uniform-random`` baseline of ``NonStatLipschitz-v0``: ``X_t ~ U[0, 1)^d``
(``docs/papers/nonstat-lipschitz.md``).

Run ``i`` draws its ``d`` coordinates per round, in order, from its own stream
(:class:`~papergym.envs.spec.UniformStream` over the agent seed, i.e. ``np.random.default_rng(seed)
.random()``), so the actions are deterministic under a seed and independent of batching. No
hyperparameters; rewards are ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.baselines.bandits.bins import ENV_ID, n_runs, problem_dims
from papergym.envs.spec import UniformStream

__all__ = ["BatchedUniformRandom", "UniformRandom"]


class BatchedUniformRandom:
    """``uniform-random`` over ``len(seeds)`` runs."""

    def __init__(self, problem: Any, *, seeds: Sequence[Any]):
        self.problem = problem
        self.n_envs = n_runs(seeds)
        self.T, self.d = problem_dims(problem)
        self._stream = UniformStream(list(seeds))
        self.t = 0

    def act(self, observations: Any) -> np.ndarray:
        return self._stream.take(self.d).copy()  # (n_runs, d): the next d draws of every run

    def update(self, actions: Any, rewards: Any, observations: Any) -> None:
        self.t += 1


class UniformRandom(PerRunFromBatched):
    """Per-run ``uniform-random`` (one row of :class:`BatchedUniformRandom`)."""

    batched_cls = BatchedUniformRandom


register_agent(
    "uniform-random",
    UniformRandom,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedUniformRandom,
    description="X_t ~ U[0,1)^d, independent of the feedback",
    defaults={},
)
