"""Oracles of ``NonStatLipschitz-v0``: the privileged per-run view (:class:`NonStatLipschitzOracle`: means,
optimum, regret, change points, significant shifts, run scoring) and its batched form for the vector env.

Part of :mod:`papergym.envs.bandits.lipschitz` (tags: see docs/conventions.md).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from papergym.envs.bandits.kernels import last_le
from papergym.envs.bandits.lipschitz.instances import (
    _RANDOM,
    _TENTS,
    _TWO_PEAK,
    ENV_ID,
    _Config,
    _eval_kernel,
    _Instances,
)
from papergym.envs.spec import InvalidActionError
from papergym.validate import in_range, positive_float, positive_int

__all__ = ["NonStatLipschitzOracle", "BatchedNonStatLipschitzOracle"]


# ------------------------------------------------------------------------------- shift kernels
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
                k_lo = last_le(starts, a)
                k_hi = last_le(starts, t)
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


# ----------------------------------------------------------------------------------- oracles
_SHIFT_CACHE: dict[tuple, tuple[int, ...]] = {}
_SHIFT_CACHE_MAX = 256


def _lengths(T: int, ratio: float | None) -> np.ndarray:
    """Window lengths Lambda = {1} U {ceil(r^k)} (<= T); every length 1..T when ratio is None."""
    if ratio is None:
        return np.arange(1, T + 1, dtype=np.int64)
    r = in_range(ratio, "length_ratio", 1, None)
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
    g = positive_int(g, "grid", integral_float=True)
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
            raise InvalidActionError(
                f"{ENV_ID}: rule 'shape' broken: {what} must be an array of shape {shape}; {e}"
            ) from None
    if a.dtype.kind not in "fiu":
        raise InvalidActionError(
            f"{ENV_ID}: rule 'dtype' broken: {what} must hold real numbers (float or integer dtype), "
            f"got dtype {a.dtype}"
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
        return (
            f"NonStatLipschitzOracle(instance={self.instance!r}, horizon={self.horizon}, d={self.d}, seed={self.seed})"
        )

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

    def significant_shifts(
        self, grid: int | None = None, length_ratio: float | None = 2**0.25, c_sig: float = 1.0
    ) -> tuple[int, ...]:
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
        positive_float(c_sig, "c_sig")  # checked; the cache key keeps the value as given
        lags = _lengths(self.horizon, length_ratio)
        pts = _grid_points(self.d, grid)
        if self.cfg.family == "drifting-peak" and lags.size * pts.shape[0] * 8 > 2**30:
            raise ValueError(
                f"significant_shifts would need {lags.size * pts.shape[0] * 8 / 2**30:.1f} GiB of window sums "
                f"({lags.size} lengths x {pts.shape[0]} grid points); use a geometric length_ratio or a smaller grid"
            )
        key = (
            self.cfg.instance_key,
            None if self.cfg.deterministic else self.seed,
            pts.shape[0],
            None if length_ratio is None else float(length_ratio),
            float(c_sig),
        )
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
    def score_run(
        instance: dict[str, Any], final_regret: float, diagnostics: dict[str, Any], env_kwargs: dict[str, Any]
    ) -> dict[str, float]:
        """Per-run metrics (docs/papers/nonstat-lipschitz.md) from :meth:`instance_metrics`, the final dynamic regret,
        the agent's diagnostics and the env kwargs (``horizon``, ``d``).

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
