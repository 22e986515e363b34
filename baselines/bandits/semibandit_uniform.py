"""``uniform-random`` baseline of ``MSetSemiBandit-v0``: a uniform m-subset every round
(``docs/papers/mset-semibandit.md``).

Run ``i`` draws ``d`` numbers ``U_1..U_d ~ U[0, 1)`` per round, in arm order, from its own stream
(:class:`~papergym.envs.spec.UniformStream` over the agent seed, i.e. successive
``np.random.default_rng(seed).random()`` values), and plays the ``m`` arms with the smallest ``U_j``
(:func:`~papergym.baselines.bandits.combucb.m_smallest`; ties, probability ~2^-53, by the lowest
index). By exchangeability every ``m``-subset has probability ``1 / C(d, m)`` and every arm is played
with probability ``m / d``. Deterministic under a seed, independent of batching; feedback is ignored.
No hyperparameters.

The same name is registered for ``NonStatLipschitz-v0`` (:mod:`papergym.baselines.bandits.uniform`) and
``NoiseFreeGPBandit-v0`` (:mod:`papergym.baselines.bandits.gp_uniform`) with other factories; the
registry keys it per env.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.baselines.bandits.combucb import ENV_ID, m_smallest, n_runs, problem_dm
from papergym.envs.spec import UniformStream

__all__ = ["BatchedSemiBanditUniform", "SemiBanditUniform"]


class BatchedSemiBanditUniform:
    """``uniform-random`` of ``MSetSemiBandit-v0`` over ``len(seeds)`` runs."""

    def __init__(self, problem: Any, *, seeds: Sequence[Any]):
        self.problem = problem
        self.n_envs = n_runs(seeds)
        self.d, self.m = problem_dm(problem)
        self._stream = UniformStream(list(seeds))
        self.t = 0

    def act(self, observations: Any) -> np.ndarray:
        self.t += 1
        return m_smallest(self._stream.take(self.d), self.m)  # the m smallest of d own uniforms

    def update(self, actions: Any, rewards: Any, observations: Any) -> None:
        pass


class SemiBanditUniform(PerRunFromBatched):
    """Per-run ``uniform-random`` of ``MSetSemiBandit-v0`` (one row of :class:`BatchedSemiBanditUniform`)."""

    batched_cls = BatchedSemiBanditUniform


register_agent(
    "uniform-random",
    SemiBanditUniform,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedSemiBanditUniform,
    description="a uniform m-subset every round (the m smallest of d uniforms), independent of the feedback",
    defaults={},
)
