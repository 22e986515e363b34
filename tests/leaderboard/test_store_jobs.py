"""The store as a service's: Alembic migrations (fresh and from the pre-Alembic schema v1), curves in the
database, API tokens, name ownership, test quotas, the job queue (claim, heartbeat, requeue, fencing) and
the worker, on SQLite and on a real PostgreSQL server (tests/leaderboard/conftest.py).

The worker's ``evaluate`` here is a small deterministic function of the job (run rows whose metrics and
curves are derived from the SHA-256 of the submitted code), so every stored row can be checked against
what it must be; the real evaluator is tested in test_evaluate.py.
"""

from __future__ import annotations

import hashlib
import io
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta

import pandas as pd
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from papergym.leaderboard.board import store as store_mod
from papergym.leaderboard.board.jobs import Job, JobOutcome
from papergym.leaderboard.board.store import (
    SCHEMA_VERSION,
    NameTaken,
    QuotaExceeded,
    SchemaVersionError,
    Store,
    migrate,
)
from papergym.leaderboard.board.worker import LeaseKeeper, Worker

BOARD = "NonStatLipschitz-v0"
SPEC = {"metric": "final cumulative regret", "n_seeds": 2}


@pytest.fixture
def store(url, tmp_path):
    with Store(url, curves_dir=tmp_path / "curves") as s:
        s.register_benchmark(BOARD, "env", "v1", SPEC)
        yield s


def _enqueue(
    store: Store,
    author: str = "alice",
    name: str | None = None,
    *,
    split: str = "test",
    code: bytes | None = None,
    quota: int | None = None,
    board: str = BOARD,
) -> int:
    return store.enqueue_submission(
        benchmark_id=board,
        version="v1",
        name=name or f"{author}-agent",
        author=author,
        kind="agent",
        split=split,
        code=code if code is not None else f"# {author} {name} {time.perf_counter_ns()}\n".encode(),
        code_name="my_agent.py",
        attr="make_agent",
        hyperparameters={"c": 2.0},
        package_versions={"numpy": "2.0"},
        test_quota_per_day=quota,
    )


def _curve(digest: bytes) -> pd.DataFrame:
    return pd.DataFrame({"t": [1, 10, 100], "cum_regret": [float(digest[0]), float(digest[1]), float(digest[2])]})


def _rows(code: bytes) -> list[dict]:
    """The runs a job with this code must have: 2 strata x 2 seeds, metrics from the code's hash."""
    h = hashlib.sha256(code).digest()
    return [
        {
            "split": "test",
            "stratum": f"s{k}",
            "seed_index": i,
            "status": "ok",
            "metrics": {"regret": h[4 + 2 * k + i] / 255.0},
            "wall_seconds": 0.01,
            "cpu_seconds": 0.01,
            "curve": _curve(h) if i == 0 else None,
        }
        for k in range(2)
        for i in range(2)
    ]


def evaluate(job: Job) -> JobOutcome:
    """The deterministic stand-in for the sandboxed evaluator."""
    return JobOutcome(
        status="ok",
        rows=_rows(job.code),
        message="",
        stderr_tail="",
        wall_seconds=0.04,
        cpu_seconds=0.04,
        sandbox="test-fn",
    )


def _expire(store: Store, sid: int) -> None:
    """Move a lease's expiry into the past (as if its worker had stopped renewing it long ago)."""
    s = store_mod.T_SUBMISSIONS
    with store._write() as conn:
        conn.execute(s.update().where(s.c.id == sid).values(lease_expires_at=datetime.now(UTC) - timedelta(hours=1)))


def _check_runs(store: Store, sid: int, code: bytes) -> None:
    runs = store.runs([sid])
    want = _rows(code)
    assert len(runs) == len(want)
    got = {(r.stratum, r.seed_index): r for r in runs.itertuples()}
    for w in want:
        r = got[(w["stratum"], w["seed_index"])]
        assert r.regret == w["metrics"]["regret"] and r.status == "ok"
        if w["curve"] is None:
            assert pd.isna(r.curve_path)
        else:
            pd.testing.assert_frame_equal(store.read_curve(r.curve_path), w["curve"])


# ------------------------------------------------------------------------------------------------------
# migrations
# ------------------------------------------------------------------------------------------------------


def _structure(store: Store) -> dict:
    """Tables, columns (type, nullable), primary keys, unique constraints, indexes and foreign keys."""
    out = {}
    with store._engine.connect() as conn:
        insp = sa.inspect(conn)
        for table in sorted(insp.get_table_names()):
            out[table] = (
                {c["name"]: (str(c["type"]), c["nullable"]) for c in insp.get_columns(table)},
                tuple(insp.get_pk_constraint(table)["constrained_columns"]),
                sorted(tuple(u["column_names"]) for u in insp.get_unique_constraints(table)),
                sorted((i["name"], tuple(i["column_names"])) for i in insp.get_indexes(table)),
                sorted(
                    (tuple(f["constrained_columns"]), f["referred_table"], tuple(f["referred_columns"]))
                    for f in insp.get_foreign_keys(table)
                ),
            )
    return out


