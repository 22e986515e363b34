"""Report and figure of ``FeatureStaircase-v0`` (``docs/papers/agf.md``).

* :func:`report_table` — per setting, initial scale ``α`` and predictor: the mean ``staircase_error`` and its four
  terms (time, level, count, order) over the instances, the median seconds of the prediction and its cost
  relative to simulating gradient descent (``cost_ratio`` = prediction seconds / seconds of the simulated run it
  replaces), and how many runs failed. A last block gives each predictor's mean over all instances.
* :func:`overlay_figure` — ``staircase_overlay``: for the first configuration of each setting (lowest seed), one
  panel per ``α``: the measured loss curve of gradient descent (log-log) with its extracted drops (dots) and every
  predictor's staircase (re-solved with its hyperparameters) as a step function.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.envs.tasks.base import save_figure
from papergym.envs.tasks.staircase.task import parse_steps

__all__ = ["report_table", "overlay_figure"]

_TERMS = ("staircase_error", "time_error", "level_error", "count_error", "order_error")


def _num(g: pd.DataFrame, col: str) -> np.ndarray:
    if col not in g:
        return np.array([np.nan])
    return pd.to_numeric(g[col], errors="coerce").to_numpy(dtype=float)


def _mean(a: np.ndarray) -> float:
    a = a[~np.isnan(a)]
    return float(np.mean(a)) if len(a) else np.nan


def _med(a: np.ndarray) -> float:
    a = a[~np.isnan(a)]
    return float(np.median(a)) if len(a) else np.nan


def _f(v: float, spec: str = ".3f") -> str:
    return format(v, spec) if np.isfinite(v) else "-"


def report_table(runs: pd.DataFrame) -> str:
    if runs is None or len(runs) == 0:
        return ""
    runs = runs.copy()
    if "param_alpha" not in runs:
        return ""
    head = (
        f"{'setting':<17}{'alpha':>8}  {'predictor':<22}{'error':>8}{'time':>8}{'level':>8}{'count':>8}"
        f"{'order':>8}{'seconds':>10}{'cost/GD':>10}{'runs':>6}{'failed':>7}"
    )
    lines = [
        "staircase error = time + level + count + order terms (means over instances; lower is better); "
        "seconds: median prediction time; cost/GD: prediction seconds / seconds of the simulated "
        "gradient-descent run",
        head,
        "-" * len(head),
    ]
    keys = ["param_setting", "param_alpha", "label"]
    for (setting, al, lab), g in runs.groupby(keys, sort=True):
        ok = g[g.status == "ok"]
        vals = [_mean(_num(ok, c)) for c in _TERMS]
        lines.append(
            f"{setting:<17}{float(al):>8.0e}  {lab:<22}"
            + "".join(f"{_f(v):>8}" for v in vals)
            + f"{_f(_med(_num(ok, 'time_s')), '.2e'):>10}{_f(_med(_num(ok, 'cost_ratio')), '.1e'):>10}"
            f"{len(g):>6}{len(g) - len(ok):>7}"
        )
    lines += ["", f"{'setting':<17}{'predictor':<22}{'mean error':>12}{'runs':>6}{'failed':>7}"]
    for (setting, lab), g in runs.groupby(["param_setting", "label"], sort=True):
        ok = g[g.status == "ok"]
        lines.append(
            f"{setting:<17}{lab:<22}{_f(_mean(_num(ok, 'staircase_error'))):>12}{len(g):>6}{len(g) - len(ok):>7}"
        )
    return "\n".join(lines)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def overlay_figure(task: Any, runs: pd.DataFrame, folder: Any) -> Any:
    """Measured and predicted staircases (module docstring); ``None`` when no run fits."""
    from papergym.agents.base import make_solver

    if runs is None or len(runs) == 0 or "param_setting" not in runs:
        return None
    ok = runs[runs.status == "ok"]
    if ok.empty:
        return None
    refs = {r.name: r for split in ("dev",) for r in task.instances(split)}
    panels = []
    for setting, g in ok.groupby("param_setting", sort=True):
        g = g[g.instance.isin(list(refs))].sort_values(["instance_seed", "instance"])
        if g.empty:
            continue
        first = refs[g.instance.iloc[0]]
        cfg = {k: v for k, v in first.params.items() if k != "alpha"}
        for al in sorted({float(a) for a in g.param_alpha}, reverse=True):
            ref = next(
                (
                    r
                    for r in refs.values()
                    if r.seed == first.seed
                    and float(r.params["alpha"]) == al
                    and {k: v for k, v in r.params.items() if k != "alpha"} == cfg
                ),
                None,
            )
            if ref is not None and ref.name in set(g.instance):
                panels.append((setting, ref, g[g.instance == ref.name]))
    if not panels:
        return None
    plt = _plt()
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows), squeeze=False)
    for ax in axes.ravel()[len(panels) :]:
        ax.axis("off")
    for ax, (setting, ref, g) in zip(axes.ravel(), panels):
        problem, ev = task.make(ref)
        tr = ev.truth
        eps = 1e-6 * tr["l0"]
        ct = np.maximum(tr["curve_t"], 1)
        ax.plot(ct, np.maximum(tr["curve_L"], eps), color="black", lw=2.2, alpha=0.35, label="gradient descent")
        emp = tr["steps"]
        if len(emp):
            ax.scatter(
                np.maximum(emp[:, 0], 1),
                np.maximum(emp[:, 1], eps),
                color="black",
                s=14,
                zorder=5,
                label="measured drops",
            )
        seen = set()
        for r in g.itertuples():
            if r.label in seen:
                continue
            seen.add(r.label)
            try:
                slv = make_solver(r.solver, task.id, seed=int(r.seed), **dict(r.hyperparameters or {}))
                steps = parse_steps(slv.solve(problem, task.default_budget, lambda *a, **k: None))
            except Exception:  # noqa: BLE001, S112 - a figure never fails the bench
                continue
            ts = [1.0] + [max(s[0], 1.0) for s in steps] + [float(problem.horizon)]
            ls = [tr["l0"]] + [max(s[1], eps) for s in steps]
            ls.append(ls[-1])
            ax.step(ts, ls, where="post", lw=1.2, label=str(r.label))
        ax.set(
            xscale="log",
            yscale="log",
            xlim=(1, problem.horizon),
            xlabel="iteration",
            ylabel="loss",
            title=f"{setting}: {ref.name.rsplit('/', 1)[0].split('/', 1)[-1]}",
        )
        ax.title.set_fontsize(8)
    axes.ravel()[0].legend(fontsize=7, frameon=False)
    fig.suptitle("FeatureStaircase-v0: measured (GD) and predicted staircases", fontsize=10)
    fig.tight_layout()
    save_figure(fig, Path(folder) / "staircase_overlay", dpi=140)
    return fig
