"""Non-stationary UCB baselines of ``NonStatLipschitz-v0`` on a fixed grid: ``sw-ucb`` and ``d-ucb``.

Described in ``docs/papers/nonstat-lipschitz.md`` (tags: see docs/conventions.md).
Reference: A. Garivier, E. Moulines, *On Upper-Confidence
Bound Policies for Switching Bandit Problems*, ALT 2011 [secondary]. Both run on ``K = ceil(T^{1/3})``
equal bins of ``[0, 1]`` (``d > 1``: ``ceil(T^{1/(d+2)})`` per axis, ``K^d`` cells [design]) and play
the midpoint of the chosen bin [design]. Rewards are taken as bounded by ``B = 1`` (the papers' ``B``).
Both play every bin once first, in index order (as in Garivier & Moulines), then use the index.

``sw-ucb`` (sliding-window UCB)
    At round ``t`` the statistics are those of the last ``tau`` rounds ``max(1, t - tau) .. t - 1``:
    ``N_t(i)`` pulls of bin ``i`` and their mean ``m_t(i)``. Play

        ``argmax_i  m_t(i) + sqrt(xi log min(t, tau) / N_t(i))``          (``+inf`` if ``N_t(i) = 0``)

    with ``tau = ceil(2 sqrt(T log T / Upsilon))`` (capped to ``[1, T]``), ``Upsilon = L_hint``.
    Implementation: a ring buffer of the last ``tau`` (bin, reward) pairs per run; each round removes
    the pair that leaves the window and adds the new one (O(1) per run, no Python loop over runs).
    A bin whose window count returns to 0 gets its reward sum reset to exactly 0 (no float drift).

``d-ucb`` (discounted UCB)
    Discounted counts and sums ``N_t(i) = sum_{s<t} gamma^{t-1-s} 1{I_s = i}``,
    ``S_t(i) = sum_{s<t} gamma^{t-1-s} Y_s 1{I_s = i}`` (all multiplied by ``gamma`` each round),
    ``n_t = sum_i N_t(i)``; play

        ``argmax_i  S_t(i)/N_t(i) + 2 sqrt(xi log n_t / N_t(i))``

    with ``gamma = 1 - (1/4) sqrt(Upsilon / T)``, ``Upsilon = L_hint``.

Hyperparameters (all [secondary] values from Garivier & Moulines unless noted)
    ``bins`` = None: bins per axis, None = ``ceil(T^{1/(d+2)})`` [design override].
    ``L_hint`` = 10: assumed number of changes ``Upsilon`` (a declared hint, never read from the oracle).
    ``xi`` = 0.6: exploration constant.
    ``window`` = None (``sw-ucb``): ``tau`` override [design]; None = the formula.
    ``gamma`` = None (``d-ucb``): discount override [design]; None = the formula.

Conventions [design]: "round ``t``" in the bonus is the round being played (1-based), statistics use
rounds ``< t``; ``log T`` is ``log max(T, 2)``. Tie-breaking: lowest bin index (``np.argmax``); no
randomness is used (the seed only fixes the number of runs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from papergym.agents.base import PerRunFromBatched, register_agent
from papergym.baselines.bandits.bins import (
    ENV_ID,
    midpoints,
    n_runs,
    problem_dims,
    sliding_bins,
)
from papergym.validate import positive_float, positive_int

__all__ = ["DUCB", "SWUCB", "BatchedDUCB", "BatchedSWUCB", "d_discount", "sw_window"]


def sw_window(T: int, L_hint: float) -> int:
    """``tau = ceil(2 sqrt(T log T / Upsilon))``, capped to ``[1, T]``."""
    tau = math.ceil(2.0 * math.sqrt(T * math.log(max(T, 2)) / L_hint))
    return int(min(max(tau, 1), T))


def d_discount(T: int, L_hint: float) -> float:
    """``gamma = 1 - (1/4) sqrt(Upsilon / T)``."""
    return 1.0 - 0.25 * math.sqrt(L_hint / T)


class _BinnedUCBBase:
    """Shared set-up of the two sliding UCBs: grid, arrays, round robin, reward checks."""

    def _setup(self, problem: Any, seeds: Sequence[Any], bins: int | None, L_hint: float, xi: float) -> None:
        self.problem = problem
        self.n_envs = n = n_runs(seeds)
        self.T, self.d = problem_dims(problem)
        self.L_hint = positive_float(L_hint, "L_hint")
        self.xi = positive_float(xi, "xi")
        self.K = sliding_bins(self.T, self.d) if bins is None else positive_int(bins, "bins")
        self.n_cells = C = self.K**self.d
        self._mid = midpoints(self.K, self.d)
        self._counts = np.zeros((n, C))
        self._sums = np.zeros((n, C))
        self._ucb = np.empty((n, C))
        self._tmp = np.empty((n, C))
        self._rowoff = np.arange(n, dtype=np.int64) * C
        self._arm = np.zeros(n, dtype=np.int64)
        self.t = 0

    def _rewards(self, rewards: Any) -> np.ndarray:
        rewards = np.asarray(rewards, dtype=float)
        if rewards.shape != (self.n_envs,):
            raise ValueError(f"rewards must have shape ({self.n_envs},), got {rewards.shape}")
        return rewards


class BatchedSWUCB(_BinnedUCBBase):
    """``sw-ucb`` over ``len(seeds)`` runs (see the module docstring)."""

    def __init__(
        self,
        problem: Any,
        *,
        seeds: Sequence[Any],
        bins: int | None = None,
        L_hint: float = 10.0,
        xi: float = 0.6,
        window: int | None = None,
    ):
        self._setup(problem, seeds, bins, L_hint, xi)
        if window is None:
            self.tau = sw_window(self.T, self.L_hint)
        else:
            self.tau = positive_int(window, "window")
        n = self.n_envs
        self._buf_arm = np.zeros((n, self.tau), dtype=np.int64)  # ring buffer of the last tau pulls
        self._buf_rew = np.zeros((n, self.tau))
        self._counts1 = self._counts.reshape(-1)  # flat views: entry (i, k) is i * C + k
        self._sums1 = self._sums.reshape(-1)
        self._ucb1 = self._ucb.reshape(-1)
        self._ucb_valid = False  # whether _ucb holds the index of the next round

    def _index(self, sums: np.ndarray, counts: np.ndarray, coef: float, out: np.ndarray) -> np.ndarray:
        """``m(i) + sqrt(coef / N(i))`` elementwise, ``+inf`` where ``N(i) = 0`` (``out`` != inputs)."""
        denom = np.maximum(counts, 1.0)
        np.divide(sums, denom, out=out)
        np.divide(coef, denom, out=denom)
        np.sqrt(denom, out=denom)
        np.add(out, denom, out=out)
        np.copyto(out, np.inf, where=counts == 0.0)
        return out

    def act(self, observations: Any) -> np.ndarray:
        t = self.t + 1
        if self.t < self.n_cells:  # pull every bin once, in index order
            self._arm = np.full(self.n_envs, self.t, dtype=np.int64)
            return self._mid[self._arm]
        if not self._ucb_valid:
            # m_t(i) + sqrt(xi log min(t, tau) / N_t(i)) for every bin. From t >= tau on the
            # coefficient is constant, and update() refreshes only the two bins whose window changed.
            self._index(self._sums, self._counts, self.xi * math.log(min(t, self.tau)), self._ucb)
            self._ucb_valid = t >= self.tau
        self._arm = self._ucb.argmax(axis=1)  # lowest index on ties
        return self._mid[self._arm]

    def update(self, actions: Any, rewards: Any, observations: Any) -> None:
        rewards = self._rewards(rewards)
        counts = self._counts1
        sums = self._sums1
        slot = self.t % self.tau  # round t = self.t + 1 goes to slot (t - 1) mod tau
        evict = self.t >= self.tau
        if evict:  # the pull of round t - tau leaves the window
            old = self._rowoff + self._buf_arm[:, slot]
            c_old = counts[old] - 1.0
            s_old = sums[old] - self._buf_rew[:, slot]
            s_old[c_old == 0.0] = 0.0  # empty bin: exact zero sum (no drift)
            counts[old] = c_old
            sums[old] = s_old
        new = self._rowoff + self._arm
        counts[new] += 1.0
        sums[new] += rewards
        self._buf_arm[:, slot] = self._arm
        self._buf_rew[:, slot] = rewards
        if self._ucb_valid:  # refresh the index of the bins whose window statistics changed
            f = np.concatenate((old, new)) if evict else new
            self._ucb1[f] = self._index(sums[f], counts[f], self.xi * math.log(self.tau), np.empty(f.shape[0]))
        self.t += 1

    def window_counts(self) -> np.ndarray:
        """``N_t(i)``: pulls of every bin in the last ``tau`` rounds, shape ``(n_runs, K^d)`` (a copy)."""
        return self._counts.copy()

    def diagnostics(self) -> dict[str, Any]:
        return {"bins": [self.n_cells] * self.n_envs, "window": [self.tau] * self.n_envs}


class SWUCB(PerRunFromBatched):
    """Per-run ``sw-ucb`` (one row of :class:`BatchedSWUCB`)."""

    batched_cls = BatchedSWUCB


class BatchedDUCB(_BinnedUCBBase):
    """``d-ucb`` over ``len(seeds)`` runs (see the module docstring)."""

    def __init__(
        self,
        problem: Any,
        *,
        seeds: Sequence[Any],
        bins: int | None = None,
        L_hint: float = 10.0,
        xi: float = 0.6,
        gamma: float | None = None,
    ):
        self._setup(problem, seeds, bins, L_hint, xi)
        g = d_discount(self.T, self.L_hint) if gamma is None else gamma
        g = positive_float(g, "gamma")
        if g > 1.0:
            raise ValueError(f"gamma must lie in (0, 1] (from L_hint={L_hint!r} and T={self.T}), got {g!r}")
        self.gamma = g
        self._n_total = 0.0  # n_t(gamma) = sum_i N_t(i); the same in every run

    def act(self, observations: Any) -> np.ndarray:
        if self.t < self.n_cells:  # pull every bin once, in index order
            self._arm = np.full(self.n_envs, self.t, dtype=np.int64)
            return self._mid[self._arm]
        # S/N + 2 sqrt(xi log n_t / N) = S/N + sqrt(4 xi log n_t / N) (exact: scaling by 4 is exact).
        # N_t(i) > 0 after the round robin (a bin's bonus explodes long before gamma^k underflows).
        coef = 4.0 * self.xi * math.log(self._n_total)
        np.divide(self._sums, self._counts, out=self._ucb)
        np.divide(coef, self._counts, out=self._tmp)
        np.sqrt(self._tmp, out=self._tmp)
        np.add(self._ucb, self._tmp, out=self._ucb)
        self._arm = self._ucb.argmax(axis=1)  # lowest index on ties
        return self._mid[self._arm]

    def update(self, actions: Any, rewards: Any, observations: Any) -> None:
        rewards = self._rewards(rewards)
        # N <- gamma N + 1{I_t = i};  S <- gamma S + Y_t 1{I_t = i}
        np.multiply(self._counts, self.gamma, out=self._counts)
        np.multiply(self._sums, self.gamma, out=self._sums)
        new = self._rowoff + self._arm
        self._counts.reshape(-1)[new] += 1.0
        self._sums.reshape(-1)[new] += rewards
        self._n_total = self.gamma * self._n_total + 1.0
        self.t += 1

    def discounted_counts(self) -> np.ndarray:
        """``N_t(i)`` after the rounds played, shape ``(n_runs, K^d)`` (a copy)."""
        return self._counts.copy()

    def diagnostics(self) -> dict[str, Any]:
        return {"bins": [self.n_cells] * self.n_envs}


class DUCB(PerRunFromBatched):
    """Per-run ``d-ucb`` (one row of :class:`BatchedDUCB`)."""

    batched_cls = BatchedDUCB


register_agent(
    "sw-ucb",
    SWUCB,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedSWUCB,
    description=(
        "Sliding-window UCB (Garivier & Moulines 2011) on K = ceil(T^{1/3}) bins, window 2 sqrt(T log T / L_hint)"
    ),
    defaults={"bins": None, "L_hint": 10.0, "xi": 0.6, "window": None},
)

register_agent(
    "d-ucb",
    DUCB,
    envs=[ENV_ID],
    role="baseline",
    batched_factory=BatchedDUCB,
    description="Discounted UCB (Garivier & Moulines 2011) on K = ceil(T^{1/3}) bins, gamma = 1 - sqrt(L_hint/T)/4",
    defaults={"bins": None, "L_hint": 10.0, "xi": 0.6, "gamma": None},
)
