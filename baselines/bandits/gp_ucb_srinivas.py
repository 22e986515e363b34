"""``gp-ucb-srinivas``: GP-UCB with the growing confidence width of Srinivas et al. (2010), a baseline
of ``NoiseFreeGPBandit-v0`` (``docs/papers/noise-free-gp.md``).

Reference: N. Srinivas, A. Krause, S. Kakade, M. Seeger, *Gaussian Process Optimization in the Bandit
Setting: No Regret and Experimental Design*, ICML 2010, Theorem 1 (finite decision set ``D``)
[secondary]. The rule is that of ``gp-ucb`` (:class:`~papergym.agents.bandits.gp_ucb.GPUCB`)
with the constant width ``B`` replaced by the width of the finite-domain theorem:

    x_t = argmax_{x in C} mu_{t-1}(x) + beta_t^{1/2} sigma_{t-1}(x),                       (UCB rule)
    beta_t = 2 log(|D| t^2 pi^2 / (6 delta)),                                     (Srinivas Thm 1)

with ``|D| = N`` the number of public candidates and ``t = 1, 2, ...`` the round being chosen. This
width grows like ``sqrt(log t)`` and ignores the RKHS-norm bound ``B``; it is the classical
(noisy-setting) choice the paper improves on, so the comparison with ``gp-ucb`` isolates the effect of
the constant width. The posterior is the same exact noise-free posterior (one implementation:
:class:`~papergym.envs.bandits.gp.NoiseFreeGP`, via :class:`~papergym.agents.bandits.gp_ucb.GPAgent`).
Ties of the UCB go to the lowest candidate index; ``x_1`` is the candidate closest to the centre of
``[0, 1]^d`` (as ``gp-ucb``; at ``t = 1`` the prior UCB is constant). A candidate already queried is not
appended to the posterior again (it adds no information); ``repeats`` counts such rounds.

Hyperparameters (enter the cell key)
------------------------------------
==========  ============  ===================================================================
name        default       provenance
==========  ============  ===================================================================
``delta``   ``0.1``       [secondary] confidence level of Theorem 1, ``0 < delta < 1``
``jitter``  ``1e-10``     [design] initial diagonal jitter of ``K`` (x10 on a Cholesky failure)
``x1``      ``"centre"``  [design] first query: ``"centre"`` or ``"random"`` (agent's stream)
==========  ============  ===================================================================

Deviations: none; Theorem 1 of Srinivas et al. assumes noisy observations and a GP
prior on ``f`` (their Theorem 3, for RKHS functions, has a different ``beta_t`` with an
information-gain term); the finite-domain formula is used as the baseline's definition prescribes.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from typing import Any

from papergym.agents.bandits.gp_ucb import ENV_ID, GPUCB
from papergym.agents.base import register_agent
from papergym.validate import in_range

__all__ = ["GPUCBSrinivas", "srinivas_beta"]


def srinivas_beta(t: int, n_candidates: int, delta: float = 0.1) -> float:
    """``beta_t = 2 log(N t^2 pi^2 / (6 delta))`` (Srinivas et al. 2010, Theorem 1; ``N = |D|``)."""
    return 2.0 * math.log(n_candidates * t * t * math.pi**2 / (6.0 * delta))


class GPUCBSrinivas(GPUCB):
    """GP-UCB with ``beta_t^{1/2} = sqrt(2 log(N t^2 pi^2 / (6 delta)))`` (module docstring)."""

    def __init__(
        self, problem: Any, *, seed: Any = None, delta: float = 0.1, jitter: float = 1e-10, x1: str = "centre"
    ):
        self.delta = in_range(delta, "delta", 0, 1)
        super().__init__(problem, seed=seed, beta_sqrt=None, jitter=jitter, x1=x1)

    def width(self, t: int) -> float:
        """``beta_t^{1/2}`` of Srinivas et al. Theorem 1 at round ``t`` (``N`` = number of candidates)."""
        return math.sqrt(srinivas_beta(t, self.N, self.delta))


register_agent(
    "gp-ucb-srinivas",
    GPUCBSrinivas,
    envs=[ENV_ID],
    role="baseline",
    description="GP-UCB with beta_t = 2 log(N t^2 pi^2 / (6 delta)) (Srinivas et al. 2010, Thm 1)",
    defaults={"delta": 0.1, "jitter": 1e-10, "x1": "centre"},
)
