"""Instance families of ``MSetSemiBandit-v0``: the validated configuration, the per-run segment starts and
means drawn from the instance stream, and :class:`_Runs`, the engine (instances + noise streams) that both envs
step and the oracles read.

Part of :mod:`papergym.envs.bandits.semibandit` (the package docstring describes the families; tags: see
docs/conventions.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numba import njit

from papergym.envs.bandits.kernels import last_le
from papergym.envs.bandits.semibandit.space import _check_dm
from papergym.envs.spec import UniformStream, run_seeds
from papergym.validate import in_range, positive_int

__all__ = ["INSTANCES", "sca_signs"]

#: Instance names accepted by the ``instance`` kwarg.
INSTANCES: tuple[str, ...] = (
    "stochastic",
    "stochastically-constrained-adversarial",
    "oblivious-switching",
    "worst-case",
)

_SCA = "stochastically-constrained-adversarial"
_SWITCH = "oblivious-switching"
_WORST = "worst-case"
_SCA_BASE = 1.1  # phase boundaries at powers of 1.1 [code]
_SCA_PERIOD = 10  # floor(ln t / ln 1.1) mod 10 < 5 -> +b [code]
_SCA_PLUS = 5


@dataclass(frozen=True)
class _Config:
    """A validated configuration (everything but the seed)."""

    instance: str
    horizon: int
    d: int
    m: int
    gap: float
    n_switches: int
    epsilon: float | None  # as given
    eps: float  # resolved epsilon of worst-case (NaN for the other families)

    @property
    def resolved_kwargs(self) -> dict[str, Any]:
        return {"epsilon": self.eps} if self.instance == _WORST else {}


def _make_config(
    instance: Any = "stochastic",
    horizon: Any = 10_000,
    d: Any = 10,
    m: Any = 3,
    gap: Any = 0.2,
    n_switches: Any = 4,
    epsilon: Any = None,
) -> _Config:
    if not isinstance(instance, str) or instance not in INSTANCES:
        raise ValueError(f"unknown instance {instance!r}; valid instances: {', '.join(INSTANCES)}")
    d, m = _check_dm(d, m)
    n = positive_int(horizon, "horizon")
    gap = in_range(gap, "gap", 0, 1, high_closed=True)
    n_switches = positive_int(n_switches, "n_switches", 0)
    if instance == _SWITCH and n_switches > n - 1:
        raise ValueError(
            f"n_switches must be at most horizon - 1 = {n - 1} for instance {instance!r} (distinct switch "
            f"rounds in 2..horizon), got n_switches={n_switches}"
        )
    if epsilon is not None:  # (0, 0.5]: the means stay in [0, 1]
        epsilon = in_range(epsilon, "epsilon", 0, 0.5, high_closed=True)
    eps = math.nan
    if instance == _WORST:
        eps = epsilon if epsilon is not None else min(0.25 * math.sqrt(d / (n * m)), 0.5)
    return _Config(instance, n, d, m, gap, n_switches, epsilon, eps)


@lru_cache(maxsize=16)
def _signs_cached(n: int) -> np.ndarray:
    t = np.arange(1, n + 1, dtype=np.float64)
    k = np.floor(np.log(t) / np.log(_SCA_BASE)).astype(np.int64)
    s = np.where(k % _SCA_PERIOD < _SCA_PLUS, 1, -1).astype(np.int8)
    s.flags.writeable = False
    return s


def sca_signs(horizon: int) -> np.ndarray:
    """``s(t)`` for ``t = 1..horizon`` (read-only ``int8``): ``+1`` if ``floor(ln t / ln 1.1) mod 10 < 5``
    else ``-1`` [code, ``Adversarial.play``]. Phases grow geometrically (factor ``1.1^5``)."""
    return _signs_cached(positive_int(horizon, "horizon"))


# ------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _masked_sum(mu, a):
    """sum of mu[i] over a[i] != 0, in increasing i (the one summation used for every <mu, a>)."""
    tot = 0.0
    for i in range(mu.shape[0]):
        if a[i] != 0:
            tot += mu[i]
    return tot


@njit(cache=True)
def _masked_sums(MU, A, out):
    for k in range(MU.shape[0]):
        out[k] = _masked_sum(MU[k], A[k])


@njit(cache=True)
def _step_kernel(A, U, seg_mu, starts, t, shift, losses, rewards):
    """Round t of every run r: l_i = 1{U[r, i] < mu_{t,i}}, mu_t = seg_mu[r, segment(t)] + shift;
    losses[r] = l on the chosen arms and 0 elsewhere; rewards[r] = -sum of the chosen losses."""
    R, d = A.shape
    for r in range(R):
        s = last_le(starts[r], t)
        tot = 0.0
        for i in range(d):
            mu = seg_mu[r, s, i] + shift
            if A[r, i] != 0:
                li = 1.0 if U[r, i] < mu else 0.0
                losses[r, i] = li
                tot += li
            else:
                losses[r, i] = 0.0
        rewards[r] = -tot


# ------------------------------------------------------------------------------------- instances
def _draw_instance(cfg: _Config, seq: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segment starts ``(S,)``, segment means ``(S, d)`` and optimal-set masks ``(S, d)`` of one run."""
    rng = np.random.default_rng(seq)
    d, m, n, g = cfg.d, cfg.m, cfg.horizon, cfg.gap
    sets = [rng.permutation(d)[:m]]  # arm ids permuted per seed (instance stream)
    starts = [1]
    if cfg.instance == _SWITCH:
        lo, hi = 0.5 - g / 2.0, 0.5 + g / 2.0  # oblivious-switching
        k = cfg.n_switches
        if k:
            times = np.sort(rng.choice(n - 1, size=k, replace=False) + 2)  # distinct rounds in 2..n
            starts += [int(x) for x in times]
            sets += [rng.permutation(d)[:m] for _ in range(k)]  # a fresh optimal m-set per segment
    elif cfg.instance == _WORST:
        lo, hi = 0.5 - cfg.eps, 0.5  # worst-case
    else:
        lo, hi = 0.5 * (1.0 - g), 0.5 * (1.0 + g)  # stochastic [code Stochastic]; SCA adds s(t) b
    S = len(sets)
    seg_mu = np.full((S, d), hi)
    mask = np.zeros((S, d), np.int8)
    for s, idx in enumerate(sets):
        seg_mu[s, idx] = lo
        mask[s, idx] = 1
    return np.asarray(starts, np.int64), seg_mu, mask