def _legacy_version(store: Store) -> int:
    with store._read() as conn:
        return conn.execute(sa.text("SELECT version FROM papergym_schema WHERE id = 1")).scalar_one()


def test_fresh_database_is_at_head(url, tmp_path):
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(store_mod._MIGRATIONS_DIR))
    assert ScriptDirectory.from_config(config).get_current_head() == SCHEMA_VERSION
    with Store(url, curves_dir=tmp_path) as s:
        assert s.schema_version() == SCHEMA_VERSION
        assert migrate(s._engine) == SCHEMA_VERSION  # idempotent
        assert _legacy_version(s) == store_mod.LEGACY_SCHEMA_GUARD  # papergym before Alembic refuses it
        # the tables the queries are written against are exactly the migrated ones
        structure = _structure(s)
        assert set(structure) == {*store_mod._METADATA.tables, "alembic_version"}
        for name, table in store_mod._METADATA.tables.items():
            assert {c: n for c, (_, n) in structure[name][0].items()} == {c.name: c.nullable for c in table.columns}


def _v1_tables(md: sa.MetaData) -> dict[str, sa.Table]:
    """The tables exactly as papergym's store created them before it used Alembic (schema version 1)."""
    t = store_mod.UTCDateTime
    return {
        "schema": sa.Table(
            "papergym_schema",
            md,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
            sa.Column("version", sa.Integer, nullable=False),
            sa.CheckConstraint("id = 1", name="papergym_schema_one_row"),
        ),
        "benchmarks": sa.Table(
            "benchmarks",
            md,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("benchmark_id", sa.String(200), nullable=False),
            sa.Column("kind", sa.String(16), nullable=False),
            sa.Column("version", sa.String(200), nullable=False),
            sa.Column("spec_json", sa.Text, nullable=False),
            sa.Column("created_at", t, nullable=False),
            sa.UniqueConstraint("benchmark_id", "version", name="benchmarks_id_version"),
        ),
        "submissions": sa.Table(
            "submissions",
            md,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("benchmark_version", sa.Integer, sa.ForeignKey("benchmarks.id"), nullable=False, index=True),
            sa.Column("benchmark_id", sa.String(200), nullable=False, index=True),
            *(sa.Column(c, sa.String(200), nullable=False) for c in ("name", "author")),
            *(sa.Column(c, sa.String(16), nullable=False) for c in ("kind", "role")),
            sa.Column("entry", sa.Text, nullable=False),
            sa.Column("code_sha256", sa.String(64), nullable=False),
            sa.Column("hyperparameters_json", sa.Text, nullable=False),
            sa.Column("package_versions_json", sa.Text, nullable=False),
            sa.Column("sandbox", sa.String(64), nullable=False),
            sa.Column("status", sa.String(16), nullable=False),
            sa.Column("message", sa.Text, nullable=False),
            sa.Column("stderr_tail", sa.Text, nullable=False),
            sa.Column("created_at", t, nullable=False),
            sa.Column("finished_at", t, nullable=True),
            sa.Column("wall_seconds", sa.Float, nullable=True),
            sa.Column("cpu_seconds", sa.Float, nullable=True),
        ),
        "runs": sa.Table(
            "runs",
            md,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("submission_id", sa.Integer, sa.ForeignKey("submissions.id"), nullable=False),
            sa.Column("split", sa.String(8), nullable=False),
            sa.Column("stratum", sa.String(200), nullable=False),
            sa.Column("seed_index", sa.Integer, nullable=False),
            sa.Column("status", sa.String(16), nullable=False),
            sa.Column("metrics_json", sa.Text, nullable=False),
            sa.Column("wall_seconds", sa.Float, nullable=True),
            sa.Column("cpu_seconds", sa.Float, nullable=True),
            sa.Column("curve_path", sa.Text, nullable=True),
            sa.Column("error", sa.Text, nullable=True),
            sa.UniqueConstraint("submission_id", "split", "stratum", "seed_index", name="runs_key"),
        ),
    }


