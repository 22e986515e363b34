"""Adversarial-bandit baselines of ``NonStatLipschitz-v0`` on a fixed grid: ``exp3s`` and ``rexp3``.

Described in ``docs/papers/nonstat-lipschitz.md``. Both run on ``K = ceil(T^{1/3})`` equal bins of ``[0, 1]``
(``d > 1``: ``ceil(T^{1/(d+2)})`` per axis; ``K`` below is then the number of cells ``K^d``), the bins
of ``sw-ucb`` / ``d-ucb`` [design], and play the **midpoint** of the drawn bin [design].

``exp3s`` -- Exp3.S, P. Auer, N. Cesa-Bianchi, Y. Freund, R. Schapire, *The Nonstochastic Multiarmed
Bandit Problem*, SIAM J. Comput. 2002 [secondary]. Weights ``w_i(1) = 1``; each round

    ``p_i(t) = (1 - gamma) w_i(t) / sum_j w_j(t) + gamma / K``                          (1)
    draw ``I_t ~ p(t)``, observe ``Y_t``, ``xhat_i = Y_t 1{i = I_t} / p_i(t)``             (2)
    ``w_i(t+1) = w_i(t) exp(gamma xhat_i / K) + (e alpha / K) sum_j w_j(t)``             (3)

with ``alpha = 1/T`` and ``gamma = min(1, sqrt(K (S ln(K T) + e) / ((e - 1) T)))``, ``S = L_hint``.

``rexp3`` -- Rexp3, O. Besbes, Y. Gur, A. Zeevi, *Stochastic Multi-Armed-Bandit Problem with
Non-stationary Rewards*, NeurIPS 2014 [secondary]: Exp3 (update (3) without the ``alpha`` term)
restarted (weights back to uniform) at rounds ``1, Delta + 1, 2 Delta + 1, ...`` with
``Delta = ceil((K ln K)^{1/3} (T / V)^{2/3})`` and ``gamma = min(1, sqrt(K ln K / ((e - 1) Delta)))``,
``V = V_hint``.

Numerics [design]: the weights are renormalised to sum 1 after every update. (3) is homogeneous of
degree one in ``w``, so this changes nothing mathematically (``sum_j w_j(t) = 1`` in (3)); it removes
overflow, and ``gamma xhat / K <= Y_t`` (since ``p_i >= gamma / K``) keeps every exponent small.

Hyperparameters
    ``bins`` = None: bins per axis, None = ``ceil(T^{1/(d+2)})`` [design override].
    ``exp3s``: ``L_hint`` = 10 (assumed number of switches ``S`` [secondary, declared hint]),
    ``alpha`` = None (= ``1/T`` [secondary]), ``gamma`` = None (= the formula [secondary]).
    ``rexp3``: ``V_hint`` = 1.0 (assumed variation budget ``V_T`` [secondary, declared hint]),
    ``delta`` = None (= the formula for ``Delta``, capped to ``[1, T]``), ``gamma`` = None (formula).

Randomness and ties [design]: run ``i`` draws one ``U[0, 1)`` per round from its own stream
(:class:`~papergym.envs.spec.UniformStream` over the agent seed) and takes the inverse CDF: ``I_t`` =
the first bin whose cumulative probability exceeds ``U`` (the last bin if rounding leaves
``U >= sum p``). Deterministic under a seed and independent of batching. Rewards outside ``[0, 1]``
(Gaussian noise is unclipped) enter (2) unchanged.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.baselines.bandits.bins import (
    ENV_ID,
    inverse_cdf,
    midpoints,
    n_runs,
    problem_dims,
    sliding_bins,
)
from papergym.envs.spec import UniformStream
from papergym.validate import in_range, positive_float, positive_int

__all__ = ["BatchedExp3S", "BatchedRexp3", "Exp3S", "Rexp3", "exp3s_gamma", "rexp3_delta", "rexp3_gamma"]

E = math.e


def exp3s_gamma(K: int, T: int, S: float) -> float:
    """``min(1, sqrt(K (S ln(K T) + e) / ((e - 1) T)))`` (Auer et al. 2002, Exp3.S tuning)."""
    return min(1.0, math.sqrt(K * (S * math.log(K * T) + E) / ((E - 1.0) * T)))


def rexp3_delta(K: int, T: int, V: float) -> int:
    """``Delta = ceil((K ln K)^{1/3} (T / V)^{2/3})``, capped to ``[1, T]`` (Besbes et al. 2014)."""
    delta = math.ceil((K * math.log(K)) ** (1.0 / 3.0) * (T / V) ** (2.0 / 3.0))
    return int(min(max(delta, 1), T))


def rexp3_gamma(K: int, delta: int) -> float:
    """``min(1, sqrt(K ln K / ((e - 1) Delta)))`` (Besbes et al. 2014)."""
    return min(1.0, math.sqrt(K * math.log(K) / ((E - 1.0) * delta)))


class _BatchedExp3Base:
    """Exp3 machinery shared by ``exp3s`` and ``rexp3``: weights, sampling (1)-(2), update (3)."""

    alpha: float = 0.0  # the Exp3.S share term of (3); 0 for plain Exp3
    gamma: float

    def _setup(self, problem: Any, seeds: Sequence[Any], bins: int | None) -> None:
        self.problem = problem
        self.n_envs = n = n_runs(seeds)
        self.T, self.d = problem_dims(problem)
        self.K = sliding_bins(self.T, self.d) if bins is None else positive_int(bins, "bins")
        self.n_cells = C = self.K**self.d
        self._mid = midpoints(self.K, self.d)
        self._stream = UniformStream(list(seeds))
        self._w = np.full((n, C), 1.0 / C)  # normalised weights
        self._w1 = self._w.reshape(-1)  # flat view: entry (i, k) is i * C + k
        self._p = np.empty((n, C))
        self._rowoff = np.arange(n, dtype=np.int64) * C
        self._arm = np.zeros(n, dtype=np.int64)
        self._p_arm = np.ones(n)
        self.t = 0

    def _draw(self) -> np.ndarray:
        # (1) p = (1 - gamma) w / sum w + gamma / K   (w is normalised)
        p = np.multiply(self._w, 1.0 - self.gamma, out=self._p)
        np.add(p, self.gamma / self.n_cells, out=p)
        # (2) inverse CDF with the run's own uniform: first bin with cumsum(p) > U
        arm = inverse_cdf(p, self._stream.take1(), np.empty(self.n_envs, dtype=np.int64))
        self._arm = arm
        self._p_arm = p.reshape(-1)[self._rowoff + arm]
        return self._mid[arm]

    def update(self, actions: Any, rewards: Any, observations: Any) -> None:
        rewards = np.asarray(rewards, dtype=float)
        if rewards.shape != (self.n_envs,):
            raise ValueError(f"rewards must have shape ({self.n_envs},), got {rewards.shape}")
        # (3) w_i <- w_i exp(gamma xhat_i / K) (+ e alpha / K sum_j w_j, with sum_j w_j = 1), renormalise
        flat = self._rowoff + self._arm
        w = self._w1
        w[flat] = w[flat] * np.exp((self.gamma / self.n_cells) * (rewards / self._p_arm))
        if self.alpha:
            np.add(self._w, self._share, out=self._w)
        np.divide(self._w, self._w.sum(axis=1, keepdims=True), out=self._w)
        self.t += 1

    def last_probabilities(self) -> np.ndarray:
        """``p(t)`` used by the last ``act``, shape ``(n_runs, K^d)`` (a copy)."""
        return self._p.copy()


class BatchedExp3S(_BatchedExp3Base):
    """``exp3s`` over ``len(seeds)`` runs (see the module docstring)."""

    def __init__(
        self,
        problem: Any,
        *,
        seeds: Sequence[Any],
        bins: int | None = None,
        L_hint: float = 10.0,
        alpha: float | None = None,
        gamma: float | None = None,
    ):
        self._setup(problem, seeds, bins)
        self.L_hint = positive_float(L_hint, "L_hint", allow_zero=True)
        self.alpha = 1.0 / self.T if alpha is None else positive_float(alpha, "alpha", allow_zero=True)
        self._share = E * self.alpha / self.n_cells  # (e alpha / K) sum_j w_j(t), with sum_j w_j(t) = 1
        self.gamma = (
            exp3s_gamma(self.n_cells, self.T, self.L_hint)
            if gamma is None
            else in_range(gamma, "gamma", 0, 1, high_closed=True)
        )

    def act(self, observations: Any) -> np.ndarray:
        return self._draw()

    def diagnostics(self) -> dict[str, Any]:
        return {"bins": [self.n_cells] * self.n_envs}


class Exp3S(PerRunFromBatched):
    """Per-run ``exp3s`` (one row of :class:`BatchedExp3S`)."""

    batched_cls = BatchedExp3S


class BatchedRexp3(_BatchedExp3Base):
    """``rexp3`` over ``len(seeds)`` runs (see the module docstring)."""

    def __init__(
        self,
        problem: Any,
        *,
        seeds: Sequence[Any],
        bins: int | None = None,
        V_hint: float = 1.0,
        delta: int | None = None,
        gamma: float | None = None,
    ):
        self._setup(problem, seeds, bins)
        self.V_hint = positive_float(V_hint, "V_hint")
        if delta is None:
            self.delta = rexp3_delta(self.n_cells, self.T, self.V_hint)
        else:
            self.delta = positive_int(delta, "delta")
        if gamma is None:
            # K = 1: ln K = 0 -> gamma = 0 and p = 1 (the single bin)
            self.gamma = rexp3_gamma(self.n_cells, self.delta)
        else:
            self.gamma = in_range(gamma, "gamma", 0, 1, high_closed=True)
        self.alpha = 0.0
        self._restarts = 0

    def act(self, observations: Any) -> np.ndarray:
        if self.t > 0 and self.t % self.delta == 0:  # round t = k Delta + 1: restart Exp3
            self._w.fill(1.0 / self.n_cells)
            self._restarts += 1
        return self._draw()

    def diagnostics(self) -> dict[str, Any]:
        return {"restarts": [self._restarts] * self.n_envs, "bins": [self.n_cells] * self.n_envs}


class Rexp3(PerRunFromBatched):
    """Per-run ``rexp3`` (one row of :class:`BatchedRexp3`)."""

    batched_cls = BatchedRexp3


register_agent(
    "exp3s",
    Exp3S,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedExp3S,
    description="Exp3.S (Auer et al. 2002) on K = ceil(T^{1/3}) bins, alpha = 1/T, S = L_hint",
    defaults={"bins": None, "L_hint": 10.0, "alpha": None, "gamma": None},
)

register_agent(
    "rexp3",
    Rexp3,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedRexp3,
    description="Exp3 restarted every Delta rounds (Besbes, Gur, Zeevi 2014) on K = ceil(T^{1/3}) bins, V = V_hint",
    defaults={"bins": None, "V_hint": 1.0, "delta": None, "gamma": None},
)
