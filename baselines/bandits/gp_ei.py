"""``gp-ei``: noise-free expected improvement, a baseline of ``NoiseFreeGPBandit-v0``
(``docs/papers/noise-free-gp.md``).

Reference: A. D. Bull, *Convergence rates of efficient global optimization algorithms*, JMLR 12 (2011)
(EI with exact observations and a fixed kernel) [secondary]; the closed form is that of Jones,
Schonlau & Welch (1998). With ``f+ = max_{s < t} y_s`` the best observed value and the exact noise-free
posterior ``mu_{t-1}``, ``sigma_{t-1}`` (:class:`~papergym.envs.bandits.gp.NoiseFreeGP`, via
:class:`~papergym.agents.bandits.gp_ucb.GPAgent`):

    EI(x) = E[max(f(x) - f+ - xi, 0)],  f(x) ~ N(mu(x), sigma(x)^2)
          = (mu - f+ - xi) Phi(z) + sigma phi(z) = sigma h(z),   z = (mu - f+ - xi) / sigma,      (EI)
            h(z) = z Phi(z) + phi(z),                                                  (sigma > 0)
    EI(x) = max(mu - f+ - xi, 0)                               (sigma = 0, e.g. queried points)
    x_1 = the candidate closest to the centre of [0, 1]^d   [design, as gp-ucb: no f+ yet]
    x_t = argmax_{x in C} EI(x),   t >= 2 (ties: lowest candidate index)

Numerics [design]. Late in a run ``sigma`` is tiny almost everywhere and ``z`` very negative, so
``EI`` underflows to ``0`` in float64 for every candidate (``h(-40) ~ 1e-351``) and a plain argmax
degenerates to index 0. The agent therefore ranks candidates by ``log EI = log sigma + log h(z)``
(monotone, so the same argmax), with ``log h`` computed in three regimes (as in Ament et al. 2023,
*Unexpected improvements to expected improvement*):

* ``z > -1``:          ``log(z Phi(z) + phi(z))`` directly (``h >= h(-1) ~ 0.083``, no cancellation);
* ``-100 < z <= -1``:  ``log phi(z) + log1p(-u R(u))`` with ``u = -z`` and the Mills ratio
  ``R(u) = Phi(-u) / phi(u) = erfcx(u / sqrt 2) sqrt(pi / 2)`` (relative error ``<~ eps u^2 <= 2e-12``);
* ``z <= -100``:       the asymptotic series ``1 - u R(u) = u^-2 - 3 u^-4 + 15 u^-6 - 105 u^-8 + ...``
  (truncation error ``< 1e-13`` relative).

``Phi`` is :func:`scipy.special.ndtr`, ``erfcx`` :func:`scipy.special.erfcx`. ``log EI`` is finite
wherever ``EI > 0`` mathematically, except when ``z^2`` overflows (``|z| > 1e154``). If every candidate
has ``log EI = -inf`` (all ``EI`` exactly 0), the agent falls back to ``argmax sigma`` (exploration) and,
if ``sigma = 0`` everywhere too (``f`` known on every candidate, none improves on ``f+ + xi``), to the
best observed candidate.

Hyperparameters (enter the cell key)
------------------------------------
==========  ============  ===================================================================
name        default       provenance
==========  ============  ===================================================================
``xi``      ``0.0``       [secondary] improvement margin (``xi = 0``: Bull's EI), ``xi >= 0``
``jitter``  ``1e-10``     [design] initial diagonal jitter of ``K`` (x10 on a Cholesky failure)
``x1``      ``"centre"``  [design] first query: ``"centre"`` or ``"random"`` (agent's stream)
==========  ============  ===================================================================

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import erfcx, ndtr

from papergym.agents.bandits.gp_ucb import ENV_ID, GPAgent, check_x1
from papergym.agents.base import register_agent
from papergym.validate import positive_float

__all__ = ["GPEI", "expected_improvement", "log_expected_improvement", "log_h"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_HALF_PI = math.sqrt(0.5 * math.pi)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_Z_ASYMPTOTIC = -100.0  # below: asymptotic series of the Mills ratio


def log_h(z: np.ndarray) -> np.ndarray:
    """``log h(z)``, ``h(z) = z Phi(z) + phi(z)`` (``EI = sigma h(z)``), accurate for all finite ``z``."""
    z = np.asarray(z, dtype=np.float64)
    out = np.empty_like(z)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        hi = z > -1.0
        zh = z[hi]
        out[hi] = np.log(zh * ndtr(zh) + np.exp(-0.5 * zh * zh - _LOG_SQRT_2PI))
        mid = (~hi) & (z > _Z_ASYMPTOTIC)
        u = -z[mid]
        # h = phi(u) (1 - u R(u)), R(u) = Phi(-u)/phi(u) = erfcx(u/sqrt2) sqrt(pi/2)
        out[mid] = -0.5 * u * u - _LOG_SQRT_2PI + np.log1p(-u * erfcx(u * _INV_SQRT2) * _SQRT_HALF_PI)
        lo = z <= _Z_ASYMPTOTIC
        u = -z[lo]
        w = 1.0 / (u * u)
        # 1 - u R(u) = w (1 - 3 w + 15 w^2 - 105 w^3 + ...)
        out[lo] = -0.5 * u * u - _LOG_SQRT_2PI + np.log(w) + np.log1p(w * (-3.0 + w * (15.0 - 105.0 * w)))
    return out


def log_expected_improvement(mu: np.ndarray, sigma: np.ndarray, f_best: float, xi: float = 0.0) -> np.ndarray:
    """``log EI`` (``-inf`` where ``EI = 0``): ``log sigma + log h(z)`` for ``sigma > 0``, else
    ``log max(mu - f_best - xi, 0)``."""
    mu, sigma = np.broadcast_arrays(np.asarray(mu, dtype=np.float64), np.asarray(sigma, dtype=np.float64))
    gap = mu - float(f_best) - float(xi)
    out = np.empty(gap.shape)
    pos = sigma > 0.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out[pos] = np.log(sigma[pos]) + log_h(gap[pos] / sigma[pos])
        out[~pos] = np.log(np.maximum(gap[~pos], 0.0))
    return out


def expected_improvement(mu: np.ndarray, sigma: np.ndarray, f_best: float, xi: float = 0.0) -> np.ndarray:
    """``EI = E[max(f - f_best - xi, 0)]`` under ``N(mu, sigma^2)`` (``max(mu - f_best - xi, 0)`` where
    ``sigma = 0``); underflows to 0 for very negative ``z`` (rank with :func:`log_expected_improvement`)."""
    with np.errstate(under="ignore"):
        return np.exp(log_expected_improvement(mu, sigma, f_best, xi))


class GPEI(GPAgent):
    """Noise-free expected improvement over the candidates (module docstring)."""

    def __init__(self, problem: Any, *, seed: Any = None, xi: float = 0.0, jitter: float = 1e-10, x1: str = "centre"):
        xi = positive_float(xi, "xi", allow_zero=True)
        jitter = positive_float(jitter, "jitter")
        x1 = check_x1(x1)
        super().__init__(problem, seed=seed, jitter=jitter)
        self.xi = xi
        self.x1 = x1
        self.fallbacks = 0  # rounds where every EI was exactly 0

    def choose(self) -> int:
        if self.t == 0:  # x_1: no f+ yet
            return self.centre_index() if self.x1 == "centre" else int(self.rng.integers(self.N))
        gp = self.gp
        # (EI) in log space: same argmax, no underflow; f+ = best observed value
        score = log_expected_improvement(gp.mean, gp.std, self.best_value, self.xi)
        i = int(np.argmax(score))
        if score[i] > -math.inf:
            return i
        # every EI is exactly 0 [design]: explore (argmax sigma), or play the best observed point
        self.fallbacks += 1
        j = int(np.argmax(gp.var))
        return j if gp.var[j] > 0.0 else self.best_index

    def diagnostics(self) -> dict[str, Any]:
        out = super().diagnostics()
        out["ei_fallbacks"] = int(self.fallbacks)
        return out


register_agent(
    "gp-ei",
    GPEI,
    envs=[ENV_ID],
    role="baseline",
    description="noise-free expected improvement (Bull 2011), ranked by log EI",
    defaults={"xi": 0.0, "jitter": 1e-10, "x1": "centre"},
)
