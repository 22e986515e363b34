"""The leaderboard store on SQLite and on a real PostgreSQL server (tests/leaderboard/conftest.py).

Every behavioural test runs on both backends: round trips of the whole API, non-finite metrics, all-or-
nothing ``add_runs`` (rows and curves, which live in the database), duplicate run keys, ``latest_only``,
``delete_submission``, migrations, and concurrent writers in separate processes losing no rows. The job
queue, tokens, names and the Alembic upgrade of older databases: ``test_store_jobs.py``.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from papergym.leaderboard.board import store as store_mod
from papergym.leaderboard.board.store import (
    RUN_COLUMNS,
    SCHEMA_VERSION,
    SUBMISSION_COLUMNS,
    SchemaVersionError,
    Store,
    default_url,
    migrate,
)

SHA = "ab" * 32
SPEC = {"metric": "final cumulative regret", "direction": "min", "n_seeds": 5, "bound": math.inf}


@pytest.fixture
def store(url, tmp_path):
    curves = None if url.startswith("sqlite") else tmp_path / "curves"
    with Store(url, curves_dir=curves) as s:
        yield s


def _submission(
    store: Store,
    name: str = "ucb",
    author: str = "me",
    *,
    version: str = "v1",
    role: str = "submission",
    benchmark_id: str = "NonStatLipschitz-v0",
) -> int:
    store.register_benchmark(benchmark_id, "env", version, SPEC)
    return store.create_submission(
        benchmark_id=benchmark_id,
        version=version,
        name=name,
        author=author,
        kind="agent",
        role=role,
        entry="my_agent.py:make_agent",
        code_sha256=SHA,
        hyperparameters={"c": 2.0, "grid": np.arange(3)},
        package_versions={"numpy": np.__version__},
        sandbox="bwrap",
    )


def _run(i: int, stratum: str = "peaks", split: str = "test", **extra) -> dict:
    return {
        "split": split,
        "stratum": stratum,
        "seed_index": i,
        "status": "ok",
        "metrics": {"regret": 10.0 + i, "time": 0.5 * i},
        "wall_seconds": 1.5,
        "cpu_seconds": 1.25,
        **extra,
    }


def _curve(n: int = 5, scale: float = 1.0) -> pd.DataFrame:
    t = np.arange(1, n + 1)
    return pd.DataFrame({"t": t, "regret": scale * np.sqrt(t)})


def _curve_files(store: Store) -> list[Path]:
    return sorted(p for p in store.curves_dir.rglob("*") if p.is_file()) if store.curves_dir.exists() else []


def _db_curves(store: Store) -> list[str]:
    """The SHA-256 of every curve stored in the database."""
    with store._read() as conn:
        return sorted(conn.execute(sa.select(store_mod.T_CURVES.c.sha256)).scalars().all())


# ------------------------------------------------------------------------------------------------------
# round trips
# ------------------------------------------------------------------------------------------------------


def test_round_trip(store, url, tmp_path):
    assert store.dialect == ("sqlite" if url.startswith("sqlite") else "postgresql")
    assert store.schema_version() == SCHEMA_VERSION
    if store.dialect == "sqlite":  # default curves_dir: next to the database file
        assert store.curves_dir == (tmp_path / "db" / "curves").resolve()

    bid = store.register_benchmark("NonStatLipschitz-v0", "env", "v1", SPEC)
    assert store.register_benchmark("NonStatLipschitz-v0", "env", "v1", SPEC) == bid  # idempotent
    bid2 = store.register_benchmark("NystromODE-v0", "task", "h1", {"metric": "rmse"})
    assert bid2 != bid
    assert store.latest_version("NonStatLipschitz-v0") == "v1"
    assert store.latest_version("Nope-v0") is None
    store.register_benchmark("NonStatLipschitz-v0", "env", "v2", SPEC)
    assert store.latest_version("NonStatLipschitz-v0") == "v2"
    with pytest.raises(ValueError, match="different spec"):
        store.register_benchmark("NonStatLipschitz-v0", "env", "v1", {**SPEC, "n_seeds": 6})
    with pytest.raises(ValueError, match="kind"):
        store.register_benchmark("NonStatLipschitz-v0", "task", "v1", SPEC)

    bench = store.benchmarks()
    assert list(bench.columns) == ["id", "benchmark_id", "kind", "version", "spec", "created_at"]
    assert bench["version"].tolist() == ["v1", "h1", "v2"]
    assert bench["spec"][0] == {**SPEC, "bound": "Infinity"}  # non-finite floats in JSON stay strings
    assert str(bench["created_at"].dt.tz) == "UTC"

    before = datetime.now(UTC)
    sid = _submission(store)
    runs = [_run(i, curve=_curve(scale=i + 1) if i < 2 else None) for i in range(3)]
    runs += [_run(0, stratum="bumps"), _run(0, split="dev", error="warning\x00text")]
    store.add_runs(sid, runs)
    sub = store.submissions()
    assert list(sub.columns) == list(SUBMISSION_COLUMNS)
    row = sub.iloc[0]
    assert row["status"] == "running" and pd.isna(row["finished_at"])
    store.finish_submission(
        sid, "ok", message="fine", stderr_tail="x" * 70_000 + "\x00end", wall_seconds=12.5, cpu_seconds=11.0
    )

    row = store.submissions("NonStatLipschitz-v0", version="v1").iloc[0]
    assert (row["submission_id"], row["version"], row["name"], row["author"], row["kind"], row["role"]) == (
        sid,
        "v1",
        "ucb",
        "me",
        "agent",
        "submission",
    )
    assert row["benchmark_version"] == bid
    assert row["entry"] == "my_agent.py:make_agent" and row["code_sha256"] == SHA and row["sandbox"] == "bwrap"
    assert row["hyperparameters"] == {"c": 2.0, "grid": [0, 1, 2]}
    assert row["package_versions"] == {"numpy": np.__version__}
    assert row["status"] == "ok" and row["message"] == "fine"
    assert row["stderr_tail"].endswith("\ufffdend") and len(row["stderr_tail"]) == store_mod.STDERR_TAIL_MAX_CHARS
    assert (row["wall_seconds"], row["cpu_seconds"]) == (12.5, 11.0)
    for col in ("created_at", "finished_at"):
        assert row[col].tzinfo is not None and row[col].utcoffset().total_seconds() == 0
        assert before.timestamp() - 5 <= row[col].timestamp() <= time.time() + 5
    assert store.submissions("NystromODE-v0").empty
    assert store.submissions(version="v2").empty

    test = store.runs([sid])
    assert list(test.columns) == [*RUN_COLUMNS, "regret", "time"]
    assert test["split"].eq("test").all() and len(test) == 4
    assert list(zip(test["stratum"], test["seed_index"], strict=True)) == [
        ("bumps", 0),
        ("peaks", 0),
        ("peaks", 1),
        ("peaks", 2),
    ]
    assert test["regret"].tolist() == [10.0, 10.0, 11.0, 12.0]
    assert test["metrics"][2] == {"regret": 11.0, "time": 0.5}
    assert test["wall_seconds"].eq(1.5).all() and test["cpu_seconds"].eq(1.25).all()
    assert test["status"].eq("ok").all() and test["error"].isna().all()
    assert test["seed_index"].dtype == np.int64 and test["regret"].dtype == np.float64
    for i in (0, 1):
        path = test.loc[(test["stratum"] == "peaks") & (test["seed_index"] == i), "curve_path"].item()
        assert path.startswith("sha256:")  # a reference into the curves table
        pd.testing.assert_frame_equal(store.read_curve(path), _curve(scale=i + 1))
    assert test["curve_path"].isna().sum() == 2
    assert len(_db_curves(store)) == 2 and _curve_files(store) == []  # no curve files anymore

    dev = store.runs([sid], split="dev")
    assert len(dev) == 1 and dev["error"][0] == "warning\ufffdtext"
    assert len(store.runs(split=None)) == 5
    assert len(store.runs(benchmark_id="NonStatLipschitz-v0")) == 4
    assert store.runs(benchmark_id="NystromODE-v0").empty
    empty = store.runs([sid + 1000])
    assert empty.empty and list(empty.columns) == list(RUN_COLUMNS)
    with pytest.raises(FileNotFoundError):
        store.read_curve("nope/missing.parquet")


def test_nonfinite_metrics_round_trip(store):
    sid = _submission(store)
    metrics = {"nan": math.nan, "inf": math.inf, "neg": -math.inf, "none": None, "np": np.float32(0.25), "int": 3}
    store.add_runs(sid, [_run(0) | {"metrics": metrics}, _run(1)])
    runs = store.runs([sid])
    got = runs["metrics"][0]
    assert math.isnan(got["nan"]) and math.isnan(got["none"])
    assert got["inf"] == math.inf and got["neg"] == -math.inf and got["np"] == 0.25 and got["int"] == 3.0
    assert math.isnan(runs["inf"][1]) and runs["regret"][1] == 11.0  # absent metrics are NaN columns
    # what is stored is strict JSON (no NaN/Infinity literals)
    with store._read() as conn:
        texts = conn.execute(sa.select(store_mod.T_RUNS.c.metrics_json)).scalars().all()

    def strict(token):
        raise AssertionError(f"non-standard JSON token {token}")

    for text in texts:
        json.loads(text, parse_constant=strict)


# ------------------------------------------------------------------------------------------------------
# add_runs: validation, atomicity, duplicates
# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"status": "crashed"}, "status"),
        ({"split": "train"}, "split"),
        ({"seed_index": -1}, "seed_index"),
        ({"seed_index": 1.0}, "seed_index"),
        ({"seed_index": True}, "seed_index"),
        ({"stratum": ""}, "stratum"),
        ({"metrics": {"regret": "low"}}, "metrics"),
        ({"metrics": {"status": 1.0}}, "metrics"),
        ({"wall_seconds": -1.0}, "wall_seconds"),
        ({"cpu_seconds": math.nan}, "cpu_seconds"),
        ({"curve": [1, 2, 3]}, "curve"),
        ({"error": 42}, "error"),
        ({"secret": "hmac"}, "secret"),
    ],
)
def test_add_runs_validates_before_writing(tmp_path, change, field):
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        sid = _submission(store)
        batch = [_run(0, curve=_curve()), _run(1, curve=_curve()), _run(2) | change]
        with pytest.raises(ValueError, match=field):
            store.add_runs(sid, batch)
        assert store.runs([sid], split=None).empty
        assert _db_curves(store) == [] and _curve_files(store) == []
        bad = _run(3)
        del bad["metrics"]
        with pytest.raises(ValueError, match="lacks metrics"):
            store.add_runs(sid, [bad])


def test_add_runs_is_all_or_nothing(store):
    sid = _submission(store)
    store.add_runs(sid, [_run(0, curve=_curve()), _run(1)])
    kept = _db_curves(store)
    assert len(kept) == 1
    # the database rejects the batch (seed 1 exists): nothing of it is stored, its curves neither
    with pytest.raises(ValueError, match="already has"):
        store.add_runs(sid, [_run(5, curve=_curve(scale=5)), _run(6, curve=_curve(scale=6)), _run(1, curve=_curve())])
    assert store.runs([sid])["seed_index"].tolist() == [0, 1]
    assert _db_curves(store) == kept
    # a curve that cannot be serialised fails the batch too
    with pytest.raises(Exception):  # noqa: B017 -- pyarrow's own error type
        store.add_runs(sid, [_run(7, curve=_curve(scale=7)), _run(8, curve=pd.DataFrame({"x": [object()]}))])
    assert store.runs([sid])["seed_index"].tolist() == [0, 1]
    assert _db_curves(store) == kept
    # the rows' writer itself failing (checked by the database, not by validation) also rolls back
    other = _submission(store, name="other")
    store.delete_submission(other)
    with pytest.raises(LookupError):
        store.add_runs(other, [_run(0, curve=_curve(scale=9))])
    assert _db_curves(store) == kept and _curve_files(store) == []


def test_duplicate_runs_rejected(store):
    sid = _submission(store)
    with pytest.raises(ValueError, match="within the batch"):
        store.add_runs(sid, [_run(0), _run(0)])
    store.add_runs(sid, [_run(0), _run(0, split="dev"), _run(0, stratum="bumps")])  # different keys
    with pytest.raises(ValueError, match="already has"):
        store.add_runs(sid, [_run(0)])
    # the unique constraint itself (bypassing the store's check) holds on both backends
    with pytest.raises(sa.exc.IntegrityError), store._write() as conn:
        conn.execute(
            store_mod.T_RUNS.insert(),
            [
                {
                    "submission_id": sid,
                    "split": "test",
                    "stratum": "peaks",
                    "seed_index": 0,
                    "status": "ok",
                    "metrics_json": "{}",
                }
            ],
        )
    other = _submission(store, name="other")
    store.add_runs(other, [_run(0)])  # the same key on another submission is fine
    assert len(store.runs(split=None)) == 4


def test_submission_errors(store):
    good = {
        "benchmark_id": "X-v0",
        "version": "v1",
        "name": "n",
        "author": "a",
        "kind": "agent",
        "role": "submission",
        "entry": "a.py:f",
        "code_sha256": SHA,
        "hyperparameters": {},
        "package_versions": {},
        "sandbox": "rlimits",
    }
    with pytest.raises(LookupError, match="not registered"):
        store.create_submission(**good)
    store.register_benchmark("X-v0", "env", "v1", {})
    for change, field in [
        ({"kind": "robot"}, "kind"),
        ({"role": "judge"}, "role"),
        ({"code_sha256": "abc"}, "code_sha256"),
        ({"name": ""}, "name"),
        ({"hyperparameters": {"f": print}}, "hyperparameters"),
        ({"package_versions": ["numpy"]}, "package_versions"),
    ]:
        with pytest.raises(ValueError, match=field):
            store.create_submission(**(good | change))
    sid = store.create_submission(**good)
    with pytest.raises(ValueError, match="status"):
        store.finish_submission(sid, "running")
    with pytest.raises(LookupError):
        store.finish_submission(sid + 99, "ok")
    with pytest.raises(LookupError):
        store.add_runs(sid + 99, [_run(0)])
    with pytest.raises(LookupError):
        store.delete_submission(sid + 99)
    with pytest.raises(ValueError, match="kind"):
        store.register_benchmark("Y-v0", "game", "v1", {})


# ------------------------------------------------------------------------------------------------------
# latest_only, delete
# ------------------------------------------------------------------------------------------------------


def test_latest_only(store):
    a1 = _submission(store, "ucb", "me")
    store.finish_submission(a1, "ok")
    a2 = _submission(store, "ucb", "me")
    store.finish_submission(a2, "error", message="crashed")
    a3 = _submission(store, "ucb", "me")  # still running: not shown
    b1 = _submission(store, "ucb", "you")  # same name, other author
    store.finish_submission(b1, "partial")
    c1 = _submission(store, "ts", "me", role="baseline")  # running only: absent
    v2 = _submission(store, "ucb", "me", version="v2")  # other version: its own group
    store.finish_submission(v2, "ok")
    o1 = _submission(store, "ucb", "me", benchmark_id="Other-v0")
    store.finish_submission(o1, "timeout")

    assert store.submissions()["submission_id"].tolist() == [a1, a2, a3, b1, c1, v2, o1]
    latest = store.submissions(latest_only=True)
    assert latest["submission_id"].tolist() == [a2, b1, v2, o1]
    assert store.submissions("NonStatLipschitz-v0", version="v1", latest_only=True)["submission_id"].tolist() == [
        a2,
        b1,
    ]
    assert store.submissions("NonStatLipschitz-v0", latest_only=True)["status"].tolist() == ["error", "partial", "ok"]


def test_delete_submission(store):
    keep = _submission(store, "keep")
    gone = _submission(store, "gone")
    store.add_runs(keep, [_run(i, curve=_curve(scale=i + 1)) for i in range(3)])
    # gone shares keep's first curve (content-addressed: stored once) and has four of its own
    store.add_runs(
        gone,
        [_run(i, curve=_curve(scale=i + 1)) for i in (0, 10, 11, 12)] + [_run(9, split="dev", curve=_curve(scale=20))],
    )
    assert len(_db_curves(store)) == 7
    store.delete_submission(gone)
    assert store.submissions()["submission_id"].tolist() == [keep]
    assert store.runs(split=None)["submission_id"].unique().tolist() == [keep]
    paths = store.runs([keep])["curve_path"].tolist()
    assert _db_curves(store) == sorted(p.removeprefix("sha256:") for p in paths)  # gone's own curves collected
    for i, path in enumerate(paths):
        pd.testing.assert_frame_equal(store.read_curve(path), _curve(scale=i + 1))


# ------------------------------------------------------------------------------------------------------
# migrations, URLs
# ------------------------------------------------------------------------------------------------------


def test_migrations(url, tmp_path):
    curves = tmp_path / "curves"
    with Store(url, curves_dir=curves) as s:
        assert s.schema_version() == SCHEMA_VERSION
        sid = _submission(s)
        s.add_runs(sid, [_run(0)])
        assert migrate(s._engine) == SCHEMA_VERSION  # a no-op on an up-to-date database
    with Store(url, curves_dir=curves) as s:  # reopening keeps everything
        assert s.schema_version() == SCHEMA_VERSION
        assert s.submissions()["submission_id"].tolist() == [sid] and len(s.runs()) == 1
        with s._write() as conn:  # a revision this code does not have: written by a newer papergym
            conn.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(SchemaVersionError, match="revision 9999, newer than this papergym's.*upgrade papergym"):
        Store(url, curves_dir=curves)


def test_default_url_honours_env(monkeypatch, tmp_path):
    monkeypatch.delenv("PAPERGYM_DB", raising=False)
    import platformdirs

    monkeypatch.setattr(platformdirs, "user_data_dir", lambda appname=None, *a, **k: str(tmp_path / "ud" / appname))
    assert default_url() == f"sqlite:///{tmp_path / 'ud' / 'papergym' / 'leaderboard.db'}"
    with Store() as s:  # creates the folder
        assert s.curves_dir == tmp_path / "ud" / "papergym" / "curves"
    assert (tmp_path / "ud" / "papergym" / "leaderboard.db").is_file()

    target = tmp_path / "env" / "board.db"
    monkeypatch.setenv("PAPERGYM_DB", f"sqlite:///{target}")
    with Store() as s:
        s.register_benchmark("B-v0", "env", "v1", {})
    assert target.is_file()
    monkeypatch.setenv("PAPERGYM_DB", str(tmp_path / "plain.db"))  # a plain path means an SQLite file
    assert default_url() == f"sqlite:///{tmp_path / 'plain.db'}"
    with Store() as s:
        assert s.benchmarks().empty
    assert (tmp_path / "plain.db").is_file()


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "not a url",
        "mysql://u:s3cret@host/db",
        "sqlite+aiosqlite:///x.db",
        "postgresql+psycopg2://u:s3cret@h/db",
        "postgresql://u:s3cret@h:port/db",
    ],
)
def test_bad_url(bad):
    with pytest.raises(ValueError, match="bad leaderboard database URL") as info:
        Store(bad)
    assert "s3cret" not in str(info.value)


def test_missing_psycopg_names_the_extra(monkeypatch):
    monkeypatch.setattr(store_mod, "find_spec", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'papergym\[postgres\]'"):
        Store("postgresql+psycopg://u:p@localhost/db")


def test_password_masked(postgres_url, tmp_path):
    # the throwaway server trusts local connections, so any password opens it
    with_password = sa.make_url(postgres_url).set(password="s3cret-pw")
    with Store(with_password.render_as_string(hide_password=False), curves_dir=tmp_path) as s:
        assert s.dialect == "postgresql"
        for text in (s.url, repr(s), str(s)):
            assert "s3cret-pw" not in text and "***" in text
        assert s.schema_version() == SCHEMA_VERSION


# ------------------------------------------------------------------------------------------------------
# concurrency: separate processes writing at once lose no rows
# ------------------------------------------------------------------------------------------------------

_WORKER = r"""
import os, sys, time
import numpy as np, pandas as pd
from papergym.leaderboard.board.store import Store
url, curves, tag, go, n_batches, per_batch = sys.argv[1:7]
n_batches, per_batch = int(n_batches), int(per_batch)
while not os.path.exists(go):
    time.sleep(0.005)
