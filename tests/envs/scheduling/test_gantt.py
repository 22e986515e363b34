"""Gantt charts of FJSP schedules (envs/scheduling/fjsp/gantt.py)."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.envs.scheduling.fjsp.gantt import gantt_paths, job_colors, plot_gantt
from papergym.envs.scheduling.fjsp.graph import ScheduleError, evaluate
from papergym.envs.scheduling.fjsp.improve import dispatch_solution
from papergym.envs.scheduling.fjsp.sets import load_instance


@pytest.fixture(scope="module")
def mk01():
    inst = load_instance("brandimarte/mk01")
    sol = dispatch_solution(inst, "mwkr", np.random.default_rng(0))
    ev = evaluate(inst, sol)
    return inst, sol, ev


@pytest.mark.parametrize("given", ["chart.png", "chart.SVG", "chart"])
def test_writes_png_and_svg(tmp_path, mk01, given):
    inst, sol, ev = mk01
    path = tmp_path / "deep" / "folder" / given
    fig = plot_gantt(inst, sol.assign, ev.heads, path=path, critical=ev.critical)
    png, svg = tmp_path / "deep" / "folder" / "chart.png", tmp_path / "deep" / "folder" / "chart.svg"
    assert gantt_paths(path) == (png, svg)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text()
    assert "<svg" in text and "M6" in text  # machine rows
    assert f"makespan {ev.cmax}" in text  # default title
    ax = fig.axes[0]
    assert ax.get_xlim()[1] > ev.cmax
    labels = {t.get_text() for t in ax.texts}
    assert "1.1" in labels  # job 1, operation 1 (1-based) is wide enough for its label


def test_critical_outline_and_options(mk01):
    inst, sol, ev = mk01
    fig = plot_gantt(inst, sol.assign, ev.heads, critical=np.flatnonzero(ev.critical), title="custom")
    ax = fig.axes[0]
    assert ax.get_title() == "custom"
    bars = ax.patches
    assert len(bars) == inst.n_ops
    thick = sum(1 for b in bars if b.get_linewidth() > 1.0)
    assert thick == int(ev.critical.sum())
    with pytest.raises(ValueError, match="critical"):
        plot_gantt(inst, sol.assign, ev.heads, critical=np.ones(3, dtype=bool))
    # drawing into a given axes returns its figure
    from matplotlib.figure import Figure

    f2 = Figure()
    ax2 = f2.add_subplot()
    assert plot_gantt(inst, sol.assign, ev.heads, ax=ax2) is f2
    assert len(ax2.patches) == inst.n_ops


def test_invalid_schedule_raises_and_writes_nothing(tmp_path, mk01):
    inst, sol, ev = mk01
    start = ev.heads.copy()
    k = int(sol.assign[0])
    other = next(o for o in range(1, inst.n_ops) if sol.assign[o] == k)
    start[other] = start[0]  # two operations at once on machine k
    with pytest.raises(ScheduleError):
        plot_gantt(inst, sol.assign, start, path=tmp_path / "bad.png")
    bad_machine = sol.assign.copy()
    bad_machine[0] = int(np.flatnonzero(inst.proc[0] == 0)[0])  # an ineligible machine
    with pytest.raises(ScheduleError, match="not eligible"):
        plot_gantt(inst, bad_machine, ev.heads, path=tmp_path / "bad.png")
    assert not list(tmp_path.iterdir())


def test_job_colours():
    assert len(set(job_colors(20))) == 20
    many = job_colors(45)
    assert len(many) == 45 and len(set(many)) == 45
