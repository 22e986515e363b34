"""Report and figure of ``SimpleBilevel-v0``: work and iterations to ``(ε_f, ε_g)``-stationarity per family and
solver, and the two stationarity residuals against oracle work.

* :func:`report_table` — per family and solver: median and worst PAR-2 work, median and worst iterations to
  stationarity (the solver-declared ``iteration`` of the first stationary report in the anytime curves when they
  are given, else the evaluator's gradient-point count ``iters_to_stationary``; "never" if a run did not get
  there), the fraction of runs that reached stationarity, median final ``f``, ``f − f*`` and ``g − g*``.
* :func:`residual_figure` — ``stationarity_vs_work``: ``r_f`` (top row) and ``r_g`` (bottom row) against the
  oracle's work (the evaluator's ``work`` metric of each report), log-log, one column per family, one line per
  solver: the median over the family's runs of the last reported value at each work level (a run that stopped
  keeps its last value); ``ε_f``, ``ε_g`` dashed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.envs.tasks.base import save_figure

__all__ = ["report_table", "residual_figure", "first_stationary_iteration"]


def _ok(runs: pd.DataFrame) -> pd.DataFrame:
    """The scored runs: ``ok`` and ``diverged`` (a diverged run carries the PAR-2 failure value)."""
    return runs[runs.status.isin(["ok", "diverged"])] if len(runs) else runs


def first_stationary_iteration(curves: pd.DataFrame | None) -> dict[tuple[str, str, Any], float]:
    """``(label, instance, seed) -> iteration`` of the first report with ``stationary == 1`` (solver-declared)."""
    out: dict[tuple[str, str, Any], float] = {}
    if curves is None or len(curves) == 0 or "stationary" not in curves or "iteration" not in curves:
        return out
    hit = curves[curves.stationary.astype(float) >= 1]
    for (lab, inst, sd), g in hit.groupby(["label", "instance", "seed"], sort=False):
        it = pd.to_numeric(g.iteration, errors="coerce").to_numpy(dtype=float)
        out[(lab, inst, sd)] = float(it[0]) if len(it) else np.nan
    return out


def _fmt(v: float) -> str:
    if v == np.inf:
        return "never"
    return f"{v:.0f}" if np.isfinite(v) else "-"


def report_table(runs: pd.DataFrame, curves: pd.DataFrame | None = None) -> str:
    ok = _ok(runs)
    if ok.empty:
        return ""
    iters = first_stationary_iteration(curves)
    src = "solver-declared iterations (anytime curves)" if iters else "gradient query points (evaluator)"
    lines = [
        f"work units (PAR-2: 2 x max_work if never) and iterations to (eps_f, eps_g)-stationarity; iterations = "
        f"{src}; reached = fraction of runs with a stationary report; final f, f - f*, g - g* are medians",
        f"{'family':<24}{'solver':<22}{'work med':>10}{'work max':>10}{'iter med':>10}{'iter max':>10}"
        f"{'reached':>9}{'f':>12}{'f - f*':>11}{'g - g*':>11}",
    ]
    lines.append("-" * len(lines[-1]))
    for (fam, lab), g in ok.groupby(["param_family", "label"], sort=False):
        cap = 2 * g.param_max_work.astype(float).to_numpy()
        par2 = g.par2_calls.astype(float).to_numpy()
        reached = par2 < cap
        if iters:
            it = np.array([iters.get((lab, i, s), np.nan) for i, s in zip(g.instance, g.seed)], dtype=float)
        else:
            it = g.iters_to_stationary.astype(float).to_numpy()
        it = np.where(reached, it, np.inf)  # never reached: infinitely many iterations
        it_med, it_max = float(np.median(it)), float(np.max(it))
        lines.append(
            f"{fam:<24}{lab:<22}{np.median(par2):>10.0f}{par2.max():>10.0f}{_fmt(it_med):>10}{_fmt(it_max):>10}"
            f"{reached.mean():>9.2f}{np.median(g.f.astype(float)):>12.5g}"
            f"{_fmt_gap(g.f_gap):>11}{_fmt_gap(g.g_gap):>11}"
        )
    return "\n".join(lines)


def _fmt_gap(col: pd.Series) -> str:
    v = col.astype(float).to_numpy()
    v = v[~np.isnan(v)]
    return f"{np.median(v):.2e}" if len(v) else "-"


def _step_median(runs_curves: list[tuple[np.ndarray, np.ndarray]], grid: np.ndarray) -> np.ndarray:
    """Median over runs of the last reported value at or before each grid point (NaN before a run's first report)."""
    cols = []
    for w, r in runs_curves:
        idx = np.searchsorted(w, grid, side="right") - 1
        cols.append(np.where(idx >= 0, r[np.clip(idx, 0, None)], np.nan))
    with np.errstate(all="ignore"):
        return np.nanmedian(np.array(cols), axis=0) if cols else np.full(len(grid), np.nan)


def residual_figure(runs: pd.DataFrame, folder: Any, curves: pd.DataFrame | None = None) -> list[Any]:
    import warnings

    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ok = _ok(runs)
    if ok.empty or curves is None or len(curves) == 0 or not {"r_f", "r_g", "work"} <= set(curves.columns):
        return []
    fam_of = dict(zip(ok.instance, ok.param_family))
    cur = curves[curves.instance.isin(fam_of)].copy()
    if cur.empty:
        return []
    cur["family"] = cur.instance.map(fam_of)
    fams = list(dict.fromkeys(ok.param_family))
    labels = list(dict.fromkeys(ok.label))
    colors = {lab: plt.get_cmap("tab10")(i % 10) for i, lab in enumerate(labels)}
    fig, axes = plt.subplots(2, len(fams), figsize=(4.6 * len(fams), 7.0), squeeze=False)
    for j, fam in enumerate(fams):
        c = cur[cur.family == fam]
        wmax = float(np.nanmax(c.work.astype(float))) if len(c) else 1.0
        grid = np.geomspace(1.0, max(wmax, 2.0), 200)
        sub = ok[ok.param_family == fam]
        eps = {"r_f": float(sub.param_eps_f.iloc[0]), "r_g": float(sub.param_eps_g.iloc[0])}
        for i, (res, name) in enumerate((("r_f", "r_f = min_l>=0 ||grad f + l grad g||"), ("r_g", "r_g = ||grad g||"))):
            ax = axes[i, j]
            for lab in labels:
                runs_c = []
                for _, h in c[c.label == lab].groupby(["instance", "seed"], sort=False):
                    h = h.sort_values("work")
                    w = h.work.astype(float).to_numpy()
                    r = np.clip(h[res].astype(float).to_numpy(), 1e-16, None)
                    keep = np.isfinite(w)
                    runs_c.append((w[keep], r[keep]))
                if not runs_c:
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    med = _step_median(runs_c, grid)
                ax.loglog(grid, med, color=colors[lab], lw=2.2 if lab == "dbgd" else 1.2, label=lab)
            ax.axhline(eps[res], color="grey", ls="--", lw=0.8)
            ax.set(xlabel="oracle work units", ylabel=name)
            if i == 0:
                ax.set_title(fam, fontsize=10)
            ax.grid(alpha=0.3, which="both")
            if i == 0 and j == 0:
                ax.legend(fontsize=7, frameon=False)
    fig.suptitle(
        "SimpleBilevel-v0: stationarity residuals vs work (median over instances and seeds; dashed: eps)", fontsize=10
    )
    fig.tight_layout()
    save_figure(fig, Path(folder) / "stationarity_vs_work", dpi=140)
    return [fig]