def test_upgrade_from_schema_v1(url, tmp_path):
    # a database as the pre-Alembic store left it: version 1, three submissions, a run whose curve is a file
    parsed = store_mod._parse_url(url)  # the store's engine factories: opening a Store would migrate
    sqlite = parsed.get_backend_name() == "sqlite"
    engine = store_mod._sqlite_engine(parsed) if sqlite else store_mod._postgres_engine(parsed)
    md = sa.MetaData()
    v1 = _v1_tables(md)
    curves = tmp_path / "curves"
    legacy_curve = pd.DataFrame({"t": [1, 2, 4], "cum_regret": [0.5, 0.75, 1.0]})
    rel = f"{BOARD}/1/test-peaks-0-0123456789ab.parquet"
    (curves / BOARD / "1").mkdir(parents=True)
    legacy_curve.to_parquet(curves / rel)
    now = datetime.now(UTC)
    sub = {
        "benchmark_version": 1,
        "benchmark_id": BOARD,
        "kind": "agent",
        "entry": "a.py:f",
        "code_sha256": "ab" * 32,
        "hyperparameters_json": "{}",
        "package_versions_json": "{}",
        "sandbox": "bwrap",
        "status": "ok",
        "message": "",
        "stderr_tail": "",
        "created_at": now,
        "finished_at": now,
        "wall_seconds": 1.0,
        "cpu_seconds": 1.0,
    }
    with engine.begin() as conn:
        md.create_all(conn)
        conn.execute(v1["schema"].insert().values(id=1, version=1))
        conn.execute(
            v1["benchmarks"]
            .insert()
            .values(id=1, benchmark_id=BOARD, kind="env", version="v1", spec_json='{"n_seeds": 2}', created_at=now)
        )
        conn.execute(
            v1["submissions"].insert(),
            [
                {**sub, "id": 1, "name": "ucb", "author": "alice", "role": "submission"},
                {**sub, "id": 2, "name": "mdbe", "author": "papergym", "role": "reference", "entry": "registry:mdbe"},
                {**sub, "id": 3, "name": "ucb", "author": "mallory", "role": "submission", "status": "error"},
            ],
        )
        conn.execute(
            v1["runs"].insert(),
            [
                {
                    "submission_id": 1,
                    "split": "test",
                    "stratum": "peaks",
                    "seed_index": 0,
                    "status": "ok",
                    "metrics_json": '{"regret": 3.5}',
                    "wall_seconds": 1.0,
                    "cpu_seconds": 1.0,
                    "curve_path": rel,
                },
                {
                    "submission_id": 2,
                    "split": "test",
                    "stratum": "peaks",
                    "seed_index": 0,
                    "status": "ok",
                    "metrics_json": '{"regret": "Infinity"}',
                    "wall_seconds": None,
                    "cpu_seconds": None,
                    "curve_path": None,
                },
            ],
        )
        if conn.dialect.name == "postgresql":  # the serial counters, as inserts without ids leave them
            for table in ("benchmarks", "submissions"):
                conn.execute(sa.text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), 3)"))
    engine.dispose()

    with Store(url, curves_dir=curves) as s:
        assert s.schema_version() == SCHEMA_VERSION
        assert _legacy_version(s) == store_mod.LEGACY_SCHEMA_GUARD
        subs = s.submissions(BOARD)
        assert subs["submission_id"].tolist() == [1, 2, 3] and subs["split"].eq("test").all()
        assert subs["status"].tolist() == ["ok", "ok", "error"]
        assert subs["author"].tolist() == ["alice", "papergym", "mallory"]
        assert s.submissions(BOARD, latest_only=True)["submission_id"].tolist() == [1, 2, 3]
        record = s.submission(1)
        assert record["attempts"] == 0 and record["code_name"] is None and record["lease_owner"] is None
        runs = s.runs()
        assert runs["regret"].tolist() == [3.5, float("inf")]
        assert runs["curve_path"].tolist()[0] == rel and runs["curve_path"].isna().tolist() == [False, True]
        pd.testing.assert_frame_equal(s.read_curve(rel), legacy_curve)  # the legacy file is still read
        # names: the first author that used each one owns it; later users (mallory) do not
        with pytest.raises(NameTaken, match="alice"):
            s.claim_name(BOARD, "ucb", "mallory")
        with pytest.raises(NameTaken, match="papergym"):
            s.claim_name(BOARD, "mdbe", "bob")
        s.claim_name(BOARD, "ucb", "alice")
        # new runs of the upgraded database keep their curves in the database, next to the legacy file
        new = s.create_submission(
            benchmark_id=BOARD,
            version="v1",
            name="ts",
            author="bob",
            kind="agent",
            role="submission",
            entry="b.py:f",
            code_sha256="cd" * 32,
            hyperparameters={},
            package_versions={},
            sandbox="bwrap",
        )
        assert new == 4
        s.add_runs(
            new,
            [
                {
                    "split": "test",
                    "stratum": "peaks",
                    "seed_index": 0,
                    "status": "ok",
                    "metrics": {"regret": 1.0},
                    "curve": legacy_curve * 2,
                }
            ],
        )
        ref = s.runs([new])["curve_path"].item()
        assert ref.startswith("sha256:")
        pd.testing.assert_frame_equal(s.read_curve(ref), legacy_curve * 2)
        assert sorted(p.name for p in curves.rglob("*") if p.is_file()) == [rel.rsplit("/", 1)[1]]
        s.delete_submission(1)  # a legacy submission's file goes with it
        assert not (curves / rel).exists()
        upgraded = _structure(s)
    with Store(
        url.replace("leaderboard.db", "fresh.db") if url.startswith("sqlite") else _other_schema(url),
        curves_dir=tmp_path / "c2",
    ) as fresh:
        assert _structure(fresh) == upgraded  # an upgraded v1 database has exactly a fresh one's schema


