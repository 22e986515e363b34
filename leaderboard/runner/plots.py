"""Regret-curve figures: mean over seeds with a 95 % bootstrap band, oracle agents as references."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from papergym.leaderboard.runner.stats import bootstrap_mean_ci_columns  # noqa: E402

__all__ = ["plot_regret_curves"]


def plot_regret_curves(curves: pd.DataFrame, *, title: str = "", ax=None, log_x: bool = False,
                       ylabel: str = "cumulative dynamic regret", value: str = "cum_regret",
                       log_y: bool = False, linthresh: float = 1e-8, colours: dict | None = None,
                       legend_loc: str = "upper left"):
    """One line per agent: mean of ``value`` (default cumulative regret) over seeds at the stored
    checkpoints, with the 95 % percentile-bootstrap band (curves resampled whole). Oracle-role agents
    are dashed, grey reference lines. ``log_y``: a ``symlog`` axis, linear below ``linthresh`` (values
    that reach exactly 0 stay visible). ``colours``: agent -> matplotlib colour, to keep one colour per
    agent across panels (default: tab10 in legend order). Returns the figure."""
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
            ax.fill_between(t, lo, hi, color=col, alpha=0.2, lw=0)
    if log_x:
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("symlog", linthresh=linthresh)
    ax.set_xlabel("round t")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    n_seeds = curves.groupby("agent")["seed"].nunique().max() if len(curves) else 0
    ax.legend(fontsize=8, loc=legend_loc, title=f"mean, 95% bootstrap CI ({n_seeds} seeds)",
              title_fontsize=8, frameon=False)
    fig.tight_layout()
    return fig
