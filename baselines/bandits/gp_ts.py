"""``gp-ts``: GP Thompson sampling on a candidate subset, a baseline of ``NoiseFreeGPBandit-v0``
(``docs/papers/noise-free-gp.md``).

Reference: Thompson sampling for GP bandits (Chowdhury & Gopalan 2017, *On kernelized multi-armed
bandits*, GP-TS) with the exact noise-free posterior; the subset rule is a papergym choice [design]
(a joint sample on all ``N`` candidates costs ``O(N^3)`` per round). Round ``t >= 2``, with the exact
noise-free posterior ``mu_{t-1}``, ``sigma_{t-1}`` (:class:`~papergym.envs.bandits.gp.NoiseFreeGP`, via
:class:`~papergym.agents.bandits.gp_ucb.GPAgent`):

1. ``R``: ``n_random`` candidates drawn uniformly without replacement from the agent's stream.
2. ``T``: the ``n_top`` candidates with the highest ``mu_{t-1} + B sigma_{t-1}`` (the UCB of ``gp-ucb``
   with width ``B``; ties: lowest index).
3. ``S = R ∪ T ∪ {x_hat}`` with ``x_hat`` the best observed candidate [design: see below]; if
   ``N <= n_random + n_top``, ``S`` is the whole candidate set (no draw).
4. One joint sample ``g ~ N(mu_S, Sigma_S)``, ``Sigma_S = k(S, S) - k(S, X) K^{-1} k(X, S)`` the joint
   posterior covariance (:meth:`NoiseFreeGP.covariance <papergym.envs.bandits.gp.NoiseFreeGP.covariance>`).
5. ``x_t = argmax_{x in S} g(x)`` (ties: lowest candidate index).

``x_1`` is the candidate closest to the centre of ``[0, 1]^d`` (as every GP agent) [design].

Sampling numerics [design]. At a queried candidate the posterior is exact (``sigma = 0``), so ``g``
equals the observed value there and no randomness is spent on it; only the unqueried part ``U`` of
``S`` is sampled. ``Sigma_U`` is positive semi-definite but numerically singular late in a run (points
whose conditional variance is ~1e-15), so a plain Cholesky fails without jitter. The agent uses a
**pivoted Cholesky** factorisation (LAPACK ``dpstrf``: ``P^T Sigma_U P = L L^T``) stopped at the
numerical rank ``r``, where every remaining conditional variance is ``<= rank_tol``; the sample is
``g_U = mu_U + P L_{:, :r} z_{:r}``, ``z ~ N(0, I_|U|)`` (``|U|`` normals are always drawn, so the stream
advances independently of ``r``). Directions with conditional variance below ``rank_tol`` (``1e-12``,
i.e. standard deviation ``1e-6``) are treated as known; no jitter is added and nothing fails. The
sample's covariance differs from ``Sigma_U`` only by the dropped Schur complement (diagonal entries
``<= rank_tol``).

Why ``x_hat`` is added to ``S``: a sample equals the observed value at every queried candidate, so
with the incumbent in ``S`` a queried candidate is played only if its value ties the best observed
one (the agent re-queries the incumbent when no sampled unqueried point beats ``f+``, exactly as a
full-set sample would). Without it, a random subset holding a poor queried point but not the incumbent
could make the agent re-query that poor point. Cost: at most one point more than the random subset alone.

Cost per round: ``O(|S|^2 t)`` for ``Sigma_S`` plus ``O(|S|^3)`` for the factorisation, ``|S| <= 545``
(measured when written: about 10 ms per round at ``N = 2500``, ``t = 150``, one BLAS thread; the
exact-posterior agents take about 0.2-0.3 ms).

Hyperparameters (enter the cell key)
------------------------------------
============  ============  ===========================================================================
name          default       provenance
============  ============  ===========================================================================
``n_random``  ``512``       [design] uniformly drawn candidates in ``S``
``n_top``     ``32``        [design] highest-UCB (width ``B``) candidates in ``S``
``rank_tol``  ``1e-12``     [design] conditional-variance tolerance of the pivoted Cholesky
``jitter``    ``1e-10``     [design] initial diagonal jitter of the posterior's ``K`` (x10 on failure)
``x1``        ``"centre"``  [design] first query: ``"centre"`` or ``"random"`` (agent's stream)
============  ============  ===========================================================================

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg.lapack import dpstrf

from papergym.agents.bandits.gp_ucb import ENV_ID, GPAgent, check_x1
from papergym.agents.base import register_agent
from papergym.validate import positive_float, positive_int

__all__ = ["GPTS", "sample_joint"]


def sample_joint(mean: np.ndarray, cov: np.ndarray, z: np.ndarray, rank_tol: float = 1e-12) -> tuple[np.ndarray, int]:
    """``mean + P L_{:, :r} z_{:r}`` with the pivoted Cholesky ``P^T cov P = L L^T`` stopped at rank ``r``
    (remaining conditional variances ``<= rank_tol``). ``z``: ``len(mean)`` standard normals.
    Returns the sample and ``r``; if ``z`` is standard normal the sample is ``~ N(mean, cov)`` up to the
    dropped Schur complement."""
    n = len(mean)
    out = np.array(mean, dtype=np.float64, copy=True)
    if n == 0:
        return out, 0
    c, piv, r, info = dpstrf(cov, tol=rank_tol, lower=1)
    if info < 0:  # pragma: no cover - an illegal argument, not a numerical condition
        raise RuntimeError(f"dpstrf failed with info={info}")
    if r == 0:
        return out, 0
    Lr = np.tril(c[:, :r])  # columns >= r hold the unfactorised Schur complement; the upper part is input
    out[piv - 1] += Lr @ z[:r]
    return out, int(r)


class GPTS(GPAgent):
    """Thompson sampling with a joint posterior sample on ``R ∪ T ∪ {x_hat}`` (module docstring)."""

    def __init__(
        self,
        problem: Any,
        *,
        seed: Any = None,
        n_random: int = 512,
        n_top: int = 32,
        rank_tol: float = 1e-12,
        jitter: float = 1e-10,
        x1: str = "centre",
    ):
        n_random = positive_int(n_random, "n_random", 0)
        n_top = positive_int(n_top, "n_top", 0)
        if n_random + n_top < 1:
            raise ValueError(f"n_random + n_top must be >= 1, got n_random={n_random}, n_top={n_top}")
        rank_tol = positive_float(rank_tol, "rank_tol")
        jitter = positive_float(jitter, "jitter")
        x1 = check_x1(x1)
        super().__init__(problem, seed=seed, jitter=jitter)
        self.n_random, self.n_top, self.rank_tol, self.x1 = n_random, n_top, rank_tol, x1
        self.queried = np.zeros(self.N, dtype=bool)
        self.ranks: list[int] = []  # numerical rank of Sigma_U per round (diagnostic)

    def observe(self, i: int, y: float) -> None:
        self.queried[i] = True

    def subset(self) -> np.ndarray:
        """Steps 1-3: the sorted candidate indices ``S`` (draws ``n_random`` indices from the stream)."""
        if self.N <= self.n_random + self.n_top:
            return np.arange(self.N)
        R = self.rng.choice(self.N, size=self.n_random, replace=False)  # step 1
        ucb = self.gp.mean + self.B * self.gp.std  # step 2
        top = np.argsort(-ucb, kind="stable")[: self.n_top]
        parts = [R, top] + ([np.array([self.best_index])] if self.best_index >= 0 else [])
        return np.unique(np.concatenate(parts))  # step 3 (sorted: argmax ties -> lowest index)

    def choose(self) -> int:
        if self.t == 0:
            return self.centre_index() if self.x1 == "centre" else int(self.rng.integers(self.N))
        gp = self.gp
        S = self.subset()
        g = gp.mean[S].copy()  # exact at queried candidates: g = y there
        u = ~self.queried[S]
        U = S[u]
        z = self.rng.standard_normal(len(U))
        if len(U):  # step 4: joint sample on the unqueried part
            g[u], r = sample_joint(gp.mean[U], gp.covariance(U), z, self.rank_tol)
        else:
            r = 0
        self.ranks.append(r)
        return int(S[np.argmax(g)])  # step 5

    def diagnostics(self) -> dict[str, Any]:
        out = super().diagnostics()
        out["ts_mean_rank"] = float(np.mean(self.ranks)) if self.ranks else 0.0
        return out


register_agent(
    "gp-ts",
    GPTS,
    envs=[ENV_ID],
    role="baseline",
    description="GP Thompson sampling: joint posterior sample on 512 random + 32 top-UCB candidates",
    defaults={"n_random": 512, "n_top": 32, "rank_tol": 1e-12, "jitter": 1e-10, "x1": "centre"},
)
