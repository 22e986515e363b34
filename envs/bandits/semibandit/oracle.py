"""Oracles of ``MSetSemiBandit-v0``: the privileged per-run view (:class:`MSetSemiBanditOracle`: means,
optimal and best fixed sets, dynamic and static pseudo-regret, realised losses, run scoring) and its batched
form for the vector env.

Part of :mod:`papergym.envs.bandits.semibandit` (tags: see docs/conventions.md).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from papergym.envs.bandits.kernels import last_le
from papergym.envs.bandits.semibandit.instances import _SWITCH, _WORST, _masked_sum, _masked_sums, _Runs
from papergym.envs.bandits.semibandit.space import _as_actions, _is_int

__all__ = ["MSetSemiBanditOracle", "BatchedMSetSemiBanditOracle"]


@njit(cache=True)
def _diff_kernel(A, seg_mu, ref, starts, t, clip, out):
    """out[r] = <seg_mu[r, s], A[r]> - ref[r, s], s = segment(t) (clipped at 0 if clip)."""
    for r in range(A.shape[0]):
        s = last_le(starts[r], t)
        g = _masked_sum(seg_mu[r, s], A[r]) - ref[r, s]
        out[r] = g if (g > 0.0 or not clip) else 0.0


@njit(cache=True)
def _history_kernel(A, seg_mu, ref, starts, clip):
    """sum_{t=1..k} (<seg_mu[s_t], A[t-1]> - ref[s_t]) of one run, accumulated in round order."""
    tot = 0.0
    for t in range(1, A.shape[0] + 1):
        s = last_le(starts, t)
        g = _masked_sum(seg_mu[s], A[t - 1]) - ref[s]
        tot += g if (g > 0.0 or not clip) else 0.0
    return tot


def _check_round(t: Any, T: int) -> int:
    if type(t) is int and 1 <= t <= T:
        return t
    if not _is_int(t) or not 1 <= t <= T:
        raise ValueError(f"t must be an integer round in 1..{T}, got {t!r}")
    return int(t)


class MSetSemiBanditOracle:
    """Privileged view of one run (``env.unwrapped.oracle``): means, optimal sets, regrets.

    Rounds are 1-based (``t = 1..n``). Actions are ``(d,)`` 0/1 vectors with ``m`` ones (validated as by
    the env). ``tracks_static_regret`` is True only for ``oblivious-switching``, where the per-round
    dynamic regret (:meth:`regret`) and the static pseudo-regret against :meth:`best_set` (the paper's
    notion, :meth:`static_regret_increment`) differ; for the other families they coincide.
    """

    #: the runner draws the regret curves with a linear-x and a log-x panel (log-x for the
    #: stochastic regime, linear-x for adversarial families)
    PLOT_LOG_X_PANEL = True

    @staticmethod
    def score_run(
        instance: dict[str, Any], final_regret: float, diagnostics: dict[str, Any], env_kwargs: dict[str, Any]
    ) -> dict[str, float]:
        """Run scores (``docs/papers/mset-semibandit.md``) from the run's pseudo-regret ``R_n`` (static where it
        differs): ``R_n / ln n`` (flat in ``n`` for a logarithmic, stochastic-regime regret) and
        ``R_n / sqrt(n m d)`` (flat for the minimax adversarial rate)."""
        n, m, d = int(env_kwargs["horizon"]), int(env_kwargs["m"]), int(env_kwargs["d"])
        R = float(final_regret)
        return {
            "regret_per_ln_n": R / math.log(n) if n > 1 else math.nan,
            "regret_per_sqrt_nmd": R / math.sqrt(n * m * d),
        }

    def __init__(self, runs: _Runs, row: int):
        self._runs = runs
        self._row = row
        self._row1 = slice(row, row + 1)
        cfg = runs.cfg
        self.cfg = cfg
        self.seed = runs.seeds[row]
        self.instance = cfg.instance
        self.horizon = cfg.horizon
        self.d = cfg.d
        self.m = cfg.m
        self.gap = cfg.gap if cfg.instance != _WORST else None
        self.epsilon = cfg.eps if cfg.instance == _WORST else None
        self.tracks_static_regret = cfg.instance == _SWITCH
        self._realised: np.ndarray | None = None

    def __repr__(self) -> str:
        return (
            f"MSetSemiBanditOracle(instance={self.instance!r}, horizon={self.horizon}, d={self.d}, "
            f"m={self.m}, seed={self.seed})"
        )

    def _a(self, action: Any) -> np.ndarray:
        return _as_actions(action, (self.d,), self.m).reshape(1, self.d)

    def _seg(self, t: int) -> int:
        return int(last_le(self._runs.starts[self._row], t))

    # ----------------------------------------------------------------- means and regret
    def mean_losses(self, t: int) -> np.ndarray:
        """``mu_t``, shape ``(d,)``."""
        t = _check_round(t, self.horizon)
        runs = self._runs
        return runs.seg_mu[self._row, self._seg(t)] + runs.shift(t)

    def mean_reward(self, action: Any, t: int) -> float:
        """``-<mu_t, a>``."""
        a = self._a(action)[0]
        return -float(_masked_sum(self.mean_losses(t), a))

    def optimal_set(self, t: int) -> np.ndarray:
        """The minimiser of ``<mu_t, a>`` over m-sets (unique for ``gap, epsilon > 0``), ``int8 (d,)``."""
        t = _check_round(t, self.horizon)
        return self._runs.opt_mask[self._row, self._seg(t)].copy()

    def optimal_value(self, t: int) -> float:
        """``-min_{|a| = m} <mu_t, a>``."""
        return -float(_masked_sum(self.mean_losses(t), self.optimal_set(t)))

    def regret(self, action: Any, t: int) -> float:
        """Per-round dynamic pseudo-regret ``<mu_t, a> - min_{|a'| = m} <mu_t, a'> >= 0`` (0 exactly for
        the optimal set)."""
        t = _check_round(t, self.horizon)
        runs = self._runs
        out = np.empty(1)
        _diff_kernel(
            self._a(action), runs.seg_mu[self._row1], runs.seg_opt[self._row1], runs.starts[self._row1], t, True, out
        )
        return float(out[0])

    def gaps(self, t: int = 1) -> np.ndarray:
        """Per-arm gaps at round ``t``: ``mu_{t,i} - mu_{t,(m)}`` clipped at 0 (``mu_{t,(m)}`` the m-th
        smallest mean): 0 on the optimal arms, ``gap`` (``epsilon`` for worst-case) on the others."""
        mu = self.mean_losses(t)
        kth = np.partition(mu, self.m - 1)[self.m - 1]
        return np.maximum(mu - kth, 0.0)

    def min_gap(self, t: int = 1) -> float:
        """``mu_{t,(m+1)} - mu_{t,(m)}``, the gap of the stochastic m-set bounds (``inf`` when ``m = d``)."""
        if self.m == self.d:
            return math.inf
        mu = np.sort(self.mean_losses(t))
        return float(mu[self.m] - mu[self.m - 1])

    # ----------------------------------------------------------------- the best fixed set (static regret)
    def best_set(self) -> np.ndarray:
        """Best fixed m-set in hindsight of the means, ``int8 (d,)``: the ``m`` smallest entries of
        ``sum_t mu_t`` (= the m arms optimal in the most rounds; ties -> lowest index)."""
        return self._runs.best_fixed[self._row].copy()

    def cumulative_means(self) -> np.ndarray:
        """``sum_{t=1..n} mu_t``, shape ``(d,)`` (segment lengths times segment means plus ``b sum_t s(t)``)."""
        runs = self._runs
        tot = runs.lengths[self._row].astype(np.float64) @ runs.seg_mu[self._row]
        if runs.signs is not None:
            tot = tot + runs.b * float(np.sum(runs.signs, dtype=np.int64))
        return tot

    def static_regret_increment(self, action: Any, t: int) -> float:
        """``<mu_t, a - best_set()>`` (may be negative for ``oblivious-switching``; 0 exactly for the best
        fixed set)."""
        t = _check_round(t, self.horizon)
        runs = self._runs
        out = np.empty(1)
        _diff_kernel(
            self._a(action), runs.seg_mu[self._row1], runs.fixed_val[self._row1], runs.starts[self._row1], t, False, out
        )
        return float(out[0])

    def static_regret(self, actions: Any) -> float:
        """Static pseudo-regret ``sum_{t=1..k} <mu_t, a_t - best_set()>`` of the actions ``(k, d)`` of
        rounds ``1..k`` (``k <= n``), accumulated in round order (the sum of the increments)."""
        A = self._history(actions)
        runs = self._runs
        return float(
            _history_kernel(A, runs.seg_mu[self._row], runs.fixed_val[self._row], runs.starts[self._row], False)
        )

    def dynamic_regret(self, actions: Any) -> float:
        """``sum_{t=1..k} regret(a_t, t)`` of the actions ``(k, d)`` of rounds ``1..k``, in round order."""
        A = self._history(actions)
        runs = self._runs
        return float(_history_kernel(A, runs.seg_mu[self._row], runs.seg_opt[self._row], runs.starts[self._row], True))

    def _history(self, actions: Any) -> np.ndarray:
        A = np.asarray(actions)
        k = A.shape[0] if A.ndim == 2 else -1
        if not 0 <= k <= self.horizon:
            raise ValueError(f"actions must have shape (k, d={self.d}) with k <= horizon={self.horizon}, got {A.shape}")
        return _as_actions(A, (k, self.d), self.m, "actions")

    # ----------------------------------------------------------------- structure
    def switch_times(self) -> tuple[int, ...]:
        """The drawn switch rounds of ``oblivious-switching`` (starts of segments 1..S-1); ``()`` otherwise."""
        return tuple(int(x) for x in self._runs.starts[self._row, 1:])

    def change_points(self) -> tuple[int, ...]:
        """Rounds ``t >= 2`` with ``mu_t != mu_{t-1}``: the sign flips of the adversarial family, the switch
        rounds whose fresh set differs from the previous one for ``oblivious-switching``; ``()`` otherwise."""
        runs = self._runs
        if runs.signs is not None:
            return tuple(int(j) + 2 for j in np.flatnonzero(np.diff(runs.signs)))  # s(j+2) != s(j+1)
        st, mask = runs.starts[self._row], runs.opt_mask[self._row]
        return tuple(int(st[s]) for s in range(1, st.shape[0]) if not np.array_equal(mask[s], mask[s - 1]))

    # ----------------------------------------------------------------- realised losses
    def realised_cumulative_losses(self, chunk_rounds: int | None = None) -> np.ndarray:
        """``L_i = sum_{t=1..n} l_{t,i}`` of the realised loss matrix (every arm, chosen or not), ``int64
        (d,)``. The run's uniforms are regenerated from its noise stream in chunks of rounds
        (``chunk_rounds``, default about 2^20 numbers per chunk), never stored whole. Cached."""
        if self._realised is not None and chunk_rounds is None:
            return self._realised.copy()
        runs = self._runs
        d, n = self.d, self.horizon
        cr = max(1, (1 << 20) // d) if chunk_rounds is None else int(chunk_rounds)
        if cr < 1:
            raise ValueError(f"chunk_rounds must be >= 1, got {chunk_rounds!r}")
        rng = np.random.default_rng(runs.noise_seqs[self._row])  # the same generator as UniformStream's
        st, seg_mu = runs.starts[self._row], runs.seg_mu[self._row]
        tot = np.zeros(d, np.int64)
        for t0 in range(1, n + 1, cr):
            tt = np.arange(t0, min(t0 + cr, n + 1))
            U = rng.random(tt.size * d).reshape(tt.size, d)  # round t uses numbers (t-1)d .. td-1
            mu = seg_mu[np.searchsorted(st, tt, side="right") - 1]
            if runs.signs is not None:
                mu = mu + (runs.b * runs.signs[tt - 1].astype(np.float64))[:, None]
            tot += np.count_nonzero(U < mu, axis=0)
        if chunk_rounds is None:
            self._realised = tot
        return tot.copy()

    def realised_best_set(self) -> np.ndarray:
        """Best m-set in hindsight of the *realised* loss matrix, ``int8 (d,)``: the ``m`` arms with the
        smallest :meth:`realised_cumulative_losses` (ties -> lowest index)."""
        L = self.realised_cumulative_losses()
        out = np.zeros(self.d, np.int8)
        out[np.argsort(L, kind="stable")[: self.m]] = 1
        return out


class BatchedMSetSemiBanditOracle:
    """Oracle of :class:`MSetSemiBanditVectorEnv`: one row per run, vectorised over rows.

    ``mean_losses(t)`` ``(n, d)``; ``mean_reward(actions (n, d), t)``, ``optimal_value(t)``,
    ``regret(actions, t)`` and ``static_regret_increment(actions, t)`` return ``(n,)``; ``best_set()``,
    ``optimal_set(t)`` ``(n, d)``. Row ``i`` equals ``oracles[i]`` bit for bit.
    """

    def __init__(self, runs: _Runs, oracles: list[MSetSemiBanditOracle]):
        self._runs = runs
        self.oracles = oracles
        self.n = runs.R
        self.d = runs.d
        self.m = runs.m
        self.horizon = runs.n
        self.instance = runs.cfg.instance
        self.tracks_static_regret = runs.cfg.instance == _SWITCH
        self._shape = (runs.R, runs.d)

    def _A(self, actions: Any) -> np.ndarray:
        return _as_actions(actions, self._shape, self.m, "actions")

    def mean_losses(self, t: int) -> np.ndarray:
        return self._runs.mean_losses(_check_round(t, self.horizon))

    def mean_reward(self, actions: Any, t: int) -> np.ndarray:
        A = self._A(actions)
        out = np.empty(self.n)
        _masked_sums(self.mean_losses(t), A, out)
        return -out

    def optimal_set(self, t: int) -> np.ndarray:
        runs = self._runs
        return runs.opt_mask[runs.rows, runs.segments(_check_round(t, self.horizon))]

    def optimal_value(self, t: int) -> np.ndarray:
        out = np.empty(self.n)
        _masked_sums(self.mean_losses(t), self.optimal_set(t), out)
        return -out

    def regret(self, actions: Any, t: int) -> np.ndarray:
        if type(t) is not int or not 1 <= t <= self.horizon:
            t = _check_round(t, self.horizon)
        runs = self._runs
        out = np.empty(self.n)
        _diff_kernel(self._A(actions), runs.seg_mu, runs.seg_opt, runs.starts, t, True, out)
        return out

    def static_regret_increment(self, actions: Any, t: int) -> np.ndarray:
        if type(t) is not int or not 1 <= t <= self.horizon:
            t = _check_round(t, self.horizon)
        runs = self._runs
        out = np.empty(self.n)
        _diff_kernel(self._A(actions), runs.seg_mu, runs.fixed_val, runs.starts, t, False, out)
        return out

    def best_set(self) -> np.ndarray:
        return self._runs.best_fixed.copy()
