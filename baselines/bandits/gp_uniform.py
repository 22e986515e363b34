"""``uniform-random`` baseline of ``NoiseFreeGPBandit-v0``: a uniform candidate every round
(``docs/papers/noise-free-gp.md``).

``x_t = C[i_t]``, ``i_t ~ U{0, ..., N - 1}`` independently for ``t = 1..T`` (with replacement: a candidate
may be drawn again), drawn with ``rng.integers(N)`` from the agent's own stream
(``np.random.default_rng(seed)``), so the actions are deterministic under a seed and ignore the feedback.
Rounds ``t = 1`` included (no centre rule). The agent still keeps the full-history posterior through
:class:`~papergym.agents.bandits.gp_ucb.GPAgent` so that its diagnostics (``sum_sigma`` =
``sum_t sigma_{t-1}(x_t)``, ``repeats``, the best observed point as recommendation) are comparable with
the other GP agents; that costs ``O(N t)`` per round and does not affect the actions.

The same name is registered for ``NonStatLipschitz-v0`` by :mod:`papergym.baselines.bandits.uniform`
(a different factory: uniform points of ``[0, 1)^d``); the registry keys it per env.

Hyperparameters (enter the cell key)
------------------------------------
==========  ============  ===================================================================
name        default       provenance
==========  ============  ===================================================================
``jitter``  ``1e-10``     [design] initial diagonal jitter of the posterior kept for diagnostics
==========  ============  ===================================================================

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from typing import Any

from papergym.agents.bandits.gp_ucb import ENV_ID, GPAgent
from papergym.agents.base import register_agent
from papergym.validate import positive_float

__all__ = ["GPUniformRandom"]


class GPUniformRandom(GPAgent):
    """A uniform candidate index each round from the agent's stream."""

    def __init__(self, problem: Any, *, seed: Any = None, jitter: float = 1e-10):
        jitter = positive_float(jitter, "jitter")
        super().__init__(problem, seed=seed, jitter=jitter)

    def choose(self) -> int:
        return int(self.rng.integers(self.N))


register_agent(
    "uniform-random",
    GPUniformRandom,
    envs=[ENV_ID],
    role="baseline",
    description="a uniform candidate each round, independent of the feedback",
    defaults={"jitter": 1e-10},
)
