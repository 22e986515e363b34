"""Phased elimination baselines of ``NoiseFreeGPBandit-v0``: ``pe-mvr`` and ``reds``.

Both are *non-adaptive within a phase*: the points queried in a phase do not depend on the values
observed in that phase, only on the active set the previous phases left. They are the
nearly-optimal noise-free algorithms that the paper of ``gp-ucb`` (Iwazaki, NeurIPS 2025) compares
GP-UCB with (``docs/papers/noise-free-gp.md``).

References
----------
* ``pe-mvr``: phased elimination with maximum variance reduction in the noise-free setting,
  S. Iwazaki and S. Takeno, *Improved Regret Analysis in Gaussian Process Bandits: Optimality for
  Noiseless Reward, RKHS norm, and Non-Stationary Variance*, ICML 2025 (arXiv 2502.06363)
  [secondary]; the batched template (a posterior built from the current batch only, elimination by
  confidence bounds at the batch end) is Z. Li and J. Scarlett, *Gaussian process bandit optimization
  with few batches*, AISTATS 2022 [secondary]. Regret rates (as cited by Iwazaki, NeurIPS 2025,
  arXiv:2502.19006): ``O(ln T)`` for SE,
  ``O~(T^{(d - nu)/d})`` for Matérn ``d > nu``.
* ``reds``: random exploration with domain shrinking, S. Salgia, S. Vakili and Q. Zhao, *Random
  exploration for noise-free kernel bandits* (2024) [secondary]: the phase queries are uniform random
  points of the current (shrunk) domain. Salgia et al. analyse uniform sampling of a continuous
  domain with elimination from fill-distance bounds; here, on the finite candidate set, the same
  confidence-bound elimination as ``pe-mvr`` is used so that the two differ *only* in how a phase
  picks its queries [design].

Algorithm (one run; ``w = beta^{1/2}`` the confidence width, ``A_i`` the active set)
-----------------------------------------------------------------------------------
::

    A_1 = all candidates
    for phase i = 1, 2, ...:                                                     (phases)
        N_i = ceil(first_phase * growth^(i-1))          # 2, 4, 8, ... by default   (1)
        fresh noise-free posterior mu^(i), sigma^(i) from THIS phase's points only   (2)
        repeat N_i times (stop as soon as the horizon T is reached):
            pe-mvr: x = argmax_{x in A_i} sigma^(i)(x)   (maximum variance reduction)  (3a)
            reds:   x ~ Uniform{x in A_i not yet queried in phase i}              (3b)
            query x, add (x, f(x)) to the phase posterior
        A_{i+1} = {x in A_i : mu^(i)(x) + w sigma^(i)(x)
                               >= max_{x' in A_i} (mu^(i)(x') - w sigma^(i)(x')) - elim_tol}  (4)

With ``||f||_k <= B`` and ``w >= B``, ``|f - mu^(i)| <= B sigma^(i)`` holds deterministically
(noise-free posterior), so (4) never drops a maximiser of ``f`` over ``A_i`` (up to ``elim_tol``
and floating point) and never empties ``A_i``: the maximiser of the lower bound satisfies its own
test. Queried points have ``sigma^(i) = 0`` exactly, so they keep or lose their place on their exact
values.

Details fixed here
------------------
* (2) The phase posterior is a fresh :class:`~papergym.envs.bandits.gp.NoiseFreeGP` on the active
  candidates ``A_i`` (the only posterior implementation; restricting it to ``A_i`` gives the same
  ``mu``, ``sigma`` there as one on all candidates, at ``O(|A_i| n)`` per step) [design]. The base
  :class:`~papergym.agents.bandits.gp_ucb.GPAgent` keeps, separately, the full-history posterior for
  the ``sum_sigma`` diagnostic.
* (3a) Ties in ``argmax sigma`` go to the lowest candidate index, so the first query of every phase
  (all ``sigma = 1``) is the lowest-index active candidate [design]. A candidate already queried in
  the phase has ``sigma^(i) = 0`` and is not queried again while some active ``sigma^(i) > 0``.
* (3a, 3b) When no active candidate is left to learn about (``pe-mvr``: every active
  ``sigma^(i) = 0``; ``reds``: every active candidate already queried in the phase), the active set is
  fully known and the agent plays the best known active candidate, ``argmax_{A_i} mu^(i)`` (exact
  values there; lowest index on ties) until the phase ends [design].
* (3b) ``reds`` draws without replacement within a phase (uniform sampling of a continuous domain
  repeats a point with probability 0; on a finite set a repeat wastes a query) [design];
  ``replace=True`` draws with replacement from all of ``A_i``. Draws come from the agent's own
  generator (``np.random.default_rng(seed)``), one ``integers`` call per exploratory round.
* If the horizon ends inside a phase, the run stops there (no final elimination).
* ``elim_tol`` (default ``1e-8``) absorbs the ``O(jitter)`` floating-point error of ``mu``, ``sigma``
  so a maximiser is not dropped by rounding; it only ever keeps more candidates [design].
* The recommendation ``x_hat_T`` is the best observed point (the base class).

Hyperparameters (enter the cell key)
------------------------------------
===============  ==========  ===================================================================
name             default     provenance
===============  ==========  ===================================================================
``first_phase``  ``2``       [secondary] ``N_1``; with ``growth = 2``: ``N_i = 2^i``
``growth``       ``2``       [secondary] ``N_{i+1} / N_i`` (a real ``>= 1``; lengths rounded up)
``beta_sqrt``    ``None``    [secondary] confidence width of (4); ``None`` = the public bound ``B``
``elim_tol``     ``1e-8``    [design] slack of the elimination test (4)
``jitter``       ``1e-10``   [design] initial jitter of both posteriors (see ``NoiseFreeGP``)
``replace``      ``False``   [design] ``reds`` only: draw phase queries with replacement
===============  ==========  ===================================================================

Salgia et al.'s exact phase lengths and constants are not confirmed; for ``reds`` they are the
hyperparameters above [secondary].

Diagnostics (besides those of :class:`GPAgent`)
-----------------------------------------------
``phases`` (completed phases), ``phase_lengths`` (their lengths), ``active_sizes`` (``|A_{i+1}|``
after each completed phase), ``active_size`` (the current ``|A_i|``).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from papergym.agents.bandits.gp_ucb import ENV_ID, GPAgent
from papergym.agents.base import register_agent
from papergym.envs.bandits.gp import NoiseFreeGP
from papergym.validate import boolean, in_range, positive_float, positive_int

__all__ = ["PEMVR", "REDS", "PhasedElimination"]


class PhasedElimination(GPAgent):
    """Phased elimination on the candidate set; subclasses pick the phase queries (:meth:`explore`).

    Parameters are those of the module table (``replace`` belongs to :class:`REDS`).
    """

    def __init__(
        self,
        problem: Any,
        *,
        seed: Any = None,
        first_phase: int = 2,
        growth: float = 2.0,
        beta_sqrt: float | None = None,
        elim_tol: float = 1e-8,
        jitter: float = 1e-10,
    ):
        first_phase = positive_int(first_phase, "first_phase")
        growth = in_range(growth, "growth", 1, low_closed=True)
        beta_sqrt = positive_float(beta_sqrt, "beta_sqrt", allow_none=True)
        elim_tol = positive_float(elim_tol, "elim_tol", allow_zero=True)
        jitter = positive_float(jitter, "jitter")
        super().__init__(problem, seed=seed, jitter=jitter)
        self.first_phase = int(first_phase)
        self.growth = float(growth)
        self.w = self.B if beta_sqrt is None else float(beta_sqrt)
        self.elim_tol = float(elim_tol)
        self._jitter0 = float(jitter)
        self.phase_lengths: list[int] = []
        self.active_sizes: list[int] = []
        self.active = np.arange(self.N)  # A_1: every candidate (sorted candidate indices)
        self._start_phase()

    # ------------------------------------------------------------------------------ phases
    def phase_length(self, i: int) -> int:
        """``N_i`` of phase ``i = 1, 2, ...`` (1): ``ceil(first_phase * growth^(i-1))`` (the ``1e-9``
        absorbs rounding of ``growth^(i-1)``, so integer growth gives exact powers)."""
        return max(1, math.ceil(self.first_phase * self.growth ** (i - 1) - 1e-9))

    def _start_phase(self) -> None:
        self.phase = len(self.phase_lengths) + 1
        self.n_phase = self.phase_length(self.phase)
        self.k_phase = 0  # queries made in the current phase
        n_a = len(self.active)
        # (2) fresh posterior from this phase's points only, kept on the active candidates
        self.pgp = NoiseFreeGP(
            self.C[self.active],
            self.kernel,
            self.lengthscale,
            jitter=self._jitter0,
            capacity=min(self.n_phase, n_a) + 1,
        )
        self._pos = np.full(self.N, -1, dtype=np.int64)  # candidate index -> position in A_i
        self._pos[self.active] = np.arange(n_a)
        self._queried = np.zeros(n_a, dtype=bool)  # queried in this phase (positions in A_i)

    def _eliminate(self) -> None:
        # (4) keep x with UCB >= max LCB over A_i (phase posterior); the LCB maximiser always survives
        mu, sd = self.pgp.mean, self.pgp.std
        lcb_max = float(np.max(mu - self.w * sd))
        keep = mu + self.w * sd >= lcb_max - self.elim_tol
        self.active = self.active[keep]
        self.phase_lengths.append(self.k_phase)
        self.active_sizes.append(len(self.active))

    def best_known(self) -> int:
        """Position in ``A_i`` of ``argmax mu^(i)`` (exact values once the active set is known)."""
        return int(np.argmax(self.pgp.mean))

    # ------------------------------------------------------------------------------ policy
    def explore(self) -> int | None:
        """Position in ``A_i`` of the next phase query, or ``None`` when ``A_i`` is fully known."""
        raise NotImplementedError

    def choose(self) -> int:
        p = self.explore()
        if p is None:
            p = self.best_known()
        return int(self.active[p])

    def observe(self, i: int, y: float) -> None:
        p = int(self._pos[i])
        if p >= 0:
            self.pgp.add(p, y)  # False (nothing appended) for a repeat: no new information
            self._queried[p] = True
        else:  # an action the agent did not choose (not active): still information
            self.pgp.add_point(self.C[i], y)
        self.k_phase += 1
        if self.k_phase == self.n_phase:  # end of phase i
            self._eliminate()
            self._start_phase()

    def diagnostics(self) -> dict[str, Any]:
        d = super().diagnostics()
        d.update(
            {
                "phases": len(self.phase_lengths),
                "phase_lengths": list(self.phase_lengths),
                "active_sizes": list(self.active_sizes),
                "active_size": len(self.active),
            }
        )
        return d


class PEMVR(PhasedElimination):
    """``pe-mvr``: phase queries by maximum variance reduction over the active set (3a)."""

    def explore(self) -> int | None:
        var = self.pgp.var
        p = int(np.argmax(var))  # lowest index on ties
        return p if var[p] > 0.0 else None


class REDS(PhasedElimination):
    """``reds``: phase queries uniform on the active set (3b), random exploration with domain shrinking."""

    def __init__(
        self,
        problem: Any,
        *,
        seed: Any = None,
        first_phase: int = 2,
        growth: float = 2.0,
        beta_sqrt: float | None = None,
        elim_tol: float = 1e-8,
        jitter: float = 1e-10,
        replace: bool = False,
    ):
        self.replace = boolean(replace, "replace")
        super().__init__(
            problem,
            seed=seed,
            first_phase=first_phase,
            growth=growth,
            beta_sqrt=beta_sqrt,
            elim_tol=elim_tol,
            jitter=jitter,
        )

    def explore(self) -> int | None:
        if self.replace:
            return int(self.rng.integers(len(self.active)))
        pool = np.flatnonzero(~self._queried)
        if len(pool) == 0:
            return None
        return int(pool[self.rng.integers(len(pool))])


_DEFAULTS = {"first_phase": 2, "growth": 2.0, "beta_sqrt": None, "elim_tol": 1e-8, "jitter": 1e-10}

register_agent(
    "pe-mvr",
    PEMVR,
    envs=[ENV_ID],
    role="baseline",
    description="phased elimination, max-variance queries from each phase's own posterior, N_i = 2^i "
    "(Iwazaki & Takeno, ICML 2025; Li & Scarlett 2022)",
    defaults=dict(_DEFAULTS),
)

register_agent(
    "reds",
    REDS,
    envs=[ENV_ID],
    role="baseline",
    description="random exploration with domain shrinking: uniform phase queries on the active set, "
    "confidence-bound elimination (Salgia, Vakili, Zhao 2024)",
    defaults={**_DEFAULTS, "replace": False},
)
