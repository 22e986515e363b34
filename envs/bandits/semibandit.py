"""m-set semi-bandit (``MSetSemiBandit-v0``): the action space and the public problem.

Shared part (imported by every semi-bandit agent)
-------------------------------------------------
* :class:`MSet` -- the action space: a :class:`gymnasium.spaces.MultiBinary` subclass of the 0/1
  vectors of length ``d`` with exactly ``m`` ones. ``sample()`` draws a uniform ``m``-subset (so
  ``check_env`` and random rollouts only play legal actions); ``contains()`` checks the shape, the
  0/1 values and ``sum == m``.
* :func:`make_problem` -- the public :class:`~papergym.envs.spec.ProblemSpec` (``d``, ``m``, the loss
  range ``[0, 1]``, the horizon ``n``), the same for every seed and instance family.

The environment (``MSetSemiBandit-v0``)
---------------------------------------
Environment of J. Zhan et al., *Follow-the-Perturbed-Leader Approaches Best-of-Both-Worlds for the m-Set
Semi-Bandit Problems* (arXiv 2504.07307, NeurIPS 2025); see ``docs/papers/mset-semibandit.md`` (tags: see
docs/conventions.md).

``MSetSemiBanditEnv``            the Gymnasium env (one run; see its docstring for spaces and kwargs).
``MSetSemiBanditVectorEnv``      native vector env (``num_envs`` seeds stepped together in numpy / numba).
``MSetSemiBanditOracle``         per-run oracle; ``BatchedMSetSemiBanditOracle`` the vector env's.
``BatchedMSet``                  the vector env's action space (``(n, d)``, every row an m-set);
                                 ``gymnasium.vector.utils.batch_space(MSet(d, m), n)`` returns it.
``INSTANCES``, ``COMPARE_DEFAULTS``, :func:`sca_signs` (the sign sequence of the adversarial family).

Instance families (``g`` = ``gap``; ``lo`` the mean loss of the optimal arms, ``hi`` of the others):

* ``stochastic`` [code ``Stochastic``]: ``lo = 0.5 (1 - g)``, ``hi = 0.5 (1 + g)``, constant in ``t``.
* ``stochastically-constrained-adversarial`` [code ``Adversarial``]: the stochastic means plus
  ``s(t) b`` for every arm, ``b = 0.5 (1 - g)``, ``s(t) = +1`` if ``floor(ln t / ln 1.1) mod 10 < 5``
  else ``-1`` (``t >= 1``; evaluated as ``floor(np.log(t) / np.log(1.1))``, :func:`sca_signs`). Means
  stay in ``[0, 1]`` (``{1 - g, 0}`` optimal, ``{1, g}`` others) and every gap stays ``g``.
* ``oblivious-switching`` [design]: ``n_switches`` switch times drawn *without replacement* from
  ``{2, .., n}`` and sorted (rather than i.i.d. ``U{1..n}``; distinct and ``>= 2`` so that every one of the
  ``n_switches + 1`` segments is non-empty -- requires ``n_switches <= n - 1``); segment ``k`` has an
  optimal m-set at ``lo = 0.5 - g/2``, the rest at ``hi = 0.5 + g/2``. Segment 0 uses the permuted arm
  ids below, each later segment a fresh uniform m-set (which may coincide with the previous one: the
  switch then changes nothing; :meth:`MSetSemiBanditOracle.change_points` lists the effective changes).
* ``worst-case`` [design]: ``lo = 0.5 - epsilon`` on a hidden m-set, ``hi = 0.5``;
  ``epsilon=None`` -> ``min(1/4 sqrt(d / (n m)), 1/2)`` (capped so that every mean stays in ``[0, 1]``;
  an explicit ``epsilon`` must lie in ``(0, 1/2]``).

Arm ids are permuted per seed: the optimal set of the stationary families (segment 0 of the switching
family) is the first ``m`` entries of ``rng.permutation(d)``, ``rng`` built from
``run_seeds(seed).instance``; the switching family then draws its switch times, then one
``rng.permutation(d)[:m]`` per later segment, from the same generator. Losses are Bernoulli,
``l_{t,i} = 1{U_{t,i} < mu_{t,i}}``, with ``d`` uniforms per round (``UniformStream.take(d)``: arm ``i``
of round ``t`` uses the ``((t - 1) d + i)``-th number of ``run_seeds(seed).noise``), drawn before the
action and independently of it: every agent on a seed faces the same loss matrix [design].

Representation (never an ``(n, d)`` array per run): each run stores its segment starts ``(S,)``, the
segment means ``(S, d)`` (``S = 1`` except for switching) and, for the adversarial family, the shared
read-only sign array ``int8 (n,)`` with ``b``; ``mu_t = seg_mu[segment(t)] + b s(t)``.

Oracle [design]: dynamic per-round regret ``<mu_t, a> - min_{|a'| = m} <mu_t, a'>`` and the
static increment ``<mu_t, a - a_fix>`` are computed from the *segment* means (the common shift
``b s(t)`` cancels exactly in both since ``|a| = |a_fix| = m``), as the difference of two sums taken in
the same arm order, so they are exactly 0 for the optimal / fixed set. ``best_set()`` (the m smallest
entries of ``sum_t mu_t``) is found without summing floats: in every family the optimal arms of a
segment share the mean ``lo`` and the others ``hi > lo``, and the shift is common, so the best fixed set
is the ``m`` arms that are optimal in the most rounds (ties -> lowest index), ``O(d S)``.
``realised_best_set()`` regenerates the run's uniforms in chunks (``O(d)`` memory per round of a chunk).

Actions: a ``(d,)`` array (``(n, d)`` in the vector env) of bool, integer or float dtype with entries in
``{0, 1}`` and exactly ``m`` ones; lists are accepted. Broken rules (``shape``, ``dtype``, ``finite``,
``values``, ``size``) raise :class:`~papergym.envs.InvalidActionError` before anything changes.
Observation: NaN at the unobserved arms would not lie inside ``Box(0, 1)``, so the env reports
``0`` at the arms not chosen plus the ``observed`` mask. ``reset(seed=None)`` draws the
run seed from ``self.np_random`` (Gymnasium's convention), as the other bandit envs do. Vector env
``info``: ``{"t": (n,) ints, "_t": (n,) True}``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from copy import deepcopy
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numba import njit
from papergym.envs.spec import (
    draw_run_seeds as _draw_run_seeds,
    vector_run_seeds,
    InvalidActionError,
    ProblemSpec,
    UniformStream,
    _check_seed,
    run_seeds,
)

__all__ = [
    "ENV_ID",
    "MSet",
    "make_problem",
    "observation_space",
    # the environment
    "INSTANCES",
    "COMPARE_DEFAULTS",
    "sca_signs",
    "BatchedMSet",
    "MSetSemiBanditEnv",
    "MSetSemiBanditVectorEnv",
    "MSetSemiBanditOracle",
    "BatchedMSetSemiBanditOracle",
]

ENV_ID = "MSetSemiBandit-v0"
#: what ``papergym compare`` calls the regret it reports
REGRET_NAME = "cumulative pseudo-regret (from means)"


def _check_dm(d: Any, m: Any) -> tuple[int, int]:
    for name, v in (("d", d), ("m", m)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if m > d:
        raise ValueError(f"m must be at most d (choose m of d arms), got d={d}, m={m}")
    return int(d), int(m)


class MSet(spaces.MultiBinary):
    """The ``m``-subsets of ``d`` arms as 0/1 vectors of length ``d`` with exactly ``m`` ones (``int8``).

    ``sample()`` is uniform over the ``C(d, m)`` subsets (a random permutation's first ``m`` arms);
    ``sample(mask)`` is not supported. ``contains(x)``: shape ``(d,)``, entries in ``{0, 1}``, ``m`` ones.
    """

    def __init__(self, d: int, m: int, seed: int | np.random.Generator | None = None):
        d, m = _check_dm(d, m)
        self.m = m
        super().__init__(d, seed=seed)

    @property
    def d(self) -> int:
        return int(self.n)

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if mask is not None or probability is not None:
            raise NotImplementedError("MSet.sample takes no mask or probability")
        out = np.zeros(self.d, dtype=self.dtype)
        out[self.np_random.choice(self.d, size=self.m, replace=False)] = 1
        return out

    def contains(self, x: Any) -> bool:
        if isinstance(x, Sequence):
            x = np.array(x)
        if not isinstance(x, np.ndarray) or x.shape != (self.d,):
            return False
        if x.dtype.kind not in "biuf":
            return False
        if not np.all((x == 0) | (x == 1)):
            return False
        return int(np.count_nonzero(x)) == self.m

    def __repr__(self) -> str:
        return f"MSet(d={self.d}, m={self.m})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, MSet) and self.d == other.d and self.m == other.m

    def __hash__(self) -> int:
        return hash(("MSet", self.d, self.m))


def observation_space(d: int) -> spaces.Dict:
    """``Dict(losses=Box(0, 1, (d,)), observed=MultiBinary(d))``: the chosen arms' losses (0 at the arms
    not chosen, which are not observed) and the mask of the observed arms."""
    return spaces.Dict({"losses": spaces.Box(0.0, 1.0, (d,), np.float64), "observed": spaces.MultiBinary(d)})


def make_problem(d: int = 10, m: int = 3, horizon: int = 10_000) -> ProblemSpec:
    """The public problem: ``ProblemSpec(ENV_ID, MSet(d, m), observation_space(d), horizon,
    {"d": d, "m": m, "loss_range": (0.0, 1.0)})``."""
    d, m = _check_dm(d, m)
    if isinstance(horizon, (bool, np.bool_)) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
    return ProblemSpec(ENV_ID, MSet(d, m), observation_space(d), int(horizon),
                       {"d": d, "m": m, "loss_range": (0.0, 1.0)})


# =====================================================================================================
# The environment: instance families, oracle, single and vector env
# =====================================================================================================
#: Instance names accepted by the ``instance`` kwarg.
INSTANCES: tuple[str, ...] = (
    "stochastic",
    "stochastically-constrained-adversarial",
    "oblivious-switching",
    "worst-case",
)

#: Defaults of ``papergym compare MSetSemiBandit-v0`` (20 seeds, n = 10^4) [design].
COMPARE_DEFAULTS: dict[str, Any] = {"seeds": 20, "horizon": 10_000}

_SCA = "stochastically-constrained-adversarial"
_SWITCH = "oblivious-switching"
_WORST = "worst-case"
_SCA_BASE = 1.1  # phase boundaries at powers of 1.1 [code]
_SCA_PERIOD = 10  # floor(ln t / ln 1.1) mod 10 < 5 -> +b [code]
_SCA_PLUS = 5


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


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


def _make_config(instance: Any = "stochastic", horizon: Any = 10_000, d: Any = 10, m: Any = 3, gap: Any = 0.2,
                 n_switches: Any = 4, epsilon: Any = None) -> _Config:
    if not isinstance(instance, str) or instance not in INSTANCES:
        raise ValueError(f"unknown instance {instance!r}; valid instances: {', '.join(INSTANCES)}")
    d, m = _check_dm(d, m)
    if not _is_int(horizon) or horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
    n = int(horizon)
    if not _is_real(gap) or not (math.isfinite(float(gap)) and 0.0 < float(gap) <= 1.0):
        raise ValueError(f"gap must be a number in (0, 1], got {gap!r}")
    gap = float(gap)
    if not _is_int(n_switches) or n_switches < 0:
        raise ValueError(f"n_switches must be an integer >= 0, got {n_switches!r}")
    n_switches = int(n_switches)
    if instance == _SWITCH and n_switches > n - 1:
        raise ValueError(
            f"n_switches must be at most horizon - 1 = {n - 1} for instance {instance!r} (distinct switch "
            f"rounds in 2..horizon), got n_switches={n_switches}"
        )
    if epsilon is not None:
        if not _is_real(epsilon) or not (math.isfinite(float(epsilon)) and 0.0 < float(epsilon) <= 0.5):
            raise ValueError(f"epsilon must be None or a number in (0, 0.5] (means stay in [0, 1]), got {epsilon!r}")
        epsilon = float(epsilon)
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
    if not _is_int(horizon) or horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
    return _signs_cached(int(horizon))


# ------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _seg1(starts, t):
    """Largest p with starts[p] <= t (starts[0] = 1 <= t)."""
    lo = 0
    hi = starts.shape[0] - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= t:
            lo = mid
        else:
            hi = mid - 1
    return lo


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
def _check_values(A, m):
    """(0, 0, 0) if every entry of A (R, d) is 0 or 1 and every row has m nonzeros; else (2, row, col) for
    the first entry outside {0, 1}, or (3, row, count) for the first row with count != m ones."""
    R, d = A.shape
    for r in range(R):
        for i in range(d):
            x = A[r, i]
            if not (x == 0 or x == 1):
                return 2, r, i
    for r in range(R):
        c = 0
        for i in range(d):
            if A[r, i] != 0:
                c += 1
        if c != m:
            return 3, r, c
    return 0, 0, 0


@njit(cache=True)
def _step_kernel(A, U, seg_mu, starts, t, shift, losses, rewards):
    """Round t of every run r: l_i = 1{U[r, i] < mu_{t,i}}, mu_t = seg_mu[r, segment(t)] + shift;
    losses[r] = l on the chosen arms and 0 elsewhere; rewards[r] = -sum of the chosen losses."""
    R, d = A.shape
    for r in range(R):
        s = _seg1(starts[r], t)
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


@njit(cache=True)
def _diff_kernel(A, seg_mu, ref, starts, t, clip, out):
    """out[r] = <seg_mu[r, s], A[r]> - ref[r, s], s = segment(t) (clipped at 0 if clip)."""
    for r in range(A.shape[0]):
        s = _seg1(starts[r], t)
        g = _masked_sum(seg_mu[r, s], A[r]) - ref[r, s]
        out[r] = g if (g > 0.0 or not clip) else 0.0


@njit(cache=True)
def _history_kernel(A, seg_mu, ref, starts, clip):
    """sum_{t=1..k} (<seg_mu[s_t], A[t-1]> - ref[s_t]) of one run, accumulated in round order."""
    tot = 0.0
    for t in range(1, A.shape[0] + 1):
        s = _seg1(starts, t)
        g = _masked_sum(seg_mu[s], A[t - 1]) - ref[s]
        tot += g if (g > 0.0 or not clip) else 0.0
    return tot


# ------------------------------------------------------------------------------------- actions
def _bad(rule: str, msg: str) -> InvalidActionError:
    return InvalidActionError(f"{ENV_ID}: rule {rule!r} broken: {msg}")


def _as_actions(action: Any, shape: tuple[int, ...], m: int, what: str = "action") -> np.ndarray:
    """The action(s) as a C-contiguous int8 array of ``shape`` (a view when already one), or
    :class:`InvalidActionError` naming the rule broken (shape, dtype, finite, values, size)."""
    if type(action) is np.ndarray:
        a = action
    else:
        try:
            a = np.asarray(action)
        except (ValueError, TypeError) as e:
            raise _bad("shape", f"{what} must be an array of shape {shape}; {e}") from None
    kind = a.dtype.kind
    if kind not in "biuf":
        raise _bad("dtype", f"{what} must hold 0/1 numbers (bool, integer or float dtype), got dtype {a.dtype}")
    if a.shape != shape:
        raise _bad("shape", f"{what} must have shape {shape} (0/1 vector{'s' if len(shape) > 1 else ''} of "
                            f"length d={shape[-1]}), got {a.shape}")
    if kind == "f" and not np.isfinite(a).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise _bad("finite", f"{what} entries must be finite 0/1 values, got {a[bad]!r} at index {bad}")
    if kind == "b":
        a = a.view(np.int8)
    a2 = a.reshape(-1, shape[-1])
    status, r, j = _check_values(a2, m)
    if status == 2:
        idx = (r, j) if len(shape) > 1 else (j,)
        raise _bad("values", f"{what} entries must be 0 or 1, got {a2[r, j]!r} at index {idx}")
    if status == 3:
        where = f" in row {r}" if len(shape) > 1 else ""
        raise _bad("size", f"an action must choose exactly m={m} arms (m ones), got {j} ones{where}")
    if a.dtype != np.int8 or not a.flags.c_contiguous:
        a = np.ascontiguousarray(a, dtype=np.int8)
    return a


def _check_round(t: Any, T: int) -> int:
    if type(t) is int and 1 <= t <= T:
        return t
    if not _is_int(t) or not 1 <= t <= T:
        raise ValueError(f"t must be an integer round in 1..{T}, got {t!r}")
    return int(t)


class BatchedMSet(spaces.MultiBinary):
    """``num`` stacked :class:`MSet` actions: ``(num, d)`` 0/1 arrays (``int8``) with exactly ``m`` ones per
    row. ``sample()`` draws every row uniformly; ``contains(x)`` checks shape, values and row sums.
    The action space of :class:`MSetSemiBanditVectorEnv`; ``batch_space(MSet(d, m), num)`` returns it."""

    def __init__(self, num: int, d: int, m: int, seed: int | np.random.Generator | None = None):
        d, m = _check_dm(d, m)
        if not _is_int(num) or num < 1:
            raise ValueError(f"num must be an integer >= 1, got {num!r}")
        self.num = int(num)
        self.m = m
        super().__init__((self.num, d), seed=seed)

    @property
    def d(self) -> int:
        return int(self.shape[1])

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if mask is not None or probability is not None:
            raise NotImplementedError("BatchedMSet.sample takes no mask or probability")
        out = np.zeros(self.shape, dtype=self.dtype)
        for r in range(self.num):
            out[r, self.np_random.choice(self.d, size=self.m, replace=False)] = 1
        return out

    def contains(self, x: Any) -> bool:
        if isinstance(x, Sequence):
            x = np.array(x)
        if not isinstance(x, np.ndarray) or x.shape != self.shape or x.dtype.kind not in "biuf":
            return False
        if not np.all((x == 0) | (x == 1)):
            return False
        return bool(np.all(np.count_nonzero(x, axis=1) == self.m))

    def __repr__(self) -> str:
        return f"BatchedMSet(num={self.num}, d={self.d}, m={self.m})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, BatchedMSet) and (self.num, self.d, self.m) == (other.num, other.d, other.m)

    def __hash__(self) -> int:
        return hash(("BatchedMSet", self.num, self.d, self.m))


@batch_space.register(MSet)
def _batch_space_mset(space: MSet, n: int = 1) -> BatchedMSet:
    return BatchedMSet(n, space.d, space.m, seed=deepcopy(space.np_random))


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
        _masked_sums(self.seg_mu.reshape(R * S, d), np.repeat(self.best_fixed, S, axis=0), self.fixed_val.reshape(R * S))
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




# ------------------------------------------------------------------------------------- oracles
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
    def score_run(instance: dict[str, Any], final_regret: float, diagnostics: dict[str, Any],
                  env_kwargs: dict[str, Any]) -> dict[str, float]:
        """Run scores (``docs/papers/mset-semibandit.md``) from the run's pseudo-regret ``R_n`` (static where it differs):
        ``R_n / ln n`` (flat in ``n`` for a logarithmic, stochastic-regime regret) and
        ``R_n / sqrt(n m d)`` (flat for the minimax adversarial rate)."""
        n, m, d = int(env_kwargs["horizon"]), int(env_kwargs["m"]), int(env_kwargs["d"])
        R = float(final_regret)
        return {"regret_per_ln_n": R / math.log(n) if n > 1 else math.nan,
                "regret_per_sqrt_nmd": R / math.sqrt(n * m * d)}

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
        return (f"MSetSemiBanditOracle(instance={self.instance!r}, horizon={self.horizon}, d={self.d}, "
                f"m={self.m}, seed={self.seed})")

    def _a(self, action: Any) -> np.ndarray:
        return _as_actions(action, (self.d,), self.m).reshape(1, self.d)

    def _seg(self, t: int) -> int:
        return int(_seg1(self._runs.starts[self._row], t))

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
        _diff_kernel(self._a(action), runs.seg_mu[self._row1], runs.seg_opt[self._row1], runs.starts[self._row1],
                     t, True, out)
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
        _diff_kernel(self._a(action), runs.seg_mu[self._row1], runs.fixed_val[self._row1], runs.starts[self._row1],
                     t, False, out)
        return float(out[0])

    def static_regret(self, actions: Any) -> float:
        """Static pseudo-regret ``sum_{t=1..k} <mu_t, a_t - best_set()>`` of the actions ``(k, d)`` of
        rounds ``1..k`` (``k <= n``), accumulated in round order (the sum of the increments)."""
        A = self._history(actions)
        runs = self._runs
        return float(_history_kernel(A, runs.seg_mu[self._row], runs.fixed_val[self._row], runs.starts[self._row],
                                     False))

    def dynamic_regret(self, actions: Any) -> float:
        """``sum_{t=1..k} regret(a_t, t)`` of the actions ``(k, d)`` of rounds ``1..k``, in round order."""
        A = self._history(actions)
        runs = self._runs
        return float(_history_kernel(A, runs.seg_mu[self._row], runs.seg_opt[self._row], runs.starts[self._row],
                                     True))

    def _history(self, actions: Any) -> np.ndarray:
        A = np.asarray(actions)
        k = A.shape[0] if A.ndim == 2 else -1
        if not 0 <= k <= self.horizon:
            raise ValueError(f"actions must have shape (k, d={self.d}) with k <= horizon={self.horizon}, "
                             f"got {A.shape}")
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


# ------------------------------------------------------------------------------------- envs
def _zero_obs(shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    return {"losses": np.zeros(shape), "observed": np.zeros(shape, np.int8)}


class MSetSemiBanditEnv(gym.Env):
    """m-set semi-bandit with Bernoulli losses (``MSetSemiBandit-v0``).

    ## Description

    ``d`` arms; at round ``t`` the agent picks a set ``A_t`` of exactly ``m`` arms, pays the sum of their
    losses and observes the loss of every chosen arm (semi-bandit feedback) [paper]. An oblivious
    adversary fixes mean losses ``mu_t in [0, 1]^d``; the realised losses are
    ``l_{t,i} = 1{U_{t,i} < mu_{t,i}}``. Instance families (``instance``, ``g = gap``):

    * ``stochastic`` [code]: ``0.5 (1 - g)`` on a hidden optimal m-set, ``0.5 (1 + g)`` elsewhere.
    * ``stochastically-constrained-adversarial`` [code]: the stochastic means plus ``s(t) 0.5 (1 - g)`` on
      every arm, ``s(t) = +1`` if ``floor(ln t / ln 1.1) mod 10 < 5`` else ``-1``: the gaps stay ``g``
      while all means jump between ``{1 - g, 1}`` and ``{0, g}`` in geometrically growing phases
      (designed to break stochastic algorithms).
    * ``oblivious-switching`` [design]: ``n_switches`` distinct switch rounds ``~ U{2..n}``; each segment
      has a fresh random optimal m-set at ``0.5 - g/2``, the others at ``0.5 + g/2``. Scored by the static
      regret against the best fixed set.
    * ``worst-case`` [design]: all means ``0.5`` except a hidden m-set at ``0.5 - epsilon``,
      ``epsilon = 1/4 sqrt(d / (n m))`` by default (lower-bound style; probes the ``sqrt(n m d)`` scaling).

    ## Action Space

    :class:`MSet` ``(d, m)``: ``int8`` 0/1 vectors of length ``d`` with exactly ``m`` ones (``sample()`` is a
    uniform m-subset). Bool, integer or float arrays (or lists) with 0/1 entries are accepted. A wrong
    shape, a non-numeric dtype, NaN/inf, an entry outside ``{0, 1}`` or a set of the wrong size raises
    :class:`~papergym.envs.InvalidActionError` (rules ``shape``, ``dtype``, ``finite``, ``values``, ``size``)
    and leaves the env unchanged (:meth:`validate_action`).

    ## Observation Space

    ``Dict(losses=Box(0, 1, (d,), float64), observed=MultiBinary(d))``: ``losses[i] = l_{t,i}`` (0 or 1) at
    the chosen arms and ``0`` at the others; ``observed`` (``int8``) is the action, the mask of the arms
    whose loss was seen. Zeros after ``reset``. NaN at the unobserved arms would not lie inside
    ``Box(0, 1)`` (``check_env`` would fail), so 0 plus the mask is used.

    ## Rewards

    ``-sum_{i in A_t} l_{t,i}`` (an integer in ``[-m, 0]``). ``U_{t,i}`` are ``d`` uniforms per round from the
    run's noise stream, drawn before and independently of the action (common random numbers across agents).

    ## Starting State

    ``reset(seed=s)`` builds the instance from ``run_seeds(s).instance`` (arm permutation; switch rounds
    and fresh optimal sets) and the noise from ``run_seeds(s).noise``: same seed, same means and losses,
    bit for bit. ``reset()`` without a seed draws the run seed from ``self.np_random``.

    ## Episode End

    Never terminated; truncated at ``t = n`` (``horizon``). Stepping after that (or before ``reset``)
    raises :class:`gymnasium.error.ResetNeeded`. ``info = {"t": t}`` (rounds played); nothing privileged.

    ## Arguments

    * ``instance`` (str, default ``"stochastic"``): one of :data:`INSTANCES`.
    * ``horizon`` (int, default 10,000): ``n`` [design].
    * ``d`` (int, default 10), ``m`` (int, default 3, ``1 <= m <= d``) [design; repository CLI: ``d = 4``].
    * ``gap`` (float in ``(0, 1]``, default 0.2) [design; repository CLI: 0.25]: ``g`` of the stochastic,
      adversarial and switching families (ignored by ``worst-case``).
    * ``n_switches`` (int >= 0, default 4) [design]: switch rounds of ``oblivious-switching`` (at most
      ``n - 1``; ignored by the other families).
    * ``epsilon`` (float in ``(0, 0.5]`` or None, default None) [design]: the ``worst-case`` gap; None ->
      ``min(1/4 sqrt(d / (n m)), 1/2)``; ignored by the other families. ``resolved_kwargs`` reports the
      value used.

    ## Oracle and regret

    ``env.unwrapped.oracle`` (:class:`MSetSemiBanditOracle`, valid after ``reset``): ``mean_losses(t)``,
    ``mean_reward(a, t) = -<mu_t, a>``, ``optimal_value(t)``, ``optimal_set(t)``,
    ``regret(a, t) = <mu_t, a> - min_{|a'|=m} <mu_t, a'> >= 0`` (per-round dynamic), ``best_set()`` (best
    fixed m-set in hindsight of the means: m smallest entries of ``sum_t mu_t``),
    ``static_regret_increment(a, t) = <mu_t, a - best_set()>``, ``static_regret(actions)``,
    ``dynamic_regret(actions)``, ``gaps(t)``, ``min_gap(t)``, ``switch_times()``, ``change_points()``,
    ``realised_cumulative_losses()`` / ``realised_best_set()`` (best set of the realised loss matrix) and
    ``tracks_static_regret`` (True for ``oblivious-switching``, the one family where the dynamic and
    the static regret differ; the paper's regret is the static one). Regret is computed from means, never
    from realised losses (:class:`~papergym.envs.wrappers.RegretRecorder`). ``env.unwrapped.problem`` is the
    public :class:`~papergym.envs.spec.ProblemSpec` (``d``, ``m``, loss range ``[0, 1]``, horizon) --
    never the family.

    ## Paper

    J. Zhan et al., *Follow-the-Perturbed-Leader Approaches Best-of-Both-Worlds for the m-Set Semi-Bandit
    Problems*, arXiv 2504.07307, NeurIPS 2025 (no code). Families from the reference code of Zimmert, Luo,
    Wei (ICML 2019), ``diku-dk/CombSemiBandits`` (``environment.py``), with losses mapped from ``±1`` to
    ``{0, 1}``. FTPL with Fréchet perturbations: ``O(sqrt(n m) (sqrt(d log d) + m^{5/6}))`` adversarial
    regret and logarithmic regret in the stochastic regime.

    ## Version History

    * v0: initial version.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def __init__(
        self,
        instance: str = "stochastic",
        horizon: int = 10_000,
        d: int = 10,
        m: int = 3,
        gap: float = 0.2,
        n_switches: int = 4,
        epsilon: float | None = None,
        render_mode: str | None = None,
    ):
        if render_mode is not None:
            raise ValueError(f"render_mode must be None ({ENV_ID} has no render modes), got {render_mode!r}")
        self.cfg = _make_config(instance, horizon, d, m, gap, n_switches, epsilon)
        self.problem = make_problem(self.cfg.d, self.cfg.m, self.cfg.horizon)
        self.action_space = self.problem.action_space
        self.observation_space = self.problem.observation_space
        self.horizon = self.cfg.horizon
        self.d = self.cfg.d
        self.m = self.cfg.m
        self._shape = (self.d,)
        self._runs: _Runs | None = None
        self._oracle: MSetSemiBanditOracle | None = None
        self.run_seed: int | None = None

    @property
    def resolved_kwargs(self) -> dict[str, Any]:
        """Values used for None defaults: ``{"epsilon": value}`` for ``worst-case``, else ``{}``."""
        return self.cfg.resolved_kwargs

    @property
    def t(self) -> int:
        """Rounds played since the last ``reset`` (0 before round 1)."""
        return 0 if self._runs is None else self._runs.t

    @property
    def oracle(self) -> MSetSemiBanditOracle:
        if self._oracle is None:
            raise ResetNeeded(f"{ENV_ID}: the oracle is built by reset(); call env.reset() first")
        return self._oracle

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if options:
            raise ValueError(f"{ENV_ID}: reset takes no options, got {sorted(options)}")
        if seed is not None:
            seed = _check_seed(seed)
        super().reset(seed=seed)
        run_seed = seed if seed is not None else _draw_run_seeds(self.np_random, 1)[0]
        self._runs = _Runs(self.cfg, [run_seed])
        self._oracle = MSetSemiBanditOracle(self._runs, 0)
        self.run_seed = run_seed
        return _zero_obs(self._shape), {"t": 0}

    def validate_action(self, action: Any) -> np.ndarray:
        """The action as an ``int8 (d,)`` 0/1 array, or raise :class:`InvalidActionError` naming the rule
        broken (shape, dtype, finite, values, size). Does not change the env."""
        return _as_actions(action, self._shape, self.m)

    def step(self, action: Any):
        runs = self._runs
        if runs is None:
            raise ResetNeeded(f"{ENV_ID}: call reset() before step()")
        if runs.t >= self.horizon:
            raise ResetNeeded(f"{ENV_ID}: the episode is over (t = n = {self.horizon}); call reset()")
        a = _as_actions(action, self._shape, self.m)
        losses, rewards = runs.step(a.reshape(1, self.d))
        t = runs.t
        obs = {"losses": losses[0], "observed": a.copy()}
        return obs, float(rewards[0]), False, t >= self.horizon, {"t": t}

    def render(self) -> None:
        return None


class MSetSemiBanditVectorEnv(VectorEnv):
    """``num_envs`` independent runs of :class:`MSetSemiBanditEnv` stepped together (numpy + numba).

    ``reset(seed=[s_0, .., s_{n-1}])`` (or an int ``s`` -> ``s, s+1, ..``; ``None`` -> seeds drawn from
    ``self.np_random``); ``step(actions (n, d))`` -> observations ``{"losses": (n, d), "observed": (n, d)}``,
    rewards ``(n,)``, terminations ``(n,)`` (always False), truncations ``(n,)`` (True at ``t = horizon``),
    ``info = {"t": (n,) ints, "_t": mask}``. Row ``i`` is bit-identical to the single env reset with seed
    ``s_i``. ``.oracle`` is a :class:`BatchedMSetSemiBanditOracle`, ``.oracles`` the per-run oracles,
    ``.problem`` the ``ProblemSpec`` of one run, ``.t`` the rounds played. Action space
    :class:`BatchedMSet`; observation space ``batch_space`` of the single one. No autoreset
    (``AutoresetMode.DISABLED``): all runs share the horizon. Kwargs as :class:`MSetSemiBanditEnv`.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def __init__(
        self,
        num_envs: int = 1,
        instance: str = "stochastic",
        horizon: int = 10_000,
        d: int = 10,
        m: int = 3,
        gap: float = 0.2,
        n_switches: int = 4,
        epsilon: float | None = None,
        render_mode: str | None = None,
    ):
        if render_mode is not None:
            raise ValueError(f"render_mode must be None ({ENV_ID} has no render modes), got {render_mode!r}")
        if not _is_int(num_envs) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.cfg = _make_config(instance, horizon, d, m, gap, n_switches, epsilon)
        self.problem = make_problem(self.cfg.d, self.cfg.m, self.cfg.horizon)
        self.horizon = self.cfg.horizon
        self.d = self.cfg.d
        self.m = self.cfg.m
        self.single_action_space = self.problem.action_space
        self.single_observation_space = self.problem.observation_space
        n = self.num_envs
        self.action_space = batch_space(self.single_action_space, n)
        self.observation_space = batch_space(self.single_observation_space, n)
        self._shape = (n, self.d)
        self._runs: _Runs | None = None
        self._oracle: BatchedMSetSemiBanditOracle | None = None
        self.seeds: list[int] | None = None
        self._mask = np.ones(n, dtype=bool)

    @property
    def resolved_kwargs(self) -> dict[str, Any]:
        return self.cfg.resolved_kwargs

    @property
    def t(self) -> int:
        return 0 if self._runs is None else self._runs.t

    @property
    def oracle(self) -> BatchedMSetSemiBanditOracle:
        if self._oracle is None:
            raise ResetNeeded(f"{ENV_ID}: the oracle is built by reset(); call reset() first")
        return self._oracle

    @property
    def oracles(self) -> list[MSetSemiBanditOracle]:
        return self.oracle.oracles

    def _seed_list(self, seed: Any) -> list[int]:
        return vector_run_seeds(self, seed)

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        if options:
            raise ValueError(f"{ENV_ID}: reset takes no options, got {sorted(options)}")
        seeds = self._seed_list(seed)
        runs = _Runs(self.cfg, seeds)
        self._runs = runs
        self._oracle = BatchedMSetSemiBanditOracle(runs, [MSetSemiBanditOracle(runs, i) for i in range(runs.R)])
        self.seeds = seeds
        n = self.num_envs
        return _zero_obs(self._shape), {"t": np.zeros(n, np.int64), "_t": self._mask.copy()}

    def validate_action(self, actions: Any) -> np.ndarray:
        """``actions`` as ``int8 (n, d)``, or raise :class:`InvalidActionError` (state unchanged)."""
        return _as_actions(actions, self._shape, self.m, "actions")

    def step(self, actions: Any):
        runs = self._runs
        if runs is None:
            raise ResetNeeded(f"{ENV_ID}: call reset() before step()")
        if runs.t >= self.horizon:
            raise ResetNeeded(f"{ENV_ID}: the episode is over (t = n = {self.horizon}); call reset()")
        A = _as_actions(actions, self._shape, self.m, "actions")
        losses, rewards = runs.step(A)
        t = runs.t
        n = self.num_envs
        ts = np.full(n, t, np.int64)
        trunc = np.zeros(n, dtype=bool) if t < self.horizon else np.ones(n, dtype=bool)
        return ({"losses": losses, "observed": A.copy()}, rewards, np.zeros(n, dtype=bool), trunc,
                {"t": ts, "_t": self._mask.copy()})

    def render(self) -> None:
        return None
