"""Report and figures of ``ContinualDomains-v0``.

* :func:`report_table` — per configuration (instance name without the seed) and solver: the mean over the ok runs of
  the final accuracy under protocol (i) and (ii), average incremental accuracy, forgetting, backward and forward
  transfer, selection accuracy, the experts used (counted by the evaluator) and the median seconds; failed runs are
  counted.
* :func:`figures` — ``accuracy_matrix_<config>``: per configuration one heat map per solver of the mean accuracy
  matrix ``a_{l,j}`` (row: stages learned, column: stage evaluated; the upper triangle is zero-shot accuracy on domains
  not learned yet), from the ``a_{l}_{j}`` metrics.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from papergym.envs.tasks.base import save_figure

__all__ = ["report_table", "figures", "mean_matrix"]

COLUMNS = (
    ("final_acc", "A_T (i)"),
    ("final_acc_sample", "A_T (ii)"),
    ("avg_inc_acc", "avg inc"),
    ("forgetting", "forget"),
    ("bwt", "BWT"),
    ("fwt", "FWT"),
    ("selection_acc", "select"),
    ("experts_used", "experts"),
)


def _config(name: str) -> str:
    return name.rsplit("/", 1)[0]


def _mean(v: pd.Series) -> float:
    x = v.astype(float).to_numpy()
    x = x[np.isfinite(x)]
    return float(x.mean()) if len(x) else math.nan


def _fmt(x: float, big: bool = False) -> str:
    if not math.isfinite(x):
        return "-"
    return f"{x:.0f}" if big else f"{x:.3f}"


def report_table(runs: pd.DataFrame) -> str:
    if runs is None or len(runs) == 0:
        return ""
    r = runs.copy()
    r["config"] = r.instance.map(_config)
    lines = [
        "ContinualDomains-v0: mean over the ok runs; A_T (i) = final accuracy with batches of 32 (primary), (ii) "
        "per sample; BWT = mean_j<T a_T,j - a_j,j; FWT = mean_j>1 a_j-1,j - chance; select = routed to the own "
        "domain's expert; seconds = median wall time"
    ]
    head = (
        f"{'configuration':<22}{'solver':<16}{'ok':>4}{'fail':>5}"
        + "".join(f"{c[1]:>11}" for c in COLUMNS)
        + f"{'seconds':>9}"
    )
    for cfg, g in r.groupby("config", sort=False):
        lines += ["", head, "-" * len(head)]
        for lab, h in g.groupby("label", sort=False):
            ok = h[h.status == "ok"]
            sec = ok.seconds.astype(float)
            cells = "".join(
                f"{_fmt(_mean(ok[c]) if c in ok else math.nan, c == 'experts_used'):>11}" for c, _ in COLUMNS
            )
            lines.append(
                f"{cfg:<22}{lab:<16}{len(ok):>4}{len(h) - len(ok):>5}{cells}"
                f"{(f'{sec.median():.1f}' if len(sec) else '-'):>9}"
            )
    return "\n".join(lines)


def mean_matrix(runs: pd.DataFrame) -> np.ndarray:
    """The mean accuracy matrix of ``runs`` (one configuration, ok runs), trimmed to the stages present."""
    T = 0
    while f"a_{T + 1}_1" in runs and np.isfinite(runs[f"a_{T + 1}_1"].astype(float)).any():
        T += 1
    return np.array([[_mean(runs[f"a_{l}_{j}"]) for j in range(1, T + 1)] for l in range(1, T + 1)])


def figures(runs: pd.DataFrame, folder: Any) -> list[Any]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    if runs is None or len(runs) == 0:
        return []
    ok = runs[runs.status == "ok"].copy()
    if ok.empty or "a_1_1" not in ok:
        return []
    ok["config"] = ok.instance.map(_config)
    out = []
    from pathlib import Path

    for cfg, g in ok.groupby("config", sort=False):
        labels = list(dict.fromkeys(g.label))
        ncol = min(4, len(labels))
        nrow = -(-len(labels) // ncol)
        fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 3.0 * nrow), squeeze=False)
        for ax in axes.flat[len(labels) :]:
            ax.axis("off")
        im = None
        for ax, lab in zip(axes.flat, labels):
            A = mean_matrix(g[g.label == lab])
            im = ax.imshow(A, vmin=0.0, vmax=1.0, cmap="viridis")
            T = len(A)
            ax.set_xticks(range(T), [str(j + 1) for j in range(T)])
            ax.set_yticks(range(T), [str(j + 1) for j in range(T)])
            ax.set_xlabel("stage evaluated j")
            if ax in axes[:, 0]:
                ax.set_ylabel("stages learned l")
            ax.set_title(f"{lab}: A_T = {A[-1].mean():.2f}" if T else lab, fontsize=9)
            for l in range(T):
                for j in range(T):
                    if np.isfinite(A[l, j]):
                        ax.text(
                            j,
                            l,
                            f"{100 * A[l, j]:.0f}",
                            ha="center",
                            va="center",
                            fontsize=6,
                            color="white" if A[l, j] < 0.6 else "black",
                        )
        if im is not None:
            fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.8, label="accuracy a_l,j")
        fig.suptitle(f"ContinualDomains-v0 {cfg}: accuracy matrix (mean over seeds)", fontsize=10)
        save_figure(fig, Path(folder) / f"accuracy_matrix_{cfg.replace('/', '_').replace('=', '')}")
        out.append(fig)
    return out
