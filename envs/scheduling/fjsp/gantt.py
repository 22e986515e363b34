"""Gantt charts of flexible job-shop schedules (matplotlib).

:func:`plot_gantt` draws one row per machine (``M1`` at the top) and one bar per operation, coloured by
job (``tab20`` up to 20 jobs; beyond, colours spread over a continuous colormap by the golden-ratio
sequence, so neighbouring job ids stay distinguishable), labelled ``j.q`` (job ``j``, its ``q``-th
operation, both 1-based) where the bar is wide enough for the text, with a dashed line at the makespan
and, optionally, a thick outline around critical operations. The schedule is checked with
:func:`~papergym.envs.scheduling.fjsp.graph.validate_schedule` first: an invalid schedule raises
:class:`~papergym.envs.scheduling.fjsp.graph.ScheduleError` and nothing is drawn.

``path`` writes ``<stem>.png`` and ``<stem>.svg`` (a ``.png``/``.svg`` suffix of ``path``, in any case, is
replaced; parent folders are created); :func:`gantt_paths` gives the two paths. The figure is built with
:class:`matplotlib.figure.Figure` (no pyplot state, no GUI backend needed) unless ``ax`` is given.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from papergym.envs.scheduling.fjsp.graph import validate_schedule
from papergym.envs.scheduling.fjsp.instance import Instance

__all__ = ["plot_gantt", "gantt_paths", "job_colors"]

_GOLDEN = 0.618033988749895


def gantt_paths(path: str | os.PathLike) -> tuple[Path, Path]:
    """``(<stem>.png, <stem>.svg)`` of ``path`` (a ``.png``/``.svg`` suffix, any case, is dropped)."""
    p = Path(path)
    if p.suffix.lower() in (".png", ".svg"):
        p = p.with_suffix("")
    return p.with_name(p.name + ".png"), p.with_name(p.name + ".svg")


def job_colors(n_jobs: int) -> list:
    """One RGBA colour per job: ``tab20`` for up to 20 jobs, else a cycled ``turbo`` colormap."""
    import matplotlib

    if n_jobs <= 20:
        cmap = matplotlib.colormaps["tab20"]
        # tab20 pairs a dark and a light shade; take the dark ones first, then the light ones
        idx = [2 * i for i in range(10)] + [2 * i + 1 for i in range(10)]
        return [cmap(idx[j]) for j in range(n_jobs)]
    cmap = matplotlib.colormaps["turbo"]
    return [cmap(0.08 + 0.84 * ((j * _GOLDEN) % 1.0)) for j in range(n_jobs)]


def _critical_mask(critical, n: int) -> np.ndarray:
    if critical is None:
        return np.zeros(n, dtype=bool)
    c = np.asarray(critical)
    if c.dtype == bool:
        if c.shape != (n,):
            raise ValueError(f"critical: a boolean mask needs shape ({n},), got {c.shape}")
        return c
    mask = np.zeros(n, dtype=bool)
    idx = c.astype(np.int64).ravel()
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"critical: operation ids must lie in 0..{n - 1}")
    mask[idx] = True
    return mask


def plot_gantt(
    inst: Instance,
    machine,
    start,
    *,
    title: str | None = None,
    ax=None,
    path: str | os.PathLike | None = None,
    critical=None,
):
    """Draw the schedule ``(machine, start)`` of ``inst`` and return the figure.

    ``critical``: a boolean ``(N,)`` mask or a list of operation ids to outline (e.g.
    ``evaluate(inst, sol).critical``). ``title`` defaults to the instance name and the makespan. ``ax``: draw
    into an existing axes. ``path``: also write ``<stem>.png`` and ``<stem>.svg``."""
    machine = np.asarray(machine)
    start = np.asarray(start)
    cmax = validate_schedule(inst, machine, start)
    machine = machine.astype(np.int64)
    start = start.astype(np.int64)
    N, M = inst.n_ops, inst.n_machines
    p = inst.proc[np.arange(N), machine]
    crit = _critical_mask(critical, N)
    colors = job_colors(inst.n_jobs)

    if ax is None:
        from matplotlib.figure import Figure

        width = 11.0
        height = min(2.0 + 0.42 * M, 40.0)
        fig = Figure(figsize=(width, height), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure

    fontsize = 7 if N > 150 else 8
    bar_h = 0.72
    for o in range(N):
        k, j = int(machine[o]), int(inst.op_job[o])
        ax.barh(
            k,
            int(p[o]),
            left=int(start[o]),
            height=bar_h,
            color=colors[j],
            edgecolor="black" if crit[o] else "white",
            linewidth=1.8 if crit[o] else 0.5,
            zorder=3 if crit[o] else 2,
        )

    ax.set_ylim(M - 0.5, -0.5)  # M1 at the top
    ax.set_yticks(range(M), [f"M{k + 1}" for k in range(M)])
    xmax = cmax * 1.04 + 1
    ax.set_xlim(0, xmax)
    ax.set_xlabel("time  (black outline: critical operation)" if crit.any() else "time")
    ax.axvline(cmax, color="crimson", linestyle="--", linewidth=1.2, zorder=4)
    ax.text(
        cmax,
        -0.5,
        f" $C_{{\\max}}$ = {cmax}",
        color="crimson",
        ha="left",
        va="bottom",
        fontsize=fontsize,
        clip_on=False,
    )
    ax.grid(axis="x", alpha=0.3, zorder=0)
    ax.set_axisbelow(True)

    # labels where they fit: estimate the bar's width in points from the axes' size
    fig_w_in = fig.get_figwidth()
    ax_w_frac = 0.85 if ax.get_position().width > 0.95 else ax.get_position().width  # constrained layout: ~85 %
    pts_per_unit = fig_w_in * ax_w_frac * 72.0 / xmax
    char_w = 0.6 * fontsize
    for o in range(N):
        label = f"{int(inst.op_job[o]) + 1}.{int(inst.op_pos[o]) + 1}"
        if p[o] * pts_per_unit >= char_w * len(label) + 3:
            j = int(inst.op_job[o])
            r, g, b = colors[j][:3]
            dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
            ax.text(
                int(start[o]) + p[o] / 2.0,
                int(machine[o]),
                label,
                ha="center",
                va="center",
                fontsize=fontsize,
                color="white" if dark else "black",
                zorder=5,
                clip_on=True,
            )

    if title is None:
        title = f"{inst.name or 'FJSP'}: {inst.n_jobs} jobs x {M} machines, makespan {cmax}"
    ax.set_title(title, fontsize=10)

    if path is not None:
        png, svg = gantt_paths(path)
        png.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(png, dpi=150)
        fig.savefig(svg, metadata={"Date": None})
    return fig
