"""Curve figures of the runner: mean over seeds with a 95 % bootstrap band per agent, oracle agents as
references; every legend sits outside the axes (:func:`legend_outside`) so it never hides a curve; axis labels
read ``quantity [unit] (statistic)`` (:func:`metric_label` for task metrics)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt
import pandas as pd

from papergym.leaderboard.runner.stats import bootstrap_mean_ci_columns

__all__ = ["legend_outside", "metric_label", "plot_regret_curves"]


def plot_regret_curves(
    curves: pd.DataFrame,
    *,
    title: str = "",
    ax=None,
    log_x: bool = False,
    ylabel: str = "cumulative dynamic regret",
    value: str = "cum_regret",
    log_y: bool = False,
    linthresh: float = 1e-8,
    colours: dict | None = None,
    legend_loc: str | None = None,
    xlabel: str = "round t",
    legend: bool = True,
):
    """One line per agent: mean of ``value`` (default cumulative regret) over seeds at the stored
    checkpoints, with the 95 % percentile-bootstrap band (curves resampled whole). Oracle-role agents
    are dashed, grey reference lines. ``log_y``: a ``symlog`` axis, linear below ``linthresh`` (values
    that reach exactly 0 stay visible). ``colours``: agent -> matplotlib colour, to keep one colour per
    agent across panels (default: tab10 in legend order). The legend is drawn outside the axes, to their right
    (``legend=False``: none, e.g. on the left panel of a pair whose right panel carries it; ``legend_loc`` is
    kept for callers and ignored: an inside legend can hide curves). Returns the figure."""
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 4.8))
    else:
        fig = ax.figure
    # legend in the order the curves end (highest final regret first), oracle references last
    last = curves.sort_values("t").groupby(["agent", "seed"]).tail(1).groupby("agent")
    final = last[value].mean()
    if "role" in curves:
        is_oracle = last["role"].first().eq("oracle")
    else:
        is_oracle = pd.Series(False, index=final.index)
    agents = sorted(final.index, key=lambda a: (bool(is_oracle[a]), -final[a]))
    cmap = plt.get_cmap("tab10")
    k = 0
    band = 0.2 if len(agents) <= 4 else 0.08  # many overlapping bands would turn the axes grey
    for name in agents:
        c = curves[curves.agent == name]
        wide = c.pivot(index="seed", columns="t", values=value).sort_index(axis=1)
        wide = wide.dropna(axis=0)
        if wide.empty:
            continue
        t = wide.columns.to_numpy()
        mean, lo, hi = bootstrap_mean_ci_columns(wide.to_numpy())
        oracle = (c.role.iloc[0] == "oracle") if "role" in c else False
        label = f"{name} (oracle)" if oracle else name
        if oracle:
            ax.plot(t, mean, ls="--", color="0.35", lw=1.4, label=label, zorder=1)
            ax.fill_between(t, lo, hi, color="0.35", alpha=0.12, lw=0)
        else:
            col = colours[name] if colours is not None and name in colours else cmap(k % 10)
            k += 1
            ax.plot(t, mean, color=col, lw=1.6, label=label, zorder=2)
            ax.fill_between(t, lo, hi, color=col, alpha=band, lw=0)
    if log_x:
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("symlog", linthresh=linthresh)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    n_seeds = curves.groupby("agent")["seed"].nunique().max() if len(curves) else 0
    if legend:
        legend_outside(ax, title=f"mean, 95% bootstrap CI ({n_seeds} seeds)")
    fig.tight_layout()
    return fig


def legend_outside(ax, *, where: str = "right", **kwargs):
    """A legend outside ``ax``: to its right (``where="right"``, top-aligned) or below it (``"below"``, under
    the x label), so no entry covers a curve. Save with ``bbox_inches="tight"`` to keep it in the file. Returns
    the legend (None when ``ax`` has nothing labelled)."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    opts = {"fontsize": 8, "title_fontsize": 8, "frameon": False}
    if where == "right":
        opts.update(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    elif where == "below":
        opts.update(loc="upper center", bbox_to_anchor=(0.5, -0.2), borderaxespad=0.0, ncol=1)
    else:
        raise ValueError(f"where must be 'right' or 'below', got {where!r}")
    opts.update(kwargs)
    return ax.legend(**opts)


#: quantity and unit of task metrics whose name alone does not say them (name -> (quantity, unit or ""))
_METRIC_TEXT: dict[str, tuple[str, str]] = {
    "par2_seconds": ("PAR-2 time", "s"),
    "par2_calls": ("PAR-2 oracle calls", "calls"),
    "par2_iters": ("PAR-2 oracle calls", "calls"),
    "time_s": ("solve time", "s"),
    "seconds": ("wall time", "s"),
    "fit_seconds": ("fit time", "s"),
    "peak_rss_mb": ("peak resident memory", "MB"),
    "solve_rss_mb": ("resident memory of the solve", "MB"),
    "rel_rmse": ("relative RMSE", ""),
    "rel_mae": ("relative MAE", ""),
    "rel_linf": ("relative max error", ""),
    "passed_gate": ("accuracy gate passed", "0/1"),
    "makespan": ("makespan C_max", "time units"),
}

_UNIT_SUFFIX = (
    ("_seconds", "s"),
    ("_sec", "s"),
    ("_s", "s"),
    ("_ms", "ms"),
    ("_mb", "MB"),
    ("_gb", "GB"),
    ("_calls", "calls"),
    ("_iters", "iterations"),
    ("_pct", "%"),
)


def metric_label(name: str, statistic: str = "", direction: str | None = None) -> str:
    """``quantity [unit] (statistic)`` for a task metric: ``metric_label("par2_seconds", "median over seeds",
    "min")`` -> ``"PAR-2 time [s] (median over seeds; lower is better)"``. Known names have their own text;
    others are read from their suffix (``_seconds`` / ``_s`` -> s, ``_mb`` -> MB, ...); a name without a known
    unit is written as is (a dimensionless score)."""
    quantity, unit = _METRIC_TEXT.get(name, ("", ""))
    if not quantity:
        quantity = name.replace("_", " ")
        for suffix, u in _UNIT_SUFFIX:
            if name.endswith(suffix) and len(name) > len(suffix):
                quantity, unit = name[: -len(suffix)].replace("_", " "), u
                break
    notes = [
        x for x in (statistic, {"min": "lower is better", "max": "higher is better"}.get(direction or "", "")) if x
    ]
    return quantity + (f" [{unit}]" if unit else "") + (f" ({'; '.join(notes)})" if notes else "")
