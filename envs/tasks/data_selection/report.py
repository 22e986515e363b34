"""Report and figures of ``RLDataSelection-v0``.

* :func:`report_table` -- per configuration and selection method: final test accuracy (mean [min, max] over seeds),
  accuracy gain, accuracy on the hardest sizes, data-scoring seconds (``select_seconds``), total RL training seconds
  (``train_seconds``), selection token-forwards and the mean size of the selected problems; then the headline
  numbers of :func:`selection_summary`.
* :func:`figures` -- ``accuracy_vs_compute``: mean test accuracy per method against select + train token-forwards
  (left) and against select + train seconds (right), log x axes, min–max whiskers over seeds, a dashed line at the
  initial policy's mean accuracy.
* :func:`selection_summary` -- per method mean seconds / forwards / accuracy and, in ``.attrs``, the scoring-time
  ratio ``multi-sample-acc`` / ``ufo-rl`` and ``ufo-rl`` minus ``full-data`` accuracy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.envs.tasks.base import save_figure

__all__ = ["report_table", "figures", "selection_summary"]


def _config(name: str) -> str:
    return name.rsplit("/", 1)[0]


def _stat(v: Any, fmt: str = ".3f") -> str:
    x = pd.Series(v).astype(float).to_numpy()
    x = x[np.isfinite(x)]
    if not len(x):
        return "-"
    return f"{x.mean():{fmt}}" if len(x) == 1 else f"{x.mean():{fmt}} [{x.min():{fmt}},{x.max():{fmt}}]"


def _col(df: pd.DataFrame, c: str) -> pd.Series:
    return df[c] if c in df.columns else pd.Series(np.nan, index=df.index)


def selection_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per method (``label``): ``n`` ok runs and the means of ``select_seconds``, ``select_forwards``,
    ``train_seconds``, ``test_acc`` and ``acc_gain``; ``.attrs["scoring_ratio"]`` = mean ``select_seconds`` of
    ``multi-sample-acc`` / that of ``ufo-rl``, ``.attrs["forward_ratio"]`` the same for ``select_forwards``,
    ``.attrs["ufo_vs_full"]`` = mean ``test_acc`` of ``ufo-rl`` minus that of ``full-data`` (NaN where a method is
    missing)."""
    cols = ["select_seconds", "select_forwards", "train_seconds", "test_acc", "acc_gain"]
    if runs is None or len(runs) == 0:
        out = pd.DataFrame(columns=["n", *cols])
    else:
        ok = runs[runs.status == "ok"].copy()
        for c in cols:
            ok[c] = _col(ok, c).astype(float)
        out = ok.groupby("label", sort=False)[cols].mean()
        out.insert(0, "n", ok.groupby("label", sort=False).size())

    def get(lab: str, c: str) -> float:
        return float(out.loc[lab, c]) if lab in out.index else float("nan")

    ms, ufo = get("multi-sample-acc", "select_seconds"), get("ufo-rl", "select_seconds")
    out.attrs["scoring_ratio"] = ms / ufo if ufo > 0 else float("nan")
    mf, uf = get("multi-sample-acc", "select_forwards"), get("ufo-rl", "select_forwards")
    out.attrs["forward_ratio"] = mf / uf if uf > 0 else float("nan")
    out.attrs["ufo_vs_full"] = get("ufo-rl", "test_acc") - get("full-data", "test_acc")
    return out


def report_table(runs: pd.DataFrame) -> str:
    if runs is None or len(runs) == 0:
        return ""
    r = runs.copy()
    r["config"] = r.instance.map(_config)
    lines = [
        "RLDataSelection-v0: mean [min,max] over seeds of the ok runs; scoring s = selection wall time (solve), "
        "train s = the evaluator's GRPO run on the selection"
    ]
    head = (
        f"{'configuration':<20}{'method':<18}{'ok':>3}{'fail':>5}{'test acc':>22}{'gain':>25}{'acc 2-d':>8}"
        f"{'acc 3-d':>8}{'scoring s':>21}{'train s':>19}{'select fwd':>11}{'size':>6}"
    )
    for cfg, g in r.groupby("config", sort=False):
        lines += ["", head, "-" * len(head)]
        for lab, h in g.groupby("label", sort=False):
            ok = h[h.status == "ok"]
            lines.append(
                f"{cfg:<20}{lab:<18}{len(ok):>3}{len(h) - len(ok):>5}{_stat(_col(ok, 'test_acc')):>22}"
                f"{_stat(_col(ok, 'acc_gain'), '+.3f'):>25}{_stat(_col(ok, 'acc_d2').mean()):>8}"
                f"{_stat(_col(ok, 'acc_d3').mean()):>8}{_stat(_col(ok, 'select_seconds'), '.2f'):>21}"
                f"{_stat(_col(ok, 'train_seconds'), '.1f'):>19}"
                f"{_stat(_col(ok, 'select_forwards').mean(), '.3g'):>11}"
                f"{_stat(_col(ok, 'mean_size').mean(), '.2f'):>6}"
            )
    s = selection_summary(runs)
    lines += [
        "",
        f"scoring-time ratio multi-sample-acc / ufo-rl: {s.attrs['scoring_ratio']:.1f}x seconds, "
        f"{s.attrs['forward_ratio']:.1f}x token-forwards (paper: up to 185x)",
        f"ufo-rl (10 % of the data) minus full-data test accuracy: {s.attrs['ufo_vs_full']:+.3f}",
    ]
    return "\n".join(lines)


def figures(runs: pd.DataFrame, folder: Any) -> list[Any]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    if runs is None or len(runs) == 0:
        return []
    ok = runs[runs.status == "ok"].copy()
    if not len(ok):
        return []
    for c in ("select_forwards", "train_forwards", "select_seconds", "train_seconds", "test_acc"):
        ok[c] = _col(ok, c).astype(float)
    ok["fwd"] = ok.select_forwards + ok.train_forwards
    ok["sec"] = ok.select_seconds + ok.train_seconds
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for lab, h in ok.groupby("label", sort=False):
        for ax, x in zip(axes, ("fwd", "sec")):
            xm, y = h[x].mean(), h.test_acc
            ax.errorbar(
                [xm], [y.mean()], yerr=[[y.mean() - y.min()], [y.max() - y.mean()]], fmt="o", capsize=3, label=lab
            )
    before = _col(ok, "acc_before").astype(float).mean()
    if np.isfinite(before):
        for ax in axes:
            ax.axhline(before, color="0.4", ls="--", lw=1, label="before RL" if ax is axes[1] else None)
    axes[0].set_xlabel("select + train token-forwards")
    axes[1].set_xlabel("select + train seconds")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_ylabel("test accuracy after RL")
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.suptitle("RLDataSelection-v0: accuracy vs compute (mean over seeds, min-max whiskers)")
    fig.tight_layout()
    save_figure(fig, Path(folder) / "accuracy_vs_compute")
    return [fig]
