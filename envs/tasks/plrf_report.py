"""Report and figure of ``PowerLawRandomFeatures-v0`` (the paper's headline: DANA's loss exponent steeper than
SGD's, SGD with momentum equal to SGD)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.envs.tasks.base import save_figure

__all__ = ["slope_table", "loss_figure", "config_of"]


def config_of(instance: str) -> str:
    """``"a=1,b=0.7/d=400/s3"`` -> ``"a=1,b=0.7/d=400"``."""
    return instance.rsplit("/", 1)[0]


def slope_table(runs: pd.DataFrame) -> str:
    """Per configuration and solver: median fitted slope of log excess vs log t over [1e2, 1e4], median final
    log10 excess ratio, the slope ratio to ``sgd`` (> 1: a steeper decay), diverged runs."""
    ok = runs[runs.status == "ok"].copy()
    if ok.empty:
        return ""
    ok["config"] = ok.instance.map(config_of)
    lines = ["loss exponents (median over seeds): slope of log(P - P_inf) vs log t on t in [1e2, 1e4]; "
             "ratio = slope / sgd's slope",
             f"{'configuration':<22}{'solver':<18}{'slope':>9}{'ratio':>8}{'log10 excess':>14}{'diverged':>10}"]
    for cfg, g in ok.groupby("config", sort=False):
        ref = g[g.label == "sgd"].slope.median() if (g.label == "sgd").any() else np.nan
        for label, h in g.groupby("label", sort=False):
            sl = h.slope.median()
            ratio = sl / ref if np.isfinite(ref) and ref != 0 and np.isfinite(sl) else np.nan
            lines.append(f"{cfg:<22}{label:<18}{sl:>9.3f}{ratio:>8.2f}{h.log10_excess.median():>14.2f}"
                         f"{int((h.diverged > 0).sum()):>6}/{len(h)}")
    return "\n".join(lines)


def loss_figure(runs: pd.DataFrame, curves: pd.DataFrame | None, folder: Any) -> list[Any]:
    """Excess risk vs steps (log-log), one panel per configuration, median over seeds per solver, fitted slope
    in the legend; ``loss_vs_steps.png/.svg`` in ``folder``."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    if curves is None or curves.empty or "excess" not in curves or "step" not in curves:
        return []
    c = curves[np.isfinite(curves.excess.astype(float)) & (curves.step.astype(float) > 0)].copy()
    if c.empty:
        return []
    c["config"] = c.instance.map(config_of)
    configs = list(dict.fromkeys(c.config))
    n = len(configs)
    cols = min(n, 3)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.0 * rows), squeeze=False)
    slopes = {}
    if runs is not None and not runs.empty and "slope" in runs:
        r = runs[runs.status == "ok"].copy()
        r["config"] = r.instance.map(config_of)
        slopes = r.groupby(["config", "label"]).slope.median().to_dict()
    for ax, cfg in zip(axes.ravel(), configs):
        g = c[c.config == cfg]
        for label, h in g.groupby("label", sort=False):
            med = h.groupby("step").excess.median()
            sl = slopes.get((cfg, label), np.nan)
            ax.loglog(med.index.to_numpy(dtype=float), med.to_numpy(dtype=float),
                      label=f"{label} (slope {sl:.2f})" if np.isfinite(sl) else label)
        ax.axvspan(1e2, 1e4, color="grey", alpha=0.08)
        ax.set_title(cfg, fontsize=9)
        ax.set_xlabel("step t")
        ax.set_ylabel("P(theta_t) - P_inf")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7, frameon=False)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    fig.suptitle("PowerLawRandomFeatures-v0: excess risk (median over seeds; shaded: slope window)", fontsize=10)
    fig.tight_layout()
    save_figure(fig, Path(folder) / "loss_vs_steps")
    return [fig]