def _other_schema(url: str) -> str:
    """A second fresh schema on the PostgreSQL server of ``url`` (dropped with the server)."""
    import uuid

    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    parsed = sa.make_url(url)
    plain = parsed.set(drivername="postgresql").difference_update_query(["options"])
    with psycopg.connect(plain.render_as_string(hide_password=False), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return parsed.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)


def test_newer_databases_are_refused(url, tmp_path):
    with Store(url, curves_dir=tmp_path) as s, s._write() as conn:
        conn.execute(sa.text("DROP TABLE alembic_version"))  # a guard of 2 without Alembic: no papergym wrote it
    with pytest.raises(SchemaVersionError, match="version 2 .*without an alembic_version table"):
        Store(url, curves_dir=tmp_path)


# ------------------------------------------------------------------------------------------------------
# curves, tokens, names, quotas
# ------------------------------------------------------------------------------------------------------


def test_curves_live_in_the_database(store, url, tmp_path):
    sid = store.create_submission(
        benchmark_id=BOARD,
        version="v1",
        name="ucb",
        author="me",
        kind="agent",
        role="submission",
        entry="a.py:f",
        code_sha256="ab" * 32,
        hyperparameters={},
        package_versions={},
        sandbox="bwrap",
    )
    store.add_runs(sid, _rows(b"some code"))
    assert not store.curves_dir.exists()  # nothing is written next to the database
    # "another machine": the same URL, an empty curves folder of its own
    with Store(url, curves_dir=tmp_path / "elsewhere") as other:
        _check_runs(other, sid, b"some code")
        with other._read() as conn:
            data = conn.execute(sa.select(store_mod.T_CURVES.c.data)).scalar_one()
        meta = pq.ParquetFile(io.BytesIO(bytes(data))).metadata
        assert meta.row_group(0).column(0).compression == "ZSTD"
    with pytest.raises(LookupError, match="not in the database"):
        store.read_curve("sha256:" + "0" * 64)
    with pytest.raises(ValueError, match="bad curve reference"):
        store.read_curve("sha256:xyz")


def test_tokens(store):
    token = store.create_token("alice")
    assert token.startswith("pgt_") and len(token) == 4 + 43
    second = store.create_token("alice")
    bob = store.create_token("bob")
    assert len({token, second, bob}) == 3
    with store._read() as conn:  # only the hash (and an 8-character prefix) is stored
        rows = [dict(r._mapping) for r in conn.execute(sa.select(store_mod.T_API_TOKENS))]
    assert sorted(r["token_sha256"] for r in rows) == sorted(
        hashlib.sha256(t.encode()).hexdigest() for t in (token, second, bob)
    )
    assert {r["prefix"] for r in rows} == {t[:8] for t in (token, second, bob)}
    assert not any(t in str(v) for r in rows for v in r.values() for t in (token, second, bob))

    assert store.author_for_token(token) == "alice" and store.author_for_token(second) == "alice"
    assert store.author_for_token(bob) == "bob"
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    for bad in (flipped, token + "x", token[4:], "pgt_short", "", None, 42, token.upper(), f" {token}"):
        assert store.author_for_token(bad) is None
    authors = store.authors().set_index("name")
    assert authors.loc["alice", "active_tokens"] == 2 and authors.loc["bob", "active_tokens"] == 1
    assert pd.notna(authors.loc["alice", "last_used_at"]) and str(authors["created_at"].dt.tz) == "UTC"

    assert store.revoke_tokens("alice") == 2
    assert store.author_for_token(token) is None and store.author_for_token(second) is None
    assert store.author_for_token(bob) == "bob"
    assert store.revoke_tokens("alice") == 0
    assert store.authors().set_index("name").loc["alice", "active_tokens"] == 0
    third = store.create_token("alice")
    assert store.author_for_token(third) == "alice"
    with pytest.raises(LookupError, match="no author 'carol'"):
        store.revoke_tokens("carol")
    with pytest.raises(ValueError, match="author"):
        store.create_token("")


