"""Report and figures of ``SubspaceDisentangle-v0``.

* :func:`report_table` — per configuration (instance name without the seed) and solver: mean and min–max over the
  seeds of ``disentangle_score``, the subspace error, content and style accuracy (digits: digit and tint accuracy and
  the recolouring MSE) and the median seconds; failed runs are counted, not averaged.
* :func:`figures` — ``disentangle_bars``: the mean score and subspace error per configuration and solver (min–max
  whiskers over seeds); ``score_vs_n`` when the runs cover several ``n`` (one panel per supervision and angle).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.envs.tasks.base import save_figure

__all__ = ["report_table", "figures"]


def _config(name: str) -> str:
    return name.rsplit("/", 1)[0]


def _stat(v: pd.Series) -> str:
    x = v.astype(float).to_numpy()
    x = x[np.isfinite(x)]
    if not len(x):
        return "-"
    return f"{x.mean():.3f}" if len(x) == 1 else f"{x.mean():.3f} [{x.min():.2f},{x.max():.2f}]"


def report_table(runs: pd.DataFrame) -> str:
    if runs is None or len(runs) == 0:
        return ""
    r = runs.copy()
    r["config"] = r.instance.map(_config)
    lines = ["SubspaceDisentangle-v0: mean [min,max] over seeds of the ok runs; seconds = median wall time"]
    head = f"{'configuration':<30}{'solver':<24}{'ok':>4}{'fail':>5}{'score':>24}"
    for cfg, g in r.groupby("config", sort=False):
        digits = cfg.startswith("digits")
        cols = (
            (("digit_acc", "digit acc"), ("tint_acc", "tint acc"), ("recolor_mse", "recolor MSE"))
            if digits
            else (("subspace_error", "subspace err"), ("content_acc", "content acc"), ("style_acc", "style acc"))
        )
        lines += ["", head + "".join(f"{c[1]:>24}" for c in cols) + f"{'seconds':>9}"]
        lines.append("-" * len(lines[-1]))
        for lab, h in g.groupby("label", sort=False):
            ok = h[h.status == "ok"]
            sec = ok.seconds.astype(float)
            lines.append(
                f"{cfg:<30}{lab:<24}{len(ok):>4}{len(h) - len(ok):>5}{_stat(ok.disentangle_score):>24}"
                + "".join(f"{_stat(ok[c[0]]):>24}" for c in cols)
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
    if ok.empty:
        return []
    ok["config"] = ok.instance.map(_config)
    configs = list(dict.fromkeys(ok.config))
    labels = list(dict.fromkeys(ok.label))
    colors = {lab: plt.get_cmap("tab10")(i % 10) for i, lab in enumerate(labels)}
    out = []
    metrics = [("disentangle_score", "disentangle score (max)"), ("subspace_error", "subspace error (min)")]
    fig, axes = plt.subplots(1, 2, figsize=(max(7.0, 1.2 * len(configs) * len(labels) / 2 + 4), 4.2), squeeze=False)
    width = 0.8 / max(len(labels), 1)
    for ax, (met, title) in zip(axes[0], metrics):
        for j, lab in enumerate(labels):
            means, lo, hi = [], [], []
            for cfg in configs:
                v = ok[(ok.config == cfg) & (ok.label == lab)][met].astype(float).to_numpy()
                v = v[np.isfinite(v)]
                means.append(v.mean() if len(v) else np.nan)
                lo.append(v.mean() - v.min() if len(v) else 0.0)
                hi.append(v.max() - v.mean() if len(v) else 0.0)
            x = np.arange(len(configs)) + (j - (len(labels) - 1) / 2) * width
            ax.bar(x, means, width, yerr=[lo, hi], color=colors[lab], label=lab, capsize=2)
        ax.set_xticks(np.arange(len(configs)))
        ax.set_xticklabels(configs, rotation=20, ha="right", fontsize=7)
        ax.set(title=title, ylim=(0, 1.05))
        ax.grid(alpha=0.3, axis="y")
    axes[0, 0].legend(fontsize=7, frameon=False)
    fig.suptitle("SubspaceDisentangle-v0: mean over seeds (whiskers: min-max)", fontsize=10)
    fig.tight_layout()
    save_figure(fig, Path(folder) / "disentangle_bars", dpi=130)
    out.append(fig)
    if "param_n" in ok and ok.param_n.dropna().nunique() > 1:
        ls = ok[ok.param_family == "ls-gmm"].copy()
        ls["panel"] = ls.param_supervision.astype(str) + ", angle " + ls.param_angle.map(lambda a: f"{float(a):g}")
        panels = list(dict.fromkeys(ls.panel))
        fig2, ax2 = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
        for ax, pan in zip(ax2[0], panels):
            g = ls[ls.panel == pan]
            for lab in labels:
                h = g[g.label == lab].groupby("param_n").disentangle_score.mean()
                if len(h):
                    ax.semilogx(
                        h.index.to_numpy(dtype=float), h.to_numpy(dtype=float), "o-", color=colors[lab], label=lab
                    )
            ax.set(title=pan, xlabel="n (training samples)", ylabel="disentangle score", ylim=(0, 1.05))
            ax.grid(alpha=0.3, which="both")
        ax2[0, 0].legend(fontsize=7, frameon=False)
        fig2.tight_layout()
        save_figure(fig2, Path(folder) / "score_vs_n", dpi=130)
        out.append(fig2)
    return out
