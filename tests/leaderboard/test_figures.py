"""Figures and tables that fit their data: FJSP makespan curves, legends outside the axes, units in labels,
the env's regret name in tables, gate-failed runs, plot() writing only when asked, board figures' entries."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from papergym.leaderboard.runner.bench import BenchResult
from papergym.leaderboard.runner.compare import (
    CompareResult,
    _plot_kind,
    _summarise,
    compare,
)
from papergym.leaderboard.runner.plots import metric_label
from papergym.leaderboard.runner.sweep import _summarise as sweep_summarise


def _no_legend_overlap(fig) -> int:
    """Saves ``fig`` (rendering it) and asserts that no legend overlaps any axes; returns the legend count."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not hasattr(fig.canvas, "get_renderer"):  # a bare Figure (the board's): give it an Agg canvas
        FigureCanvasAgg(fig)
    fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")
    r = fig.canvas.get_renderer()
    legends = [a.get_legend() for a in fig.axes if a.get_legend() is not None] + list(fig.legends)
    for leg in legends:
        lb = leg.get_window_extent(r)
        for ax in fig.axes:
            assert not lb.overlaps(ax.get_window_extent(r)), f"legend {leg.get_title().get_text()!r} covers an axes"
    return len(legends)


def _curves(agents=("a", "b", "c"), seeds=(0, 1, 2), T=50, extra=None):
    rows = []
    for i, a in enumerate(agents):
        for s in seeds:
            for t in range(1, T + 1):
                row = {"agent": a, "role": "baseline", "seed": s, "t": t, "cum_regret": (i + 1) * np.sqrt(t) + s}
                if extra:
                    row.update(extra(i, s, t))
                rows.append(row)
    return pd.DataFrame(rows)


def _result(curves, runs_extra=None, **kw) -> CompareResult:
    last = curves.sort_values("t").groupby(["agent", "seed"]).tail(1)
    runs = pd.DataFrame(
        {
            "agent": last.agent,
            "role": last.role,
            "seed": last.seed,
            "status": "ok",
            "final_regret": last.cum_regret,
            "regret_half": np.nan,
            "flatness": np.nan,
            "seconds": 1.0,
            "sec_per_1k_steps": 1.0,
            "diagnostics": [{}] * len(last),
            "key": "k",
            "error": "",
        }
    ).reset_index(drop=True)
    for k, v in (runs_extra or {}).items():
        runs[k] = v
    summary = _summarise(runs, list(dict.fromkeys(curves.agent)))
    return CompareResult(
        env_id=kw.pop("env_id", "X-v0"), env_kwargs={"horizon": 50}, runs=runs, curves=curves, summary=summary, **kw
    )


# ------------------------------------------------------------------------------------- FJSP figures
def test_fjsp_envs_declare_makespan_plot_kind():
    from papergym.envs.bandits.lipschitz import NonStatLipschitzEnv
    from papergym.envs.scheduling.fjsp.construct import FJSPEnv
    from papergym.envs.scheduling.fjsp.improve import FJSPImproveEnv

    assert _plot_kind(FJSPEnv) == "makespan" and _plot_kind(FJSPImproveEnv) == "makespan"
    assert _plot_kind(NonStatLipschitzEnv) == "regret"


