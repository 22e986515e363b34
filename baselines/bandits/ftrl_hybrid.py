"""``ftrl-hybrid``: FTRL with the hybrid regulariser for m-set semi-bandits (``MSetSemiBandit-v0``).

J. Zimmert, H. Luo, C.-Y. Wei, *Beating Stochastic and Adversarial Semi-bandits Optimally and
Simultaneously*, ICML 2019 (best of both worlds: ``O(sqrt(nmd))`` adversarial, logarithmic
stochastic regret). Reference code ``diku-dk/CombSemiBandits``, class ``HYBRID`` (earlier
``BobOSMD``) [code]. Described in ``docs/papers/mset-semibandit.md`` (tags: see docs/conventions.md).

Algorithm (``L_hat = 0``; round ``t = 1, 2, ...``; the numerics are the shared FTRL template of
:mod:`papergym.baselines.bandits.ftrl_semibandit`)::

    eta_t = eta_scale / sqrt(t)                                                          [paper]
    psi(x) = sum_i -sqrt(x_i) + gamma (1 - x_i) ln(1 - x_i)                               [paper]
    x_t = argmin_{x in [0,1]^d, sum x = m} <L_hat, x> + psi(x) / eta_t
        KKT: eta_t (L_hat_i + lambda) - 1/(2 sqrt x_i) - gamma (1 + ln(1 - x_i)) = 0,  sum x = m
        (per-coordinate monotone Newton, safeguarded Newton / bisection on lambda)
    A_t ~ systematic sampling with P(i in A_t) = x_{t,i}; observe l_{t,i}, i in A_t
    L_hat_i += l_{t,i} / x_{t,i} for i in A_t

Hyperparameters
    ``eta_scale`` = 1.0: ``eta_t = eta_scale / sqrt(t)`` [paper for 1]; ``eta_scale = 2``
    reproduces the reference code, which feeds ``l^{+-1} + 1 = 2 l`` into ``L_hat`` [code].
    ``gamma_rule`` = ``"paper"``: ``gamma = 1`` if ``m <= d/2`` else ``sqrt(1 / ln(d / (d - m)))``
    [paper]; ``"code"``: ``1`` if ``m < d/2`` else ``sqrt(1 / ln m)`` (the code evaluates
    ``ln(d - (d - m))``; undefined for ``d = 2, m = 1``) [code].
    ``gamma`` = None: an explicit ``gamma > 0`` overrides the rule [design].
    ``tol`` = 1e-9 (``|sum x - m|``), ``max_iter`` = 100 (outer iterations) [design].

Deviations / choices [design]
    * The code's inner equation has ``+gamma (1 - ln(1 - x))`` where the derivative of ``psi`` gives
      ``-gamma (1 + ln(1 - x))``; the two differ by the constant ``2 gamma``, absorbed in ``lambda``
      (same ``x``).
    * Sampling: systematic sampling (exact marginals, exactly ``m`` distinct arms) instead of the
      code's convex decomposition; the estimator depends only on the marginals.
    * ``m = d``: ``x = 1`` (every arm every round, zero regret); ``gamma`` is unused (the paper
      formula divides by ``ln(d/0)``; its limit 0 is reported).
    * Randomness: one ``U[0, 1)`` per run and round from the run's own stream
      (:class:`~papergym.envs.spec.UniformStream` over the agent seed); batched == per-run bit for bit.

Diagnostics (per run): ``newton_iters`` (mean outer iterations per round), ``nonconverged`` (rounds
whose multiplier search hit ``max_iter`` or the floating-point limit; a feasible fallback was played).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.baselines.bandits.ftrl_semibandit import (
    ENV_ID,
    GAMMA_RULES,
    BatchedFTRLSemiBandit,
    hybrid_gamma,
)
from papergym.validate import one_of, positive_float

__all__ = ["BatchedFTRLHybrid", "FTRLHybrid"]


class BatchedFTRLHybrid(BatchedFTRLSemiBandit):
    """``ftrl-hybrid`` over ``len(seeds)`` runs (see the module docstring)."""

    regulariser = "hybrid"

    def __init__(
        self,
        problem: Any,
        *,
        seeds: Sequence[Any],
        eta_scale: float = 1.0,
        gamma_rule: str = "paper",
        gamma: float | None = None,
        tol: float = 1e-9,
        max_iter: int = 100,
    ):
        self.gamma_rule = gamma_rule
        d, m = int(problem.d), int(problem.m)
        one_of(gamma_rule, "gamma_rule", GAMMA_RULES)
        # gamma: the paper's (or the code's) rule, unless given explicitly
        self.gamma = hybrid_gamma(d, m, gamma_rule) if gamma is None else positive_float(gamma, "gamma")
        self._setup(problem, seeds, eta_scale, tol, max_iter)

    def learning_rate(self, t: int) -> float:
        return self.eta_scale / math.sqrt(t)  # eta_t = 1/sqrt(t) [paper]


class FTRLHybrid(PerRunFromBatched):
    """Per-run ``ftrl-hybrid`` (one row of :class:`BatchedFTRLHybrid`)."""

    batched_cls = BatchedFTRLHybrid


register_agent(
    "ftrl-hybrid",
    FTRLHybrid,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedFTRLHybrid,
    description="FTRL with the hybrid regulariser -sqrt(x) + gamma (1-x) ln(1-x), eta_t = 1/sqrt(t) "
    "(Zimmert, Luo, Wei 2019); KKT by safeguarded Newton, systematic sampling",
    defaults={"eta_scale": 1.0, "gamma_rule": "paper", "gamma": None, "tol": 1e-9, "max_iter": 100},
)
