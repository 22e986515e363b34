"""``combucb`` baseline of ``MSetSemiBandit-v0``: CombUCB1 for m-set semi-bandits
(``docs/papers/mset-semibandit.md``).

B. Kveton, Z. Wen, A. Ashkan, C. Szepesvari, *Tight Regret Bounds for Stochastic Combinatorial
Semi-Bandits*, AISTATS 2015 (CombUCB1), in its loss form; the reference code is ``CombUCB`` of
``diku-dk/CombSemiBandits`` (Zimmert, Luo, Wei, ICML 2019) [code].

Algorithm (run ``i``; rounds ``t = 1, 2, ...`` counted by the agent; ``T_j`` = observations of arm
``j``, ``S_j`` = their summed losses):

1. Initial sweep, rounds ``t = 1 .. ceil(d/m)``: play the block of arms ``(t-1)m .. tm-1`` while
   ``tm <= d``; the last round (if ``m`` does not divide ``d``) plays the *last* ``m`` arms
   ``d-m .. d-1``, so every arm is observed at least once [code].
2. Afterwards play the ``m`` smallest lower confidence bounds                               (1)
       ``LCB_j(t) = S_j / T_j - width * sqrt(1.5 ln t / T_j)``
   (``1.5`` is Kveton et al.'s constant; an arm with ``T_j = 0`` -- impossible when the agent's own
   actions are played -- gets ``LCB = -inf``).
3. Observe the chosen arms' losses: ``T_j += 1``, ``S_j += l_{t,j}`` for every observed ``j``.

Ties in (1) [design]: the ``m`` smallest by value, equal values broken by the lowest arm index
(:func:`m_smallest`: the ``m``-th smallest value ``tau`` by ``np.partition``, then every arm with
``LCB < tau`` and the lowest-index arms with ``LCB == tau`` to make ``m``). Deterministic (no
randomness at all), and each run's row is computed with element-wise operations only, so a batched
run is bit-identical to the per-run agent.

Hyperparameters (enter the cell key)
------------------------------------
=========  =======  =================================================================================
name       default  provenance
=========  =======  =================================================================================
``width``  ``1.0``  [design] factor of the confidence width in (1). The reference code uses
                    ``2 sqrt(1.5 ln t / T_j)`` on losses in ``{-1, +1}``; on ``{0, 1}`` losses
                    (``l = (l' + 1)/2``) that is exactly ``width = 1``; ``width = 0`` is greedy.
=========  =======  =================================================================================

Observation: ``observations["losses"]`` is read only where ``observations["observed"] == 1``
(unobserved entries, 0 or NaN, are ignored); a non-finite loss at an observed arm raises ValueError
before any state changes. Rewards are not used.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.validate import positive_float

__all__ = ["BatchedCombUCB", "CombUCB", "m_smallest", "sweep_action"]

ENV_ID = "MSetSemiBandit-v0"
UCB_CONSTANT = 1.5  # Kveton et al. 2015, CombUCB1's sqrt(1.5 log t / T)


def m_smallest(scores: np.ndarray, m: int) -> np.ndarray:
    """``(n, d)`` int8 mask of the ``m`` smallest entries of every row of ``scores``, equal values
    broken by the lowest index (``-inf`` sorts first; rows must be NaN-free)."""
    n, d = scores.shape
    if m == d:
        return np.ones((n, d), dtype=np.int8)
    tau = np.partition(scores, m - 1, axis=1)[:, m - 1 : m]  # the m-th smallest value of each row
    below = scores < tau
    equal = scores == tau
    need = m - np.count_nonzero(below, axis=1, keepdims=True)  # >= 1 entries equal to tau to take
    take = equal & (np.cumsum(equal, axis=1) <= need)  # the lowest-index ones
    return (below | take).view(np.int8)


def sweep_action(t: int, d: int, m: int) -> np.ndarray:
    """The ``(d,)`` int8 action of sweep round ``t`` (``1 <= t <= ceil(d/m)``): arms ``(t-1)m .. tm-1``,
    or the last ``m`` arms when ``tm > d``."""
    a = np.zeros(d, dtype=np.int8)
    if t * m <= d:
        a[(t - 1) * m : t * m] = 1
    else:
        a[d - m :] = 1
    return a


def problem_dm(problem: Any) -> tuple[int, int]:
    try:
        d, m = int(problem.d), int(problem.m)
    except AttributeError:
        raise ValueError(
            "problem must be the ProblemSpec of MSetSemiBandit-v0 (with parameters d and m); "
            "build it with papergym.envs.bandits.semibandit.make_problem"
        ) from None
    return d, m


def n_runs(seeds: Sequence[Any]) -> int:
    n = len(seeds)
    if n < 1:
        raise ValueError("seeds must hold at least one seed (one per run)")
    return n


class BatchedCombUCB:
    """``combucb`` over ``len(seeds)`` runs (see the module docstring). Deterministic: the seeds only
    fix the number of runs."""

    def __init__(self, problem: Any, *, seeds: Sequence[Any], width: float = 1.0):
        self.problem = problem
        self.n_envs = n = n_runs(seeds)
        self.d, self.m = d, m = problem_dm(problem)
        self.width = positive_float(width, "width", allow_zero=True)
        self.sweep_rounds = -(-d // m)  # ceil(d / m)
        self.counts = np.zeros((n, d))  # T_j
        self.sums = np.zeros((n, d))  # S_j
        self.t = 0  # rounds acted so far (the current round after act)
        self._lcb = np.empty((n, d))

    def lower_bounds(self, t: int | None = None) -> np.ndarray:
        """``LCB_j(t)`` of (1) for every run, shape ``(n, d)`` (``t`` defaults to the next round)."""
        t = self.t + 1 if t is None else int(t)
        lcb = self._lcb
        seen = self.counts > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(UCB_CONSTANT * math.log(t), self.counts, out=lcb)  # 1.5 ln t / T_j
            np.sqrt(lcb, out=lcb)
            np.multiply(lcb, self.width, out=lcb)
            np.subtract(self.sums / self.counts, lcb, out=lcb)  # S_j/T_j - width sqrt(...)
        if not seen.all():
            lcb[~seen] = -np.inf
        return lcb

    def act(self, observations: Any) -> np.ndarray:
        self.t += 1
        t = self.t
        if t <= self.sweep_rounds:  # step 1: initial sweep
            return np.broadcast_to(sweep_action(t, self.d, self.m), (self.n_envs, self.d)).copy()
        return m_smallest(self.lower_bounds(t), self.m)  # step 2: m smallest LCBs (1)

    def update(self, actions: Any, rewards: Any, observations: Any) -> None:
        # step 3: T_j += 1, S_j += l_j for the observed arms
        seen = np.asarray(observations["observed"]) != 0
        losses = np.where(seen, observations["losses"], 0.0)
        if not np.isfinite(losses).all():
            raise ValueError("observations['losses'] must be finite at the observed arms")
        np.add(self.counts, seen, out=self.counts)
        np.add(self.sums, losses, out=self.sums)


class CombUCB(PerRunFromBatched):
    """Per-run ``combucb`` (one row of :class:`BatchedCombUCB`)."""

    batched_cls = BatchedCombUCB


register_agent(
    "combucb",
    CombUCB,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedCombUCB,
    description="CombUCB1 (Kveton et al. 2015): sweep, then the m smallest mean - width sqrt(1.5 ln t / T)",
    defaults={"width": 1.0},
)
