"""NonStatLipschitz-v0: non-stationary Lipschitz bandits on ``[0, 1]^d``.

Environment of N. Nguyen, S. Gaucher, C. Vernade, *Non-Stationary Lipschitz Bandits*
(arXiv 2505.18871, NeurIPS 2025); see ``docs/papers/nonstat-lipschitz.md`` (tags: see docs/conventions.md).

Public API
----------
``NonStatLipschitzEnv``         the Gymnasium env (one run).
``NonStatLipschitzVectorEnv``   native vector env (``num_envs`` runs, independent seeds, numpy-stepped).
``NonStatLipschitzOracle``      per-run oracle (``env.unwrapped.oracle``).
``BatchedNonStatLipschitzOracle``  oracle of the vector env (``.oracle``; ``.oracles`` = per-run list).
``INSTANCES``                   tuple of instance names; ``instance_kwargs(name)`` -> family kwargs + defaults.
``make_problem(d, horizon, noise, sigma)`` -> the :class:`~papergym.envs.spec.ProblemSpec`.

Every constant of the instance families is [design] unless tagged [code]
(two-peak-cyclic follows the official repository's ``Environment.py``). Constants that a user may want to
change are constructor kwargs (see ``Arguments`` in :class:`NonStatLipschitzEnv`); the shapes of the
families (peak positions 0.3/0.7, the tent floor 0.3 and the distributions of the seeded tents, benign
breakpoints, 16 knots) are fixed parts of the family definitions.

Deviations / design decisions (all [design])
--------------------------------------------
* ``piecewise-tents`` tents are drawn from the instance stream (``random_tents=True``, the default): per
  run, after the phase lengths, heights ``h_i ~ U[0.2, 0.4]`` (half-width = height: slope 1), then centres
  ``c_i ~ U[0, 1]^d`` redrawn until ``||c_i - c_{i-1}||_inf >= 0.4`` (:func:`_random_tents`), so the
  previous peak is on the new tent's floor and every change leaves it a gap ``h_i >= 0.2``; ``mu_t* = 0.3 +
  h_i`` exactly, at ``c_i``. ``random_tents=False`` keeps the fixed tents (centres alternating 0.2 / 0.8,
  height 0.4, the same for every seed), whose shifts have closed forms (used by the tests).
* ``d > 1``: ``piecewise-tents`` uses l-inf tents by definition; ``two-peak-cyclic`` and
  ``drifting-peak`` are extended in the obvious l-inf way (peaks at ``(0.3,..,0.3)``, ``(0.7,..,0.7)``;
  drifting centre ``(c(t),..,c(t))``), which keeps every ``mu_t`` 1-Lipschitz in l-inf and the closed-form
  optimum unchanged. ``benign-changes`` and ``random-lipschitz`` are defined for ``d = 1`` only
  (``ValueError`` for ``d > 1``).
* Tent written as ``0.3 + max(0, h - ||x - c||)``, identical to ``0.3 + h max(0, 1 - ||x - c||/h)``
  (height ``h`` = half-width; ``h = 0.4`` for drifting-peak and the fixed tents).
* Phase lengths: equal phases start at rounds ``1 + floor(i T / P)``; random lengths are
  ``min_length + `` a largest-remainder rounding of ``(T - P min_length) * Dirichlet(a,..,a)``
  (``a = 2`` for tents, ``1`` for random-lipschitz), ``min_length = 256`` (kwarg).
* ``reset(seed=None)``: the run seed is drawn from ``self.np_random`` (fresh OS entropy for an env never
  seeded; a deterministic continuation after ``reset(seed=s)``, Gymnasium's convention).
* ``random-lipschitz`` draws, from the instance stream: the Dirichlet phase weights, then per phase
  ``f(0)`` and the 16 increments. ``benign-changes`` draws ``s_1..s_T`` at once.
* ``min_length`` (phase minimum, 256 by default) is exposed as a kwarg of the two phase families.
* ``argmax_switches`` (two-peak) reports, for each crossing ``t - 1 = T(2k+1)/(4c)``, the first round with
  ``t - 1 >= T(2k+1)/(4c)`` (at equality ``alpha = 1/2`` and all of ``[0.3, 0.7]`` is optimal).
* ``significant_shifts``: ``grid`` is the number of grid points per axis, default ``None`` = 1024 for
  ``d = 1`` (``grid=1024``), 64 for ``d = 2`` (64 x 64), ``round(4096^(1/d))`` beyond;
  see :meth:`NonStatLipschitzOracle.significant_shifts` for the discretisation. Implementation: the gap of
  every family except drifting-peak is linear in a few per-round coefficients
  (``delta_t(x) = sum_k theta_k(t) phi_k(x)``), so window sums come from prefix sums of ``theta`` (no
  ``T x G`` history is stored); drifting-peak keeps running window sums per (length, active arm). Flagged
  arms are dropped (flags are monotone within a phase). Both are checked against a direct implementation of
  the definition in the tests.
* Actions: float or integer arrays/lists are accepted (cast to float64); bool, complex, object and string
  dtypes are rejected (rule ``dtype``); the shape must be exactly ``(d,)`` (``(n, d)`` in the vector env).
* Vector env ``info`` follows Gymnasium's vector convention: ``{"t": (n,) ints, "_t": (n,) True}``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from numba import njit

from papergym.envs.spec import (
    draw_run_seeds as _draw_run_seeds,
    vector_run_seeds,
    InvalidActionError,
    NormalStream,
    ProblemSpec,
    UniformStream,
    _check_seed,
    run_seeds,
)

__all__ = [
    "ENV_ID",
    "COMPARE_DEFAULTS",
    "INSTANCES",
    "instance_kwargs",
    "make_problem",
    "NonStatLipschitzEnv",
    "NonStatLipschitzVectorEnv",
    "NonStatLipschitzOracle",
    "BatchedNonStatLipschitzOracle",
]

ENV_ID = "NonStatLipschitz-v0"
#: what ``papergym compare`` calls the regret it reports
REGRET_NAME = "cumulative dynamic regret"

#: Defaults of ``papergym compare NonStatLipschitz-v0``: the paper's protocol [code] (two-peak-cyclic,
#: T = 100,000, 100 runs); about 45 s for all agents on 2 cores. ``gym.make`` keeps ``horizon=2**15``.
COMPARE_DEFAULTS: dict[str, Any] = {"horizon": 100_000, "seeds": 100}

# ----------------------------------------------------------------------------------- instances
#: Instance names accepted by the ``instance`` kwarg (``two-peak-cyclic-10`` = preset, cycles=10).
INSTANCES: tuple[str, ...] = (
    "two-peak-cyclic",
    "two-peak-cyclic-10",
    "piecewise-tents",
    "benign-changes",
    "drifting-peak",
    "random-lipschitz",
)

# instance name -> (family, family kwargs with defaults)
_INSTANCE_DEFS: dict[str, tuple[str, dict[str, Any]]] = {
    "two-peak-cyclic": ("two-peak-cyclic", {"cycles": 5}),
    # the authors' README says "10 transitions", their notebook passes num_cycles -> both registered as presets
    "two-peak-cyclic-10": ("two-peak-cyclic", {"cycles": 10}),
    "piecewise-tents": ("piecewise-tents", {"phases": 5, "random_lengths": False, "min_length": 256,
                                            "random_tents": True}),
    "benign-changes": ("benign-changes", {"static": False}),
    "drifting-peak": ("drifting-peak", {"period": None}),
    "random-lipschitz": ("random-lipschitz", {"phases": 8, "min_length": 256}),
}
_D1_ONLY = {"benign-changes", "random-lipschitz"}
_NOISES = ("bernoulli", "gaussian")

# family codes used by the numba kernels
_TWO_PEAK, _TENTS, _BENIGN, _DRIFT, _RANDOM = 0, 1, 2, 3, 4
_CODES = {
    "two-peak-cyclic": _TWO_PEAK,
    "piecewise-tents": _TENTS,
    "benign-changes": _BENIGN,
    "drifting-peak": _DRIFT,
    "random-lipschitz": _RANDOM,
}
_N_KNOTS = 16  # random-lipschitz: knots k/16, k = 0..16 [design]
_TENT_TOP = 0.3 + max(0.0, 0.4 - 0.0)  # tent value at its centre, computed as the kernel does
_TENT_HEIGHT = 0.4  # drifting-peak and the fixed tents (random_tents=False): height = half-width 0.4
# seeded piecewise-tents (random_tents=True) [design]: height = half-width h ~ U[_TENT_H_LO, _TENT_H_HI],
# centre ~ U[0, 1]^d redrawn until ||c_i - c_{i-1}||_inf >= _TENT_SEP (>= the largest half-width)
_TENT_H_LO, _TENT_H_HI, _TENT_SEP = 0.2, 0.4, 0.4
_BENIGN_TOP = 0.9 - abs(0.25 - 0.25)


def instance_kwargs(instance: str) -> dict[str, Any]:
    """Family kwargs accepted by ``instance``, with their defaults (a fresh dict)."""
    _check_instance(instance)
    return dict(_INSTANCE_DEFS[instance][1])


def _check_instance(instance: Any) -> str:
    if not isinstance(instance, str) or instance not in _INSTANCE_DEFS:
        raise ValueError(f"unknown instance {instance!r}; valid instances: {', '.join(INSTANCES)}")
    return instance


def _as_int(name: str, v: Any, lo: int) -> int:
    if isinstance(v, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        v = int(v)
    if not isinstance(v, (int, np.integer)) or v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    return int(v)


def _as_bool(name: str, v: Any) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool, got {v!r}")
    return bool(v)


@dataclass(frozen=True)
class _Config:
    """A validated configuration (everything but the seed)."""

    instance: str
    family: str
    horizon: int
    d: int
    noise: str
    sigma: float
    fkw: tuple[tuple[str, Any], ...]  # resolved family kwargs, sorted by name

    @property
    def kw(self) -> dict[str, Any]:
        return dict(self.fkw)

    @property
    def deterministic(self) -> bool:
        """True when the instance does not depend on the seed (only the noise does)."""
        kw = self.kw
        if self.family in ("two-peak-cyclic", "drifting-peak"):
            return True
        if self.family == "piecewise-tents":
            return not (kw["random_lengths"] or kw["random_tents"])
        if self.family == "benign-changes":
            return kw["static"]
        return False

    @property
    def instance_key(self) -> tuple:
        """Identifies the family of mean functions (noise kwargs excluded)."""
        return (self.family, self.horizon, self.d, self.fkw)


def _make_config(
    instance: str = "two-peak-cyclic",
    horizon: int = 2**15,
    d: int = 1,
    noise: str = "bernoulli",
    sigma: float = 0.1,
    **family_kwargs: Any,
) -> _Config:
    _check_instance(instance)
    family, defaults = _INSTANCE_DEFS[instance]
    unknown = sorted(set(family_kwargs) - set(defaults))
    if unknown:
        raise ValueError(
            f"unknown kwarg(s) {', '.join(map(repr, unknown))} for instance {instance!r}; valid kwargs: "
            f"horizon, d, noise, sigma, {', '.join(defaults) or '(no family kwargs)'}"
        )
    T = _as_int("horizon", horizon, 1)
    d = _as_int("d", d, 1)
    if family in _D1_ONLY and d != 1:
        raise ValueError(f"d must be 1 for instance {instance!r} (the family is defined on [0, 1] only), got d={d}")
    if noise not in _NOISES:
        raise ValueError(f"noise must be one of {', '.join(_NOISES)}; got {noise!r}")
    if isinstance(sigma, (bool, np.bool_)) or not isinstance(sigma, (int, float, np.integer, np.floating)):
        raise ValueError(f"sigma must be a finite number >= 0, got {sigma!r}")
    sigma = float(sigma)
    if not (math.isfinite(sigma) and sigma >= 0.0):
        raise ValueError(f"sigma must be a finite number >= 0, got {sigma!r}")
    kw = {**defaults, **family_kwargs}
    if family == "two-peak-cyclic":
        kw["cycles"] = _as_int("cycles", kw["cycles"], 1)
    elif family in ("piecewise-tents", "random-lipschitz"):
        kw["phases"] = _as_int("phases", kw["phases"], 1)
        kw["min_length"] = _as_int("min_length", kw["min_length"], 1)
        rnd = family == "random-lipschitz" or _as_bool("random_lengths", kw["random_lengths"])
        if family == "piecewise-tents":
            kw["random_lengths"] = bool(kw["random_lengths"])
            kw["random_tents"] = _as_bool("random_tents", kw["random_tents"])
        need = kw["phases"] * kw["min_length"] if rnd else kw["phases"]
        if T < need:
            raise ValueError(
                f"horizon={T} is too short for instance {instance!r}: {kw['phases']} phases"
                + (f" of at least min_length={kw['min_length']} rounds" if rnd else "")
                + f" need horizon >= {need}"
            )
    elif family == "benign-changes":
        kw["static"] = _as_bool("static", kw["static"])
    elif family == "drifting-peak":
        p = kw["period"]
        if p is not None:
            if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, float, np.integer, np.floating)):
                raise ValueError(f"period must be None or a finite number > 0, got {p!r}")
            p = float(p) if not float(p).is_integer() else int(p)
            if not (math.isfinite(p) and p > 0):
                raise ValueError(f"period must be None or a finite number > 0, got {p!r}")
        kw["period"] = p
    return _Config(instance, family, T, d, str(noise), sigma, tuple(sorted(kw.items())))


def _obs_space(noise: str, shape: tuple[int, ...]) -> spaces.Box:
    """Bernoulli rewards lie in ``[0, 1]``; Gaussian rewards are unclipped, so unbounded."""
    if noise == "bernoulli":
        return spaces.Box(0.0, 1.0, shape, np.float64)
    return spaces.Box(-np.inf, np.inf, shape, np.float64)


def make_problem(d: int = 1, horizon: int = 2**15, noise: str = "bernoulli", sigma: float = 0.1) -> ProblemSpec:
    """The public :class:`ProblemSpec` of NonStatLipschitz-v0 (what an agent may know)."""
    return ProblemSpec(
        env_id=ENV_ID,
        action_space=spaces.Box(0.0, 1.0, (d,), np.float64),
        observation_space=_obs_space(noise, (1,)),
        horizon=int(horizon),
        params={"d": int(d), "lipschitz": 1.0, "norm": "linf", "noise": noise, "sigma": float(sigma)},
    )


# ------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _phase_of(starts, r, t):
    """Index p of the phase of round t for row r: largest p with starts[r, p] <= t (starts[r, 0] = 1)."""
    lo = 0
    hi = starts.shape[1] - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[r, mid] <= t:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit(cache=True)
def _eval_kernel(code, X, rows, t, tvec, topt, tmat, starts, pdat, pmax, out_mean, out_opt, out_reg):
    """Validate X (k, d) and write mu_t(X[i]), mu_t* and the regret of row rows[i] at round t.

    Returns 0 if every coordinate is in [0, 1], 1 on NaN/inf, 2 on a finite value out of bounds (then the
    outputs are not written). Elementwise IEEE arithmetic only, so a value never depends on the batch size.
    """
    k, d = X.shape
    for i in range(k):
        for j in range(d):
            x = X[i, j]
            if not (x >= 0.0 and x <= 1.0):
                if math.isnan(x) or math.isinf(x):
                    return 1
                return 2
    for i in range(k):
        r = rows[i]
        if code == 0:  # two-peak-cyclic: (1 - a) f0 + a f1, f0 = 1 - |x - 0.3|, f1 = 1 - |x - 0.7|
            a = tvec[t - 1]
            A = 0.0
            B = 0.0
            for j in range(d):
                A = max(A, abs(X[i, j] - 0.3))
                B = max(B, abs(X[i, j] - 0.7))
            m = 1.0 - (1.0 - a) * A - a * B
            o = topt[t - 1]
        elif code == 1:  # piecewise-tents: tent of the phase, centre pdat[r, p, :d], height = half-width pdat[r, p, d]
            p = _phase_of(starts, r, t)
            dist = 0.0
            for j in range(d):
                dist = max(dist, abs(X[i, j] - pdat[r, p, j]))
            m = 0.3 + max(0.0, pdat[r, p, d] - dist)
            o = pmax[r, p]
        elif code == 3:  # drifting-peak: tent of height 0.4 on the floor 0.3, centre (c(t), .., c(t))
            c = tvec[t - 1]
            o = pmax[0, 0]
            dist = 0.0
            for j in range(d):
                dist = max(dist, abs(X[i, j] - c))
            m = 0.3 + max(0.0, 0.4 - dist)
        elif code == 2:  # benign-changes
            x = X[i, 0]
            if x <= 0.5:
                m = 0.9 - abs(x - 0.25)
            else:
                rr = r if tmat.shape[0] > 1 else 0  # static twin: one shared row of zeros
                m = 0.65 + tmat[rr, t - 1] * max(0.0, 0.25 - abs(x - 0.75))
            o = pmax[0, 0]
        else:  # random-lipschitz: piecewise-linear interpolation of the phase's 17 knot values
            p = _phase_of(starts, r, t)
            u = X[i, 0] * 16.0
            kk = int(u)
            if kk >= 16:
                m = pdat[r, p, 16]
            else:
                m = pdat[r, p, kk] + (u - kk) * (pdat[r, p, kk + 1] - pdat[r, p, kk])
            o = pmax[r, p]
        out_mean[i] = m
        out_opt[i] = o
        g = o - m
        out_reg[i] = g if g > 0.0 else 0.0  # clip float round-off; the true gap is >= 0
    return 0


@njit(cache=True)
def _last_le(starts, t):
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
def _shifts_linear(FT, sparse, Tcum, starts, lags, thr, T):
    """Significant shifts (Nguyen, Gaucher & Vernade, arXiv:2505.18871) for gaps linear in per-round coefficients.

    ``delta_t(x_j) = sum_k theta_k(t) FT[k, j]``. The sum over a window ``[a, b]`` is
    ``sum_k (Theta_k(b) - Theta_k(a - 1)) FT[k, j]``: dense mode (``sparse = 0``) reads the cumulative
    coefficients ``Tcum`` ``(T + 1, K)``; sparse mode (``sparse = 1``, piecewise-constant families) has
    ``theta_k(t) = 1{t in phase k}`` and the coefficient is the overlap of the window with phase ``k``
    (phase starts ``starts``). Flags are monotone within a phase, so flagged columns are removed from the
    compacted active block and never tested again until the next restart.
    """
    K, G = FT.shape
    L = lags.shape[0]
    P = starts.shape[0]
    F = FT.copy()  # active columns first (compacted)
    acc = np.empty(G)
    flag = np.zeros(G, np.bool_)
    coef = np.zeros(K)
    out = np.empty(T, np.int64)
    n_out = 0
    n_act = G
    tau = 1
    t = 1
    while t <= T:
        age = t - tau + 1
        any_flag = False
        for l in range(L):
            n = lags[l]
            if n > age:
                break
            a = t - n + 1  # window [a, t]
            if sparse == 0:
                k_lo = 0
                k_hi = K - 1
                for k in range(K):
                    coef[k] = Tcum[t, k] - Tcum[a - 1, k]
            else:
                # phases overlapping [a, t]
                k_lo = _last_le(starts, a)
                k_hi = _last_le(starts, t)
                for k in range(k_lo, k_hi + 1):
                    s0 = starts[k]
                    s1 = starts[k + 1] - 1 if k + 1 < P else T
                    coef[k] = min(t, s1) - max(a, s0) + 1
            c = coef[k_lo]
            for j in range(n_act):
                acc[j] = c * F[k_lo, j]
            for k in range(k_lo + 1, k_hi + 1):
                c = coef[k]
                for j in range(n_act):
                    acc[j] += c * F[k, j]
            th = thr[l]
            for j in range(n_act):
                if acc[j] >= th:
                    flag[j] = True
                    any_flag = True
        if any_flag:
            j = n_act - 1
            while j >= 0:
                if flag[j]:
                    n_act -= 1
                    for k in range(K):
                        F[k, j] = F[k, n_act]
                    flag[j] = flag[n_act]
                    flag[n_act] = False
                j -= 1
        if n_act == 0 and t > tau:
            # every arm has significant regret on some [s1, s2] in [tau, t]: shift at t; round t starts the
            # new phase and is processed again
            out[n_out] = t
            n_out += 1
            tau = t
            n_act = G
            F[:, :] = FT
            continue
        t += 1
    return out[:n_out].copy()


@njit(cache=True)
def _drift_gap(c, xmax, xmin):
    return min(0.4, max(xmax - c, c - xmin))


@njit(cache=True)
def _shifts_drift(XT, cs, lags, thr, T):
    """As :func:`_shifts_linear` for drifting-peak, ``delta_t(x) = min(0.4, ||x - c(t)||_inf)`` (not linear
    in per-round coefficients): running window sums ``W[l, j]`` over the compacted active columns, updated
    with the gap entering and the gap leaving each window; ``XT = (max_i x_i, min_i x_i)`` per column."""
    G = XT.shape[1]
    L = lags.shape[0]
    X = XT.copy()
    W = np.empty((L, G))
    S = np.zeros(G)  # sum since the phase start
    dt = np.empty(G)
    flag = np.zeros(G, np.bool_)
    out = np.empty(T, np.int64)
    n_out = 0
    n_act = G
    tau = 1
    t = 1
    while t <= T:
        age = t - tau + 1
        c = cs[t - 1]
        for j in range(n_act):
            g = _drift_gap(c, X[0, j], X[1, j])
            dt[j] = g
            S[j] += g
        any_flag = False
        for l in range(L):
            n = lags[l]
            if n > age:
                break
            th = thr[l]
            if n == 1:
                for j in range(n_act):
                    W[l, j] = dt[j]
            elif n == age:
                for j in range(n_act):
                    W[l, j] = S[j]
            else:
                co = cs[t - n - 1]  # round t - n leaves the window
                for j in range(n_act):
                    W[l, j] += dt[j] - _drift_gap(co, X[0, j], X[1, j])
            for j in range(n_act):
                if W[l, j] >= th:
                    flag[j] = True
                    any_flag = True
        if any_flag:
            j = n_act - 1
            while j >= 0:
                if flag[j]:
                    n_act -= 1
                    X[0, j] = X[0, n_act]
                    X[1, j] = X[1, n_act]
                    S[j] = S[n_act]
                    for l in range(L):
                        W[l, j] = W[l, n_act]
                    flag[j] = flag[n_act]
                    flag[n_act] = False
                j -= 1
        if n_act == 0 and t > tau:
            out[n_out] = t
            n_out += 1
            tau = t
            n_act = G
            X[:, :] = XT
            S[:] = 0.0
            continue
        t += 1
    return out[:n_out].copy()


# ------------------------------------------------------------------------------ instance data
@lru_cache(maxsize=16)
def _two_peak_arrays(T: int, cycles: int) -> tuple[np.ndarray, np.ndarray]:
    """alpha_t and mu_t* (t = 1..T), shared by every run: alpha(t) = (1 - cos(2 pi c (t - 1)/T))/2."""
    alpha = 0.5 * (1.0 - np.cos(2.0 * np.pi * cycles * np.arange(T, dtype=np.float64) / T))
    # mu_t* = max(mu_t(0.3), mu_t(0.7)) written with the kernel's operations, so regret(argmax) == 0 exactly;
    # mathematically max(1 - 0.4 alpha, 0.6 + 0.4 alpha)
    b03 = abs(0.3 - 0.7)
    a07 = abs(0.7 - 0.3)
    opt = np.maximum(1.0 - (1.0 - alpha) * 0.0 - alpha * b03, 1.0 - (1.0 - alpha) * a07 - alpha * 0.0)
    return alpha, opt


@lru_cache(maxsize=16)
def _drift_centres(T: int, period: float) -> np.ndarray:
    """c(t) = 0.5 + 0.3 sin(2 pi t / P), t = 1..T."""
    return 0.5 + 0.3 * np.sin(2.0 * np.pi * np.arange(1, T + 1, dtype=np.float64) / period)


def _equal_starts(T: int, P: int) -> np.ndarray:
    return 1 + (np.arange(P, dtype=np.int64) * T) // P


def _random_starts(rng: np.random.Generator, T: int, P: int, conc: float, min_len: int) -> np.ndarray:
    """Phase starts for lengths min_len + round((T - P min_len) Dirichlet(conc)) (largest remainder)."""
    w = rng.dirichlet(np.full(P, conc))
    extra = T - P * min_len
    raw = extra * w
    base = np.floor(raw).astype(np.int64)
    rest = extra - int(base.sum())
    if rest > 0:
        order = np.argsort(-(raw - base), kind="stable")
        base[order[:rest]] += 1
    lengths = min_len + base
    return np.concatenate([[1], 1 + np.cumsum(lengths[:-1])]).astype(np.int64)


def _random_tents(rng: np.random.Generator, P: int, d: int) -> np.ndarray:
    """Tents of a seeded ``piecewise-tents`` instance, ``(P, d + 1)``: centre ``[:d]``, height ``[d]``.

    From the instance stream, after the phase lengths: the ``P`` heights ``h_i ~ U[0.2, 0.4]`` at once, then
    per phase a centre ``c_i ~ U[0, 1]^d``, redrawn (rejection) until ``||c_i - c_{i-1}||_inf >= 0.4`` for
    ``i >= 1`` (each draw succeeds with probability >= 0.2, since the excluded cube has side <= 0.8). The
    half-width equals the height, so every tent has slope exactly 1 (the class's Lipschitz constant, as
    the fixed tents of height and half-width 0.4). As ``h_i <= 0.4 <= ||c_i - c_{i-1}||``, the previous
    peak lies on the new tent's floor and its gap after the change is ``h_i >= 0.2``.
    """
    h = rng.uniform(_TENT_H_LO, _TENT_H_HI, size=P)
    out = np.empty((P, d + 1))
    out[:, d] = h
    for i in range(P):
        c = rng.uniform(0.0, 1.0, size=d)
        while i > 0 and np.max(np.abs(c - out[i - 1, :d])) < _TENT_SEP:
            c = rng.uniform(0.0, 1.0, size=d)
        out[i, :d] = c
    return out


_DUMMY_F1 = np.zeros(1)
_DUMMY_F2 = np.zeros((1, 1))
_DUMMY_I1 = np.zeros(1, np.int64)
_DUMMY_I2 = np.ones((1, 1), np.int64)
_DUMMY_F3 = np.zeros((1, 1, 1))


class _Instances:
    """Mean functions of ``n`` runs of one configuration, stacked for the numba kernel.

    Row ``r`` is built from the instance stream of its own seed only, so a row is identical whether it is
    built alone (single env) or together with others (vector env).
    """

    def __init__(self, cfg: _Config, instance_seqs: Sequence[np.random.SeedSequence]):
        self.cfg = cfg
        self.n = n = len(instance_seqs)
        self.T = T = cfg.horizon
        self.d = cfg.d
        self.code = _CODES[cfg.family]
        kw = cfg.kw
        self.tvec, self.topt, self.tmat = _DUMMY_F1, _DUMMY_F1, _DUMMY_F2
        self.starts, self.pdat, self.pmax = _DUMMY_I2, _DUMMY_F3, _DUMMY_F2
        fam = cfg.family
        if fam == "two-peak-cyclic":
            self.tvec, self.topt = _two_peak_arrays(T, kw["cycles"])
        elif fam == "drifting-peak":
            period = kw["period"] if kw["period"] is not None else T / 2
            self.tvec = _drift_centres(T, float(period))
            self.pmax = np.full((1, 1), _TENT_TOP)
        elif fam == "benign-changes":
            self.pmax = np.full((1, 1), _BENIGN_TOP)
            if kw["static"]:
                self.tmat = np.zeros((1, T))  # one shared row (s_t = 0)
            else:
                self.tmat = np.empty((n, T))
                for r, ss in enumerate(instance_seqs):
                    self.tmat[r] = np.random.default_rng(ss).uniform(-1.0, 0.6, size=T)  # s_t ~ U[-1, 0.6]
        elif fam == "piecewise-tents":
            P = kw["phases"]
            d = self.d
            self.starts = np.empty((n, P), np.int64)
            # pdat[r, p, :d] = centre of phase p's tent, pdat[r, p, d] = its height (= half-width)
            self.pdat = np.empty((n, P, d + 1))
            for r, ss in enumerate(instance_seqs):
                rng = np.random.default_rng(ss)
                if kw["random_lengths"]:
                    self.starts[r] = _random_starts(rng, T, P, 2.0, kw["min_length"])  # drawn first
                else:
                    self.starts[r] = _equal_starts(T, P)
                if kw["random_tents"]:
                    self.pdat[r] = _random_tents(rng, P, d)
                else:  # the fixed tents: centres alternating 0.2 / 0.8 (on the diagonal), height 0.4
                    self.pdat[r, :, :d] = np.where(np.arange(P) % 2 == 0, 0.2, 0.8)[:, None]
                    self.pdat[r, :, d] = _TENT_HEIGHT
            # mu_p* = the value at the centre, computed with the kernel's operations (regret(centre) == 0)
            self.pmax = 0.3 + np.maximum(0.0, self.pdat[:, :, d] - 0.0)
        elif fam == "random-lipschitz":
            P = kw["phases"]
            self.starts = np.empty((n, P), np.int64)
            self.pdat = np.empty((n, P, _N_KNOTS + 1))
            for r, ss in enumerate(instance_seqs):
                rng = np.random.default_rng(ss)
                self.starts[r] = _random_starts(rng, T, P, 1.0, kw["min_length"])
                for p in range(P):
                    f0 = rng.uniform(0.2, 0.8)
                    u = rng.uniform(-1.0, 1.0, size=_N_KNOTS)
                    f = f0 + np.concatenate([[0.0], np.cumsum(u / _N_KNOTS)])
                    lo, hi = f.min(), f.max()
                    scale = min(1.0, 0.9 / (hi - lo)) if hi > lo else 1.0
                    self.pdat[r, p] = 0.05 + (f - lo) * scale
            self.pmax = self.pdat.max(axis=2)
        else:  # pragma: no cover - guarded by _make_config
            raise AssertionError(fam)
        self.zeros = np.zeros((n, self.d))
        self.all_rows = np.arange(n, dtype=np.int64)

    # -------------------------------------------------------------------------- evaluation
    def evaluate(self, X: np.ndarray, rows: np.ndarray, t: int):
        """(status, mean, opt, regret) for X (k, d) float64 C-contiguous, rows (k,) int64."""
        k = X.shape[0]
        mean = np.empty(k)
        opt = np.empty(k)
        reg = np.empty(k)
        status = _eval_kernel(
            self.code, X, rows, t, self.tvec, self.topt, self.tmat, self.starts, self.pdat, self.pmax,
            mean, opt, reg,
        )
        return status, mean, opt, reg

    def phase_index(self, r: int, t: int) -> int:
        return int(np.searchsorted(self.starts[r], t, side="right") - 1)

    # -------------------------------------------------------------------------- structure
    def best_action(self, r: int, t: int) -> np.ndarray:
        fam = self.cfg.family
        if fam == "two-peak-cyclic":
            a = self.tvec[t - 1]
            x = 0.3 if 1.0 - a * abs(0.3 - 0.7) >= 1.0 - (1.0 - a) * abs(0.7 - 0.3) else 0.7
        elif fam == "drifting-peak":
            x = self.tvec[t - 1]
        elif fam == "benign-changes":
            x = 0.25
        elif fam == "piecewise-tents":
            return self.pdat[r, self.phase_index(r, t), : self.d].copy()  # the phase's tent centre
        else:
            x = int(np.argmax(self.pdat[r, self.phase_index(r, t)])) / _N_KNOTS
        return np.full(self.d, float(x))

    def change_points(self, r: int) -> tuple[int, ...]:
        fam = self.cfg.family
        if fam in ("piecewise-tents", "random-lipschitz"):
            return tuple(int(s) for s in self.starts[r, 1:])
        if fam == "benign-changes":
            s = self.tmat[0 if self.tmat.shape[0] == 1 else r]
        else:
            s = self.tvec
        return tuple(int(t) for t in np.flatnonzero(s[1:] != s[:-1]) + 2)

    def argmax_switches(self, r: int) -> tuple[int, ...]:
        fam = self.cfg.family
        T = self.T
        if fam == "two-peak-cyclic":
            c = self.cfg.kw["cycles"]
            # argmax 0.3 <-> 0.7 when alpha crosses 1/2: t - 1 = T (2k + 1) / (4c), k = 0..2c-1;
            # the round reported is the first with t - 1 >= T (2k + 1)/(4c) (at equality the argmax is the
            # whole segment [0.3, 0.7])
            return tuple(1 + (-(-T * (2 * k + 1) // (4 * c))) for k in range(2 * c))
        if fam == "benign-changes":
            return ()
        if fam == "drifting-peak":
            return self.change_points(r)
        if fam == "piecewise-tents":
            return self.change_points(r)
        arg = np.argmax(self.pdat[r], axis=1)
        return tuple(int(self.starts[r, p]) for p in range(1, arg.size) if arg[p] != arg[p - 1])

    def shift_model(self, r: int, pts: np.ndarray):
        """How the gaps delta_t(x_j) of grid points pts (G, d) are computed by the shift kernels.

        ("linear", FT (K, G), sparse, Tcum (T + 1, K), starts) or ("drift", XT (2, G), c (T,)).
        """
        fam = self.cfg.family
        T = self.T
        if fam == "two-peak-cyclic":
            # delta = (mu* - 1) + A + alpha (B - A),  A = ||x - 0.3||, B = ||x - 0.7||
            A = np.abs(pts - 0.3).max(axis=1)
            B = np.abs(pts - 0.7).max(axis=1)
            FT = np.stack([np.ones_like(A), A, B - A])
            theta = np.stack([self.topt - 1.0, np.ones(T), self.tvec], axis=1)
            return "linear", FT, 0, _cumulate(theta), _DUMMY_I1
        if fam == "benign-changes":
            # delta = a(x) - s_t h(x)
            x = pts[:, 0]
            a = np.where(x <= 0.5, np.abs(x - 0.25), _BENIGN_TOP - 0.65)
            h = np.where(x <= 0.5, 0.0, np.maximum(0.0, 0.25 - np.abs(x - 0.75)))
            s = self.tmat[0 if self.tmat.shape[0] == 1 else r]
            theta = np.stack([np.ones(T), -s], axis=1)
            return "linear", np.stack([a, h]), 0, _cumulate(theta), _DUMMY_I1
        if fam == "drifting-peak":
            return "drift", np.stack([pts.max(axis=1), pts.min(axis=1)]), self.tvec, None
        # phase families: delta_t(x) = gap of x in the phase of t (constant within a phase)
        P = self.starts.shape[1]
        FT = np.empty((P, pts.shape[0]))
        rows = np.full(pts.shape[0], r, np.int64)
        for p in range(P):
            FT[p] = self.evaluate(pts, rows, int(self.starts[r, p]))[3]
        return "linear", FT, 1, _DUMMY_F2, np.ascontiguousarray(self.starts[r])


def _cumulate(theta: np.ndarray) -> np.ndarray:
    out = np.zeros((theta.shape[0] + 1, theta.shape[1]))
    np.cumsum(theta, axis=0, out=out[1:])
    return out


# ----------------------------------------------------------------------------------- oracles
_SHIFT_CACHE: dict[tuple, tuple[int, ...]] = {}
_SHIFT_CACHE_MAX = 256


def _lengths(T: int, ratio: float | None) -> np.ndarray:
    """Window lengths Lambda = {1} U {ceil(r^k)} (<= T); every length 1..T when ratio is None."""
    if ratio is None:
        return np.arange(1, T + 1, dtype=np.int64)
    if isinstance(ratio, (bool, np.bool_)) or not isinstance(ratio, (int, float, np.integer, np.floating)):
        raise ValueError(f"length_ratio must be None or a number > 1, got {ratio!r}")
    r = float(ratio)
    if not (math.isfinite(r) and r > 1.0):
        raise ValueError(f"length_ratio must be None or a number > 1, got {ratio!r}")
    out = {1}
    k = 1
    while True:
        # the 1e-12 relative slack keeps exact powers (r^k = 16 for r = 2^(1/4)) from rounding up
        n = math.ceil(r**k * (1.0 - 1e-12))
        if n > T:
            break
        out.add(n)
        k += 1
    return np.array(sorted(out), dtype=np.int64)


def _grid_points(d: int, grid: int | None) -> np.ndarray:
    g = grid if grid is not None else (1024 if d == 1 else 64 if d == 2 else max(2, round(4096 ** (1.0 / d))))
    g = _as_int("grid", g, 1)
    mids = (np.arange(g) + 0.5) / g
    if d == 1:
        return mids[:, None]
    mesh = np.meshgrid(*([mids] * d), indexing="ij")
    return np.stack([m.ravel() for m in mesh], axis=1)


def _check_round(t: Any, T: int) -> int:
    if type(t) is int and 1 <= t <= T:
        return t
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, np.integer)) or not 1 <= t <= T:
        raise ValueError(f"t must be an integer round in 1..{T}, got {t!r}")
    return int(t)


def _invalid(status: int, X: np.ndarray) -> InvalidActionError:
    if status == 1:
        bad = np.argwhere(~np.isfinite(X))
        return InvalidActionError(
            f"{ENV_ID}: rule 'finite' broken: every action coordinate must be finite (no NaN or inf); "
            f"got {X[tuple(bad[0])]!r} at index {tuple(int(i) for i in bad[0])}"
        )
    bad = np.argwhere((X < 0.0) | (X > 1.0))
    return InvalidActionError(
        f"{ENV_ID}: rule 'bounds' broken: every action coordinate must lie in [0, 1]; "
        f"got {X[tuple(bad[0])]!r} at index {tuple(int(i) for i in bad[0])}"
    )


def _coerce(action: Any, shape: tuple[int, ...], what: str = "action") -> np.ndarray:
    """Real-valued float64 C-contiguous array of the given shape, or InvalidActionError."""
    if type(action) is np.ndarray:
        a = action
    else:
        try:
            a = np.asarray(action)
        except (ValueError, TypeError) as e:
            raise InvalidActionError(f"{ENV_ID}: rule 'shape' broken: {what} must be an array of shape {shape}; {e}") from None
    if a.dtype.kind not in "fiu":
        raise InvalidActionError(
            f"{ENV_ID}: rule 'dtype' broken: {what} must hold real numbers (float or integer dtype), got dtype {a.dtype}"
        )
    if a.shape != shape:
        raise InvalidActionError(f"{ENV_ID}: rule 'shape' broken: {what} must have shape {shape}, got {a.shape}")
    if a.dtype != np.float64 or not a.flags.c_contiguous:
        a = np.ascontiguousarray(a, dtype=np.float64)
    return a


class NonStatLipschitzOracle:
    """Privileged view of one run (``env.unwrapped.oracle``): means, optimum, regret, shifts.

    Rounds are 1-based (``t = 1..T``). Regret is computed from means, ``>= 0`` (round-off clipped).
    """

    def __init__(self, inst: _Instances, row: int, seed: int, cfg: _Config):
        self._inst = inst
        self._row = row
        self._row1 = np.array([row], np.int64)
        self.seed = seed
        self.cfg = cfg
        self.horizon = cfg.horizon
        self.d = cfg.d
        self.instance = cfg.instance

    def __repr__(self) -> str:
        return f"NonStatLipschitzOracle(instance={self.instance!r}, horizon={self.horizon}, d={self.d}, seed={self.seed})"

    # ----------------------------------------------------------------- means and regret
    def _eval(self, xs: np.ndarray, t: int):
        t = _check_round(t, self.horizon)
        rows = self._row1 if xs.shape[0] == 1 else np.full(xs.shape[0], self._row, np.int64)
        status, mean, opt, reg = self._inst.evaluate(xs, rows, t)
        if status:
            raise _invalid(status, xs)
        return mean, opt, reg

    def mean_reward(self, action: Any, t: int) -> float:
        """``mu_t(action)`` for one action of shape ``(d,)``."""
        x = _coerce(action, (self.d,)).reshape(1, self.d)
        return float(self._eval(x, t)[0][0])

    def mean_rewards(self, actions: Any, t: int) -> np.ndarray:
        """``mu_t`` at every row of ``actions`` ``(k, d)`` -> ``(k,)``."""
        xs = np.asarray(actions)
        k = xs.shape[0] if xs.ndim == 2 else -1
        return self._eval(_coerce(xs, (k, self.d), "actions"), t)[0]

    def optimal_value(self, t: int) -> float:
        """``mu_t* = max_x mu_t(x)`` (exact: closed form / maximum over breakpoints)."""
        return float(self._eval(self._inst.zeros[:1], t)[1][0])

    def optimal_values(self) -> np.ndarray:
        """``mu_t*`` for ``t = 1..T``, shape ``(T,)``."""
        inst = self._inst
        if inst.code == _TWO_PEAK:
            return inst.topt.copy()
        if inst.code in (_TENTS, _RANDOM):
            r = self._row
            lengths = np.diff(np.append(inst.starts[r], self.horizon + 1))
            return np.repeat(inst.pmax[r], lengths)
        return np.full(self.horizon, inst.pmax[0, 0])

    def regret(self, action: Any, t: int) -> float:
        """``mu_t* - mu_t(action) >= 0``."""
        x = _coerce(action, (self.d,)).reshape(1, self.d)
        return float(self._eval(x, t)[2][0])

    def gaps(self, actions: Any, t: int) -> np.ndarray:
        """``delta_t`` at every row of ``actions`` ``(k, d)`` -> ``(k,)``."""
        xs = np.asarray(actions)
        k = xs.shape[0] if xs.ndim == 2 else -1
        return self._eval(_coerce(xs, (k, self.d), "actions"), t)[2]

    def best_action(self, t: int) -> np.ndarray:
        """One maximiser of ``mu_t``, shape ``(d,)``."""
        return self._inst.best_action(self._row, _check_round(t, self.horizon))

    # ----------------------------------------------------------------- structure
    def change_points(self) -> tuple[int, ...]:
        """Rounds ``t >= 2`` with ``mu_t != mu_{t-1}`` (phase starts for the piecewise families; every round
        for two-peak-cyclic, drifting-peak and non-static benign-changes, as read off the per-round
        parameters)."""
        return self._inst.change_points(self._row)

    def argmax_switches(self) -> tuple[int, ...]:
        """Rounds where the set of maximisers changes (two-peak-cyclic: closed form
        ``t - 1 = ceil(T (2k + 1) / (4c))``, ``k = 0..2c-1``; other families: read off the instance)."""
        return self._inst.argmax_switches(self._row)

    def significant_shifts(self, grid: int | None = None, length_ratio: float | None = 2**0.25,
                           c_sig: float = 1.0) -> tuple[int, ...]:
        """Significant shifts ``(tau_1, tau_2, ...)`` (``tau_0 = 1`` excluded; ``L~ = len``).

        Discretisation: arms are the midpoints ``(i + 1/2)/g`` of a regular grid with ``g`` points per axis
        (``grid``; default 1024 for ``d = 1``, 64 for ``d = 2``, ``round(4096^(1/d))`` beyond), so
        ``g^d`` arms; window lengths ``Lambda = {1} U {ceil(r^k)}`` with ``r = length_ratio`` (every length
        when ``None``: exact on the grid, ``O(g^d T^2)`` time, small ``T`` only). Arm ``x`` is flagged at
        round ``t`` if ``sum_{s=t-n+1}^{t} delta_s(x) >= c_sig n^{(d+1)/(d+2)}`` for some ``n`` in
        ``Lambda`` with ``n <= t - tau + 1``; flags persist within a phase. When every arm is flagged at a
        round ``t > tau``, ``t`` is a shift and the new phase starts at ``t`` (round ``t`` is rescanned).
        The geometric lengths can report a shift slightly later than the exact computation.

        Results are cached in-process per (instance kwargs, seed [unless the instance is deterministic],
        grid, length_ratio, c_sig).
        """
        if isinstance(c_sig, (bool, np.bool_)) or not isinstance(c_sig, (int, float, np.integer, np.floating)) \
                or not (math.isfinite(c_sig) and c_sig > 0):
            raise ValueError(f"c_sig must be a finite number > 0, got {c_sig!r}")
        lags = _lengths(self.horizon, length_ratio)
        pts = _grid_points(self.d, grid)
        if self.cfg.family == "drifting-peak" and lags.size * pts.shape[0] * 8 > 2**30:
            raise ValueError(
                f"significant_shifts would need {lags.size * pts.shape[0] * 8 / 2**30:.1f} GiB of window sums "
                f"({lags.size} lengths x {pts.shape[0]} grid points); use a geometric length_ratio or a smaller grid"
            )
        key = (self.cfg.instance_key, None if self.cfg.deterministic else self.seed, pts.shape[0],
               None if length_ratio is None else float(length_ratio), float(c_sig))
        hit = _SHIFT_CACHE.get(key)
        if hit is not None:
            return hit
        model = self._inst.shift_model(self._row, pts)
        beta = (self.d + 1) / (self.d + 2)
        thr = float(c_sig) * lags.astype(np.float64) ** beta
        if model[0] == "linear":
            _, FT, sparse, Tcum, starts = model
            taus = _shifts_linear(np.ascontiguousarray(FT), sparse, Tcum, starts, lags, thr, self.horizon)
        else:
            _, XT, cs, _ = model
            taus = _shifts_drift(np.ascontiguousarray(XT), cs, lags, thr, self.horizon)
        res = tuple(int(t) for t in taus)
        if len(_SHIFT_CACHE) >= _SHIFT_CACHE_MAX:
            _SHIFT_CACHE.pop(next(iter(_SHIFT_CACHE)))
        _SHIFT_CACHE[key] = res
        return res

    # ----------------------------------------------------------------- run scoring (runner hooks)
    def instance_metrics(self) -> dict[str, Any]:
        """Facts about this run's instance that the runner stores once per seed (JSON):
        ``shifts`` = :meth:`significant_shifts` with its defaults, ``L_tilde`` = their number."""
        shifts = self.significant_shifts()
        return {"shifts": list(shifts), "L_tilde": len(shifts)}

    @staticmethod
    def score_run(instance: dict[str, Any], final_regret: float, diagnostics: dict[str, Any],
                  env_kwargs: dict[str, Any]) -> dict[str, float]:
        """Per-run metrics (docs/papers/nonstat-lipschitz.md) from :meth:`instance_metrics`, the final dynamic regret, the
        agent's diagnostics and the env kwargs (``horizon``, ``d``).

        * ``L_tilde``: number of significant shifts; ``normalized_regret`` =
          ``R_T / ((L~ + 1)^{1/(d+2)} T^{(d+1)/(d+2)})`` (``(L~+1)^{1/3} T^{2/3}`` for ``d = 1``), the rate
          of the paper's bound without log factors.
        * With ``restart_times`` in the diagnostics (agents that restart on detected changes): a restart
          at round ``r`` in phase ``[tau_i, tau_{i+1})``, ``i >= 1``, is a ``detection`` of ``tau_i`` with
          delay ``r - tau_i`` if it is the first restart in that phase; every other restart (a second
          one in the phase, or one before the first shift) is a ``false_alarm``. ``mean_delay`` averages
          the delays (NaN without detection).
        """
        horizon, d = int(env_kwargs["horizon"]), int(env_kwargs.get("d", 1))
        shifts = [int(x) for x in instance.get("shifts", [])]
        L = len(shifts)
        out = {
            "L_tilde": float(L),
            "normalized_regret": float(final_regret) / ((L + 1) ** (1.0 / (d + 2)) * horizon ** ((d + 1.0) / (d + 2))),
        }
        times = diagnostics.get("restart_times")
        if times is not None:
            seen: set[int] = set()
            delays, false_alarms = [], 0
            for r in sorted(int(x) for x in times):
                phase = int(np.searchsorted(shifts, r, side="right"))  # number of shifts <= r
                if phase >= 1 and phase not in seen:
                    seen.add(phase)
                    delays.append(r - shifts[phase - 1])
                else:
                    false_alarms += 1
            out["detections"] = float(len(delays))
            out["false_alarms"] = float(false_alarms)
            out["mean_delay"] = float(np.mean(delays)) if delays else float("nan")
        return out


class BatchedNonStatLipschitzOracle:
    """Oracle of :class:`NonStatLipschitzVectorEnv`: one row per run, vectorised over rows.

    ``mean_reward(actions (n, d), t)``, ``optimal_value(t)`` and ``regret(actions, t)`` return ``(n,)``;
    row ``i`` equals ``oracles[i]`` bit for bit.
    """

    def __init__(self, inst: _Instances, oracles: list[NonStatLipschitzOracle]):
        self._inst = inst
        self.oracles = oracles
        self.n = inst.n
        self.d = inst.d
        self.horizon = inst.T
        self._shape = (inst.n, inst.d)
        self._scratch = (np.empty(inst.n), np.empty(inst.n))
        self._args = (inst.tvec, inst.topt, inst.tmat, inst.starts, inst.pdat, inst.pmax)

    def _eval(self, actions: Any, t: int):
        t = _check_round(t, self.horizon)
        X = _coerce(actions, (self.n, self.d), "actions")
        status, mean, opt, reg = self._inst.evaluate(X, self._inst.all_rows, t)
        if status:
            raise _invalid(status, X)
        return mean, opt, reg

    def mean_reward(self, actions: Any, t: int) -> np.ndarray:
        return self._eval(actions, t)[0]

    def optimal_value(self, t: int) -> np.ndarray:
        return self._eval(self._inst.zeros, t)[1]

    def regret(self, actions: Any, t: int) -> np.ndarray:
        # hot path of the runner (one call per round): same kernel as _eval, fewer Python steps
        if type(t) is not int or not 1 <= t <= self.horizon:
            t = _check_round(t, self.horizon)
        X = _coerce(actions, self._shape, "actions")
        reg = np.empty(self.n)
        inst = self._inst
        status = _eval_kernel(inst.code, X, inst.all_rows, t, *self._args, *self._scratch, reg)
        if status:
            raise _invalid(status, X)
        return reg

    def significant_shifts(self, **kwargs: Any) -> list[tuple[int, ...]]:
        """Per-run significant shifts (see :meth:`NonStatLipschitzOracle.significant_shifts`)."""
        return [o.significant_shifts(**kwargs) for o in self.oracles]


# -------------------------------------------------------------------------------------- core
class _Runs:
    """Instances + noise streams of a batch of runs (the shared engine of both envs)."""

    def __init__(self, cfg: _Config, seeds: Sequence[int]):
        self.cfg = cfg
        self.seeds = [int(s) for s in seeds]
        rs = [run_seeds(s) for s in self.seeds]
        self.inst = _Instances(cfg, [r.instance for r in rs])
        stream = UniformStream if cfg.noise == "bernoulli" else NormalStream
        self.noise = stream([r.noise for r in rs])
        self.oracles = [NonStatLipschitzOracle(self.inst, i, s, cfg) for i, s in enumerate(self.seeds)]
        self.bernoulli = cfg.noise == "bernoulli"
        self.sigma = cfg.sigma
        self.t = 0
        # scratch buffers for step
        n = len(self.seeds)
        self._m = np.empty(n)
        self._o = np.empty(n)
        self._r = np.empty(n)
        inst = self.inst
        self._args = (inst.tvec, inst.topt, inst.tmat, inst.starts, inst.pdat, inst.pmax)

    def step(self, X: np.ndarray) -> np.ndarray:
        """Rewards of the validated float64 actions X (n, d) at round t + 1; advances t."""
        t = self.t + 1
        inst = self.inst
        status = _eval_kernel(inst.code, X, inst.all_rows, t, *self._args, self._m, self._o, self._r)
        if status:
            raise _invalid(status, X)
        # noise drawn independently of the action: one U[0,1) (Bernoulli) or one N(0,1) per run and round
        z = self.noise.take1()
        if self.bernoulli:
            r = (z < self._m).astype(np.float64)  # Y = 1{U < mu_t(x)}
        else:
            r = self._m + self.sigma * z  # Y = mu_t(x) + sigma Z, unclipped
        self.t = t
        return r




# --------------------------------------------------------------------------------- single env
class NonStatLipschitzEnv(gym.Env):
    """Non-stationary Lipschitz bandit on ``[0, 1]^d`` (``NonStatLipschitz-v0``).

    ## Description

    An oblivious adversary fixes mean functions ``mu_t : [0, 1]^d -> [0, 1]``, ``t = 1..T``, each 1-Lipschitz
    (l-inf norm for ``d > 1``) with no constraint linking ``mu_t`` and ``mu_{t+1}``. At round ``t`` the agent
    plays ``x_t`` and observes a noisy reward of mean ``mu_t(x_t)``. Instance families (``instance``):

    * ``two-peak-cyclic`` [code]: ``mu_t = (1 - a_t)(1 - |x - 0.3|) + a_t (1 - |x - 0.7|)``,
      ``a_t = (1 - cos(2 pi c (t - 1)/T))/2`` (``c = cycles``, default 5). ``mu_t`` changes every round;
      the argmax switches ``2c`` times. ``two-peak-cyclic-10``: preset with ``cycles = 10``.
    * ``piecewise-tents`` [design]: ``phases`` phases (equal, or Dirichlet(2,..,2) lengths of at least
      ``min_length`` rounds); phase ``i``: ``0.3 + max(0, h_i - ||x - c_i||_inf)`` (slope 1). Seeded
      (``random_tents=True``, default): ``h_i ~ U[0.2, 0.4]``, ``c_i ~ U[0, 1]^d`` with
      ``||c_i - c_{i-1}||_inf >= 0.4``; ``random_tents=False``: ``h_i = 0.4``, ``c_i`` alternating
      0.2 / 0.8 (``(c_i,..,c_i)`` for ``d > 1``). Every change leaves the old peak a gap ``>= 0.2``, so
      ``L~ = phases - 1`` once phases last a few hundred rounds (the oracle reports the exact value).
    * ``benign-changes`` [design] (``d = 1``): ``0.9 - |x - 0.25|`` on ``[0, 0.5]``,
      ``0.65 + s_t max(0, 0.25 - |x - 0.75|)`` on ``[0.5, 1]``, ``s_t ~ U[-1, 0.6]`` i.i.d.;
      ``L = T`` but ``L~ = 0`` (arm 0.25 is optimal every round). ``static=True``: ``s_t = 0``.
    * ``drifting-peak`` [design]: tent ``0.3 + 0.4 max(0, 1 - ||x - c(t)||/0.4)``,
      ``c(t) = 0.5 + 0.3 sin(2 pi t / period)``, ``period`` default ``T/2``.
    * ``random-lipschitz`` [design] (``d = 1``): ``phases`` Dirichlet(1,..,1) phases (at least
      ``min_length``); each a piecewise-linear function on knots ``k/16`` with ``f(0) ~ U[0.2, 0.8]``,
      increments ``u_k/16``, ``u_k ~ U[-1, 1]``, rescaled to ``0.05 + (f - min f) min(1, 0.9/(max f - min f))``.

    ## Action Space

    ``Box(0, 1, (d,), float64)``: float64 because regrets are resolved far below float32's ``6e-8`` steps
    near the peak; float32 actions (e.g. from an SB3 policy) are accepted as they are. Float or integer
    arrays / lists of shape ``(d,)`` are accepted; a wrong
    shape or dtype, NaN/inf or a coordinate outside ``[0, 1]`` raises
    :class:`~papergym.envs.InvalidActionError` naming the rule, and leaves the env unchanged
    (see :meth:`validate_action`).

    ## Observation Space

    ``Box(0, 1, (1,), float64)`` with ``noise="bernoulli"``, ``Box(-inf, inf, (1,), float64)`` with
    ``noise="gaussian"`` (unclipped): the reward just received (``0`` after ``reset``).

    ## Rewards

    ``noise="bernoulli"`` (default, as in [code]): ``Y_t = 1{U_t < mu_t(x_t)}``, ``U_t ~ U[0, 1)``.
    ``noise="gaussian"``: ``Y_t = mu_t(x_t) + sigma Z_t``, ``Z_t ~ N(0, 1)``, unclipped (clipping would bias
    the means) [design]. ``U_t`` / ``Z_t`` come from the run's noise stream, one per round, drawn
    independently of the action: every agent on the same seed faces the same numbers [design].

    ## Starting State

    ``reset(seed=s)`` builds the instance from ``run_seeds(s).instance`` (phase lengths, tents, ``s_t``,
    random knots; the cyclic, drifting, fixed equal-phase tents and static benign instances do not depend
    on it) and the
    noise from ``run_seeds(s).noise``. Same seed: same instance and noise, bit for bit. ``reset()`` without a
    seed draws the run seed from ``self.np_random`` (fresh entropy if the env was never seeded).

    ## Episode End

    Never terminated; truncated at ``t = T`` (``horizon``). Stepping after that (or before ``reset``) raises
    :class:`gymnasium.error.ResetNeeded`. ``info = {"t": t}`` (rounds played); nothing privileged.

    ## Arguments

    * ``instance`` (str, default ``"two-peak-cyclic"``): one of :data:`INSTANCES`.
    * ``horizon`` (int, default ``2**15``): ``T`` [design; the paper's figure uses 100,000].
    * ``d`` (int, default 1): dimension; ``> 1`` for two-peak-cyclic, piecewise-tents, drifting-peak only.
    * ``noise`` (``"bernoulli"`` | ``"gaussian"``), ``sigma`` (float, default 0.1, Gaussian only).
    * family kwargs (:func:`instance_kwargs`): two-peak-cyclic ``cycles=5`` (``-10`` preset: 10);
      piecewise-tents ``phases=5, random_lengths=False, min_length=256, random_tents=True``;
      benign-changes ``static=False``;
      drifting-peak ``period=None`` (``T/2``); random-lipschitz ``phases=8, min_length=256``.
      All [design] except the two-peak shape [code].

    ## Oracle and regret

    ``env.unwrapped.oracle`` (:class:`NonStatLipschitzOracle`, valid after ``reset``): ``mean_reward(x, t)``,
    ``mean_rewards(xs, t)``, ``optimal_value(t)`` (exact: closed form ``max(1 - 0.4a, 0.6 + 0.4a)`` for
    two-peak, maxima over breakpoints / known peaks otherwise), ``regret(x, t) = mu_t* - mu_t(x) >= 0``,
    ``gaps(xs, t)``, ``best_action(t)``, ``change_points()``, ``argmax_switches()`` and
    ``significant_shifts(grid, length_ratio=2**0.25, c_sig=1.0)`` (``L~`` = its length). Dynamic regret
    ``R_T = sum_t delta_t(x_t)`` is computed from means, never from realised rewards (use
    :class:`~papergym.envs.wrappers.RegretRecorder`). ``env.unwrapped.problem`` is the public
    :class:`~papergym.envs.spec.ProblemSpec` (``d``, ``lipschitz=1``, ``norm="linf"``, ``noise``, ``sigma``,
    horizon) -- never the family.

    ## Paper

    N. Nguyen, S. Gaucher, C. Vernade, *Non-Stationary Lipschitz Bandits*, arXiv 2505.18871, NeurIPS 2025.
    Official code ``nguyenicolas/NS_Lipschitz_Bandits`` (``Environment.py``: two-peak environment).
    Rates: ``E[R_T] = O~(L~^{1/3} T^{2/3})`` with a matching lower bound.

    ## Version History

    * v0: initial version.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def __init__(
        self,
        instance: str = "two-peak-cyclic",
        horizon: int = 2**15,
        d: int = 1,
        noise: str = "bernoulli",
        sigma: float = 0.1,
        render_mode: str | None = None,
        **family_kwargs: Any,
    ):
        if render_mode is not None:
            raise ValueError(f"render_mode must be None ({ENV_ID} has no render modes), got {render_mode!r}")
        self.cfg = _make_config(instance, horizon, d, noise, sigma, **family_kwargs)
        self.problem = make_problem(self.cfg.d, self.cfg.horizon, self.cfg.noise, self.cfg.sigma)
        self.action_space = self.problem.action_space
        self.observation_space = self.problem.observation_space
        self.horizon = self.cfg.horizon
        self.d = self.cfg.d
        self._runs: _Runs | None = None
        self.run_seed: int | None = None

    @property
    def t(self) -> int:
        """Rounds played since the last ``reset`` (0 before round 1)."""
        return 0 if self._runs is None else self._runs.t

    @property
    def oracle(self) -> NonStatLipschitzOracle:
        if self._runs is None:
            raise ResetNeeded(f"{ENV_ID}: the oracle is built by reset(); call env.reset() first")
        return self._runs.oracles[0]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if options:
            raise ValueError(f"{ENV_ID}: reset takes no options, got {sorted(options)}")
        if seed is not None:
            seed = _check_seed(seed)
        super().reset(seed=seed)
        run_seed = seed if seed is not None else _draw_run_seeds(self.np_random, 1)[0]
        self._runs = _Runs(self.cfg, [run_seed])
        self.run_seed = run_seed
        return np.zeros(1), {"t": 0}

    def validate_action(self, action: Any) -> np.ndarray:
        """Return ``action`` as a float64 ``(d,)`` array, or raise :class:`InvalidActionError` naming the rule
        broken (shape, dtype, finite, bounds). Does not change the env."""
        a = _coerce(action, (self.d,))
        if not (np.all(a >= 0.0) and np.all(a <= 1.0)):
            raise _invalid(1 if not np.all(np.isfinite(a)) else 2, a)
        return a

    def step(self, action: Any):
        runs = self._runs
        if runs is None:
            raise ResetNeeded(f"{ENV_ID}: call reset() before step()")
        if runs.t >= self.horizon:
            raise ResetNeeded(f"{ENV_ID}: the episode is over (t = T = {self.horizon}); call reset()")
        X = _coerce(action, (self.d,)).reshape(1, self.d)
        r = runs.step(X)
        t = runs.t
        return r.copy(), float(r[0]), False, t >= self.horizon, {"t": t}

    def render(self) -> None:
        return None


# --------------------------------------------------------------------------------- vector env
class NonStatLipschitzVectorEnv(VectorEnv):
    """``num_envs`` independent runs of :class:`NonStatLipschitzEnv` stepped together in numpy.

    ``reset(seed=[s_0, .., s_{n-1}])`` (or an int ``s`` -> ``s, s+1, ..``; ``None`` -> seeds drawn from
    ``self.np_random``); ``step(actions (n, d))`` -> observations ``(n, 1)``, rewards ``(n,)``, terminations
    ``(n,)`` (always False), truncations ``(n,)`` (True at ``t = T``), ``info = {"t": (n,) ints, "_t": mask}``.
    Row ``i`` is bit-identical to the single env reset with seed ``s_i``. ``.oracle`` is a
    :class:`BatchedNonStatLipschitzOracle`, ``.oracles`` the per-run oracles, ``.problem`` the
    ``ProblemSpec`` of one run, ``.t`` the rounds played. No autoreset (``AutoresetMode.DISABLED``): all runs
    share ``T``; call ``reset`` to start again. Kwargs as :class:`NonStatLipschitzEnv`.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def __init__(
        self,
        num_envs: int = 1,
        instance: str = "two-peak-cyclic",
        horizon: int = 2**15,
        d: int = 1,
        noise: str = "bernoulli",
        sigma: float = 0.1,
        render_mode: str | None = None,
        **family_kwargs: Any,
    ):
        if render_mode is not None:
            raise ValueError(f"render_mode must be None ({ENV_ID} has no render modes), got {render_mode!r}")
        self.num_envs = _as_int("num_envs", num_envs, 1)
        self.cfg = _make_config(instance, horizon, d, noise, sigma, **family_kwargs)
        self.problem = make_problem(self.cfg.d, self.cfg.horizon, self.cfg.noise, self.cfg.sigma)
        self.horizon = self.cfg.horizon
        self.d = self.cfg.d
        self.single_action_space = self.problem.action_space
        self.single_observation_space = self.problem.observation_space
        n = self.num_envs
        self.action_space = spaces.Box(0.0, 1.0, (n, self.d), np.float64)
        self.observation_space = _obs_space(self.cfg.noise, (n, 1))
        self._runs: _Runs | None = None
        self._oracle: BatchedNonStatLipschitzOracle | None = None
        self.seeds: list[int] | None = None
        self._mask = np.ones(n, dtype=bool)

    @property
    def t(self) -> int:
        return 0 if self._runs is None else self._runs.t

    @property
    def oracle(self) -> BatchedNonStatLipschitzOracle:
        if self._oracle is None:
            raise ResetNeeded(f"{ENV_ID}: the oracle is built by reset(); call reset() first")
        return self._oracle

    @property
    def oracles(self) -> list[NonStatLipschitzOracle]:
        return self.oracle.oracles

    def _seed_list(self, seed: Any) -> list[int]:
        return vector_run_seeds(self, seed)

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        if options:
            raise ValueError(f"{ENV_ID}: reset takes no options, got {sorted(options)}")
        seeds = self._seed_list(seed)
        self._runs = _Runs(self.cfg, seeds)
        self._oracle = BatchedNonStatLipschitzOracle(self._runs.inst, self._runs.oracles)
        self.seeds = seeds
        n = self.num_envs
        return np.zeros((n, 1)), {"t": np.zeros(n, np.int64), "_t": self._mask.copy()}

    def validate_action(self, actions: Any) -> np.ndarray:
        """Return ``actions`` as float64 ``(n, d)``, or raise :class:`InvalidActionError` (state unchanged)."""
        a = _coerce(actions, (self.num_envs, self.d), "actions")
        if not (np.all(a >= 0.0) and np.all(a <= 1.0)):
            raise _invalid(1 if not np.all(np.isfinite(a)) else 2, a)
        return a

    def step(self, actions: Any):
        runs = self._runs
        if runs is None:
            raise ResetNeeded(f"{ENV_ID}: call reset() before step()")
        if runs.t >= self.horizon:
            raise ResetNeeded(f"{ENV_ID}: the episode is over (t = T = {self.horizon}); call reset()")
        X = _coerce(actions, (self.num_envs, self.d), "actions")
        r = runs.step(X)
        t = runs.t
        n = self.num_envs
        ts = np.empty(n, np.int64)
        ts.fill(t)
        return (
            r.reshape(n, 1).copy(),
            r,
            np.zeros(n, dtype=bool),
            np.zeros(n, dtype=bool) if t < self.horizon else np.ones(n, dtype=bool),
            {"t": ts, "_t": self._mask.copy()},
        )

    def render(self) -> None:
        return None