def test_name_ownership(store):
    store.create_submission(
        benchmark_id=BOARD,
        version="v1",
        name="mdbe",
        author="papergym",
        kind="agent",
        role="reference",
        entry="registry:mdbe",
        code_sha256="ab" * 32,
        hyperparameters={},
        package_versions={},
        sandbox="in-process",
    )
    first = _enqueue(store, "alice", "ucb")
    with pytest.raises(NameTaken, match=f"'ucb' on board {BOARD} belongs to author 'alice'.*'bob'"):
        _enqueue(store, "bob", "ucb")
    with pytest.raises(NameTaken, match="belongs to author 'papergym'"):
        _enqueue(store, "bob", "mdbe")  # a reference's name is taken
    again = _enqueue(store, "alice", "ucb", split="validation")  # the owner may submit again, any split
    assert store.submissions(BOARD)["submission_id"].tolist() == [1, first, again]  # nothing of bob's stored
    store.register_benchmark("Other-v0", "env", "v1", SPEC)
    _enqueue(store, "bob", "ucb", board="Other-v0")  # names belong to one board
    with pytest.raises(NameTaken):
        store.claim_name("Other-v0", "ucb", "alice")
    store.claim_name(BOARD, "fresh", "carol")
    store.claim_name(BOARD, "fresh", "carol")
    with pytest.raises(NameTaken):
        _enqueue(store, "alice", "fresh")


def test_test_quota(store):
    ids = [_enqueue(store, "alice", "ucb", quota=5) for _ in range(5)]
    first = store.submission(ids[0])["created_at"]
    with pytest.raises(QuotaExceeded) as info:
        _enqueue(store, "alice", "ucb", quota=5)
    msg = str(info.value)
    assert f"board {BOARD}" in msg and "'alice'" in msg and "quota is 5 a day" in msg
    assert (first + timedelta(hours=24)).isoformat(timespec="seconds") in msg  # when the oldest one ages out
    for _ in range(7):  # validation is never limited
        _enqueue(store, "alice", "ucb", split="validation", quota=5)
    _enqueue(store, "bob", "ts", quota=5)  # per author
    _enqueue(store, "alice", "ucb", quota=None)  # no quota
    with pytest.raises(QuotaExceeded):
        _enqueue(store, "alice", "ucb", quota=6)
    # the oldest test submissions leave the 24-hour window: room again
    s = store_mod.T_SUBMISSIONS
    with store._write() as conn:
        conn.execute(s.update().where(s.c.id.in_(ids[:2])).values(created_at=datetime.now(UTC) - timedelta(hours=25)))
    _enqueue(store, "alice", "ucb", quota=5)
    with pytest.raises(QuotaExceeded, match="no test submissions"):
        _enqueue(store, "carol", "x", quota=0)
    counts = store.submissions(BOARD).groupby(["author", "split"]).size().to_dict()
    assert counts == {("alice", "test"): 7, ("alice", "validation"): 7, ("bob", "test"): 1}


def test_enqueue_validates(store):
    with pytest.raises(LookupError, match="not registered"):
        store.enqueue_submission(
            benchmark_id=BOARD,
            version="v9",
            name="n",
            author="a",
            kind="agent",
            split="test",
            code=b"x",
            code_name="a.py",
            attr="f",
            hyperparameters={},
            package_versions={},
            test_quota_per_day=None,
        )
    good = {
        "benchmark_id": BOARD,
        "version": "v1",
        "name": "n",
        "author": "a",
        "kind": "agent",
        "split": "test",
        "code": b"x = 1\n",
        "code_name": "a.py",
        "attr": "f",
        "hyperparameters": {},
        "package_versions": {},
        "test_quota_per_day": None,
    }
    for change, field in [
        ({"code": b""}, "code"),
        ({"code": "x = 1"}, "code"),
        ({"code_name": "../a.py"}, "code_name"),
        ({"attr": "make agent"}, "attr"),
        ({"split": "dev"}, "split"),
        ({"kind": "robot"}, "kind"),
        ({"author": ""}, "author"),
        ({"test_quota_per_day": -1}, "test_quota_per_day"),
        ({"hyperparameters": {"f": print}}, "hyperparameters"),
    ]:
        with pytest.raises(ValueError, match=field):
            store.enqueue_submission(**(good | change))
    sid = store.enqueue_submission(**good)
    sub = store.submission(sid)
    assert sub["status"] == "queued" and sub["entry"] == "a.py:f" and sub["role"] == "submission"
    assert sub["code_sha256"] == hashlib.sha256(b"x = 1\n").hexdigest() and "code" not in sub
    assert store.job_code(sid) == b"x = 1\n"
    assert store.submission(sid + 100) is None
    with pytest.raises(LookupError):
        store.job_code(sid + 100)
    assert store.submissions(BOARD, latest_only=True).empty  # queued: not on the board yet


