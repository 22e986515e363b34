"""``comb-ts`` baseline of ``MSetSemiBandit-v0``: combinatorial Thompson sampling
(``docs/papers/mset-semibandit.md``).

S. Wang, W. Chen, *Thompson Sampling for Combinatorial Semi-Bandits*, ICML 2018 (CTS with Beta
priors), in its loss form; the reference code is ``ThompsonSampling`` of ``diku-dk/CombSemiBandits``
[code].

Algorithm (run ``i``; per arm ``j`` a Beta posterior of the arm's probability of *no* loss):

1. Prior ``a_j = b_j = 1`` (Beta(1, 1) = uniform).
2. Round ``t``: draw ``theta_j ~ Beta(a_j, b_j)`` independently for ``j = 1..d`` (in arm order) and
   play the ``m`` largest ``theta_j`` (ties -- probability ~0 -- by the lowest index).
3. For each observed arm ``j`` (in arm order) with loss ``l``: success with probability ``1 - l``
   (``a_j += 1``), failure otherwise (``b_j += 1``). Bernoulli trick for losses in ``(0, 1)``: draw
   ``u ~ U[0, 1)`` and succeed iff ``u >= l``; for ``l <= 0`` (success) and ``l >= 1`` (failure) no
   draw is made, so binary losses use no randomness in the update [design].

Randomness [design]: each run owns a xoshiro256** generator seeded from its agent seed
(:func:`papergym.agents.rng.rng_state`); a numba kernel steps all runs, each from its own stream, so
the batched agent is bit-identical to the per-run agent. ``Beta(a, b) = X / (X + Y)`` with independent
``X ~ Gamma(a)``, ``Y ~ Gamma(b)``; ``Gamma(1)`` is ``Exp(1) = -ln(1 - U)``; ``Gamma(k > 1)`` uses
Marsaglia & Tsang's squeeze/rejection method (ACM TOMS 2000) with Box-Muller normals (one normal per
two uniforms). (This replaces ``numpy.random.Generator.beta``, which costs a Python call per run and
round; the distribution is the same, the numbers are not.)

Hyperparameters (enter the cell key)
------------------------------------
===========  =======  ===============================================================================
name         default  provenance
===========  =======  ===============================================================================
``prior_a``  ``1.0``  [paper] Beta prior ``a`` of every arm (Wang & Chen use Beta(1, 1)); must be >= 1
``prior_b``  ``1.0``  [paper] Beta prior ``b`` of every arm; must be >= 1
===========  =======  ===============================================================================

(Priors ``< 1`` are refused: the Gamma sampler covers shapes ``>= 1``, and the counts only grow.)
Observation: ``observations["losses"]`` is read only where ``observations["observed"] == 1``; a NaN
loss at an observed arm raises ValueError before any state changes (``+-inf`` count as ``l <= 0`` /
``l >= 1``). Rewards are not used.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.agents.rng import rand_exponential, rand_uniform, rng_state
from papergym.baselines.bandits.combucb import ENV_ID, n_runs, problem_dm
from papergym.validate import in_range

__all__ = ["BatchedCombTS", "CombTS", "sample_beta"]


# ------------------------------------------------------------------------------- per-run samplers
@njit(cache=True)
def _std_normal(rs):
    """Box-Muller: ``sqrt(-2 ln(1 - U1)) cos(2 pi U2)``."""
    u1 = rand_uniform(rs)
    u2 = rand_uniform(rs)
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)


@njit(cache=True)
def _gamma(k, rs):
    """``Gamma(k, 1)`` for ``k >= 1``: ``Exp(1)`` at ``k = 1``, else Marsaglia & Tsang (2000)."""
    if k == 1.0:
        return rand_exponential(rs)
    dd = k - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * dd)
    while True:
        x = _std_normal(rs)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = rand_uniform(rs)
        if u < 1.0 - 0.0331 * (x * x) * (x * x):  # squeeze
            return dd * v
        if u > 0.0 and math.log(u) < 0.5 * x * x + dd * (1.0 - v + math.log(v)):
            return dd * v


@njit(cache=True)
def _beta(a, b, rs):
    x = _gamma(a, rs)
    y = _gamma(b, rs)
    s = x + y
    if s == 0.0:  # both Exp(1) draws exactly 0 (probability 2^-106)
        return 0.5
    return x / s


@njit(cache=True)
def _beta_many(a, b, rs, out):
    for k in range(out.shape[0]):
        out[k] = _beta(a, b, rs)


def sample_beta(a: float, b: float, size: int, seed: Any = None) -> np.ndarray:
    """``size`` draws of ``Beta(a, b)`` (``a, b >= 1``) from the sampler ``comb-ts`` uses (for tests)."""
    if not (a >= 1 and b >= 1):
        raise ValueError(f"sample_beta needs a >= 1 and b >= 1, got a={a!r}, b={b!r}")
    out = np.empty(int(size))
    _beta_many(float(a), float(b), rng_state(seed), out)
    return out


# ------------------------------------------------------------------------------------ kernels
@njit(cache=True)
def _act(a, b, rs, m, theta, out):
    """Step 2 for every run: ``theta ~ Beta(a, b)`` row by row, ``out`` = the m largest (lowest index
    on ties)."""
    n, d = a.shape
    for i in range(n):
        for j in range(d):
            theta[i, j] = _beta(a[i, j], b[i, j], rs[i])
        row = theta[i]
        tau = np.partition(row, d - m)[d - m]  # the m-th largest value
        above = 0
        for j in range(d):
            if row[j] > tau:
                above += 1
        eq_left = m - above
        for j in range(d):
            x = row[j]
            if x > tau:
                out[i, j] = 1
            elif x == tau and eq_left > 0:
                out[i, j] = 1
                eq_left -= 1
            else:
                out[i, j] = 0


@njit(cache=True)
def _update(a, b, rs, observed, losses):
    """Step 3 for every run: Bernoulli trick on the observed losses, in arm order. Returns False (and
    changes nothing) if an observed loss is NaN."""
    n, d = a.shape
    for i in range(n):
        for j in range(d):
            if observed[i, j] != 0 and losses[i, j] != losses[i, j]:
                return False
    for i in range(n):
        for j in range(d):
            if observed[i, j] == 0:
                continue
            loss = losses[i, j]
            if loss <= 0.0:
                a[i, j] += 1.0
            elif loss >= 1.0:
                b[i, j] += 1.0
            elif rand_uniform(rs[i]) >= loss:  # success w.p. 1 - loss
                a[i, j] += 1.0
            else:
                b[i, j] += 1.0
    return True


class BatchedCombTS:
    """``comb-ts`` over ``len(seeds)`` runs (see the module docstring)."""

    def __init__(self, problem: Any, *, seeds: Sequence[Any], prior_a: float = 1.0, prior_b: float = 1.0):
        self.problem = problem
        self.n_envs = n = n_runs(seeds)
        self.d, self.m = problem_dm(problem)
        d = self.d
        self.prior_a = in_range(prior_a, "prior_a", 1, low_closed=True)
        self.prior_b = in_range(prior_b, "prior_b", 1, low_closed=True)
        self.a = np.full((n, d), self.prior_a)  # 1 + successes (no loss)
        self.b = np.full((n, d), self.prior_b)  # 1 + failures (loss)
        self._rs = np.stack([rng_state(s) for s in seeds])  # (n, 4) uint64, one stream per run
        self.theta = np.empty((n, d))  # the last posterior samples
        self.t = 0

    def act(self, observations: Any) -> np.ndarray:
        out = np.empty((self.n_envs, self.d), dtype=np.int8)
        _act(self.a, self.b, self._rs, self.m, self.theta, out)
        self.t += 1
        return out

    def update(self, actions: Any, rewards: Any, observations: Any) -> None:
        observed = np.ascontiguousarray(observations["observed"], dtype=np.int8)
        losses = np.ascontiguousarray(observations["losses"], dtype=np.float64)
        if not _update(self.a, self.b, self._rs, observed, losses):
            raise ValueError("observations['losses'] must not be NaN at the observed arms")


class CombTS(PerRunFromBatched):
    """Per-run ``comb-ts`` (one row of :class:`BatchedCombTS`)."""

    batched_cls = BatchedCombTS


register_agent(
    "comb-ts",
    CombTS,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedCombTS,
    description="Combinatorial Thompson sampling (Wang & Chen 2018): Beta(1,1) per arm, Bernoulli trick, "
    "play the m largest samples",
    defaults={"prior_a": 1.0, "prior_b": 1.0},
)