with Store(url, curves_dir=curves) as store:           # every worker migrates the fresh database at once
    store.register_benchmark("NonStatLipschitz-v0", "env", "v1", {"metric": "regret"})
    sid = store.create_submission(benchmark_id="NonStatLipschitz-v0", version="v1", name=tag, author="w",
                                  kind="agent", role="submission", entry="w.py:f", code_sha256="cd" * 32,
                                  hyperparameters={}, package_versions={}, sandbox="in-process")
    for b in range(n_batches):
        runs = [{"split": "test", "stratum": f"s{i % 3}", "seed_index": b * per_batch + i, "status": "ok",
                 "metrics": {"regret": float(b * per_batch + i)}, "wall_seconds": 0.0, "cpu_seconds": 0.0,
                 "curve": pd.DataFrame({"t": np.arange(3)}) if i == 0 else None}
                for i in range(per_batch)]
        store.add_runs(sid, runs)
    store.finish_submission(sid, "ok")
print(sid)
"""


def test_concurrent_writers_lose_no_rows(url, tmp_path):
    n_workers, n_batches, per_batch = 3, 6, 10
    curves, go = tmp_path / "curves", tmp_path / "go"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, url, str(curves), f"w{k}", str(go), str(n_batches), str(per_batch)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for k in range(n_workers)
    ]
    time.sleep(1.5)  # let every worker import before they start together
    go.touch()
    outputs = [p.communicate(timeout=120) for p in procs]
    for p, (_out, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err[-3000:]
    ids = sorted(int(out.split()[-1]) for out, _ in outputs)
    with Store(url, curves_dir=curves) as store:
        assert store.schema_version() == SCHEMA_VERSION
        assert len(store.benchmarks()) == 1
        subs = store.submissions()
        assert sorted(subs["submission_id"]) == ids and subs["status"].eq("ok").all()
        runs = store.runs()
        assert len(runs) == n_workers * n_batches * per_batch
        for sid in ids:
            mine = runs[runs["submission_id"] == sid]
            assert sorted(mine["seed_index"]) == list(range(n_batches * per_batch))
            assert mine["regret"].tolist() == mine["seed_index"].astype(float).tolist()
        with_curve = runs[runs["seed_index"] % per_batch == 0]
        assert len(with_curve) == n_workers * n_batches and with_curve["curve_path"].str.startswith("sha256:").all()
        assert runs["curve_path"].isna().sum() == len(runs) - len(with_curve)
        assert len(_db_curves(store)) == 1  # every batch wrote the same curve: stored once
        pd.testing.assert_frame_equal(
            store.read_curve(with_curve["curve_path"].iloc[0]), pd.DataFrame({"t": np.arange(3)})
        )
        assert _curve_files(store) == []


def _open_fresh_sqlite(path: str, go: str) -> str:
    import sqlite3

    while not os.path.exists(go):
        time.sleep(0.0005)
    con = sqlite3.connect(path, timeout=store_mod.SQLITE_BUSY_TIMEOUT_S, isolation_level=None)
    try:
        store_mod._enable_wal(con.cursor())
        return str(con.execute("PRAGMA journal_mode").fetchone()[0])
    except sqlite3.Error as exc:  # reported to the parent, which asserts on it
        return f"error: {exc}"
    finally:
        con.close()


def test_processes_opening_one_fresh_sqlite_file_together_all_get_wal(tmp_path):
    # SQLite answers "database is locked" at once, without its busy handler, when several processes
    # switch a fresh file to WAL together (about one trial in seven here); the switch must retry.
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    with ctx.Pool(6) as pool:
        for trial in range(25):
            path, go = tmp_path / f"{trial}.sqlite", tmp_path / f"go{trial}"
            pending = pool.starmap_async(_open_fresh_sqlite, [(str(path), str(go))] * 6)
            time.sleep(0.05)
            go.touch()
            assert pending.get(timeout=60) == ["wal"] * 6, f"trial {trial}"