# ------------------------------------------------------------------------------------------------------
# the queue: claim, heartbeat, requeue, fencing
# ------------------------------------------------------------------------------------------------------


def test_claim_heartbeat_requeue_and_fencing(store):
    code = b"def make_agent(problem, seed): ...\n"
    sid = _enqueue(store, "alice", "ucb", code=code)
    other = _enqueue(store, "bob", "ts")
    job = store.claim_job("w1", 30.0)
    assert job == Job(
        submission_id=sid,
        benchmark_id=BOARD,
        version="v1",
        name="ucb",
        author="alice",
        kind="agent",
        split="test",
        code=code,
        code_name="my_agent.py",
        attr="make_agent",
        hyperparameters={"c": 2.0},
        attempts=1,
    )
    sub = store.submission(sid)
    assert sub["status"] == "running" and sub["lease_owner"] == "w1" and sub["started_at"] is not None
    assert 25 < (sub["lease_expires_at"] - sub["started_at"]).total_seconds() <= 30.5
    assert store.claim_job("w2", 30.0).submission_id == other  # the next one, not the same
    assert store.claim_job("w3", 30.0) is None
    assert store.heartbeat(sid, "w2", 30.0) is False  # not w2's lease
    assert store.heartbeat(sid, "w1", 30.0) is True
    assert store.requeue_expired() == []  # nothing expired

    _expire(store, sid)  # w1 stalls past its lease
    assert store.heartbeat(sid, "w1", 30.0) is False  # an expired lease is lost
    assert store.complete_job(sid, "w1", evaluate(job)) is False  # fenced: nothing written
    assert store.runs([sid]).empty and store.submission(sid)["status"] == "running"
    assert store.requeue_expired() == [sid]
    sub = store.submission(sid)
    assert sub["status"] == "queued" and sub["lease_owner"] is None and sub["attempts"] == 1

    retry = store.claim_job("w3", 30.0)
    assert retry.submission_id == sid and retry.attempts == 2 and retry.code == code
    assert store.complete_job(sid, "w1", evaluate(job)) is False  # the old worker still cannot write
    assert store.complete_job(sid, "w3", evaluate(retry)) is True
    assert store.complete_job(sid, "w3", evaluate(retry)) is False  # stored exactly once
    sub = store.submission(sid)
    assert (sub["status"], sub["sandbox"], sub["wall_seconds"], sub["attempts"]) == ("ok", "test-fn", 0.04, 2)
    assert sub["lease_owner"] is None and sub["lease_expires_at"] is None and sub["finished_at"] is not None
    _check_runs(store, sid, code)
    assert store.submissions(BOARD, latest_only=True)["submission_id"].tolist() == [sid]

    # a lease really expires on the store's clock (no manual expiry)
    third = _enqueue(store, "carol", "x")
    store.claim_job("w4", 0.3)
    time.sleep(0.5)
    assert store.heartbeat(third, "w4", 0.3) is False
    assert store.requeue_expired() == [third]


def test_complete_job_validates_before_writing(store):
    sid = _enqueue(store)
    job = store.claim_job("w", 30.0)
    bad = evaluate(job)
    bad.rows[-1]["status"] = "crashed"
    with pytest.raises(ValueError, match="status"):
        store.complete_job(sid, "w", bad)
    with pytest.raises(ValueError, match="outcome.status"):
        store.complete_job(sid, "w", JobOutcome(status="running", rows=[]))
    assert store.runs([sid]).empty and store.submission(sid)["status"] == "running"
    assert store.complete_job(sid, "w", evaluate(job))


def test_max_attempts(store):
    sid = _enqueue(store)
    for attempt in (1, 2):
        assert store.claim_job(f"w{attempt}", 30.0).attempts == attempt
        _expire(store, sid)
        assert store.requeue_expired(max_attempts=2) == [sid]
    sub = store.submission(sid)
    assert sub["status"] == "error" and sub["message"].startswith("the evaluation was lost 2 times")
    assert sub["finished_at"] is not None and sub["lease_owner"] is None
    assert store.claim_job("w3", 30.0) is None and store.runs([sid]).empty


