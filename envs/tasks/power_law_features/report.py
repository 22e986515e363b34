"""Report and figure of ``PowerLawRandomFeatures-v0`` (the paper's headline: DANA's loss exponent steeper than
SGD's, SGD with momentum equal to SGD)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.envs.tasks.base import save_figure
from papergym.envs.tasks.power_law_features.task import population_trace, slope_window

__all__ = ["config_of", "loss_figure", "outscaling_regime", "slope_table"]


def config_of(instance: str) -> str:
    """``"a=1,b=0.7/d=400/s3"`` -> ``"a=1,b=0.7/d=400"``."""
    return instance.rsplit("/", 1)[0]


def outscaling_regime(
    alpha: float,
    beta: float,
    d: int,
    v: int,
    steps: int,
    *,
    c2: float = 0.5,
    c3: float = 0.1,
    delta: float | None = None,
) -> dict[str, float]:
    """Where ``dana-decaying`` (constants ``c2``, ``c3``, ``delta``; defaults the solver's) can outscale SGD:
    its momentum term ``c3/T_r·t^{1−1/(2α)}/(δ(2 − 1/(2α)))`` per step overtakes the gradient step ``c2/T_r`` at
    ``t_x = (c2·δ·(2 − 1/(2α))/c3)^{1/(1−1/(2α))}`` (``inf`` for ``α ≤ 1/2``: no takeover), and with effective time
    ``t^{2−1/(2α)}`` it reaches the ``d``-limited floor near ``t_floor = (T_r d^{2α})^{1/(2−1/(2α))}`` (capped by
    ``T``). ``decades = log10(t_floor/t_x)``: the width of the range where the improved exponent can show
    (``<= 0``: none)."""

    a = float(alpha)
    dl = 4.0 + (a + float(beta)) / a if delta is None else float(delta)
    p = 2.0 - 1.0 / (2.0 * a)
    t_sat = population_trace(a, int(v)) * float(d) ** (2.0 * a)
    if a <= 0.5 or c3 <= 0:
        return {"t_x": float("inf"), "t_floor": float(min(steps, t_sat)), "decades": float("-inf")}
    t_x = (c2 * dl * p / c3) ** (1.0 / (1.0 - 1.0 / (2.0 * a)))
    t_floor = min(float(steps), t_sat ** (1.0 / p))
    return {"t_x": t_x, "t_floor": t_floor, "decades": math.log10(t_floor / t_x)}


def slope_table(runs: pd.DataFrame) -> str:
    """Per configuration and solver: median fitted slope of log excess vs log t over the evaluator's window
    ``[min(1e2, t_sat/10), t_sat]``, ``t_sat = min(T, T_r d^(2 alpha))`` (``slope_window``), median final
    log10 excess ratio, the slope ratio to ``sgd`` (> 1: a steeper decay), diverged runs (counted over every
    run; the medians are over the ``ok`` ones); then per configuration the :func:`outscaling_regime` of
    ``dana-decaying`` at its default constants."""
    if runs is None or runs.empty:
        return ""
    every = runs.copy()
    every["config"] = every.instance.map(config_of)
    lines = [
        "loss exponents (median over seeds): slope of log(P - P_inf) vs log t on t in [min(1e2, t_sat/10), "
        "t_sat], t_sat = min(T, T_r d^(2 alpha)); ratio = slope / sgd's slope; diverged runs are not in the medians",
        f"{'configuration':<22}{'solver':<18}{'slope':>9}{'ratio':>8}{'log10 excess':>14}{'diverged':>10}",
    ]
    regimes = []
    for cfg, g_all in every.groupby("config", sort=False):
        g = g_all[g_all.status == "ok"]
        ref = g[g.label == "sgd"].slope.median() if (g.label == "sgd").any() else np.nan
        for label, h_all in g_all.groupby("label", sort=False):
            h = h_all[h_all.status == "ok"]
            sl = h.slope.median() if len(h) else np.nan
            ratio = sl / ref if np.isfinite(ref) and ref != 0 and np.isfinite(sl) else np.nan
            ex = h.log10_excess.median() if len(h) else np.nan
            lines.append(
                f"{cfg:<22}{label:<18}{sl:>9.3f}{ratio:>8.2f}{ex:>14.2f}"
                f"{int((h_all.status == 'diverged').sum()):>6}/{len(h_all)}"
            )
        cols = ["param_alpha", "param_beta", "param_d", "param_v", "param_steps"]
        if all(c in g_all for c in cols):
            a, b, d, v, T = (g_all[c].iloc[0] for c in cols)
            r = outscaling_regime(float(a), float(b), int(d), int(v), int(T))
            regimes.append(
                f"{cfg:<22}t_x = {r['t_x']:.3g}, t_floor = {r['t_floor']:.3g}: "
                + (
                    f"{r['decades']:.1f} decades of outscaling range"
                    if r["decades"] > 0
                    else "no outscaling range (DANA's improved exponent cannot show)"
                )
            )
    if regimes:
        lines += [
            "",
            "dana-decaying regime at its default constants (momentum takes over at t_x; d-floor near t_floor):",
        ]
        lines += regimes
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
    slopes, windows = {}, {}
    if runs is not None and not runs.empty and "slope" in runs:
        r = runs[runs.status == "ok"].copy()
        r["config"] = r.instance.map(config_of)
        slopes = r.groupby(["config", "label"]).slope.median().to_dict()
        cols = ["param_alpha", "param_d", "param_v", "param_steps"]
        if all(col in r for col in cols):
            for cfg, g in r.groupby("config"):
                a, d, v, T = (g[col].iloc[0] for col in cols)
                windows[cfg] = slope_window(float(a), int(d), int(v), int(T))
    for ax, cfg in zip(axes.ravel(), configs):
        g = c[c.config == cfg]
        for label, h in g.groupby("label", sort=False):
            med = h.groupby("step").excess.median()
            sl = slopes.get((cfg, label), np.nan)
            ax.loglog(
                med.index.to_numpy(dtype=float),
                med.to_numpy(dtype=float),
                label=f"{label} (slope {sl:.2f})" if np.isfinite(sl) else label,
            )
        if cfg in windows:
            ax.axvspan(*windows[cfg], color="grey", alpha=0.08)
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
