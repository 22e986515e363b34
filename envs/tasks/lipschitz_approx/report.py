"""Report and figures of ``LipschitzApprox-v0``.

* :func:`report_table` — per configuration (``approx/d=2/f3``, ``robust/moons``, ``digits``: the instance name
  without its seed) and solver: the number of runs, the median ``error`` (the ranked metric: 1.0 for an
  uncertified network), the median certified bound and empirical Lipschitz constant, the median uncertified fit
  (``rel_rmse`` for ``approx``, ``clean_acc`` for the classification families) and the median training seconds.
* :func:`figures` — ``error_vs_bound``: every run's uncertified fit (``rel_rmse``, or ``1 − clean_acc``) against
  its certified bound (log x axis; the certified region ``≤ 1`` shaded), one marker per solver and one panel per
  family; with anytime curves, ``error_vs_epoch``: the median ``error`` over runs against the solver-declared
  epoch, one panel per family, one line per solver (PNG + SVG).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.envs.tasks.base import save_figure

__all__ = ["figures", "report_table"]


def _ok(runs: pd.DataFrame) -> pd.DataFrame:
    return runs[runs.status == "ok"].copy() if len(runs) and "status" in runs else runs.copy()


def _config(name: str) -> str:
    return name.rsplit("/", 1)[0]


def _med(col: pd.Series) -> float:
    v = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    v = v[np.isfinite(v)]
    return float(np.median(v)) if len(v) else float("nan")


def _fmt(v: float, spec: str = ".3g") -> str:
    return format(v, spec) if np.isfinite(v) else "-"


def report_table(runs: pd.DataFrame) -> str:
    ok = _ok(runs)
    if ok.empty or "error" not in ok:
        return ""
    ok["config"] = ok.instance.map(_config)
    head = (
        f"{'configuration':<20}{'solver':<26}{'runs':>5}{'error':>9}{'cert_bound':>12}{'emp_lip':>9}"
        f"{'fit':>9}{'seconds':>9}"
    )
    lines = [
        "medians over runs; error = RMSE/std (approx) or 1 - cert_acc@0.1 (classification), 1.0 when the "
        "certified bound exceeds 1; fit = rel_rmse (approx) or clean_acc, whatever the certificate",
        head,
        "-" * len(head),
    ]
    for cfg in dict.fromkeys(ok.config):
        g = ok[ok.config == cfg]
        for lab in dict.fromkeys(g.label):
            h = g[g.label == lab]
            fit = _med(h.rel_rmse) if cfg.startswith("approx") else _med(h.get("clean_acc", pd.Series(dtype=float)))
            sec = _med(h.train_seconds) if "train_seconds" in h else _med(h.seconds)
            lines.append(
                f"{cfg:<20}{lab[:25]:<26}{len(h):>5}{_fmt(_med(h.error), '.4f'):>9}"
                f"{_fmt(_med(h.cert_bound), '.4g'):>12}{_fmt(_med(h.emp_lip), '.3f'):>9}"
                f"{_fmt(fit, '.4f'):>9}{_fmt(sec, '.1f'):>9}"
            )
    return "\n".join(lines)


def figures(runs: pd.DataFrame, folder: Any, curves: pd.DataFrame | None = None) -> list[Any]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ok = _ok(runs)
    if ok.empty or "cert_bound" not in ok:
        return []
    ok["family"] = ok.instance.map(lambda s: s.split("/", 1)[0])
    fams = list(dict.fromkeys(ok.family))
    labels = list(dict.fromkeys(ok.label))
    colors = {lab: plt.get_cmap("tab10")(i % 10) for i, lab in enumerate(labels)}
    markers = "osD^v<>phX*"
    out = []
    fig, axes = plt.subplots(1, len(fams), figsize=(5.2 * len(fams), 4.2), squeeze=False)
    for ax, fam in zip(axes[0], fams):
        g = ok[ok.family == fam]
        for i, lab in enumerate(labels):
            h = g[g.label == lab]
            if h.empty:
                continue
            x = pd.to_numeric(h.cert_bound, errors="coerce").to_numpy(dtype=float)
            if fam == "approx":
                y = pd.to_numeric(h.rel_rmse, errors="coerce").to_numpy(dtype=float)
            else:
                y = 1.0 - pd.to_numeric(h.clean_acc, errors="coerce").to_numpy(dtype=float)
            ax.scatter(
                np.clip(x, 1e-3, 1e6),
                np.clip(y, 1e-6, 1e3),
                s=18,
                color=colors[lab],
                marker=markers[i % 11],
                label=lab,
                alpha=0.8,
            )
        ax.axvspan(1e-3, 1.0 + 1e-6, color="green", alpha=0.06)
        ax.axvline(1.0, color="grey", ls="--", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set(
            title=f"{fam}: fit vs certified bound",
            xlabel="certified Lipschitz bound",
            ylabel="rel. RMSE" if fam == "approx" else "1 - clean accuracy",
        )
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    save_figure(fig, Path(folder) / "error_vs_bound", dpi=130)
    out.append(fig)
    if curves is not None and len(curves) and {"error", "iteration"} <= set(curves.columns):
        c = curves.copy()
        c["family"] = c.instance.map(lambda s: s.split("/", 1)[0])
        c["iteration"] = pd.to_numeric(c.iteration, errors="coerce")
        c["error"] = pd.to_numeric(c.error, errors="coerce")
        c = c[np.isfinite(c.iteration) & np.isfinite(c.error)]
        if len(c):
            fams_c = list(dict.fromkeys(c.family))
            fig2, axes2 = plt.subplots(1, len(fams_c), figsize=(5.2 * len(fams_c), 4.0), squeeze=False)
            for ax, fam in zip(axes2[0], fams_c):
                g = c[c.family == fam]
                for lab, h in g.groupby("label", sort=False):
                    m = h.groupby("iteration").error.median()
                    ax.semilogy(
                        m.index.to_numpy(dtype=float),
                        np.clip(m.to_numpy(dtype=float), 1e-6, None),
                        color=colors.get(lab, "k"),
                        label=lab,
                        marker=".",
                    )
                ax.set(title=f"{fam}: error vs epoch (median)", xlabel="epoch", ylabel="error")
                ax.grid(alpha=0.3, which="both")
                ax.legend(fontsize=7, frameon=False)
            fig2.tight_layout()
            save_figure(fig2, Path(folder) / "error_vs_epoch", dpi=130)
            out.append(fig2)
    return out