def test_leased_local_submission_does_not_stay_running(store):
    kw = {
        "benchmark_id": BOARD,
        "version": "v1",
        "name": "local",
        "author": "me",
        "kind": "agent",
        "role": "submission",
        "entry": "a.py:f",
        "code_sha256": "ab" * 32,
        "hyperparameters": {},
        "package_versions": {},
        "sandbox": "bwrap",
        "split": "local",
    }
    with pytest.raises(ValueError, match="worker_id and lease_seconds"):
        store.create_submission(**kw, worker_id="me:1")
    sid = store.create_submission(**kw, worker_id="host:1:ab", lease_seconds=30.0)
    assert store.submission(sid)["lease_owner"] == "host:1:ab" and store.submission(sid)["split"] == "local"
    assert store.heartbeat(sid, "host:1:ab", 30.0)
    _expire(store, sid)  # the submitting process was killed (SIGKILL): no more heartbeats
    assert store.claim_job("w", 30.0) is None  # no code: never handed to a worker
    assert store.requeue_expired() == [sid]
    sub = store.submission(sid)
    assert sub["status"] == "error" and "host:1:ab" in sub["message"] and "stopped" in sub["message"]
    done = store.create_submission(**kw, worker_id="host:1:ab", lease_seconds=30.0)
    store.finish_submission(done, "ok")
    assert store.submission(done)["lease_owner"] is None and store.requeue_expired() == []


# ------------------------------------------------------------------------------------------------------
# the worker
# ------------------------------------------------------------------------------------------------------


def test_worker_outcomes_and_failures(store):
    def flaky(job: Job) -> JobOutcome:
        if job.name == "raises":
            raise RuntimeError("the sandbox could not start")
        if job.name == "invalid":
            return JobOutcome(status="ok", rows=[{"split": "test"}], stderr_tail="secret stderr")
        return evaluate(job)

    good = _enqueue(store, "alice", "good", code=b"good")
    raises = _enqueue(store, "alice", "raises")
    invalid = _enqueue(store, "alice", "invalid")
    worker = Worker(store, flaky, worker_id="w-test", lease_seconds=30.0, poll_seconds=0.05)
    assert worker.run(max_jobs=3) == 3
    assert worker.run_once() is None  # empty queue
    _check_runs(store, good, b"good")
    sub = store.submission(raises)
    assert sub["status"] == "error" and sub["message"] == "evaluator failure: RuntimeError: the sandbox could not start"
    assert sub["stderr_tail"] == "" and store.runs([raises]).empty
    sub = store.submission(invalid)
    assert sub["status"] == "error" and sub["message"].startswith("evaluator failure: its outcome cannot be stored")
    assert sub["stderr_tail"] == "" and store.runs([invalid]).empty
    assert all(store.submission(i)["lease_owner"] is None for i in (good, raises, invalid))
    with pytest.raises(ValueError, match="lease_seconds"):
        Worker(store, flaky, lease_seconds=0)
    with pytest.raises(ValueError, match="evaluate"):
        Worker(store, None)


def test_worker_heartbeats_keep_a_long_job(store):
    def slow(job: Job) -> JobOutcome:
        time.sleep(1.5)  # two and a half leases: only the heartbeats keep it
        assert store.requeue_expired() == []  # another worker looking now finds nothing expired
        return evaluate(job)

    sid = _enqueue(store, code=b"slow")
    assert Worker(store, slow, lease_seconds=0.6).run_once() == sid
    sub = store.submission(sid)
    assert sub["status"] == "ok" and sub["attempts"] == 1
    assert (sub["heartbeat_at"] - sub["started_at"]).total_seconds() > 0.9
    _check_runs(store, sid, b"slow")


def test_worker_that_lost_its_lease_writes_nothing(store):
    sid = _enqueue(store, code=b"contested")
    other = Worker(store, evaluate, worker_id="w-b", lease_seconds=30.0)
    seen = []

    def stalls(job: Job) -> JobOutcome:  # worker A stalls; meanwhile its lease expires and B takes the job
        seen.append(job.attempts)
        _expire(store, job.submission_id)
        assert other.run_once() == job.submission_id
        return JobOutcome(status="error", rows=[], message="A's stale result")

    assert Worker(store, stalls, worker_id="w-a", lease_seconds=30.0).run_once() == sid
    sub = store.submission(sid)
    assert seen == [1] and sub["status"] == "ok" and sub["attempts"] == 2 and sub["message"] == ""
    _check_runs(store, sid, b"contested")


def test_worker_signals(store):
    assert threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)

    def signalled(times: int):
        def fn(job: Job) -> JobOutcome:
            for _ in range(times):
                os.kill(os.getpid(), signal.SIGTERM)
            return evaluate(job)

        return fn

    first, second = _enqueue(store, code=b"one"), _enqueue(store, "bob", code=b"two")
    # one SIGTERM: the current job is finished and stored, then the worker stops
    assert Worker(store, signalled(1), lease_seconds=30.0).run() == 1
    assert store.submission(first)["status"] == "ok" and store.submission(second)["status"] == "queued"
    # two: the job is abandoned -- nothing stored, the lease left to expire -- and requeued after it
    assert Worker(store, signalled(2), worker_id="w-x", lease_seconds=30.0).run() == 0
    sub = store.submission(second)
    assert sub["status"] == "running" and sub["lease_owner"] == "w-x" and store.runs([second]).empty
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
    _expire(store, second)
    assert Worker(store, evaluate).run(max_jobs=1) == 1
    assert store.submission(second)["attempts"] == 2
    _check_runs(store, second, b"two")