def test_fjsp_improve_compare_draws_makespan_gap_per_step(tmp_path):
    res = compare(
        "FJSPImprove-v0",
        agents=["random-p-search", "initial-solution"],
        seeds=[0, 1],
        horizon=12,
        env_kwargs={"instances": "sd2-10x5", "init": "mwkr"},
        backend="serial",
        out=tmp_path / "c",
    )
    assert res.plot_kind == "makespan" and res.figure_name == "makespan"
    c = res.curves
    assert "makespan" in c.columns and c.makespan.notna().all()
    # the incumbent never gets worse, and the stored last value is the run's scored makespan
    for (_, _), g in c.groupby(["agent", "seed"]):
        assert np.all(np.diff(g.sort_values("t").makespan.to_numpy()) <= 0)
    last = c.sort_values("t").groupby(["agent", "seed"]).makespan.last()
    scored = res.runs.set_index(["agent", "seed"]).makespan
    assert np.allclose(last.sort_index().to_numpy(), scored.sort_index().to_numpy())
    curves, value, ylab = res.makespan_curves()
    assert value == "gap_pct" and "[%]" in ylab
    fig = res.plot()
    ax = fig.axes[0]
    assert ax.get_ylabel() == ylab and ax.get_xlabel() == "step t"
    # the drawn mean is the gap in %, not the cumulative regret (which is 0 before the last step)
    line = next(ln for ln in ax.get_lines() if ln.get_label() == "initial-solution")
    g = curves[curves.agent == "initial-solution"].groupby("t").gap_pct.mean()
    assert np.allclose(line.get_ydata(), g.to_numpy())
    assert _no_legend_overlap(fig) == 1
    plt.close(fig)
    res.save(tmp_path / "o")
    assert (tmp_path / "o" / "makespan.png").exists() and not (tmp_path / "o" / "regret.png").exists()


# ------------------------------------------------------------------------------------------ legends
@pytest.mark.parametrize("kind", ["plain", "simple", "iterate", "logx"])
def test_compare_legends_are_outside_the_axes(kind):
    extra = {
        "simple": lambda i, s, t: {"simple_regret": 1.0 / t},
        "iterate": lambda i, s, t: {"iterate_gap": 10.0**-t},
    }.get(kind)
    res = _result(_curves(agents=tuple("abcdefgh"), extra=extra), log_x_panel=kind == "logx")
    fig = res.plot()
    assert _no_legend_overlap(fig) == 1
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel()
    plt.close(fig)


def test_bench_and_sweep_legends_outside_and_labels_with_units():
    runs = pd.DataFrame(
        {
            "instance": [f"i{k}" for k in range(6)] * 3,
            "label": ["s1"] * 6 + ["s2"] * 6 + ["s3"] * 6,
            "status": "ok",
            "seconds": 1.0,
            "par2_seconds": np.linspace(1, 20, 18),
            "passed_gate": 1.0,
        }
    )
    b = BenchResult(
        task_id="NystromODE-v0",
        task_kwargs={},
        primary="par2_seconds",
        metrics={"par2_seconds": "min", "passed_gate": "max"},
        runs=runs,
        curves=pd.DataFrame(),
        summary=pd.DataFrame(),
    )
    fig = b.plot()
    assert fig.axes[0].get_ylabel() == "PAR-2 time [s] (median over seeds; lower is better)"
    assert _no_legend_overlap(fig) == 1
    plt.close(fig)

    rows = [
        {
            "agent": a,
            "role": "paper",
            "horizon": T,
            "shifts": L,
            "phases": L + 1,
            "seed": s,
            "status": "ok",
            "final_regret": (L + 1) ** 0.3 * T**0.6 * (1 + 0.1 * s),
            "L_tilde": float(L),
            "restarts": 0.0,
        }
        for a in ("mdbe", "other")
        for T in (256, 512, 1024)
        for L in (0, 2)
        for s in range(3)
    ]
    sw = sweep_summarise(pd.DataFrame(rows), ["mdbe", "other"], [0, 1, 2], {}, 1, [], n_boot=50)
    fig = sw.plot()
    assert _no_legend_overlap(fig) == 2
    assert fig.axes[0].get_xlabel() == "horizon T [rounds]"
    assert "mean over seeds" in fig.axes[0].get_ylabel()
    plt.close(fig)


def test_metric_label_units_and_statistic():
    assert (
        metric_label("par2_seconds", "median over seeds", "min")
        == "PAR-2 time [s] (median over seeds; lower is better)"
    )
    assert metric_label("peak_rss_mb") == "peak resident memory [MB]"
    assert metric_label("wall_ms", direction="max") == "wall [ms] (higher is better)"
    assert metric_label("accuracy") == "accuracy"


