"""Scaling sweeps of ``NonStatLipschitz-v0``: regret over a grid of horizons ``T`` and significant shifts ``L~``.

:func:`sweep` (``papergym sweep``) runs agents over every ``(T, L)`` of a grid and fits how the final dynamic
regret grows. The paper (Nguyen, Gaucher, Vernade, *Non-Stationary Lipschitz Bandits*, NeurIPS 2025, main
theorem and its lower bound) gives the minimax rate ``R_T = O~(L~^{1/3} T^{2/3})`` for ``d = 1``; the
``d``-dimensional version of the same phase-summation argument is ``(L~+1)^{1/(d+2)} T^{(d+1)/(d+2)}``
(the rate :meth:`~papergym.envs.bandits.lipschitz.NonStatLipschitzOracle.score_run` normalises by). So the
theoretical log-log slopes are ``(d+1)/(d+2)`` in ``T`` and ``1/(d+2)`` in ``L~ + 1``.

Instances: the shift count is set through ``piecewise-tents`` (the one family whose number of changes is a
parameter and whose every change is significant once phases last a few hundred rounds): ``L`` shifts =
``phases = L + 1`` equal phases, seeded tents (:class:`~papergym.envs.bandits.lipschitz.NonStatLipschitzEnv`).
The fit uses this nominal ``L``; the oracle's count ``L~`` (``significant_shifts()``) of every run is reported
next to it, so cells whose phases are too short for every change to be significant are visible.

Runs: every grid point is one :func:`~papergym.leaderboard.runner.compare.compare` call (same cells, cache,
executors and seeds), so a rerun computes only the missing runs and a sweep shares its cells with
``papergym compare`` runs of the same configuration.

Fit: ordinary least squares of ``log mean_s R_T(T, L; s) = a + b log T + c log(L + 1)`` over the grid cells
(:func:`fit_power_law`; a term is dropped when its variable takes one value). CIs: percentile bootstrap over
seeds -- one resample of the seed indices is applied to every cell (the cells share their seeds), the cell
means recomputed and the fit redone (:func:`bootstrap_slopes`; 2,000 replicates, fixed seed).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.leaderboard.runner.stats import bootstrap_ci

logger = logging.getLogger(__name__)

__all__ = [
    "SWEEP_ENV",
    "SweepResult",
    "bootstrap_slopes",
    "check_grid",
    "fit_power_law",
    "parse_horizons",
    "parse_shifts",
    "sweep",
    "theory_slopes",
]

SWEEP_ENV = "NonStatLipschitz-v0"
N_BOOT = 2000
_RESERVED_KWARGS = ("instance", "phases", "horizon")

_POW = re.compile(r"^\s*2\s*\^\s*(\d+)\s*$")
_INT = re.compile(r"^\s*(\d+)\s*$")


def _horizon_item(text: str, whole: str) -> int:
    m = _POW.match(text)
    if m:
        return 2 ** int(m.group(1))
    m = _INT.match(text)
    if m:
        return int(m.group(1))
    raise ValueError(
        f"--horizon: cannot read {text.strip()!r} in {whole!r}; expected 2^a..2^b (powers of two "
        "from 2^a to 2^b), or a comma list of 2^k or integers (2^10,2^12,5000)"
    )


def parse_horizons(text: str) -> list[int]:
    """``"2^12..2^20"`` -> ``[4096, 8192, ..., 2^20]`` (every power of two in between); ``"2^10,2^12,5000"`` ->
    those values; items of a comma list may themselves be ranges. Sorted, duplicates removed, each ``>= 2``;
    a clear ``ValueError`` otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"--horizon: expected 2^a..2^b or a comma list, got {text!r}")
    out: set[int] = set()
    for part in text.split(","):
        if not part.strip():
            raise ValueError(f"--horizon: empty item in {text!r}")
        if ".." in part:
            lo_s, _, hi_s = part.partition("..")
            lo_m, hi_m = _POW.match(lo_s), _POW.match(hi_s)
            if not (lo_m and hi_m):
                raise ValueError(
                    f"--horizon: a range must read 2^a..2^b (both ends powers of two), got {part.strip()!r}"
                )
            a, b = int(lo_m.group(1)), int(hi_m.group(1))
            if a > b:
                raise ValueError(f"--horizon: empty range {part.strip()!r} (2^{a} > 2^{b})")
            out.update(2**k for k in range(a, b + 1))
        else:
            out.add(_horizon_item(part, text))
    bad = sorted(h for h in out if h < 2)
    if bad:
        raise ValueError(f"--horizon: horizons must be >= 2, got {bad[0]} in {text!r}")
    if max(out) > 2**30:
        raise ValueError(f"--horizon: {max(out)} rounds is beyond what a sweep can run (at most 2^30)")
    return sorted(out)


