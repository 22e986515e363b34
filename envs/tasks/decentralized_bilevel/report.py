"""Report and figures of ``DecentralizedBilevel-v0``: per family, each solver's final hypergradient, upper-level
loss, consensus error and communication — with a step-size grid, the **median and worst over the grid** of the
per-step-size medians over instances (the paper's robustness claim) — and anytime curves against rounds and
against floats communicated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.envs.tasks.base import save_figure

__all__ = ["report_text", "curve_figures", "annotate"]

DIVERGED = 299.0  # log10_hypergrad of a non-finite solution is 300
COLS = (
    ("log10_hypergrad", "log10 |grad Phi|^2/c_f^2"),
    ("val_loss", "upper loss f/c_f"),
    ("consensus_x", "consensus"),
    ("floats_sent", "floats sent"),
)


def _hp(v: Any) -> dict:
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return {}
    return dict(v) if isinstance(v, dict) else {}


def config_of(label: str) -> str:
    """A run's solver configuration without its base step: ``adasdbo[step_rule=x,gamma=0.1]`` ->
    ``adasdbo[step_rule=x]``, ``sldbo[gamma=1]`` -> ``sldbo`` (the rows of the step-size-grid report)."""
    if "[" not in label:
        return label
    name, inner = label.split("[", 1)
    keep = [p for p in inner.rstrip("]").split(",") if p and not p.startswith("gamma=")]
    return name + (f"[{','.join(keep)}]" if keep else "")


def annotate(runs: pd.DataFrame) -> pd.DataFrame:
    """The finished runs — ``ok`` and ``diverged`` (scored with ``log10_hypergrad = 300``, so a grid cell shows
    the divergence) — with a ``gamma`` column (the swept base step, NaN at the solver's default) and a ``config``
    column (:func:`config_of`)."""
    ok = runs[runs.status.isin(["ok", "diverged"])].copy()
    ok["gamma"] = (
        [float(_hp(h).get("gamma", np.nan)) for h in ok["hyperparameters"]] if "hyperparameters" in ok else np.nan
    )
    ok["config"] = [config_of(str(lab)) for lab in ok["label"]]
    return ok


def _is_grid(ok: pd.DataFrame) -> bool:
    return bool(len(ok)) and bool((ok.groupby("config").gamma.nunique() > 1).any())


def _fmt(v: float) -> str:
    if not np.isfinite(v):
        return "-"
    if v >= 1e299:
        return "diverged"
    a = abs(v)
    return f"{v:.3g}" if a == 0 or 1e-3 <= a < 1e5 else f"{v:.2e}"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    w = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(cells))
    return [line(head), "-" * len(line(head))] + [line(r) for r in rows]


def report_text(runs: pd.DataFrame) -> str:
    ok = annotate(runs)
    if ok.empty:
        return ""
    grid = _is_grid(ok)
    out: list[str] = []
    failed = runs[~runs.status.isin(["ok", "diverged"])]
    for fam, sub in ok.groupby("param_family", sort=False):
        solvers = list(dict.fromkeys(sub.config))
        if grid:
            gam = sorted(sub.gamma.dropna().unique())
            out.append(
                f"[{fam}] final metrics: median / worst over the step-size grid gamma in "
                f"{{{', '.join(f'{g:g}' for g in gam)}}} of the per-gamma median over "
                f"{sub.instance.nunique()} instances (worst = largest; 'diverged': a non-finite run)"
            )
            head = ["solver"] + [f"{c} {s}" for _, c in COLS for s in ("med", "worst")] + ["best gamma (upper loss)"]
            rows = []
            for s in solvers:
                per = sub[sub.config == s].groupby("gamma")[[m for m, _ in COLS]].median()
                row = [s]
                for m, _ in COLS:
                    row += [_fmt(float(per[m].median())), _fmt(float(per[m].max()))]
                # by the upper-level loss: on digits the hypergradient is smallest where x has not moved (the flat,
                # heavily regularised start), so the stationarity measure alone would pick the smallest step
                row.append(f"{per.val_loss.idxmin():g}" if len(per) else "-")
                rows.append(row)
            out += _table(head, rows)
            out.append("")
            out.append(f"[{fam}] per graph: log10 |grad Phi|^2/c_f^2, median / worst over the grid")
            graphs = list(dict.fromkeys(sub.param_graph))
            rows = []
            for s in solvers:
                row = [s]
                for g in graphs:
                    per = sub[(sub.config == s) & (sub.param_graph == g)].groupby("gamma").log10_hypergrad.median()
                    row.append(f"{_fmt(float(per.median()))} / {_fmt(float(per.max()))}" if len(per) else "-")
                rows.append(row)
            out += _table(["solver"] + graphs, rows)
        else:
            out.append(f"[{fam}] final metrics: median over {sub.instance.nunique()} instances")
            extra = [("test_acc", "test acc")] if fam == "digits" else []
            head = ["solver"] + [c for _, c in COLS + tuple(extra)]
            rows = []
            for lab in dict.fromkeys(sub.label):
                h = sub[sub.label == lab]
                rows.append([lab] + [_fmt(float(h[m].median())) for m, _ in COLS + tuple(extra)])
            out += _table(head, rows)
            out.append("")
            out.append(f"[{fam}] per graph: median log10 |grad Phi|^2/c_f^2")
            graphs = list(dict.fromkeys(sub.param_graph))
            rows = [
                [lab]
                + [
                    _fmt(float(sub[(sub.label == lab) & (sub.param_graph == g)].log10_hypergrad.median()))
                    for g in graphs
                ]
                for lab in dict.fromkeys(sub.label)
            ]
            out += _table(["solver"] + graphs, rows)
        out.append("")
    if len(failed):
        out.append(
            f"{len(failed)} run(s) did not finish (status neither ok nor diverged) and are left out above: "
            + ", ".join(f"{k}: {v}" for k, v in failed.status.value_counts().items())
        )
    return "\n".join(out).rstrip()


def curve_figures(runs: pd.DataFrame, folder: Any, curves: pd.DataFrame | None = None) -> list[Any]:
    """One figure ``curves_<family>`` per family: rows = log10 hypergradient vs rounds, vs floats communicated,
    consensus error vs rounds (medians over instances); columns = step sizes (grid) or graphs; one line per
    solver."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ok = annotate(runs)
    if ok.empty or curves is None or len(curves) == 0 or "log10_hypergrad" not in curves:
        return []
    grid = _is_grid(ok)
    lab = ok.drop_duplicates("label").set_index("label")
    inst = ok.drop_duplicates("instance").set_index("instance")
    cv = curves[curves.label.isin(lab.index) & curves.instance.isin(inst.index)].copy()
    if "report_error" in cv:
        cv = cv[cv.report_error.isna()]
    cv = cv.dropna(subset=["iteration"])
    cv["solver"] = cv.label.map(lab.solver)
    cv["config"] = cv.label.map(lab.config)
    cv["gamma"] = cv.label.map(lab.gamma)
    cv["family"] = cv.instance.map(inst.param_family)
    cv["graph"] = cv.instance.map(inst.param_graph)
    cv["hg"] = cv.log10_hypergrad.where(cv.log10_hypergrad < DIVERGED)
    figs = []
    for fam, sub in cv.groupby("family", sort=False):
        key = "gamma" if grid else "graph"
        panels = sorted(sub[key].dropna().unique()) if grid else list(dict.fromkeys(sub[key]))
        if not panels:
            continue
        fig, axes = plt.subplots(3, len(panels), figsize=(4.2 * len(panels), 9.5), squeeze=False, sharey="row")
        solvers = list(dict.fromkeys(ok.config if grid else ok.label))
        colours = {s: f"C{i % 10}" for i, s in enumerate(solvers)}
        for j, pv in enumerate(panels):
            part = sub[sub[key] == pv]
            for line_key, h in part.groupby("config" if grid else "label", sort=False):
                s = str(line_key)
                med = h.groupby("iteration").agg(
                    hg=("hg", "median"), floats=("floats_sent", "median"), cons=("consensus_x", "median")
                )
                it = med.index.to_numpy(dtype=float)
                kw = {"color": colours[s], "lw": 2.0 if s.startswith("adasdbo") else 1.1, "label": s}
                axes[0, j].plot(it, med.hg, **kw)
                axes[1, j].plot(med.floats, med.hg, **kw)
                cons = med.cons.where(med.cons < 1e60).clip(lower=1e-32)  # a diverging run leaves the panel
                axes[2, j].semilogy(it, cons, **kw)
            title = f"gamma = {pv:g}" if grid else f"graph = {pv}"
            axes[0, j].set_title(f"{fam}, {title}", fontsize=9)
            axes[0, j].set_xlabel("communication rounds")
            axes[1, j].set_xlabel("floats communicated")
            axes[1, j].set_xscale("log")
            axes[2, j].set_xlabel("communication rounds")
            for i in range(3):
                axes[i, j].grid(alpha=0.3, which="both")
        axes[0, 0].set_ylabel("log10 |grad Phi(x_bar)|^2 / c_f^2")
        axes[1, 0].set_ylabel("log10 |grad Phi(x_bar)|^2 / c_f^2")
        axes[2, 0].set_ylabel("consensus (1/n) sum |x_i - x_bar|^2")
        axes[0, -1].legend(fontsize=7, frameon=False)
        fig.suptitle(
            f"DecentralizedBilevel-v0 [{fam}]: medians over instances" + (" (gaps: diverged runs)" if grid else ""),
            fontsize=10,
        )
        fig.tight_layout()
        save_figure(fig, Path(folder) / f"curves_{fam}", dpi=120)
        figs.append(fig)
    return figs