_KILLED_WORKER = r"""
import sys, time
from papergym.leaderboard.board.jobs import JobOutcome
from papergym.leaderboard.board.store import Store
from papergym.leaderboard.board.worker import Worker

def hang(job):
    print("claimed", job.submission_id, flush=True)
    time.sleep(600)
    return JobOutcome(status="ok", rows=[])

with Store(sys.argv[1], curves_dir=sys.argv[2]) as store:
    Worker(store, hang, worker_id="doomed", lease_seconds=float(sys.argv[3])).run(max_jobs=1)
"""


def test_sigkilled_worker_job_is_evaluated_again(tmp_path):
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    with Store(url, curves_dir=tmp_path) as store:
        store.register_benchmark(BOARD, "env", "v1", SPEC)
        sid = _enqueue(store, code=b"survivor")
        proc = subprocess.Popen(
            [sys.executable, "-c", _KILLED_WORKER, url, str(tmp_path), "1.0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout.readline().split() == ["claimed", str(sid)], proc.stderr.read()
            time.sleep(0.5)  # it heartbeats while "evaluating"
            proc.kill()  # SIGKILL: no cleanup at all
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert store.submission(sid)["status"] == "running"
        time.sleep(1.1)  # its lease runs out
        assert Worker(store, evaluate, lease_seconds=30.0).run_once() == sid
        sub = store.submission(sid)
        assert sub["status"] == "ok" and sub["attempts"] == 2
        _check_runs(store, sid, b"survivor")


# ------------------------------------------------------------------------------------------------------
# concurrency: enqueues and workers at once
# ------------------------------------------------------------------------------------------------------


def test_concurrent_enqueues_and_workers(url, tmp_path):
    authors, per_author, quota = ("ana", "ben", "cai", "dee"), 6, 5
    evaluated: list[int] = []
    lock = threading.Lock()

    def counted(job: Job) -> JobOutcome:
        with lock:
            evaluated.append(job.submission_id)
        time.sleep(0.01)
        return evaluate(job)

    with Store(url, curves_dir=tmp_path / "curves") as store:
        store.register_benchmark(BOARD, "env", "v1", SPEC)
        go = threading.Barrier(len(authors) * per_author)
        accepted: dict[int, bytes] = {}
        refused: list[str] = []
        errors: list[BaseException] = []

        def submit(author: str, k: int) -> None:
            code = f"# {author} #{k}\n".encode()
            try:
                go.wait(timeout=30)
                sid = _enqueue(store, author, f"{author}-agent", code=code, quota=quota)
                with lock:
                    accepted[sid] = code
            except QuotaExceeded:
                with lock:
                    refused.append(author)
            except BaseException as exc:  # noqa: BLE001 -- any failure in a thread is reported below
                errors.append(exc)

        stop = threading.Event()
        workers = [Worker(store, counted, worker_id=f"w{i}", lease_seconds=10.0, poll_seconds=0.02) for i in range(2)]
        handled = [0, 0]

        def work(i: int) -> None:
            handled[i] = workers[i].run(stop)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        threads += [threading.Thread(target=submit, args=(a, k)) for a in authors for k in range(per_author)]
        for t in threads:
            t.start()
        for t in threads[2:]:
            t.join(timeout=120)
        assert not errors, errors
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            statuses = store.submissions(BOARD)["status"]
            if len(statuses) == len(accepted) and statuses.eq("ok").all():
                break
            time.sleep(0.05)
        stop.set()
        for t in threads[:2]:
            t.join(timeout=60)

        # the quota held under concurrency: exactly 5 per author, the sixth refused
        assert sorted(refused) == sorted(authors) and len(accepted) == len(authors) * quota
        subs = store.submissions(BOARD)
        assert sorted(subs["submission_id"]) == sorted(accepted)  # no lost and no extra row
        assert subs["status"].eq("ok").all() and subs["author"].value_counts().eq(quota).all()
        assert sorted(evaluated) == sorted(accepted) and sum(handled) == len(accepted)  # each evaluated once
        runs = store.runs(split=None)
        assert len(runs) == len(accepted) * 4
        assert not runs.duplicated(["submission_id", "split", "stratum", "seed_index"]).any()
        for sid, code in accepted.items():
            _check_runs(store, sid, code)
        assert all(store.submission(sid)["attempts"] == 1 for sid in accepted)


def test_lease_keeper_reports_a_lost_lease(store):
    sid = _enqueue(store)
    store.claim_job("w", 30.0)
    _expire(store, sid)
    with LeaseKeeper(store, sid, "w", 0.15) as keeper:
        time.sleep(0.3)
    assert keeper.lost
