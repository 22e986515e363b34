"""Paper-style statistics and figures of ``NystromODE-v0`` benchmark runs (spec ``papers/ode.md`` §6, §8).

Used by ``ODETask.report(runs)`` / ``ODETask.figures(runs, folder)`` (``papergym bench`` prints and
saves them). ``runs`` is :attr:`papergym.leaderboard.runner.bench.BenchResult.runs`: one row per solve with
``instance``, ``param_problem``, ``param_n``, ``label`` (solver configuration, e.g.
``nystrom-lssvm[m=50]``), ``solver``, ``status``, ``seconds`` and the task's metrics.

Statistics, per configuration of ``nystrom-lssvm`` against ``dual-lssvm`` and ``pinn`` on the instances
both solved:

* speed-up = ``fit_seconds`` of the baseline / ``fit_seconds`` of ``nystrom-lssvm`` (the paper's
  measure; wall ``seconds`` where a solver reports no fit time), summarised by its geometric mean;
* relative accuracy gap to the dual = ``|rel_rmse - rel_rmse_dual| / rel_rmse_dual`` (the paper's
  "< 0.13 %" statistic), summarised by its median and the count of instances under 0.13 %;
* RMSE improvement over PINN = ``1 - rmse / rmse_pinn`` (the paper's "up to 72 %"), median and max;
* accuracy-gate passes per configuration.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.envs.tasks.base import save_figure

__all__ = ["paper_statistics", "figures", "loglog_slope"]

PAPER_GAP = 0.0013  # the paper's "< 0.13 %" accuracy difference to the classical LS-SVM


def _fit_time(df: pd.DataFrame) -> pd.Series:
    ft = df["fit_seconds"] if "fit_seconds" in df else pd.Series(np.nan, index=df.index)
    return ft.where(np.isfinite(ft.astype(float)) & (ft.astype(float) > 0), df["seconds"]).astype(float)


def _per_instance(runs: pd.DataFrame, label: str) -> pd.DataFrame:
    r = runs[(runs.label == label) & (runs.status == "ok")].copy()
    r["fit_time"] = _fit_time(r)
    return r.groupby("instance").agg(fit_time=("fit_time", "median"), rel_rmse=("rel_rmse", "median"),
                                     rmse=("rmse", "median"))


def loglog_slope(n: np.ndarray, t: np.ndarray) -> float:
    """Least-squares slope of ``log t`` against ``log n`` (NaN with fewer than two distinct ``n``)."""
    n, t = np.asarray(n, float), np.asarray(t, float)
    ok = np.isfinite(n) & np.isfinite(t) & (n > 0) & (t > 0)
    if len(np.unique(n[ok])) < 2:
        return math.nan
    return float(np.polyfit(np.log(n[ok]), np.log(t[ok]), 1)[0])


def _label_of(runs: pd.DataFrame, solver: str) -> str | None:
    labels = list(dict.fromkeys(runs.loc[runs.solver == solver, "label"]))
    return labels[0] if labels else None


def paper_statistics(runs: pd.DataFrame) -> str:
    """The paper-style comparison as text (empty where the solvers needed were not run)."""
    if runs.empty or "rel_rmse" not in runs:
        return ""
    lines = ["paper-style statistics (instances both solvers finished):"]
    gate = runs.groupby("label")["passed_gate"].agg(lambda x: f"{int(np.nansum(x))}/{len(x)}")
    lines.append("  accuracy gate passed: " + ", ".join(f"{k} {v}" for k, v in gate.items()))
    nys_labels = list(dict.fromkeys(runs.loc[runs.solver == "nystrom-lssvm", "label"]))
    dual, pinn = _label_of(runs, "dual-lssvm"), _label_of(runs, "pinn")
    for lab in nys_labels:
        a = _per_instance(runs, lab)
        for base_label, name in ((dual, "dual-lssvm"), (pinn, "pinn")):
            if base_label is None:
                continue
            b = _per_instance(runs, base_label)
            j = a.merge(b, how="inner", left_index=True, right_index=True, suffixes=("", "_b"))
            if j.empty:
                lines.append(f"  {lab} vs {name}: no instance finished by both")
                continue
            sp = (j.fit_time_b / j.fit_time).to_numpy(float)
            sp = sp[np.isfinite(sp) & (sp > 0)]
            geo = math.exp(np.mean(np.log(sp))) if len(sp) else math.nan
            txt = (f"  {lab} vs {name} ({len(j)} instances): fit-time speed-up geometric mean {geo:.3g}x "
                   f"(min {np.min(sp):.3g}x, max {np.max(sp):.3g}x)" if len(sp) else f"  {lab} vs {name}: -")
            if name == "dual-lssvm":
                gap = (np.abs(j.rel_rmse - j.rel_rmse_b) / j.rel_rmse_b).to_numpy(float)
                gap = gap[np.isfinite(gap)]
                if len(gap):
                    txt += (f"; relative RMSE difference median {100 * np.median(gap):.3g} %, "
                            f"{int(np.sum(gap < PAPER_GAP))}/{len(gap)} under the paper's 0.13 %")
            else:
                imp = (1.0 - j.rmse / j.rmse_b).to_numpy(float)
                imp = imp[np.isfinite(imp)]
                if len(imp):
                    txt += (f"; RMSE improvement over PINN median {100 * np.median(imp):.3g} %, "
                            f"max {100 * np.max(imp):.3g} % (paper: up to 72 %)")
            lines.append(txt)
    # per instance: speed-up of each nystrom-lssvm configuration over the dual
    if dual is not None and nys_labels:
        b = _per_instance(runs, dual)
        rows = []
        for lab in nys_labels:
            a = _per_instance(runs, lab).merge(b, how="inner", left_index=True, right_index=True, suffixes=("", "_b"))
            for inst, r in a.iterrows():
                rows.append((inst, lab, r.fit_time, r.fit_time_b, r.fit_time_b / r.fit_time,
                             abs(r.rel_rmse - r.rel_rmse_b) / r.rel_rmse_b if r.rel_rmse_b > 0 else math.nan))
        if rows:
            lines.append("  per instance (fit seconds; speed-up over dual-lssvm; relative RMSE difference):")
            w = max(len(r[0]) for r in rows)
            for inst, lab, ft, fb, spd, gap in rows:
                lines.append(f"    {inst:<{w}}  {lab}  {ft:.4g} s vs {fb:.4g} s  {spd:8.3g}x  {100 * gap:.3g} %")
    # time-vs-n slopes
    if "param_n" in runs and runs.param_n.nunique() >= 2:
        parts = []
        for lab in dict.fromkeys(runs.label):
            r = runs[(runs.label == lab) & (runs.status == "ok")]
            if r.empty:
                continue
            med = r.assign(fit_time=_fit_time(r)).groupby("param_n")["fit_time"].median()
            parts.append(f"{lab} {loglog_slope(med.index.to_numpy(), med.to_numpy()):.2f}")
        lines.append("  log-log slope of fit time vs n (median over problems): " + ", ".join(parts))
    return "\n".join(lines)


def figures(runs: pd.DataFrame, folder: str | Path) -> list[Any]:
    """``time_vs_n.png/.svg`` (median fit time per n and configuration, log-log, fitted slopes in the
    legend) and, where ``nystrom-lssvm`` was swept over ``m``, ``error_vs_m.png/.svg`` (median relative
    RMSE per m and n). Returns the figures."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    folder = Path(folder)
    out = []
    ok = runs[runs.status == "ok"].copy()
    if ok.empty or "param_n" not in ok:
        return out
    ok["fit_time"] = _fit_time(ok)
    if ok.param_n.nunique() >= 2:
        fig, ax = plt.subplots(figsize=(6.5, 4.5))
        for lab, g in ok.groupby("label", sort=False):
            med = g.groupby("param_n")["fit_time"].median()
            slope = loglog_slope(med.index.to_numpy(), med.to_numpy())
            ax.plot(med.index, med.to_numpy(), marker="o", label=f"{lab} (slope {slope:.2f})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("collocation points n")
        ax.set_ylabel("fit seconds (median over problems)")
        ax.set_title("NystromODE-v0: time vs n", fontsize=10)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8, frameon=False)
        fig.tight_layout()
        save_figure(fig, folder / "time_vs_n")
        out.append(fig)
    nys = ok[ok.solver == "nystrom-lssvm"].copy()
    if not nys.empty:
        nys["m"] = nys["hyperparameters"].map(lambda h: (h or {}).get("m", np.nan) if isinstance(h, dict) else np.nan)
        if nys["m"].nunique() >= 2:
            fig, ax = plt.subplots(figsize=(6.5, 4.5))
            for n, g in nys.groupby("param_n"):
                med = g.groupby("m")["rel_rmse"].median()
                ax.plot(med.index, med.to_numpy(), marker="o", label=f"n = {n}")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("Nyström features m")
            ax.set_ylabel("relative RMSE (median over problems)")
            ax.set_title("NystromODE-v0: nystrom-lssvm error vs m", fontsize=10)
            ax.grid(alpha=0.3, which="both")
            ax.legend(fontsize=8, frameon=False)
            fig.tight_layout()
            save_figure(fig, folder / "error_vs_m")
            out.append(fig)
    return out

