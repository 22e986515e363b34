"""``mvr``: maximum variance reduction (pure exploration), a baseline of ``NoiseFreeGPBandit-v0``
(``docs/papers/noise-free-gp.md``).

Reference: the maximum-variance rule used as the exploration step of the non-adaptive near-optimal
methods the paper compares with (Vakili et al. 2021, *Optimal order simple regret for Gaussian process
bandits*; Iwazaki & Takeno, arXiv 2502.06363, which run it inside phases) [secondary]. Here it is run
over all candidates for the whole horizon, with no elimination:

    x_1 = the candidate closest to the centre of [0, 1]^d                   [design, as gp-ucb]
    x_t = argmax_{x in C} sigma_{t-1}(x),   t >= 2                                   (MVR rule)

with ``sigma_{t-1}`` the exact noise-free posterior standard deviation after ``t - 1`` queries
(:class:`~papergym.envs.bandits.gp.NoiseFreeGP`, via :class:`~papergym.agents.bandits.gp_ucb.GPAgent`).
The query sequence does not depend on the observed values (``sigma`` depends only on where ``f`` was
observed): the rule is non-adaptive. Ties go to the lowest candidate index (at ``t = 1`` the prior
``sigma`` is constant, hence the centre rule). Since ``sigma = 0`` exactly at queried candidates, MVR
never re-queries a point while some candidate has ``sigma > 0``. If ``sigma = 0`` on every candidate
(``f`` is then known on the whole candidate set, e.g. after ``N`` rounds), the agent plays the best
observed candidate instead of the lowest index [design].

The recommendation ``x_hat_T`` (:attr:`~papergym.agents.bandits.gp_ucb.GPAgent.recommendation`) is the
best observed point, as for every GP agent; the simple regret of MVR is judged on it.

Hyperparameters (enter the cell key)
------------------------------------
==========  ============  ===================================================================
name        default       provenance
==========  ============  ===================================================================
``jitter``  ``1e-10``     [design] initial diagonal jitter of ``K`` (x10 on a Cholesky failure)
``x1``      ``"centre"``  [design] first query: ``"centre"`` or ``"random"`` (agent's stream)
==========  ============  ===================================================================

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.agents.bandits.gp_ucb import ENV_ID, GPAgent, check_x1
from papergym.agents.base import register_agent
from papergym.validate import positive_float

__all__ = ["MVR"]


class MVR(GPAgent):
    """``x_t = argmax sigma_{t-1}`` over all candidates (module docstring)."""

    def __init__(self, problem: Any, *, seed: Any = None, jitter: float = 1e-10, x1: str = "centre"):
        jitter = positive_float(jitter, "jitter")
        x1 = check_x1(x1)
        super().__init__(problem, seed=seed, jitter=jitter)
        self.x1 = x1

    def choose(self) -> int:
        if self.t == 0:  # x_1: the prior sigma is constant
            return self.centre_index() if self.x1 == "centre" else int(self.rng.integers(self.N))
        var = self.gp.var  # argmax sigma = argmax sigma^2 (ties: lowest index)
        i = int(np.argmax(var))
        if var[i] <= 0.0:  # f known on every candidate: play the best observed one [design]
            return self.best_index
        return i


register_agent(
    "mvr",
    MVR,
    envs=[ENV_ID],
    role="baseline",
    description="maximum variance reduction: x_t = argmax sigma_{t-1} (pure exploration)",
    defaults={"jitter": 1e-10, "x1": "centre"},
)
