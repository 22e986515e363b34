"""Report and figure of ``DistributedRegression-v0``: final suboptimality against the second-order
heterogeneity τ, local SGD against mini-batch SGD (the paper's regime question).

Every number is a geometric mean over seeds (the mean of ``log10_subopt``), over the scored runs — ``ok`` and
``diverged`` ones, the latter at the failure value — the same aggregate as ``bench``'s summary
(``geo_mean`` of ``subopt_ratio``), so the table's last line (all cells) is ``log10`` of that summary column
and the two rank the solvers alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.envs.tasks.base import save_figure

__all__ = ["regime_table", "tau_figure"]


def _ok(runs: pd.DataFrame) -> pd.DataFrame:
    """The scored runs (``ok`` and ``diverged``) with a finite ``log10_subopt``, grouped by (spread, K)."""
    ok = runs[runs.status.isin(("ok", "diverged"))].copy()
    ok = ok[np.isfinite(ok.log10_subopt.to_numpy(dtype=float))]
    ok["group"] = [f"spread={s:g}, K={int(k)}" for s, k in zip(ok.param_spread, ok.param_K)]
    return ok


def regime_table(runs: pd.DataFrame) -> str:
    ok = _ok(runs)
    if ok.empty:
        return ""
    labels = list(dict.fromkeys(ok.label))
    taus = sorted(ok.param_tau.unique())
    lines = [
        (
            "mean over seeds of the final log10 suboptimality (F - F*)/(F(x0) - F*) per tau (= log10 of the "
            "geometric mean, diverged runs at their failure value); 'local - mb': local-sgd minus minibatch-sgd "
            "(negative: local SGD ahead)"
        )
    ]
    head = f"{'group':<22}{'solver':<28}" + "".join(f"{'tau=' + format(t, 'g'):>11}" for t in taus)
    lines += [head, "-" * len(head)]
    for g, sub in ok.groupby("group", sort=False):
        med = sub.groupby(["label", "param_tau"]).log10_subopt.mean()
        for lab in labels:
            lines.append(f"{g:<22}{lab:<28}" + "".join(f"{med.get((lab, t), np.nan):>11.2f}" for t in taus))
        if "local-sgd" in labels and "minibatch-sgd" in labels:
            lines.append(
                f"{g:<22}{'local - mb':<28}"
                + "".join(
                    f"{med.get(('local-sgd', t), np.nan) - med.get(('minibatch-sgd', t), np.nan):>11.2f}" for t in taus
                )
            )
    allm = ok.groupby("label").log10_subopt.mean()
    lines.append(
        "all cells (log10 of bench's geo_mean): "
        + ", ".join(f"{lab} {allm[lab]:.2f}" for lab in sorted(allm.index, key=lambda x: allm[x]))
    )
    return "\n".join(lines)


def tau_figure(runs: pd.DataFrame, folder: Any) -> list[Any]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ok = _ok(runs)
    if ok.empty:
        return []
    groups = list(dict.fromkeys(ok.group))
    cols = min(3, len(groups))
    rows = int(np.ceil(len(groups) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.8 * rows), squeeze=False)
    for ax, g in zip(axes.ravel(), groups):
        sub = ok[ok.group == g]
        for lab, h in sub.groupby("label", sort=False):
            med = 10.0 ** h.groupby("param_tau").log10_subopt.mean()
            ax.semilogy(
                med.index,
                med.to_numpy(dtype=float),
                marker="o",
                lw=2.2 if lab in ("local-sgd", "minibatch-sgd") else 1.0,
                label=lab,
            )
        ax.set_title(g, fontsize=9)
        ax.set_xlabel("second-order heterogeneity tau")
        ax.set_ylabel("(F - F*) / (F(x0) - F*)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7, frameon=False)
    for ax in axes.ravel()[len(groups) :]:
        ax.axis("off")
    fig.suptitle("DistributedRegression-v0: final suboptimality vs tau (geometric mean over seeds)", fontsize=10)
    fig.tight_layout()
    save_figure(fig, Path(folder) / "subopt_vs_tau")
    return [fig]
