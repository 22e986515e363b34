"""Report and figures of ``PointCloudPH-v0`` (``docs/papers/flood.md``).

* :func:`report_table` — per family, N and solver (fidelity / scale): median seconds, the speed-up over
  ``alpha`` (median over instances of ``alpha``'s seconds / the solver's, same instance and seed), median
  peak memory (``peak_rss_mb``: the process' resident high-water mark during the solve; ``solve_rss_mb``: what
  the solve added), median number of paired simplices (a lower bound on the complex size, from the diagrams), median
  bottleneck distance to the Alpha diagram in every dimension and 1-Wasserstein in H1/H2, the fraction of valid runs and
  of runs that recover the voids / Betti signal. Classify: per solver, accuracy (mean over the random splits, median
  over instances) with its Student-t 95 % half-width, seconds for the whole cloud set, paired simplices per cloud.
* :func:`time_figure` — ``time_vs_n``: seconds against N, log-log, one line per solver (median over the
  instances at each N; hollow markers where fewer than half the runs were valid).
* :func:`diagram_figure` — ``diagrams``: the H1 and H2 persistence diagrams of the smallest swiss-cheese
  instance of the runs (lowest seed), one panel per solver configuration (re-solved with its
  hyperparameters) next to the Alpha reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.envs.tasks.base import save_figure
from papergym.envs.tasks.persistent_homology.task import alpha_reference

__all__ = ["report_table", "time_figure", "diagram_figure"]


def _med(x: Any) -> float:
    a = pd.to_numeric(pd.Series(x), errors="coerce").to_numpy(dtype=float)
    a = a[~np.isnan(a)]
    return float(np.median(a)) if len(a) else np.nan


def _f(v: float, spec: str = ".3g") -> str:
    if v == np.inf:
        return "inf"
    return format(v, spec) if np.isfinite(v) else "-"


def _done(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs that returned a solution: ``ok``, or a ``timeout`` that finished over the budget (still timed)."""
    return runs[runs.status.isin(["ok", "timeout"]) & np.isfinite(pd.to_numeric(runs.seconds, errors="coerce"))]


def _speedups(runs: pd.DataFrame) -> dict[str, float]:
    """Median over (instance, seed) of alpha's seconds / the label's seconds (finished runs of both)."""
    ok = _done(runs)
    ref = ok[ok.solver == "alpha"]
    if ref.empty:
        return {}
    base = {(r.instance, r.seed): r.seconds for r in ref.itertuples() if r.label == "alpha"} or {
        (r.instance, r.seed): r.seconds for r in ref.itertuples()
    }
    out = {}
    for lab, g in ok.groupby("label", sort=False):
        ratios = [
            base[(r.instance, r.seed)] / r.seconds
            for r in g.itertuples()
            if (r.instance, r.seed) in base and r.seconds > 0
        ]
        out[lab] = float(np.median(ratios)) if ratios else np.nan
    return out


