"""Report and figures of ``PreferenceHallucination-v0``.

* :func:`report_table` — per size (instance name without the seed) and solver: mean and min–max over the seeds of
  ``f1``, the hallucination rates (``chair_i``, ``chair_s``, ``partner_halluc``), ``recall`` and
  ``visual_dependence``, and the median seconds; failed runs are counted, not averaged.
* :func:`figures` — ``chair_vs_recall``: per size, every solver's mean CHAIR_i against its mean recall (whiskers
  min–max over seeds; lower right is better), and ``partner_halluc``: bars of the partner hallucination rate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.envs.tasks.base import save_figure

__all__ = ["report_table", "figures"]

COLUMNS = (
    ("f1", "F1"),
    ("chair_i", "CHAIR_i"),
    ("chair_s", "CHAIR_s"),
    ("partner_halluc", "partner halluc"),
    ("recall", "recall"),
    ("visual_dependence", "visual dep"),
)


def _config(name: str) -> str:
    return name.rsplit("/", 1)[0]


def _stat(v: pd.Series, digits: int = 3) -> str:
    x = v.astype(float).to_numpy()
    x = x[np.isfinite(x)]
    if not len(x):
        return "-"
    return (
        f"{x.mean():.{digits}f}"
        if len(x) == 1
        else f"{x.mean():.{digits}f} [{x.min():.{digits}f},{x.max():.{digits}f}]"
    )


def report_table(runs: pd.DataFrame) -> str:
    if runs is None or len(runs) == 0:
        return ""
    r = runs.copy()
    r["config"] = r.instance.map(_config)
    lines = [
        "PreferenceHallucination-v0: hallucination rate and recall of greedy captions on the private test scenes; "
        "mean [min,max] over seeds of the ok runs; seconds = median wall time"
    ]
    head = (
        f"{'size':<13}{'solver':<16}{'ok':>4}{'fail':>5}" + "".join(f"{c[1]:>23}" for c in COLUMNS) + f"{'seconds':>9}"
    )
    for cfg, g in r.groupby("config", sort=False):
        lines += ["", head, "-" * len(head)]
        for lab, h in g.groupby("label", sort=False):
            ok = h[h.status == "ok"]
            sec = ok.seconds.astype(float)
            lines.append(
                f"{cfg:<13}{lab:<16}{len(ok):>4}{len(h) - len(ok):>5}"
                + "".join(
                    f"{_stat(ok[c[0]], 2 if c[0] == 'visual_dependence' else 3):>23}" if c[0] in ok else f"{'-':>23}"
                    for c in COLUMNS
                )
                + f"{(f'{sec.median():.1f}' if len(sec) else '-'):>9}"
            )
    return "\n".join(lines)


def figures(runs: pd.DataFrame, folder: Any) -> list[Any]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    if runs is None or len(runs) == 0:
        return []
    ok = runs[runs.status == "ok"].copy()
    if ok.empty or "chair_i" not in ok or "recall" not in ok:
        return []
    ok["config"] = ok.instance.map(_config)
    configs = list(dict.fromkeys(ok.config))
    labels = list(dict.fromkeys(ok.label))
    colors = {lab: plt.get_cmap("tab10")(i % 10) for i, lab in enumerate(labels)}
    fig, axes = plt.subplots(1, len(configs), figsize=(4.8 * len(configs), 4.0), squeeze=False)
    for ax, cfg in zip(axes[0], configs):
        for lab in labels:
            g = ok[(ok.config == cfg) & (ok.label == lab)]
            if g.empty:
                continue
            c, r = g.chair_i.astype(float).to_numpy(), g.recall.astype(float).to_numpy()
            ax.errorbar(
                [c.mean()],
                [r.mean()],
                xerr=[[c.mean() - c.min()], [c.max() - c.mean()]],
                yerr=[[r.mean() - r.min()], [r.max() - r.mean()]],
                fmt="o",
                color=colors[lab],
                label=lab,
                capsize=2,
            )
        ax.set(title=cfg, xlabel="CHAIR_i (hallucinated mentions, lower is better)", ylabel="recall (higher is better)")
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7, frameon=False)
    fig.suptitle("PreferenceHallucination-v0: hallucination vs recall, mean over seeds (whiskers: min-max)", fontsize=9)
    fig.tight_layout()
    save_figure(fig, Path(folder) / "chair_vs_recall", dpi=130)
    out = [fig]
    if "partner_halluc" in ok:
        fig2, ax2 = plt.subplots(figsize=(max(5.0, 1.1 * len(configs) * len(labels) / 2 + 3), 3.6))
        width = 0.8 / max(len(labels), 1)
        for j, lab in enumerate(labels):
            means = [ok[(ok.config == cfg) & (ok.label == lab)].partner_halluc.astype(float).mean() for cfg in configs]
            x = np.arange(len(configs)) + (j - (len(labels) - 1) / 2) * width
            ax2.bar(x, means, width, color=colors[lab], label=lab)
        ax2.set_xticks(np.arange(len(configs)))
        ax2.set_xticklabels(configs)
        ax2.set(
            ylabel="partner hallucination rate",
            ylim=(0, 1.0),
            title="scenes with an absent co-occurrence partner: caption names it",
        )
        ax2.grid(alpha=0.3, axis="y")
        ax2.legend(fontsize=7, frameon=False)
        fig2.tight_layout()
        save_figure(fig2, Path(folder) / "partner_halluc", dpi=130)
        out.append(fig2)
    return out