def parse_shifts(text: str) -> list[int]:
    """``"0,1,2,4,8,16"`` -> those shift counts (non-negative integers, sorted, duplicates removed)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"--shifts: expected a comma list of non-negative integers, got {text!r}")
    out = set()
    for part in text.split(","):
        m = _INT.match(part)
        if not m:
            raise ValueError(f"--shifts: expected a comma list of non-negative integers (0,1,2,4), got {text!r}")
        out.add(int(m.group(1)))
    return sorted(out)


def theory_slopes(d: int = 1) -> tuple[float, float]:
    """Exponents of ``T`` and ``L~ + 1`` in the rate ``(L~+1)^{1/(d+2)} T^{(d+1)/(d+2)}`` (2/3 and 1/3 for d = 1)."""
    return (d + 1) / (d + 2), 1.0 / (d + 2)


# ---------------------------------------------------------------------------------------------------- fit
def _design(horizons: np.ndarray, shifts: np.ndarray) -> tuple[np.ndarray, list[str]]:
    cols, names = [np.ones(len(horizons))], ["intercept"]
    if np.unique(horizons).size > 1:
        cols.append(np.log(horizons))
        names.append("T")
    if np.unique(shifts).size > 1:
        cols.append(np.log(shifts + 1.0))
        names.append("L+1")
    return np.stack(cols, axis=1), names


def fit_power_law(horizons: Sequence[float], shifts: Sequence[float], regrets: Any) -> dict[str, float]:
    """Least-squares fit of ``log R = a + b log T + c log(L + 1)`` on the cells ``(T_k, L_k, R_k)``.

    ``regrets`` is ``(n_cells,)`` or ``(n_cells, B)`` (``B`` fits at once, one per column). Returns
    ``{"intercept": a, "slope_T": b, "slope_L": c}`` (arrays of length ``B`` for 2-D input); a slope is NaN
    when its variable takes a single value. Regrets must be positive (logs).
    """
    T = np.asarray(horizons, dtype=float)
    L = np.asarray(shifts, dtype=float)
    R = np.asarray(regrets, dtype=float)
    if T.shape != L.shape or T.ndim != 1 or R.shape[0] != T.size:
        raise ValueError(
            f"horizons, shifts and regrets must give one value per cell; got shapes {T.shape}, {L.shape}, {R.shape}"
        )
    if np.any(T <= 0) or np.any(L < 0):
        raise ValueError("horizons must be > 0 and shift counts >= 0")
    if np.any(~(R > 0)):
        raise ValueError("regrets must be positive and finite for a log-log fit (a zero mean regret cannot be fitted)")
    X, names = _design(T, L)
    if X.shape[0] < X.shape[1]:
        raise ValueError(f"{X.shape[0]} cell(s) cannot determine {X.shape[1]} coefficients")
    coef, *_ = np.linalg.lstsq(X, np.log(R), rcond=None)
    nan = np.full(R.shape[1:], np.nan) if R.ndim == 2 else np.nan
    out = {"intercept": coef[0], "slope_T": nan, "slope_L": nan}
    for i, name in enumerate(names[1:], start=1):
        out["slope_T" if name == "T" else "slope_L"] = coef[i]
    return out


def bootstrap_slopes(
    horizons: Sequence[float],
    shifts: Sequence[float],
    per_seed: Any,
    *,
    n_boot: int = N_BOOT,
    ci: float = 0.95,
    seed: int = 0,
) -> dict[str, tuple[float, float, float]]:
    """Slopes of :func:`fit_power_law` on the cell means of ``per_seed`` ``(n_cells, n_seeds)`` (NaN = a failed
    run, left out of its cell's mean) with percentile-bootstrap CIs over seeds: each replicate resamples the
    seed indices with replacement once for all cells. Returns ``{"slope_T": (est, lo, hi), "slope_L": ...}``."""
    Rs = np.asarray(per_seed, dtype=float)
    if Rs.ndim != 2:
        raise ValueError(f"per_seed must be (n_cells, n_seeds), got shape {Rs.shape}")
    ok = np.isfinite(Rs)
    vals = np.where(ok, Rs, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = fit_power_law(horizons, shifts, vals.sum(1) / ok.sum(1))
    n = Rs.shape[1]
    rng = np.random.default_rng(seed)
    W = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(n_boot)], axis=1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (vals @ W) / (ok.astype(float) @ W)  # (n_cells, n_boot)
    good = np.all(means > 0, axis=0) & np.all(np.isfinite(means), axis=0)  # a replicate with an empty cell is dropped
    reps = fit_power_law(horizons, shifts, means[:, good]) if good.any() else None
    a = (1.0 - ci) / 2.0
    out = {}
    for k in ("slope_T", "slope_L"):
        est = float(point[k])
        if not math.isfinite(est) or reps is None:
            out[k] = (est, float("nan"), float("nan"))
        else:
            lo, hi = np.quantile(reps[k], [a, 1.0 - a])
            out[k] = (est, float(lo), float(hi))
    return out


# ------------------------------------------------------------------------------------------------- sweep
@dataclass
class SweepResult:
    """What :func:`sweep` returns. ``runs``: one row per (agent, horizon, shifts, seed) with ``final_regret``
    and the oracle's ``L_tilde``; ``cells``: one row per (agent, horizon, shifts) with the mean regret and its
    95 % bootstrap CI; ``slopes``: one row per agent with the fitted slopes, their CIs and the theory."""

    env_kwargs: dict[str, Any]
    d: int
    runs: pd.DataFrame
    cells: pd.DataFrame
    slopes: pd.DataFrame
    errors: list[dict[str, Any]] = field(default_factory=list)

    def format_table(self) -> str:
        c = self.cells
        head = ["agent", "T", "L", "L~ (oracle)", "mean R_T", "95% CI", "R_T/((L+1)^a T^b)", "ok runs"]
        rows = []
        for r in c.itertuples():
            rows.append(
                [
                    r.agent,
                    f"{r.horizon:,}",
                    str(r.shifts),
                    f"{r.L_tilde:.2f}" if math.isfinite(r.L_tilde) else "-",
                    f"{r.mean_regret:,.1f}",
                    f"[{r.ci_low:,.1f}, {r.ci_high:,.1f}]",
                    f"{r.normalized:.3f}",
                    f"{r.n_ok}/{r.n_runs}",
                ]
            )
        widths = [max(len(h), *(len(x[i]) for x in rows)) for i, h in enumerate(head)]
        fmt = lambda xs: "  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(xs, widths)))
        lines = [fmt(head), "-" * len(fmt(head))] + [fmt(x) for x in rows]
        lines.append("")
        bT, bL = theory_slopes(self.d)
        for s in self.slopes.itertuples():
            lines.append(
                f"{s.agent}: slope in T {_slope_txt(s.slope_T, s.slope_T_lo, s.slope_T_hi)} (theory {bT:.3f}); "
                f"slope in L+1 {_slope_txt(s.slope_L, s.slope_L_lo, s.slope_L_hi)} (theory {bL:.3f})"
            )
        return "\n".join(lines)

    def plot(self, path: str | Path | None = None):
        """Log-log figure: mean R_T against T (left) and against L + 1 (right), one colour per agent, 95 %
        bootstrap bars, the fitted lines and a dashed line of the theoretical slope through the fitted value at
        the smallest T (left) / L + 1 (right). With ``path``, writes ``<path>.png``."""
        import matplotlib.pyplot as plt
        from matplotlib.ticker import NullLocator

        bT, bL = theory_slopes(self.d)
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8))
        cmap = plt.get_cmap("tab10")
        c = self.cells[self.cells.mean_regret > 0]
        Ls = sorted(c.shifts.unique())
        Ts = sorted(c.horizon.unique())
        for i, (agent, sub) in enumerate(c.groupby("agent", sort=False)):
            col = cmap(i % 10)
            sl = self.slopes[self.slopes.agent == agent].iloc[0]
            a, b, g = sl.intercept, sl.slope_T, sl.slope_L
            b0 = 0.0 if not math.isfinite(b) else b
            g0 = 0.0 if not math.isfinite(g) else g
            for j, L in enumerate(Ls):
                s = sub[sub.shifts == L].sort_values("horizon")
                if not len(s):
                    continue
                alpha = 0.35 + 0.65 * (j + 1) / len(Ls)
                ax1.errorbar(
                    s.horizon,
                    s.mean_regret,
                    yerr=[s.mean_regret - s.ci_low, s.ci_high - s.mean_regret],
                    fmt="o",
                    ms=4,
                    color=col,
                    alpha=alpha,
                    label=f"{agent} (L = {', '.join(map(str, Ls))}: light to dark)" if j == len(Ls) - 1 else None,
                )
                if math.isfinite(a):
                    tt = np.array([s.horizon.min(), s.horizon.max()], dtype=float)
                    ax1.plot(tt, np.exp(a + b0 * np.log(tt) + g0 * np.log(L + 1)), "-", color=col, alpha=alpha, lw=1)
            for j, T in enumerate(Ts):
                s = sub[sub.horizon == T].sort_values("shifts")
                if not len(s):
                    continue
                alpha = 0.35 + 0.65 * (j + 1) / len(Ts)
                ax2.errorbar(
                    s.shifts + 1,
                    s.mean_regret,
                    yerr=[s.mean_regret - s.ci_low, s.ci_high - s.mean_regret],
                    fmt="o",
                    ms=4,
                    color=col,
                    alpha=alpha,
                    label=f"{agent} (T = {Ts[0]:,} .. {Ts[-1]:,}: light to dark)" if j == len(Ts) - 1 else None,
                )
                if math.isfinite(a):
                    ll = np.array([s.shifts.min() + 1, s.shifts.max() + 1], dtype=float)
                    ax2.plot(ll, np.exp(a + b0 * np.log(T) + g0 * np.log(ll)), "-", color=col, alpha=alpha, lw=1)
            if math.isfinite(a):  # theoretical slopes through the fit at the smallest T / L + 1
                t0, t1 = float(min(Ts)), float(max(Ts))
                L_mid = Ls[len(Ls) // 2]
                y0 = math.exp(a + b0 * math.log(t0) + g0 * math.log(L_mid + 1))
                ax1.plot(
                    [t0, t1],
                    [y0, y0 * (t1 / t0) ** bT],
                    "--",
                    color=col,
                    lw=1.5,
                    label=f"{agent}: theory slope {bT:.2f} (L={L_mid})",
                )
                l0, l1 = float(min(Ls) + 1), float(max(Ls) + 1)
                if l1 > l0:
                    y0 = math.exp(a + b0 * math.log(t1) + g0 * math.log(l0))
                    ax2.plot(
                        [l0, l1],
                        [y0, y0 * (l1 / l0) ** bL],
                        "--",
                        color=col,
                        lw=1.5,
                        label=f"{agent}: theory slope {bL:.2f} (T={int(t1):,})",
                    )
        from papergym.leaderboard.runner.plots import legend_outside

        for ax, xl in ((ax1, "horizon T [rounds]"), (ax2, "L + 1 [phases of piecewise-tents]")):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(xl)
            ax.set_ylabel("final dynamic regret R_T (mean over seeds, 95% CI)")
            ax.grid(True, which="both", alpha=0.3)
            legend_outside(ax, where="below", fontsize=7)
        if Ts:
            ax1.set_xticks(Ts, [f"2^{int(math.log2(t))}" if t & (t - 1) == 0 else f"{t:,}" for t in Ts])
            ax1.xaxis.set_minor_locator(NullLocator())
        if Ls:
            ax2.set_xticks([L + 1 for L in Ls], [str(L + 1) for L in Ls])
            ax2.xaxis.set_minor_locator(NullLocator())
        ax1.set_title(f"{SWEEP_ENV} piecewise-tents, d={self.d}: R_T vs T (solid: fit, dashed: theory)")
        ax2.set_title("R_T vs L+1")
        fig.tight_layout()
        if path is not None:
            p = Path(path)
            p = p.with_suffix(".png") if p.suffix != ".png" else p
            p.parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(p, dpi=130, bbox_inches="tight")
        return fig

    def save(self, folder: str | Path) -> Path:
        """Write ``sweep.csv`` (cells), ``runs.csv``, ``slopes.csv``, ``table.txt`` and ``sweep.png``."""
        import matplotlib.pyplot as plt

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.cells.to_csv(folder / "sweep.csv", index=False)
        self.runs.to_csv(folder / "runs.csv", index=False)
        self.slopes.to_csv(folder / "slopes.csv", index=False)
        (folder / "table.txt").write_text(self.format_table() + "\n")
        plt.close(self.plot(folder / "sweep.png"))
        return folder


def _slope_txt(est: float, lo: float, hi: float) -> str:
    if not math.isfinite(est):
        return "- (one value)"
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return f"{est:.3f}"
    return f"{est:.3f} [{lo:.3f}, {hi:.3f}]"


def check_grid(horizons: Sequence[int], shifts: Sequence[int], env_kwargs: Mapping[str, Any] | None = None) -> None:
    """Refuse, with a ``ValueError`` naming the value, a grid that cannot run: env arguments the sweep sets
    itself, a horizon shorter than ``L + 1`` phases, or env arguments the env rejects at some grid point."""
    from papergym.leaderboard.runner.compare import resolve_env_kwargs

    extra = dict(env_kwargs or {})
    bad = sorted(set(extra) & set(_RESERVED_KWARGS))
    if bad:
        raise ValueError(
            f"env argument(s) {bad} are set by the sweep (instance=piecewise-tents, phases=L+1, "
            "horizon from --horizon); leave them out"
        )
    if any(int(x) < 0 for x in shifts):
        raise ValueError(f"shift counts must be >= 0, got {sorted(shifts)}")
    too_short = [(T, L) for T in sorted(horizons) for L in sorted(shifts) if T < L + 1]
    if too_short:
        T, L = too_short[0]
        raise ValueError(f"horizon {T} is too short for {L} shifts (L + 1 = {L + 1} phases need T >= {L + 1})")
    for T in horizons:
        for L in shifts:
            resolve_env_kwargs(SWEEP_ENV, {**extra, "instance": "piecewise-tents", "phases": int(L) + 1}, int(T))


def sweep(
    horizons: Iterable[int],
    shifts: Iterable[int] = (0, 1, 2, 4, 8, 16),
    agents: Sequence[str] = ("mdbe",),
    seeds: Iterable[int] = range(8),
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    hyperparameters: Mapping[str, Mapping[str, Any]] | None = None,
    backend: str = "joblib",
    n_jobs: int | None = None,
    scheduler: Any = None,
    cache_dir: str | Path | None = None,
    cache: bool = True,
    progress: bool | None = None,
    n_boot: int = N_BOOT,
    progress_every: float = 30.0,
) -> SweepResult:
    """Run ``agents`` on ``NonStatLipschitz-v0`` ``piecewise-tents`` with ``phases = L + 1`` for every horizon
    ``T`` in ``horizons`` and ``L`` in ``shifts``, over ``seeds``; fit the log-log slopes (module docstring).

    ``env_kwargs``: further env arguments (``d``, ``noise``, ``sigma``, ``random_lengths``, ``min_length``,
    ``random_tents``); ``instance``, ``phases`` and ``horizon`` are set by the sweep. Other arguments as in
    :func:`~papergym.leaderboard.runner.compare.compare`; the progress (a bar on a terminal, a logged line every
    ``progress_every`` seconds elsewhere) counts the runs of the whole grid.
    """
    from papergym.leaderboard.runner.compare import compare
    from papergym.leaderboard.runner.progress import RunProgress

    Ts = sorted({int(t) for t in horizons})
    Ls = sorted({int(x) for x in shifts})
    seed_list = list(dict.fromkeys(int(s) for s in seeds))
    if not Ts or not Ls or not seed_list:
        raise ValueError("a sweep needs at least one horizon, one shift count and one seed")
    extra = dict(env_kwargs or {})
    check_grid(Ts, Ls, extra)
    d = int(extra.get("d", 1))
    rows, errors = [], []
    n_agents = len(dict.fromkeys(agents))
    bar = RunProgress(
        len(Ts) * len(Ls) * n_agents * len(seed_list),
        f"sweep {SWEEP_ENV}",
        unit="runs",
        enabled=progress,
        every=progress_every,
    )
    try:
        results = {}
        for T in Ts:
            for L in Ls:
                logger.info("sweep %s: T=%d, L=%d", SWEEP_ENV, T, L)
                results[T, L] = compare(
                    SWEEP_ENV,
                    agents=list(agents),
                    seeds=seed_list,
                    horizon=T,
                    env_kwargs={**extra, "instance": "piecewise-tents", "phases": L + 1},
                    backend=backend,
                    out=cache_dir,
                    cache=cache,
                    hyperparameters=hyperparameters,
                    n_jobs=n_jobs,
                    scheduler=scheduler,
                    progress=bar,
                )
    finally:
        bar.close()
    for T in Ts:
        for L in Ls:
            res = results[T, L]
            errors += [{**e, "horizon": T, "shifts": L} for e in res.errors]
            r = res.runs
            for row in r.itertuples():
                rows.append(
                    {
                        "agent": row.agent,
                        "role": row.role,
                        "horizon": T,
                        "shifts": L,
                        "phases": L + 1,
                        "seed": int(row.seed),
                        "status": row.status,
                        "final_regret": float(row.final_regret),
                        "L_tilde": float(getattr(row, "L_tilde", np.nan)),
                        "restarts": float(getattr(row, "restarts", np.nan)),
                    }
                )
    runs = pd.DataFrame(rows)
    env_kw = {**extra, "instance": "piecewise-tents"}
    return _summarise(runs, list(dict.fromkeys(agents)), seed_list, env_kw, d, errors, n_boot)


def _summarise(
    runs: pd.DataFrame,
    agents: list[str],
    seeds: list[int],
    env_kw: dict[str, Any],
    d: int,
    errors: list[dict[str, Any]],
    n_boot: int = N_BOOT,
) -> SweepResult:
    bT, bL = theory_slopes(d)
    cell_rows, slope_rows = [], []
    for agent in agents:
        ra = runs[runs.agent == agent]
        keys = sorted({(int(t), int(x)) for t, x in zip(ra.horizon, ra.shifts)})
        mat = np.full((len(keys), len(seeds)), np.nan)
        sidx = {s: i for i, s in enumerate(seeds)}
        for k, (T, L) in enumerate(keys):
            rc = ra[(ra.horizon == T) & (ra.shifts == L)]
            ok = rc[rc.status == "ok"]
            for s, v in zip(ok.seed, ok.final_regret):
                mat[k, sidx[int(s)]] = v
            est, lo, hi = bootstrap_ci(ok.final_regret.to_numpy()) if len(ok) else (np.nan,) * 3
            lt = ok.L_tilde.to_numpy(dtype=float)
            cell_rows.append(
                {
                    "agent": agent,
                    "horizon": T,
                    "shifts": L,
                    "phases": L + 1,
                    "L_tilde": float(np.nanmean(lt)) if np.isfinite(lt).any() else np.nan,
                    "mean_regret": est,
                    "ci_low": lo,
                    "ci_high": hi,
                    "normalized": est / ((L + 1) ** bL * T**bT) if math.isfinite(est) else np.nan,
                    "n_ok": len(ok),
                    "n_runs": len(rc),
                }
            )
        cT = np.array([k[0] for k in keys], dtype=float)
        cL = np.array([k[1] for k in keys], dtype=float)
        n_ok = np.isfinite(mat).sum(axis=1)
        cell_mean = np.where(n_ok > 0, np.where(np.isfinite(mat), mat, 0.0).sum(axis=1) / np.maximum(n_ok, 1), np.nan)
        usable = np.isfinite(cell_mean) & (cell_mean > 0)  # a log-log fit needs positive means
        slope = {"slope_T": (np.nan,) * 3, "slope_L": (np.nan,) * 3}
        intercept = np.nan
        if usable.sum() >= 1:
            try:
                slope = bootstrap_slopes(cT[usable], cL[usable], mat[usable], n_boot=n_boot)
                intercept = float(fit_power_law(cT[usable], cL[usable], cell_mean[usable])["intercept"])
            except ValueError:
                pass
        slope_rows.append(
            {
                "agent": agent,
                "intercept": intercept,
                "slope_T": slope["slope_T"][0],
                "slope_T_lo": slope["slope_T"][1],
                "slope_T_hi": slope["slope_T"][2],
                "slope_L": slope["slope_L"][0],
                "slope_L_lo": slope["slope_L"][1],
                "slope_L_hi": slope["slope_L"][2],
                "theory_T": bT,
                "theory_L": bL,
                "cells": int(usable.sum()),
                "seeds": len(seeds),
            }
        )
    return SweepResult(
        env_kwargs=env_kw, d=d, runs=runs, cells=pd.DataFrame(cell_rows), slopes=pd.DataFrame(slope_rows), errors=errors
    )