def report_table(runs: pd.DataFrame) -> str:
    if runs is None or len(runs) == 0 or "param_family" not in runs:
        return ""
    lines: list[str] = []
    geo = runs[runs.param_family != "classify"]
    if len(geo):
        dims = [k for k in range(3) if f"bottleneck_h{k}" in geo and geo[f"bottleneck_h{k}"].notna().any()] or [0]
        head = (
            f"{'family/shape/N':<27}{'solver':<15}{'seconds':>9}{'x alpha':>9}"
            f"{'peak MB':>9}{'+MB':>8}{'paired simpl':>13}"
            + "".join(f"{'bn_H' + str(k):>9}" for k in dims)
            + f"{'W1_H1':>9}{'W1_H2':>9}{'valid':>7}{'voids':>7}"
        )
        lines += [
            "per (family, shape, N) and solver: medians over finished runs (* = some over the time budget); x alpha "
            "= median speed-up over alpha on the same cloud; peak MB = process RSS high-water mark in the "
            "solve, +MB = what the solve added; bn / W1 = bottleneck / 1-Wasserstein to the Alpha diagram "
            "(radius units); valid, voids = fraction of all runs",
            head,
            "-" * len(head),
        ]
        keys = ["param_family", "param_shape", "param_N"] if "param_shape" in geo else ["param_family", "param_N"]
        for key, g in geo.groupby(keys, sort=False):
            name = "/".join(map(str, key))
            sp = _speedups(g)
            for lab, h in g.groupby("label", sort=False):
                ok = _done(h)
                cells = [
                    _f(_med(ok.seconds)) + ("*" if (ok.status == "timeout").any() else ""),
                    _f(sp.get(lab, np.nan), ".0f" if sp.get(lab, 0) >= 10 else ".2g"),
                    _f(_med(ok.get("peak_rss_mb")), ".0f"),
                    _f(max(_med(ok.get("solve_rss_mb")), 0.0), ".0f"),
                    _f(_med(ok.get("n_paired_simplices")), ".3g"),
                ]
                cells += [_f(_med(ok.get(f"bottleneck_h{k}")), ".2g") for k in dims]
                cells += [_f(_med(ok.get("w1_h1")), ".3g"), _f(_med(ok.get("w1_h2")), ".3g")]
                n_all = max(len(h), 1)
                fin = h[h.status == "ok"]
                cells += [
                    f"{np.nansum(fin.get('valid', pd.Series(dtype=float))) / n_all:.2f}",
                    f"{np.nansum(fin.get('void_recovery', pd.Series(dtype=float))) / n_all:.2f}",
                ]
                widths = [9, 9, 9, 8, 11] + [9] * len(dims) + [9, 9, 7, 7]
                lines.append(f"{name:<27}{str(lab):<15}" + "".join(f"{c:>{w}}" for c, w in zip(cells, widths)))
    cls = runs[runs.param_family == "classify"]
    if len(cls):
        head = f"{'solver':<22}{'accuracy':>10}{'95% CI':>10}{'seconds':>10}{'paired simpl/cloud':>19}{'runs ok':>9}"
        lines += [
            "",
            "swiss-cheese classification (class = number of voids): accuracy = mean over the random "
            "splits (median over instances), 95% CI = Student-t half-width over the splits; seconds for the "
            "whole cloud set",
            head,
            "-" * len(head),
        ]
        for lab, h in cls.groupby("label", sort=False):
            ok = h[h.status == "ok"]
            lines.append(
                f"{str(lab):<22}{_f(_med(ok.get('accuracy')), '.3f'):>10}"
                f"{('±' + _f(_med(ok.get('accuracy_ci95')), '.3f')) if len(ok) else '-':>10}"
                f"{_f(_med(ok.seconds)):>10}{_f(_med(ok.get('n_paired_simplices')), '.3g'):>19}"
                + f"{len(ok)}/{len(h)}".rjust(9)
            )
    return "\n".join(lines)


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def time_figure(runs: pd.DataFrame, folder: Any) -> Any:
    geo = _done(runs[runs.param_family != "classify"]) if len(runs) and "param_family" in runs else None
    if geo is None or geo.empty or geo.param_N.nunique() < 1:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.6, 4.2))
    for i, (lab, g) in enumerate(geo.groupby("label", sort=False)):
        pts = []
        for n, h in g.groupby("param_N"):
            valid = pd.to_numeric(h.get("valid"), errors="coerce").fillna(0).mean() >= 0.5
            pts.append((float(n), _med(h.seconds), valid))
        pts.sort()
        ns, ts, val = map(np.asarray, zip(*pts))
        c = plt.get_cmap("tab10")(i % 10)
        ax.loglog(ns, ts, "-", color=c, lw=2.2 if lab == "flood" else 1.2, label=str(lab))
        ax.scatter(ns[val], ts[val], color=c, zorder=3)
        ax.scatter(ns[~val], ts[~val], facecolors="none", edgecolors=c, zorder=3)
    ax.set(
        xlabel="number of points N",
        ylabel="seconds (construction + persistence)",
        title="PointCloudPH-v0: time vs N (median; hollow: mostly invalid)",
    )
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    save_figure(fig, Path(folder) / "time_vs_n", dpi=140)
    return fig


def diagram_figure(task: Any, runs: pd.DataFrame, folder: Any, max_panels: int = 6) -> Any:
    """Re-solves the smallest cheese instance of ``runs`` with each configuration (module docstring)."""
    from papergym.agents.base import make_solver
    from papergym.envs.tasks.base import Budget

    if runs is None or len(runs) == 0:
        return None
    cand = runs[(runs.param_family != "classify") & (runs.get("param_shape") == "cheese") & (runs.status == "ok")]
    if cand.empty:
        return None
    cand = cand.sort_values(["param_N", "instance_seed"])
    inst = cand.instance.iloc[0]
    ref = next((r for split in ("dev", "test") for r in task.instances(split) if r.name == inst), None)
    if ref is None:
        return None
    problem, evaluator = task.make(ref)
    panels = [("alpha reference", list(alpha_reference(*evaluator.key)))]
    seen = set()
    for r in cand[cand.instance == inst].itertuples():
        if r.label in seen or r.label == "alpha" or len(panels) >= max_panels:
            continue
        seen.add(r.label)
        try:
            slv = make_solver(r.solver, task.id, seed=int(r.seed), **dict(r.hyperparameters or {}))
            sol = slv.solve(problem, Budget(max_seconds=task.max_seconds), lambda *a, **k: None)
        except Exception:  # noqa: BLE001, S112 - a figure never fails the bench
            continue
        panels.append((str(r.label), list(sol["diagrams"] if isinstance(sol, dict) else sol)))
    plt = _plt()
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.4), squeeze=False)
    top = max(
        (float(np.max(D[np.isfinite(D[:, 1]), 1])) for _, dg in panels for D in dg[1:] if np.isfinite(D[:, 1]).any()),
        default=1.0,
    )
    for ax, (name, dg) in zip(axes[0], panels):
        for k, c in ((1, "tab:orange"), (2, "tab:green")):
            if k >= len(dg):
                continue
            D = np.asarray(dg[k], dtype=float).reshape(-1, 2)
            death = np.where(np.isfinite(D[:, 1]), D[:, 1], top * 1.05)
            ax.scatter(D[:, 0], death, s=6, color=c, label=f"H{k}", alpha=0.7)
        ax.plot([0, top * 1.05], [0, top * 1.05], color="grey", lw=0.8)
        ax.set(title=name, xlabel="birth (radius)", ylabel="death (radius)")
        ax.legend(fontsize=7, frameon=False)
    fig.suptitle(f"PointCloudPH-v0: diagrams of {inst} (seed {ref.seed})", fontsize=10)
    fig.tight_layout()
    save_figure(fig, Path(folder) / "diagrams", dpi=140)
    return fig
