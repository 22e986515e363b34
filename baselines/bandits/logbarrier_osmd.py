"""``logbarrier-osmd``: FTRL with the log-barrier regulariser for m-set semi-bandits
(``MSetSemiBandit-v0``).

Baseline of Zimmert, Luo, Wei (ICML 2019); reference code ``diku-dk/CombSemiBandits``, class ``BROAD``
(earlier ``BarrierOSMD``) [code]. Described in ``docs/papers/mset-semibandit.md``. Despite the name, the code
(and this module) computes ``x`` from the cumulative loss estimates, i.e. in FTRL form [code]. The
numerics are the shared FTRL template of :mod:`papergym.baselines.bandits.ftrl_semibandit`.

Algorithm (``L_hat = 0``; round ``t = 1, 2, ...``)::

    eta_t = eta_scale * 4 sqrt(ln(1 + t) / t)                                             [code]
    psi(x) = -sum_i ln x_i
    x_t = argmin_{x in [0,1]^d, sum x = m} <L_hat, x> + psi(x) / eta_t
        x_{t,i} = min(1, 1 / (eta_t (L_hat_i + lambda)))   (1 when L_hat_i + lambda <= 0)
        lambda: sum_i x_{t,i} = m, safeguarded Newton / bisection with
                d sum x / d lambda = -eta_t sum_{x_i < 1} x_i^2
    A_t ~ systematic sampling with P(i in A_t) = x_{t,i}; observe l_{t,i}, i in A_t
    L_hat_i += l_{t,i} / x_{t,i} for i in A_t

Hyperparameters
    ``eta_scale`` = 1.0: multiplies the code's schedule ``4 sqrt(ln(1+t)/t)``; the code feeds
    ``l^{+-1} + 1 = 2 l`` into ``L_hat``, so ``eta_scale = 2`` reproduces it on {0, 1} losses [code].
    ``tol`` = 1e-9 (``|sum x - m|``), ``max_iter`` = 100 (outer iterations) [design].

Deviations / choices [design]
    * Sampling: systematic sampling (exact marginals, exactly ``m`` distinct arms) instead of the
      code's convex decomposition.
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

__all__ = ["BatchedLogBarrierOSMD", "LogBarrierOSMD"]


class BatchedLogBarrierOSMD(BatchedFTRLSemiBandit):
    """``logbarrier-osmd`` over ``len(seeds)`` runs (see the module docstring)."""

    regulariser = "log-barrier"

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
        return self.eta_scale * 4.0 * math.sqrt(math.log1p(t) / t)  # [code] BarrierOSMD


class LogBarrierOSMD(PerRunFromBatched):
    """Per-run ``logbarrier-osmd`` (one row of :class:`BatchedLogBarrierOSMD`)."""

    batched_cls = BatchedLogBarrierOSMD


register_agent(
    "logbarrier-osmd",
    LogBarrierOSMD,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedLogBarrierOSMD,
    description="FTRL with the log-barrier -sum ln x, eta_t = 4 sqrt(ln(1+t)/t) (reference code of "
    "Zimmert, Luo, Wei 2019); systematic sampling",
    defaults={"eta_scale": 1.0, "tol": 1e-9, "max_iter": 100},
)
