"""Instance families of ``NonStatLipschitz-v0``: the validated configuration, the per-run mean functions
``mu_t`` stacked for all runs of a batch (:class:`_Instances`) and the numba kernel that evaluates them.

Part of :mod:`papergym.envs.bandits.lipschitz` (the package docstring lists the families' design decisions;
tags: see docs/conventions.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numba import njit

from papergym.validate import boolean, one_of, positive_float, positive_int

__all__ = ["ENV_ID", "INSTANCES", "instance_kwargs"]

ENV_ID = "NonStatLipschitz-v0"

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
    "piecewise-tents": (
        "piecewise-tents",
        {"phases": 5, "random_lengths": False, "min_length": 256, "random_tents": True},
    ),
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
    T = positive_int(horizon, "horizon", 1, integral_float=True)
    d = positive_int(d, "d", 1, integral_float=True)
    if family in _D1_ONLY and d != 1:
        raise ValueError(f"d must be 1 for instance {instance!r} (the family is defined on [0, 1] only), got d={d}")
    one_of(noise, "noise", _NOISES)
    sigma = positive_float(sigma, "sigma", allow_zero=True)
    kw = {**defaults, **family_kwargs}
    if family == "two-peak-cyclic":
        kw["cycles"] = positive_int(kw["cycles"], "cycles", 1, integral_float=True)
    elif family in ("piecewise-tents", "random-lipschitz"):
        kw["phases"] = positive_int(kw["phases"], "phases", 1, integral_float=True)
        kw["min_length"] = positive_int(kw["min_length"], "min_length", 1, integral_float=True)
        rnd = family == "random-lipschitz" or boolean(kw["random_lengths"], "random_lengths")
        if family == "piecewise-tents":
            kw["random_lengths"] = bool(kw["random_lengths"])
            kw["random_tents"] = boolean(kw["random_tents"], "random_tents")
        need = kw["phases"] * kw["min_length"] if rnd else kw["phases"]
        if T < need:
            raise ValueError(
                f"horizon={T} is too short for instance {instance!r}: {kw['phases']} phases"
                + (f" of at least min_length={kw['min_length']} rounds" if rnd else "")
                + f" need horizon >= {need}"
            )
    elif family == "benign-changes":
        kw["static"] = boolean(kw["static"], "static")
    elif family == "drifting-peak":
        p = kw["period"]
        if p is not None:
            p = positive_float(p, "period")
            p = int(p) if p.is_integer() else p
        kw["period"] = p
    return _Config(instance, family, T, d, str(noise), sigma, tuple(sorted(kw.items())))


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
            self.code,
            X,
            rows,
            t,
            self.tvec,
            self.topt,
            self.tmat,
            self.starts,
            self.pdat,
            self.pmax,
            mean,
            opt,
            reg,
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