# --------------------------------------------------------------------------------- tables and status
def test_games_table_names_the_cumulative_gap():
    res = _result(_curves(), regret_name="cumulative equilibrium gap  sum_k gap(profile_k)")
    head = res.format_table().splitlines()[0]
    assert "cumulative equilibrium gap" in head and "final regret" not in head
    assert (
        _result(_curves(), regret_name="cumulative pseudo-regret (from means)").regret_column
        == "cumulative pseudo-regret"
    )
    from papergym.envs.games import matrix_game

    assert _result(_curves(), regret_name=matrix_game.REGRET_NAME).regret_column == "cumulative equilibrium gap"


def test_gate_failed_run_does_not_read_ok():
    runs = pd.DataFrame(
        {
            "instance": ["p1", "p2", "p3"],
            "label": "nystrom",
            "status": ["ok", "ok", "timeout"],
            "seconds": [1.0, 2.0, 9.0],
            "par2_seconds": [1.0, 120.0, 120.0],
            "passed_gate": [1.0, 0.0, 0.0],
        }
    )
    summary = pd.DataFrame(
        [
            {
                "label": "nystrom",
                "solver": "nystrom",
                "role": "paper",
                "geo_mean": 24.0,
                "ci_low": 1.0,
                "ci_high": 120.0,
                "n_ok": 2,
                "n_failed": 1,
            }
        ]
    )
    b = BenchResult(
        task_id="NystromODE-v0",
        task_kwargs={},
        primary="par2_seconds",
        metrics={"par2_seconds": "min", "passed_gate": "max"},
        runs=runs,
        curves=pd.DataFrame(),
        summary=summary,
    )
    assert list(b.display_status()) == ["ok", "gate-failed", "timeout"]
    text = b.format_table()
    p2 = next(line for line in text.splitlines() if line.startswith("p2"))
    assert "gate-failed" in p2 and " ok " not in p2
    assert "gate ok" in text and "1/3" in text
    assert list(b.runs.status) == ["ok", "ok", "timeout"]  # stored meaning unchanged: the solve ended ok


# ------------------------------------------------------------------------------ plot() writes nothing
def test_plot_returns_figure_and_writes_only_with_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = _result(_curves())
    fig = res.plot()
    assert isinstance(fig, matplotlib.figure.Figure)
    plt.close(fig)
    assert list(tmp_path.iterdir()) == []
    plt.close(res.plot(tmp_path / "out" / "fig"))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["fig.png", "fig.svg"]


# -------------------------------------------------------------------------------------- board figures
def test_board_curves_show_every_ranked_entry_up_to_twenty_and_say_top_k_of_n():
    import importlib.util
    from pathlib import Path

    from papergym.leaderboard.board import html

    spec = importlib.util.spec_from_file_location("_html_tests", Path(__file__).with_name("test_html.py"))
    th = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(th)
    assert html.DEFAULT_TOP_K == 20
    bb = th.env_board()
    extra = [th._row(20 + i, f"extra{i}", "x", rank=7 + i, lo=7 + i, hi=7 + i, score=40.0 + i) for i in range(20)]
    bb.table = pd.concat([bb.table, pd.DataFrame(extra, columns=bb.table.columns)], ignore_index=True)
    t = np.arange(0, 101, 10, dtype=float)
    bb.curves = pd.concat(
        [bb.curves]
        + [
            pd.DataFrame(
                {
                    "submission_id": r["submission_id"],
                    "name": r["name"],
                    "role": r["role"],
                    "t": t,
                    "mean": r["score"] * t / 100,
                    "ci_low": 0.0,
                    "ci_high": r["score"] * t / 50,
                }
            )
            for r in extra
        ],
        ignore_index=True,
    )
    ranked, _ = html.ordered_table(bb.table)
    made = html._curves_figure(bb, ranked, html.DEFAULT_TOP_K)
    fig, n, m = made
    assert n == 20 and m == 1 and fig.axes[0].get_title() == "top 20 of 26 ranked"
    assert _no_legend_overlap(fig) == 1
    fig6, n6, _ = html._curves_figure(th.env_board(), html.ordered_table(th.env_board().table)[0], 20)
    assert n6 == 6 and fig6.axes[0].get_title() == "all 6 ranked"
    assert "(mean over test runs)" in fig6.axes[0].get_ylabel()
    page = html.render_benchmark_page(bb, generated=th.GEN)
    assert "top 20 ranked" in page
