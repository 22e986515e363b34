"""Rendering of the entropic game environments (``render_mode="ansi"`` and ``"rgb_array"``).

* :func:`ansi_frame` — a short text: the step, the gap of the last profile and the smallest gap so far, then
  the current profile rounded to 3 decimals (one line per player, per state for the Markov game).
* :func:`rgb_frame` — an ``H×W×3`` ``uint8`` image of a matplotlib figure (Agg canvas, imported when first
  called): the current profile as bars (left) and the gap curve so far on a log y-axis (right), legends
  outside the axes.

Both take the profile as ``[(label, array), ...]``; an array of shape ``(n,)`` is one strategy, ``(S, n)`` one
policy (a row per state).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["RENDER_MODES", "RENDER_FPS", "check_render_mode", "ansi_frame", "rgb_frame", "FIGSIZE", "DPI"]

RENDER_MODES = ["ansi", "rgb_array"]
RENDER_FPS = 10
FIGSIZE = (9.0, 3.2)  # inches
DPI = 80  # -> 720 x 256 pixels


def check_render_mode(render_mode: str | None) -> str | None:
    """``render_mode`` if it is ``None`` or one of :data:`RENDER_MODES`, else a ``ValueError`` naming the valid ones."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(
            f"render_mode must be None or one of {', '.join(map(repr, RENDER_MODES))}, got {render_mode!r}"
        )
    return render_mode


def can_render(env_id: str, render_mode: str | None, ready: bool, what: str) -> bool:
    """``False`` (with Gymnasium's warning) when ``render_mode`` is ``None``; ``RuntimeError`` before ``reset``
    (``ready`` false: there is no ``what`` yet); ``True`` otherwise."""
    if render_mode is None:
        import gymnasium as gym

        gym.logger.warn(
            f"{env_id}: render() called with render_mode=None; pass render_mode="
            f"{' or '.join(map(repr, RENDER_MODES))} to the constructor (gym.make)"
        )
        return False
    if not ready:
        raise RuntimeError(f"{env_id}: call reset() before render() (there is no {what} yet)")
    return True


def _fmt(v: np.ndarray) -> str:
    return "[" + " ".join(f"{x:.3f}" for x in np.asarray(v, dtype=float).ravel()) + "]"


def ansi_frame(
    title: str,
    t: int,
    horizon: int,
    gaps: Sequence[float],
    gap_name: str,
    profile: Sequence[tuple[str, np.ndarray]],
    summary: Sequence[str] = (),
) -> str:
    """The text frame (module docstring). ``summary`` replaces the per-entry listing of a profile too long to
    print (the mean-field measure on its grid): its lines are printed instead when given."""
    g = np.asarray(gaps, dtype=float)
    gap = f"{gap_name} {g[-1]:.3e} (min so far {g.min():.3e})" if g.size else f"{gap_name} - (no step yet)"
    lines = [f"{title}  step {t}/{horizon}  {gap}"]
    if summary:
        lines += list(summary)
    else:
        width = max(len(name) for name, _ in profile)
        rows = {np.asarray(p).shape[0] if np.asarray(p).ndim == 2 else 0 for _, p in profile}
        if rows == {0}:
            lines += [f"  {name:<{width}} {_fmt(p)}" for name, p in profile]
        else:
            S = max(rows)
            for s in range(S):
                lines.append(f"  state {s}: " + "  ".join(f"{name} {_fmt(np.asarray(p)[s])}" for name, p in profile))
    return "\n".join(lines) + "\n"


def rgb_frame(
    title: str,
    gaps: Sequence[float],
    gap_name: str,
    profile: Sequence[tuple[str, np.ndarray]],
    *,
    gap_tol: float | None = None,
    grid: np.ndarray | None = None,
) -> np.ndarray:
    """The image frame (module docstring). With ``grid`` the (single) profile is a measure on that grid, drawn
    as a step histogram over it; otherwise each player's strategy is a group of bars, one group per state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax_p, ax_g = fig.subplots(1, 2, width_ratios=[1.2, 1.0])
    fig.suptitle(title, fontsize=10)

    # ----- current profile as bars
    if grid is not None:
        x = np.asarray(grid, dtype=float)
        dx = x[1] - x[0] if x.size > 1 else 1.0
        edges = np.concatenate([x - dx / 2, [x[-1] + dx / 2]])
        for name, p in profile:
            ax_p.stairs(np.asarray(p, dtype=float) / dx, edges, fill=True, alpha=0.6, label=name)
        ax_p.set_xlabel("x (grid point)")
        ax_p.set_ylabel("density  μ_k / Δx")
    else:
        mats = [(name, np.atleast_2d(np.asarray(p, dtype=float))) for name, p in profile]
        S = mats[0][1].shape[0]
        widths = [m.shape[1] for _, m in mats]
        group = sum(widths) + 1  # one empty slot between states
        for k, (name, m) in enumerate(mats):
            off = sum(widths[:k])
            xs = (np.arange(S)[:, None] * group + off + np.arange(m.shape[1])[None, :]).ravel()
            ax_p.bar(xs, m.ravel(), width=0.85, color=f"C{k}", label=name)
        if S > 1:
            ax_p.set_xticks(np.arange(S) * group + (sum(widths) - 1) / 2, [f"s{s}" for s in range(S)])
            ax_p.set_xlabel("state (bars: actions of each player)")
        else:
            ax_p.set_xticks(np.arange(sum(widths)), [str(i) for w in widths for i in range(w)])
            ax_p.set_xlabel("action")
        ax_p.set_ylim(0.0, 1.0)
        ax_p.set_ylabel("probability")
    ax_p.set_title("current profile", fontsize=9)
    ax_p.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)

    # ----- gap curve on a log axis
    g = np.asarray(gaps, dtype=float)
    steps = np.arange(1, g.size + 1)
    pos = g > 0
    ax_g.set_yscale("log")
    if pos.any():
        ax_g.plot(steps[pos], g[pos], color="C3", lw=1.2, label=f"{gap_name} (gap > 0)")
    else:
        ax_g.text(
            0.5,
            0.5,
            "no positive gap yet" if g.size else "no step yet",
            transform=ax_g.transAxes,
            ha="center",
            va="center",
            fontsize=9,
        )
        ax_g.set_ylim(min(gap_tol or 1e-6, 1e-6) / 10, 10.0)  # an empty log axis needs explicit limits
    if gap_tol is not None:
        ax_g.axhline(gap_tol, color="0.4", ls="--", lw=1.0, label=f"gap_tol = {gap_tol:g}")
    ax_g.set_xlim(0.5, max(g.size, 1) + 0.5)
    ax_g.set_xlabel("step k")
    ax_g.set_ylabel(f"{gap_name} (log)")
    ax_g.set_title("gap so far", fontsize=9)
    ax_g.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)

    fig.canvas.draw()
    img = np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
    return img
