"""``shannon-osmd``: FTRL with the (negative) Shannon entropy for m-set semi-bandits
(``MSetSemiBandit-v0``) -- Exp3 over the capped simplex.

Baseline of Zimmert, Luo, Wei (ICML 2019); reference code ``diku-dk/CombSemiBandits``, class
``CombEXP3`` (earlier ``ShannonOSMD``) [code]. Described in ``docs/papers/mset-semibandit.md``. Despite the
name, the code (and this module) computes ``x`` from the cumulative loss estimates, i.e. in FTRL form
[code]. The numerics are the shared FTRL template of :mod:`papergym.baselines.bandits.ftrl_semibandit`.

Algorithm (``L_hat = 0``; round ``t = 1, 2, ...``)::

    eta_t = eta_scale * 0.25 / sqrt(t)                                                    [code]
    psi(x) = sum_i x_i ln x_i
    x_t = argmin_{x in [0,1]^d, sum x = m} <L_hat, x> + psi(x) / eta_t
        x_{t,i} = min(1, exp(-eta_t (L_hat_i + lambda)))   (psi' = 1 + ln x; the 1 is absorbed in lambda)
        lambda: sum_i x_{t,i} = m, safeguarded Newton / bisection with
                d sum x / d lambda = -eta_t sum_{x_i < 1} x_i
    A_t ~ systematic sampling with P(i in A_t) = x_{t,i}; observe l_{t,i}, i in A_t
    L_hat_i += l_{t,i} / x_{t,i} for i in A_t

Hyperparameters
    ``eta_scale`` = 1.0: multiplies the code's schedule ``0.25 / sqrt(t)``; the code feeds
    ``l^{+-1} + 1 = 2 l`` into ``L_hat``, so ``eta_scale = 2`` reproduces it on {0, 1} losses [code].
    ``tol`` = 1e-9 (``|sum x - m|``), ``max_iter`` = 100 (outer iterations) [design].

Deviations / choices [design]
    * Sampling: systematic sampling (exact marginals, exactly ``m`` distinct arms) instead of the
      code's convex decomposition.
    * ``exp`` may underflow to ``x_i = 0`` for an arm far behind (``eta_t (L_hat_i + lambda) > 745``):
      that arm is then never sampled (its exact probability is below ``1e-323``).
    * ``m = d``: ``x = 1``, no solve. Randomness: one ``U[0, 1)`` per run and round from the run's own
      stream; batched == per-run bit for bit.

Diagnostics (per run): ``newton_iters`` (mean outer iterations per round), ``nonconverged``.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.baselines.bandits.ftrl_semibandit import ENV_ID, BatchedFTRLSemiBandit

__all__ = ["BatchedShannonOSMD", "ShannonOSMD"]


class BatchedShannonOSMD(BatchedFTRLSemiBandit):
    """``shannon-osmd`` over ``len(seeds)`` runs (see the module docstring)."""

    regulariser = "shannon"

    def __init__(
        self,
        problem: Any,
        *,
        seeds: Sequence[Any],
        eta_scale: float = 1.0,
        tol: float = 1e-9,
        max_iter: int = 100,
    ):
        self._setup(problem, seeds, eta_scale, tol, max_iter)

    def learning_rate(self, t: int) -> float:
        return self.eta_scale * 0.25 / math.sqrt(t)  # [code] ShannonOSMD


class ShannonOSMD(PerRunFromBatched):
    """Per-run ``shannon-osmd`` (one row of :class:`BatchedShannonOSMD`)."""

    batched_cls = BatchedShannonOSMD


register_agent(
    "shannon-osmd",
    ShannonOSMD,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedShannonOSMD,
    description="FTRL with the Shannon entropy sum x ln x, eta_t = 0.25/sqrt(t) (reference code of "
    "Zimmert, Luo, Wei 2019); systematic sampling",
    defaults={"eta_scale": 1.0, "tol": 1e-9, "max_iter": 100},
)
