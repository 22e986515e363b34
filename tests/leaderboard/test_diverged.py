"""The ``diverged`` run status: a task's evaluator reports the metric ``diverged = 1`` for a run whose objective
exploded; ``papergym bench`` and the leaderboard then store that run as ``diverged`` (never ``ok``), keep its
metrics with the task's failure value (the PAR-2 cap), count it as a failed run in the tables, leave the
submission unranked (like a ``timeout``) and do not fail the command (exit status 0).

The diverging solver is the real ``rgd`` baseline of ``LowRankRecovery-v0`` with a step 50 times its stable one
(gradient descent on a quadratic with step ``50 / L``: the error grows geometrically)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from papergym.leaderboard.runner.bench import (
    DIVERGED_METRIC,
    bench,
    is_diverged,
    run_solve,
)

TASK = "LowRankRecovery-v0"
# a small regression instance family: 12 x 12, rank 2, a 40-call budget (PAR-2 cap 80)
KW = {
    "family": ["regression"],
    "kappa": [10],
    "kappa_H": [1],
    "rank": [2],
    "m": 12,
    "n": 12,
    "true_rank": 2,
    "seeds": [0],
    "max_calls": 40,
}
SECRET = "diverged-test-secret-0123456789abcdef"


def _instance():
    from papergym.envs.tasks.base import make_task

    return make_task(TASK, **KW).instances("dev")[0]


def test_is_diverged_reads_the_metric():
    assert DIVERGED_METRIC == "diverged"
    assert is_diverged({"diverged": 1.0}) and not is_diverged({"diverged": 0.0})
    assert not is_diverged({}) and not is_diverged({"diverged": float("nan")}) and not is_diverged({"diverged": "x"})


def test_run_solve_stores_a_diverged_run_as_diverged_with_the_failure_value():
    ref = _instance().as_dict()
    budget = {"max_seconds": 60.0, "max_iterations": 40, "max_work": 40}
    bad = run_solve(TASK, KW, ref, "rgd", {"lr": 50.0}, 0, budget)
    assert bad["status"] == "diverged" and "diverged" in bad["error"]
    m = bad["metrics"]
    assert m["diverged"] == 1.0 and m["solved"] == 0.0 and m["par2_iters"] == 80.0 and m["final_rel_err"] > 10
    good = run_solve(TASK, KW, ref, "rgd", {}, 0, budget)
    assert good["status"] == "ok" and good["metrics"]["diverged"] == 0.0 and good["metrics"]["solved"] == 1.0


def test_bench_counts_diverged_runs_as_failed_scored_and_never_cached(tmp_path):
    res = bench(
        TASK,
        solvers=["rgd"],
        sweep={"rgd": {"lr": [1.0, 50.0]}},
        task_kwargs=KW,
        backend="serial",
        out=tmp_path,
        progress=False,
    )
    st = res.runs.set_index("label").status
    assert st["rgd[lr=1.0]"] == "ok" and st["rgd[lr=50.0]"] == "diverged"
    summ = res.summary.set_index("label")
    assert summ.loc["rgd[lr=50.0]", "n_failed"] == 1 and summ.loc["rgd[lr=50.0]", "n_ok"] == 0
    assert summ.loc["rgd[lr=50.0]", "geo_mean"] == pytest.approx(80.0)  # scored at the PAR-2 cap
    assert [e["status"] for e in res.errors] == ["diverged"]
    assert "diverged" in res.format_table()
    # like a timeout, a diverged cell is recorded (metrics kept) but not cached: a rerun computes it again
    err = list((tmp_path / TASK / "rgd").glob("*.error.json"))
    assert len(err) == 1 and json.loads(err[0].read_text())["metrics"]["diverged"] == 1.0
    again = bench(
        TASK,
        solvers=["rgd"],
        sweep={"rgd": {"lr": [1.0, 50.0]}},
        task_kwargs=KW,
        backend="serial",
        out=tmp_path,
        progress=False,
    )
    assert [e["status"] for e in again.errors] == ["diverged"]


def test_cli_bench_reports_diverged_runs_without_failing(tmp_path, capsys):
    from papergym.leaderboard.cli import main

    argv = [
        "bench",
        TASK,
        "--solvers",
        "rgd",
        "--lr",
        "50",
        "--backend",
        "serial",
        "--quiet",
        "--family",
        "regression",
        "--kappa",
        "10",
        "--kappa-H",
        "1",
        "--rank",
        "2",
        "--m",
        "12",
        "--n",
        "12",
        "--true-rank",
        "2",
        "--max-calls",
        "40",
        "--seeds",
        "0",
        "--out",
        str(tmp_path / "out"),
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    assert main(argv) == 0
    cap = capsys.readouterr()
    assert "diverged" in cap.out and "1 solve(s) diverged" in cap.err


@pytest.fixture
def board(tmp_path, monkeypatch):
    from papergym.leaderboard.board import configs as B
    from papergym.leaderboard.board.store import Store

    cfg = tmp_path / "evaluator.json"
    cfg.write_text(
        json.dumps({"secret": SECRET, "boards": {TASK: {"task_kwargs": {k: v for k, v in KW.items() if k != "seeds"}}}})
    )
    monkeypatch.setenv(B.CONFIG_ENV, str(cfg))
    monkeypatch.delenv("PAPERGYM_TEST_SECRET", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    store = Store(f"sqlite:///{tmp_path / 'board.db'}")
    yield store
    store.close()


def test_board_stores_diverged_runs_and_does_not_rank_the_submission(board):
    from papergym.leaderboard.board.evaluate import (
        RegistrySolverSession,
        SubmissionInfo,
        evaluate_task,
    )
    from papergym.leaderboard.board.ranking import RUN_STATUSES, build_benchmark_board
    from papergym.leaderboard.board.store import SUBMISSION_STATUSES
    from papergym.leaderboard.board.text import status_counts_label

    assert "diverged" in RUN_STATUSES and "diverged" in SUBMISSION_STATUSES
    sids = {}
    for name, hp in (("rgd-stable", {}), ("rgd-big-step", {"lr": 50.0})):
        info = SubmissionInfo(
            name=name,
            author="tester",
            role="submission",
            kind="solver",
            entry="registry:rgd",
            code_sha256="0" * 64,
            hyperparameters=hp,
        )
        sids[name] = evaluate_task(
            board, TASK, info, lambda: RegistrySolverSession("rgd", TASK), secret=SECRET, sandbox="in-process"
        )
    subs = board.submissions(TASK).set_index("submission_id")
    assert subs.loc[sids["rgd-stable"], "status"] == "ok"
    assert subs.loc[sids["rgd-big-step"], "status"] == "diverged"
    runs = board.runs([sids["rgd-big-step"]])
    assert len(runs) == 5 and (runs.status == "diverged").all()
    assert (runs["diverged"] == 1.0).all() and (runs["par2_iters"] == 80.0).all()  # metrics kept, at the cap
    bb = build_benchmark_board(board, TASK, n_boot=50)
    row = bb.table.set_index("name").loc["rgd-big-step"]
    assert not row.ranked and row.n_diverged == 5 and row.n_ok == 0 and np.isnan(row["rank"])
    assert status_counts_label(row) == "5 diverged"
    assert bb.table.set_index("name").loc["rgd-stable"].ranked
    # the performance profile counts a diverged run as unsolved
    prof = bb.profiles[bb.profiles.name == "rgd-big-step"]
    assert len(prof) == 0 or float(prof.fraction.max()) == 0.0


def test_store_validates_run_statuses(board):
    from papergym.leaderboard.board.store import RUN_STATUSES

    assert RUN_STATUSES[-1] == "diverged"
    from papergym.leaderboard.board.evaluate import register_board

    _, version = register_board(board, TASK)
    sid = board.create_submission(
        benchmark_id=TASK,
        version=version,
        name="x",
        author="tester",
        kind="solver",
        role="submission",
        entry="registry:rgd",
        code_sha256="0" * 64,
        hyperparameters={},
        package_versions={},
        sandbox="in-process",
    )
    run = {"split": "test", "stratum": "a", "seed_index": 0, "metrics": {"diverged": 1.0}}
    with pytest.raises(ValueError, match="status"):
        board.add_runs(sid, [{**run, "status": "exploded"}])
    board.add_runs(sid, [{**run, "status": "diverged"}])
    board.finish_submission(sid, "diverged")
    assert board.runs([sid]).status.tolist() == ["diverged"]
