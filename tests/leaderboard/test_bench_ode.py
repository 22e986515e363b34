"""bench() and `papergym bench` on NystromODE-v0: the same numbers on every backend, PAR-2
scoring of failures, sweeps over m, the paper-style report and figures."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.envs.tasks.base import Budget
from papergym.leaderboard import bench
from papergym.leaderboard.cli import main

TASK = "NystromODE-v0"
METRICS = ["rel_rmse", "rmse", "mae", "linf", "passed_gate"]


def test_backends_give_the_same_metrics(tmp_path):
    kw = dict(solvers=["nystrom-lssvm", "solve-ivp"], instances=["L3", "N3"], task_kwargs={"sizes": [100]}, cache=False)
    a = bench(TASK, backend="serial", out=tmp_path / "a", **kw)
    b = bench(TASK, backend="joblib", n_jobs=2, out=tmp_path / "b", **kw)
    key = ["label", "instance"]
    ra, rb = a.runs.sort_values(key).reset_index(drop=True), b.runs.sort_values(key).reset_index(drop=True)
    assert (ra.status == "ok").all() and (rb.status == "ok").all()
    np.testing.assert_array_equal(ra[METRICS].to_numpy(), rb[METRICS].to_numpy())
    assert (ra.passed_gate == 1).all()
    # the primary metric is the solve's wall time when the gate holds
    assert np.allclose(ra.par2_seconds, ra.seconds)


def test_failures_are_scored_par2(tmp_path):
    res = bench(
        TASK,
        solvers=["nystrom-lssvm"],
        instances=["L7/n=100/s0"],
        backend="serial",
        out=tmp_path,
        task_kwargs={"sizes": [100]},
        hyperparameters={"nystrom-lssvm": {"m": 3}},
        budget=Budget(max_seconds=7.0, max_iterations=50),
    )
    r = res.runs.iloc[0]
    # three Nyström features cannot reach the gate on sin(t) over [0, 2 pi]: a failure, stored as diverged
    # (never ok) and scored 2 x budget
    assert r.status == "diverged" and r.passed_gate == 0 and r.diverged == 1 and r.par2_seconds == 14.0


def test_the_issue_command_with_an_m_sweep(tmp_path, capsys):
    out = tmp_path / "res"
    code = main(
        [
            "bench",
            TASK,
            "--solvers",
            "nystrom-lssvm,dual-lssvm",
            "--n",
            "100,200",
            "--m",
            "20,50",
            "--instances",
            "L3,L7",
            "--backend",
            "serial",
            "--out",
            str(out),
            "--cache-dir",
            str(tmp_path / "c"),
            "--quiet",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    for word in (
        "nystrom-lssvm[m=20]",
        "nystrom-lssvm[m=50]",
        "dual-lssvm",
        "speed-up",
        "relative RMSE difference",
        "log-log slope",
        "rmse",
        "mae",
        "linf",
        "solve_seconds",
    ):
        assert word in text, word
    for f in (
        "summary.csv",
        "table.txt",
        "runs.parquet",
        "scores.png",
        "time_vs_n.png",
        "time_vs_n.svg",
        "error_vs_m.png",
        "error_vs_m.svg",
    ):
        assert (out / f).exists(), f


@pytest.mark.parametrize(
    "argv,expect",
    [
        (["--solvers", "nystrom"], ["nystrom", "nystrom-lssvm"]),
        (["--instances", "Z9"], ["Z9", "L1"]),
        (["--n", "0"], ["sizes"]),
        (["--m", "0"], ["m"]),
        (["--q", "3"], ["--q", "sizes"]),
        (["--hp", "nystrom-lssvm.sigma=-1"], ["sigma"]),
        (["--split", "test"], ["PAPERGYM_TEST_SECRET"]),
    ],
)
def test_bad_bench_values_exit_2(argv, expect, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PAPERGYM_TEST_SECRET", raising=False)
    out, cache = tmp_path / "o", tmp_path / "c"
    argv = ["bench", TASK, *argv, "--out", str(out), "--cache-dir", str(cache)]
    if "--solvers" not in argv:
        argv += ["--solvers", "nystrom-lssvm"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    for e in expect:
        assert e in err, (e, err)
    assert not out.exists() and not cache.exists()