class _Runs:
    """Instances + noise streams of a batch of runs (the one engine of both envs and the oracles)."""

    def __init__(self, cfg: _Config, seeds: Sequence[int]):
        self.cfg = cfg
        self.seeds = [int(s) for s in seeds]
        rs = [run_seeds(s) for s in self.seeds]
        parts = [_draw_instance(cfg, r.instance) for r in rs]
        R, d, m, n = len(parts), cfg.d, cfg.m, cfg.horizon
        self.R, self.d, self.m, self.n = R, d, m, n
        self.starts = np.stack([p[0] for p in parts])  # (R, S)
        self.seg_mu = np.stack([p[1] for p in parts])  # (R, S, d)
        self.opt_mask = np.stack([p[2] for p in parts])  # (R, S, d)
        S = self.starts.shape[1]
        self.lengths = np.diff(np.concatenate([self.starts, np.full((R, 1), n + 1, np.int64)], axis=1), axis=1)
        # min_{|a|=m} <mu_seg, a>: the sum over the (unique for gap, epsilon > 0) optimal mask
        self.seg_opt = np.empty((R, S))
        _masked_sums(self.seg_mu.reshape(R * S, d), self.opt_mask.reshape(R * S, d), self.seg_opt.reshape(R * S))
        # best fixed set: the m arms optimal in the most rounds (= m smallest sum_t mu_t; module docstring)
        counts = np.einsum("rs,rsd->rd", self.lengths, self.opt_mask.astype(np.int64))
        order = np.argsort(-counts, axis=1, kind="stable")[:, :m]
        self.opt_rounds = counts
        self.best_fixed = np.zeros((R, d), np.int8)
        np.put_along_axis(self.best_fixed, order, 1, axis=1)
        self.fixed_val = np.empty((R, S))
        _masked_sums(
            self.seg_mu.reshape(R * S, d), np.repeat(self.best_fixed, S, axis=0), self.fixed_val.reshape(R * S)
        )
        self.b = 0.5 * (1.0 - cfg.gap) if cfg.instance == _SCA else 0.0
        self.signs = _signs_cached(n) if cfg.instance == _SCA else None
        self.noise_seqs = [r.noise for r in rs]
        self.noise = UniformStream(self.noise_seqs, chunk=max(4096, 32 * d))
        self.rows = np.arange(R)
        self.t = 0

    def shift(self, t: int) -> float:
        return self.b * float(self.signs[t - 1]) if self.signs is not None else 0.0

    def segments(self, t: int) -> np.ndarray:
        """Segment index of round t for every run, ``(R,)``."""
        if self.starts.shape[1] == 1:
            return np.zeros(self.R, np.int64)
        return (self.starts <= t).sum(axis=1) - 1

    def mean_losses(self, t: int) -> np.ndarray:
        """``mu_t`` of every run, ``(R, d)`` (same additions as the step kernel)."""
        return self.seg_mu[self.rows, self.segments(t)] + self.shift(t)

    def step(self, A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Losses (chosen arms) and rewards of the validated int8 actions A (R, d) at round t + 1."""
        t = self.t + 1
        U = self.noise.take(self.d)  # d uniforms per run, drawn before and independently of the action
        losses = np.empty((self.R, self.d))
        rewards = np.empty(self.R)
        _step_kernel(A, U, self.seg_mu, self.starts, t, self.shift(t), losses, rewards)
        self.t = t
        return losses, rewards
