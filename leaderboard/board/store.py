"""The leaderboard store: benchmarks (env/task versions), submissions and their runs, the job queue of a
shared board, its authors, API tokens and name ownership, in SQL.

Design
------
SQLAlchemy Core (no ORM) over two backends:

* **SQLite** (default): ``sqlite:///<platformdirs.user_data_dir("papergym")>/leaderboard.db``, or
  ``$PAPERGYM_DB`` (a URL, or a plain file path meaning an SQLite file). Every connection runs with
  ``journal_mode=WAL`` (readers never block the writer), a 30 s busy timeout and ``foreign_keys=ON``.
  pysqlite's own transaction handling is switched off (``isolation_level = None``) and the store emits
  ``BEGIN IMMEDIATE`` for every write transaction itself (SQLAlchemy's documented event-hook recipe), so a
  writer takes the database's write lock up front and waits for it under the busy timeout; a deferred
  transaction that upgrades from read to write could instead fail at once with "database is locked".
  Read-only transactions use a plain ``BEGIN`` (a consistent WAL snapshot, no lock). WAL needs a local
  filesystem: use PostgreSQL for a board shared across machines.
* **PostgreSQL**: ``postgresql+psycopg://user:password@host/db`` (psycopg 3, the ``postgres`` extra;
  ``postgresql://`` and ``postgres://`` mean the same). Migrations serialise on a transaction-level
  advisory lock; benchmark registration, name claims and curves use ``INSERT ... ON CONFLICT DO
  NOTHING``, so concurrent evaluators never collide.

Migrations
----------
The schema is versioned with Alembic: the revisions are ``migrations/versions/`` next to this module
(shipped in the package), run by :func:`migrate` -- and so by every ``Store(...)`` on open -- with a
configuration built in code (no ``alembic.ini``) on the store's own write transaction, so concurrent
openers serialise and a failed revision changes nothing. ``0001`` is the schema papergym wrote before it
used Alembic (a ``papergym_schema`` table holding ``version = 1``): such a database is stamped ``0001`` and
upgraded. ``papergym_schema`` is kept, with ``version = 2`` from revision ``0002`` on, so that an older
papergym refuses the database; the revision itself is in ``alembic_version``. A database at a revision
this code does not know raises :class:`SchemaVersionError`. :data:`SCHEMA_VERSION` is the newest revision.

Tables
------
``benchmarks``
    ``id``, ``benchmark_id`` (e.g. ``"NonStatLipschitz-v0"``), ``kind`` (``env`` | ``task``), ``version``
    (str, a hash), ``spec_json`` (the public spec and the board config), ``created_at``;
    UNIQUE(``benchmark_id``, ``version``).
``submissions``
    ``id``, ``benchmark_version`` (FK ``benchmarks.id``), ``benchmark_id``, ``name``, ``author``, ``kind``
    (``agent`` | ``solver``), ``role`` (``submission`` | ``paper`` | ``baseline`` | ``oracle`` |
    ``reference``), ``split`` (``validation`` | ``test`` | ``local``, :mod:`~papergym.leaderboard.board.jobs`),
    ``entry`` (``"my_agent.py:make_agent"``, ``"registry:mdbe"``), ``code_sha256``,
    ``hyperparameters_json``, ``package_versions_json``, ``sandbox`` (``full``, ``bwrap``, ``rlimits``,
    ``in-process``...), ``status`` (``queued`` | ``running`` | ``ok`` | ``partial`` | ``error`` |
    ``timeout`` | ``oom`` | ``invalid_action`` | ``diverged``), ``message``, ``stderr_tail``, ``created_at``,
    ``finished_at``, ``wall_seconds``, ``cpu_seconds``; the job columns ``code`` (the submitted file's
    bytes; NULL for registry references and local evaluations), ``code_name``, ``attr``, ``attempts``
    (claims so far), ``lease_owner``, ``lease_expires_at``, ``heartbeat_at``, ``started_at``.
``runs``
    ``id``, ``submission_id`` (FK ``submissions.id``), ``split`` (``dev`` | ``test``), ``stratum`` (instance
    family / instance name), ``seed_index`` (int >= 0), ``status`` (``ok`` | ``error`` | ``timeout`` |
    ``oom`` | ``invalid_action`` | ``diverged``), ``metrics_json``, ``wall_seconds``, ``cpu_seconds``, ``curve_sha256``
    (FK ``curves.sha256``), ``curve_path`` (legacy: a parquet file under ``curves_dir``), ``error``;
    UNIQUE(``submission_id``, ``split``, ``stratum``, ``seed_index``).
``curves``
    ``sha256`` (primary key: the SHA-256 of ``data``), ``data`` (the curve DataFrame as parquet bytes,
    zstd-compressed by pyarrow), ``created_at``.
``authors``, ``api_tokens``
    ``authors``: ``id``, ``name`` (UNIQUE), ``created_at``. ``api_tokens``: ``id``, ``author_id`` (FK),
    ``token_sha256`` (UNIQUE), ``prefix`` (the token's first 8 characters, for display), ``created_at``,
    ``revoked_at``, ``last_used_at``. A token is ``"pgt_" + secrets.token_urlsafe(32)``; only its SHA-256
    is stored, the plaintext is returned once by :meth:`Store.create_token`.
``board_names``
    ``benchmark_id``, ``name``, ``author``, ``created_at``; PRIMARY KEY(``benchmark_id``, ``name``): a name
    belongs to the first author that used it on that board (the registry's references are the author
    ``"papergym"``). Every new submission records its name when it is free; :meth:`Store.enqueue_submission`
    -- the way outsiders submit -- refuses another author's name (:class:`NameTaken`).
``papergym_schema``, ``alembic_version``
    the schema guard and the Alembic revision (Migrations above).

Only the seed *index* is stored, never the HMAC secret or a seed derived from it.

Curves
------
:meth:`Store.add_runs` and :meth:`Store.complete_job` store each curve content-addressed in ``curves``
in the same transaction as its runs (``INSERT ... ON CONFLICT DO NOTHING``: identical curves are stored
once), so any machine with the database URL reads every curve and renders the same board; no curve file
is written. :meth:`Store.runs` gives a run's curve reference in ``curve_path``: ``"sha256:<hex>"`` for a
curve in the database, a path relative to ``curves_dir`` for a run stored before revision ``0002``;
:meth:`Store.read_curve` reads both. :meth:`Store.delete_submission` removes the curves no other run uses
(on PostgreSQL under an advisory lock that curve writers hold shared, so a curve is never collected
while a new run starts using it).

The job queue
-------------
A shared board's submissions are jobs. :meth:`Store.enqueue_submission` stores the file and its settings
with status ``queued`` (after the name check and the author's daily test-split quota, in one
transaction). A worker (:mod:`papergym.leaderboard.board.worker`) takes the oldest queued job with
:meth:`Store.claim_job` -- ``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL, ``BEGIN IMMEDIATE`` on
SQLite -- under a lease (``running``, ``lease_owner``, ``lease_expires_at``, ``attempts + 1``), renews it
with :meth:`Store.heartbeat` and writes every run and the final status in one transaction with
:meth:`Store.complete_job`, which is fenced: it writes only while the row is still running under that
worker's unexpired lease, so a stalled worker whose job went to another one writes nothing.
:meth:`Store.requeue_expired` puts jobs whose lease expired back in the queue (a lost attempt stored
nothing), and ends a job lost ``max_attempts`` times as ``error``. Leases are measured on the
PostgreSQL server's clock (on SQLite, this machine's). A submission evaluated where it was created
(:meth:`Store.create_submission`) can run under a lease too, so a killed evaluation ends as ``error``
instead of staying ``running``.

Conventions
-----------
* Times are timezone-aware UTC (``datetime`` with ``tzinfo=UTC``; pandas ``datetime64[ns, UTC]``).
* JSON columns are ``TEXT`` holding strict JSON (``sort_keys``). Non-finite floats, which strict JSON
  lacks, are written as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``. In ``metrics_json`` every
  value is a float, so these strings (and ``null``) read back as ``nan`` / ``inf`` / ``-inf`` / ``nan``;
  in the other JSON columns they stay strings. numpy scalars and arrays are stored as numbers and lists.
* Text is cleaned before it is stored: NUL characters (PostgreSQL refuses them) and lone surrogates
  become U+FFFD; ``message`` keeps its first 2,000 characters and ``stderr_tail`` its last 65,536.
* Invalid arguments raise :class:`ValueError` naming the field; unknown benchmarks or submissions raise
  :class:`LookupError`; a taken name :class:`NameTaken` and a spent quota :class:`QuotaExceeded` (both
  ``ValueError``).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import numbers
import os
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Self

import numpy as np
import pandas as pd
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from papergym.canonical import canonical_json
from papergym.validate import positive_float, positive_int

from .jobs import JOB_SPLITS, Job, JobOutcome
from .ranking import RUN_STATUSES

__all__ = [
    "AUTHOR_COLUMNS",
    "BENCHMARK_COLUMNS",
    "BENCHMARK_KINDS",
    "FINAL_STATUSES",
    "ROLES",
    "RUN_COLUMNS",
    "RUN_STATUSES",
    "SCHEMA_VERSION",
    "SPLITS",
    "SUBMISSION_COLUMNS",
    "SUBMISSION_KINDS",
    "SUBMISSION_SPLITS",
    "SUBMISSION_STATUSES",
    "TOKEN_PREFIX",
    "NameTaken",
    "QuotaExceeded",
    "SchemaVersionError",
    "Store",
    "default_url",
    "migrate",
]

BENCHMARK_KINDS: tuple[str, ...] = ("env", "task")
SUBMISSION_KINDS: tuple[str, ...] = ("agent", "solver")
ROLES: tuple[str, ...] = ("submission", "paper", "baseline", "oracle", "reference")
SUBMISSION_STATUSES: tuple[str, ...] = (
    "queued",
    "running",
    "ok",
    "partial",
    "error",
    "timeout",
    "oom",
    "invalid_action",
    "diverged",
)
#: the statuses a submission ends with (every one but ``queued`` and ``running``)
FINAL_STATUSES: tuple[str, ...] = tuple(s for s in SUBMISSION_STATUSES if s not in ("queued", "running"))
#: the split of a *submission* (:mod:`papergym.leaderboard.board.jobs`)
SUBMISSION_SPLITS: tuple[str, ...] = JOB_SPLITS
#: the split of a *run*: ``dev`` (public seeds) or ``test`` (hidden seeds)
SPLITS: tuple[str, ...] = ("dev", "test")

BENCHMARK_COLUMNS: tuple[str, ...] = ("id", "benchmark_id", "kind", "version", "spec", "created_at")
SUBMISSION_COLUMNS: tuple[str, ...] = (
    "submission_id",
    "benchmark_id",
    "version",
    "benchmark_version",
    "name",
    "author",
    "kind",
    "role",
    "entry",
    "code_sha256",
    "hyperparameters",
    "package_versions",
    "sandbox",
    "status",
    "message",
    "stderr_tail",
    "created_at",
    "finished_at",
    "wall_seconds",
    "cpu_seconds",
    "split",
)
RUN_COLUMNS: tuple[str, ...] = (
    "run_id",
    "submission_id",
    "split",
    "stratum",
    "seed_index",
    "status",
    "wall_seconds",
    "cpu_seconds",
    "curve_path",
    "error",
    "metrics",
)
AUTHOR_COLUMNS: tuple[str, ...] = ("author_id", "name", "created_at", "active_tokens", "last_used_at")

#: every API token starts with this; the rest is ``secrets.token_urlsafe(32)`` (43 characters)
TOKEN_PREFIX = "pgt_"
_TOKEN_RE = re.compile(r"pgt_[A-Za-z0-9_-]{43}")
_TOKEN_TOUCH_S = 60.0  # last_used_at is written at most once a minute per token
CURVE_REF_PREFIX = "sha256:"  # runs().curve_path of a curve stored in the database
_CURVE_REF_RE = re.compile(r"sha256:([0-9a-f]{64})")
QUOTA_WINDOW = timedelta(hours=24)

SQLITE_BUSY_TIMEOUT_S = 30.0
MESSAGE_MAX_CHARS = 2_000
STDERR_TAIL_MAX_CHARS = 65_536
_PG_MIGRATION_LOCK = 0x70617065  # advisory-lock key ("pape")
_PG_CURVES_LOCK = 0x70676376  # advisory-lock key ("pgcv"): curve writers share it, the curve collector excludes them
_IN_CHUNK = 500  # ids per IN (...) clause


class SchemaVersionError(RuntimeError):
    """The database was written by a newer papergym (its schema revision is unknown here)."""


class NameTaken(ValueError):
    """The submission name belongs to another author on that board (the first author that used it)."""


class QuotaExceeded(ValueError):
    """The author has used up the board's test-split submissions of the last 24 hours."""


# --------------------------------------------------------------------------------------------------
# column types
# --------------------------------------------------------------------------------------------------


class UTCDateTime(sa.types.TypeDecorator):
    """A timezone-aware UTC ``datetime`` on every backend (SQLite stores it naive, in UTC)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: the store keeps timezone-aware UTC times")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _now() -> datetime:
    return datetime.now(UTC)


# --------------------------------------------------------------------------------------------------
# schema and migrations
# --------------------------------------------------------------------------------------------------

#: The Alembic revision this code's queries are written for (the newest file in ``migrations/versions``).
SCHEMA_VERSION = "0002"
#: ``papergym_schema.version`` of a database managed by Alembic: newer than the 1 that papergym wrote
#: before Alembic, so such a papergym refuses the database instead of writing to a schema it does not know.
LEGACY_SCHEMA_GUARD = 2
_MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
# Alembic's ``context`` / ``op`` are module-level proxies: one migration at a time per process
_ALEMBIC_LOCK = threading.Lock()


def _tables(metadata: sa.MetaData) -> dict[str, sa.Table]:
    """The tables as of :data:`SCHEMA_VERSION`, as the queries see them (the module docstring).

    The DDL is the migrations' (``migrations/versions``); these definitions must match them, which
    ``tests/leaderboard/test_store_jobs.py`` checks against a migrated database.
    """
    schema = sa.Table(
        "papergym_schema",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("version", sa.Integer, nullable=False),
    )
    benchmarks = sa.Table(
        "benchmarks",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("benchmark_id", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("version", sa.String(200), nullable=False),
        sa.Column("spec_json", sa.Text, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("benchmark_id", "version", name="benchmarks_id_version"),
    )
    submissions = sa.Table(
        "submissions",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("benchmark_version", sa.Integer, sa.ForeignKey("benchmarks.id"), nullable=False),
        sa.Column("benchmark_id", sa.String(200), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("entry", sa.Text, nullable=False),
        sa.Column("code_sha256", sa.String(64), nullable=False),
        sa.Column("hyperparameters_json", sa.Text, nullable=False),
        sa.Column("package_versions_json", sa.Text, nullable=False),
        sa.Column("sandbox", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("stderr_tail", sa.Text, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("finished_at", UTCDateTime, nullable=True),
        sa.Column("wall_seconds", sa.Float, nullable=True),
        sa.Column("cpu_seconds", sa.Float, nullable=True),
        sa.Column("split", sa.String(16), nullable=False),
        sa.Column("code", sa.LargeBinary, nullable=True),
        sa.Column("code_name", sa.String(200), nullable=True),
        sa.Column("attr", sa.String(200), nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("lease_owner", sa.String(200), nullable=True),
        sa.Column("lease_expires_at", UTCDateTime, nullable=True),
        sa.Column("heartbeat_at", UTCDateTime, nullable=True),
        sa.Column("started_at", UTCDateTime, nullable=True),
    )
    runs = sa.Table(
        "runs",
        metadata,
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
        sa.Column("curve_sha256", sa.String(64), sa.ForeignKey("curves.sha256"), nullable=True),
        sa.UniqueConstraint("submission_id", "split", "stratum", "seed_index", name="runs_key"),
    )
    authors = sa.Table(
        "authors",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    api_tokens = sa.Table(
        "api_tokens",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id"), nullable=False),
        sa.Column("token_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(8), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("revoked_at", UTCDateTime, nullable=True),
        sa.Column("last_used_at", UTCDateTime, nullable=True),
    )
    board_names = sa.Table(
        "board_names",
        metadata,
        sa.Column("benchmark_id", sa.String(200), primary_key=True),
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    curves = sa.Table(
        "curves",
        metadata,
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    return {
        "schema": schema,
        "benchmarks": benchmarks,
        "submissions": submissions,
        "runs": runs,
        "authors": authors,
        "api_tokens": api_tokens,
        "board_names": board_names,
        "curves": curves,
    }


_METADATA = sa.MetaData()
_T = _tables(_METADATA)
T_SCHEMA, T_BENCHMARKS, T_SUBMISSIONS, T_RUNS = _T["schema"], _T["benchmarks"], _T["submissions"], _T["runs"]
T_AUTHORS, T_API_TOKENS, T_BOARD_NAMES, T_CURVES = _T["authors"], _T["api_tokens"], _T["board_names"], _T["curves"]
_T_ALEMBIC = sa.table("alembic_version", sa.column("version_num", sa.String(32)))


def _alembic_revisions(conn: Connection) -> list[str] | None:
    """The revisions in ``alembic_version``; ``None`` when the table does not exist."""
    if not sa.inspect(conn).has_table("alembic_version"):
        return None
    return sorted(conn.execute(sa.select(_T_ALEMBIC.c.version_num)).scalars().all())


def _legacy_version(conn: Connection) -> int:
    """``papergym_schema.version`` (0 when the table or its row is missing)."""
    if not sa.inspect(conn).has_table("papergym_schema"):
        return 0
    row = conn.execute(sa.select(T_SCHEMA.c.version).where(T_SCHEMA.c.id == 1)).first()
    return 0 if row is None else int(row[0])


def _alembic_config(conn: Connection):
    from alembic.config import Config

    config = Config()
    # configparser interpolates "%": a folder name holding one must be escaped
    config.set_main_option("script_location", str(_MIGRATIONS_DIR).replace("%", "%%"))
    config.attributes["connection"] = conn
    return config


def _too_new(engine: Engine, what: str) -> SchemaVersionError:
    return SchemaVersionError(
        f"the leaderboard database {engine.url.render_as_string(hide_password=True)} has schema {what}, "
        f"newer than this papergym's revision {SCHEMA_VERSION}: upgrade papergym to use it"
    )


def migrate(engine: Engine) -> str:
    """Bring the database to :data:`SCHEMA_VERSION` with Alembic; return the revision.

    The revisions are ``migrations/versions`` next to this module (shipped in the package); the Alembic
    configuration is built in code, no ``alembic.ini``. Everything runs in one write transaction
    (``BEGIN IMMEDIATE`` on SQLite, a transaction-level advisory lock on PostgreSQL), so concurrent
    openers serialise and a failed revision leaves the database as it was. A database at
    :data:`SCHEMA_VERSION` is recognised by one read, without loading Alembic.

    A database written by papergym before it used Alembic (``papergym_schema.version == 1``, no
    ``alembic_version``) is stamped ``0001`` -- that revision is its schema -- and upgraded.

    Raises
    ------
    SchemaVersionError
        if the database is at a revision this code does not know (written by a newer papergym).
    """
    with engine.connect() as conn:
        conn.execution_options(papergym_read_only=True)
        with conn.begin():
            if _alembic_revisions(conn) == [SCHEMA_VERSION]:
                return SCHEMA_VERSION
    from alembic import command
    from alembic.script import ScriptDirectory

    with _ALEMBIC_LOCK, engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
        config = _alembic_config(conn)
        known = {rev.revision for rev in ScriptDirectory.from_config(config).walk_revisions()}
        current = _alembic_revisions(conn)
        if current is None:
            legacy = _legacy_version(conn)
            if legacy > 1:
                raise _too_new(engine, f"version {legacy} (papergym_schema) without an alembic_version table")
            if legacy == 1:
                command.stamp(config, "0001")
        elif unknown := [rev for rev in current if rev not in known]:
            raise _too_new(engine, f"revision {', '.join(unknown)}")
        command.upgrade(config, "head")
        current = _alembic_revisions(conn)
    if current != [SCHEMA_VERSION]:
        raise RuntimeError(
            f"the leaderboard store's migrations end at {current}, but the store's queries are "
            f"written for revision {SCHEMA_VERSION}: papergym's install is inconsistent"
        )
    return SCHEMA_VERSION


# --------------------------------------------------------------------------------------------------
# URLs and engines
# --------------------------------------------------------------------------------------------------


def _user_data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("papergym"))


def default_url() -> str:
    """``$PAPERGYM_DB`` (a URL, or a file path meaning an SQLite file), else the user-data SQLite file."""
    env = os.environ.get("PAPERGYM_DB", "").strip()
    if env:
        return env if "://" in env else f"sqlite:///{Path(env).expanduser().resolve()}"
    return f"sqlite:///{_user_data_dir() / 'leaderboard.db'}"


def _mask(url: str) -> str:
    """``url`` with any ``user:password@`` password replaced by ``***`` (for error messages)."""
    return re.sub(r"(://[^/:@]*:)[^@/]*@", r"\1***@", url)


def _parse_url(url: str) -> sa.URL:
    if not isinstance(url, str) or "://" not in url:
        shown = _mask(url) if isinstance(url, str) else url
        raise ValueError(
            f"bad leaderboard database URL {shown!r}: expected sqlite:///<file> or "
            "postgresql+psycopg://user:password@host/database"
        )
    try:
        parsed = sa.make_url(url)
    except (sa.exc.ArgumentError, ValueError):  # ValueError: e.g. a bad port
        raise ValueError(
            f"bad leaderboard database URL {_mask(url)!r}: cannot be parsed; expected "
            "sqlite:///<file> or postgresql+psycopg://user:password@host/database"
        ) from None
    backend, driver = parsed.get_backend_name(), parsed.get_driver_name()
    if backend == "postgres":
        backend = "postgresql"
    if backend == "sqlite" and parsed.drivername in ("sqlite", "sqlite+pysqlite"):
        return parsed.set(drivername="sqlite+pysqlite")
    if backend == "postgresql" and parsed.drivername in ("postgresql", "postgres", "postgresql+psycopg"):
        return parsed.set(drivername="postgresql+psycopg")
    raise ValueError(
        f"bad leaderboard database URL {parsed.render_as_string(hide_password=True)!r}: "
        f"unsupported database/driver {parsed.drivername!r} (driver {driver!r}); use "
        "sqlite:///<file> or postgresql+psycopg://..."
    )


def _sqlite_engine(url: sa.URL) -> Engine:
    database = url.database
    memory = not database or database == ":memory:" or database.startswith("file::memory:")
    if not memory:
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    kwargs: dict[str, Any] = {"connect_args": {"timeout": SQLITE_BUSY_TIMEOUT_S}}
    if memory:  # one shared connection, or every checkout would see a new empty database
        kwargs["poolclass"] = sa.pool.StaticPool
        kwargs["connect_args"]["check_same_thread"] = False
    engine = sa.create_engine(url, **kwargs)

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, connection_record):
        # Take transaction control away from pysqlite (the begin hook below emits BEGIN itself).
        dbapi_connection.isolation_level = None
        cur = dbapi_connection.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        cur.execute("PRAGMA foreign_keys = ON")
        if not memory:
            _enable_wal(cur)
        cur.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn):
        # Writes take the write lock up front (waiting under the busy timeout); reads take a snapshot.
        read_only = conn.get_execution_options().get("papergym_read_only", False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    return engine


def _enable_wal(cur) -> None:
    """Put the database in WAL mode (persistent in the file), retrying while another connection holds it.

    Switching the journal mode needs an exclusive lock, and SQLite answers "database is locked" at once,
    without its busy handler, when several processes open a fresh database together; so the switch is
    retried with a short backoff for up to the busy timeout. Once the file is in WAL mode nothing is
    switched and no lock is needed.
    """
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    delay = 0.005
    while True:
        try:
            if str(cur.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
                return
            cur.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            transient = "locked" in str(exc) or "busy" in str(exc)
            if not transient or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(2 * delay, 0.25)


def _postgres_engine(url: sa.URL) -> Engine:
    if find_spec("psycopg") is None:
        raise ModuleNotFoundError(
            "a PostgreSQL leaderboard needs psycopg 3: pip install 'papergym[postgres]'", name="psycopg"
        )
    return sa.create_engine(url, pool_pre_ping=True)


# --------------------------------------------------------------------------------------------------
# value helpers
# --------------------------------------------------------------------------------------------------

_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _dumps(value: Any, field: str) -> str:
    """Strict JSON of a mapping (:func:`papergym.canonical.canonical_json`): non-finite floats as
    ``"NaN"`` / ``"Infinity"`` / ``"-Infinity"``, str or int keys, ``json.dumps``'s default separators;
    anything else raises ``ValueError`` naming the field."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{field} must be a mapping, got {type(value).__name__}")
    return canonical_json(value, nonfinite="name", compact=False, strict_keys=True, where=field)


def _loads_metrics(text: str) -> dict[str, float]:
    raw = json.loads(text)
    return {k: (math.nan if v is None else _NONFINITE[v] if isinstance(v, str) else float(v)) for k, v in raw.items()}


def _clean_text(value: str, *, head: int | None = None, tail: int | None = None) -> str:
    value = value.encode("utf-8", "surrogatepass").decode("utf-8", "replace").replace("\x00", "\ufffd")
    if head is not None and len(value) > head:
        value = value[:head]
    if tail is not None and len(value) > tail:
        value = value[-tail:]
    return value


def _check_str(
    value: Any, field: str, *, allowed: Sequence[str] | None = None, empty: bool = False, max_len: int | None = 200
) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{field} must be a string, got {type(value).__name__} {value!r}")
    if allowed is not None and value not in allowed:
        raise ValueError(f"{field} {value!r} is not one of {', '.join(allowed)}")
    if not empty and not value.strip():
        raise ValueError(f"{field} must not be empty")
    if max_len is not None and len(value) > max_len:
        raise ValueError(f"{field} is longer than {max_len} characters")
    return _clean_text(value)


_SHA256 = re.compile(r"[0-9a-f]{64}")
_RUN_KEYS_REQUIRED = ("split", "stratum", "seed_index", "status", "metrics")
_RUN_KEYS_OPTIONAL = ("wall_seconds", "cpu_seconds", "curve", "error")


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "_"


def _chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    ids = list(ids)
    for i in range(0, len(ids), _IN_CHUNK):
        yield ids[i : i + _IN_CHUNK]


def _clock(conn: Connection) -> datetime:
    """The time leases and quotas are measured on: the PostgreSQL server's clock (workers on several
    machines then agree), the local clock for SQLite (its file is on this machine)."""
    if conn.dialect.name == "postgresql":
        return conn.execute(sa.text("SELECT clock_timestamp()")).scalar_one().astimezone(UTC)
    return _now()


def _upsert_ignore(conn: Connection, table: sa.Table, index_elements: list[str]):
    """``INSERT ... ON CONFLICT (index_elements) DO NOTHING`` in the connection's dialect."""
    if conn.dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    else:
        from sqlalchemy.dialects.postgresql import insert
    return insert(table).on_conflict_do_nothing(index_elements=index_elements)


def _pg_key(*parts: str) -> int:
    """A signed 64-bit PostgreSQL advisory-lock key derived from ``parts``."""
    digest = hashlib.sha256("\x1f".join(("papergym", *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _curve_blob(curve: pd.DataFrame) -> tuple[str, bytes]:
    """``(sha256 hex, parquet bytes)`` of a curve (zstd-compressed by pyarrow)."""
    buffer = io.BytesIO()
    curve.to_parquet(buffer, compression="zstd")
    data = buffer.getvalue()
    return hashlib.sha256(data).hexdigest(), data


def _token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def _check_lease(lease_seconds: Any) -> timedelta:
    return timedelta(seconds=positive_float(lease_seconds, "lease_seconds"))


# --------------------------------------------------------------------------------------------------
# the store
# --------------------------------------------------------------------------------------------------


class Store:
    """A leaderboard database (module docstring for the tables and conventions).

    Parameters
    ----------
    url
        ``sqlite:///<file>`` or ``postgresql+psycopg://user:password@host/database``; ``None`` means
        :func:`default_url` (``$PAPERGYM_DB`` or the user-data SQLite file). The schema is migrated on open.
    curves_dir
        Folder of the curve parquet files of runs stored before revision 0002 (``runs.curve_path``);
        new curves live in the database. Default: ``<db folder>/curves`` for an SQLite file,
        ``<platformdirs.user_data_dir("papergym")>/curves`` otherwise.

    Attributes
    ----------
    url : str
        The URL with its password masked (safe to print).
    dialect : str
        ``"sqlite"`` or ``"postgresql"``.
    curves_dir : pathlib.Path

    Examples
    --------
    >>> with Store("sqlite:///board.db") as store:          # doctest: +SKIP
    ...     store.register_benchmark("NonStatLipschitz-v0", "env", "3f2a", {"metric": "R_T"})
    """

    def __init__(self, url: str | None = None, *, curves_dir: str | os.PathLike | None = None):
        parsed = _parse_url(default_url() if url is None else url)
        self.dialect: str = parsed.get_backend_name()
        self.url: str = parsed.render_as_string(hide_password=True)
        if self.dialect == "sqlite":
            self._engine = _sqlite_engine(parsed)
            database = parsed.database
            on_disk = database and database != ":memory:" and not database.startswith("file::memory:")
            default_curves = (
                Path(database).expanduser().resolve().parent / "curves" if on_disk else _user_data_dir() / "curves"
            )
        else:
            self._engine = _postgres_engine(parsed)
            default_curves = _user_data_dir() / "curves"
        self.curves_dir: Path = Path(curves_dir).expanduser().resolve() if curves_dir is not None else default_curves
        try:
            migrate(self._engine)
        except BaseException:
            self._engine.dispose()
            raise

    # -- lifetime ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Release every pooled connection (the store is unusable afterwards)."""
        self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    __str__ = __repr__

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self._engine.connect() as conn:
            conn.execution_options(papergym_read_only=True)
            with conn.begin():
                yield conn

    def _write(self):
        return self._engine.begin()

    def schema_version(self) -> str:
        """The database's Alembic revision (:data:`SCHEMA_VERSION` once opened)."""
        with self._read() as conn:
            revisions = _alembic_revisions(conn) or []
        return ",".join(revisions)

    # -- benchmarks --------------------------------------------------------------------------------
    def register_benchmark(self, benchmark_id: str, kind: str, version: str, spec: Mapping) -> int:
        """Record a version of an env (``kind="env"``) or task (``"task"``); return its row id.

        Idempotent: registering the same (benchmark_id, version) again returns the existing id. A
        different ``kind`` or ``spec`` for an existing version raises ``ValueError`` (a changed spec needs
        a new version string).
        """
        benchmark_id = _check_str(benchmark_id, "benchmark_id")
        kind = _check_str(kind, "kind", allowed=BENCHMARK_KINDS)
        version = _check_str(version, "version")
        spec_json = _dumps(spec, "spec")
        row = {
            "benchmark_id": benchmark_id,
            "kind": kind,
            "version": version,
            "spec_json": spec_json,
            "created_at": _now(),
        }
        if self.dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        else:
            from sqlalchemy.dialects.postgresql import insert
        stmt = insert(T_BENCHMARKS).values(**row).on_conflict_do_nothing(index_elements=["benchmark_id", "version"])
        with self._write() as conn:
            conn.execute(stmt)
            existing = conn.execute(
                sa.select(T_BENCHMARKS.c.id, T_BENCHMARKS.c.kind, T_BENCHMARKS.c.spec_json).where(
                    T_BENCHMARKS.c.benchmark_id == benchmark_id, T_BENCHMARKS.c.version == version
                )
            ).one()
        if existing.kind != kind:
            raise ValueError(
                f"benchmark {benchmark_id!r} version {version!r} is registered as kind {existing.kind!r}, not {kind!r}"
            )
        if existing.spec_json != spec_json:
            raise ValueError(
                f"benchmark {benchmark_id!r} version {version!r} is already registered with a "
                "different spec: a changed spec needs a new version string"
            )
        return int(existing.id)

    def benchmarks(self) -> pd.DataFrame:
        """Every registered version: ``id, benchmark_id, kind, version, spec`` (dict), ``created_at``."""
        with self._read() as conn:
            rows = conn.execute(sa.select(T_BENCHMARKS).order_by(T_BENCHMARKS.c.id)).all()
        records = [
            {
                "id": r.id,
                "benchmark_id": r.benchmark_id,
                "kind": r.kind,
                "version": r.version,
                "spec": json.loads(r.spec_json),
                "created_at": r.created_at,
            }
            for r in rows
        ]
        df = pd.DataFrame.from_records(records, columns=list(BENCHMARK_COLUMNS))
        df["created_at"] = pd.to_datetime(df["created_at"], utc=True)
        return df.astype({"id": "int64"})

    def latest_version(self, benchmark_id: str) -> str | None:
        """The most recently registered version of ``benchmark_id``, or ``None`` if it has none."""
        with self._read() as conn:
            row = conn.execute(
                sa.select(T_BENCHMARKS.c.version)
                .where(T_BENCHMARKS.c.benchmark_id == benchmark_id)
                .order_by(T_BENCHMARKS.c.created_at.desc(), T_BENCHMARKS.c.id.desc())
                .limit(1)
            ).first()
        return None if row is None else row[0]

    # -- submissions -------------------------------------------------------------------------------
    def _submission_row(
        self,
        *,
        benchmark_id: str,
        name: str,
        author: str,
        kind: str,
        role: str,
        entry: str,
        code_sha256: str,
        hyperparameters: Mapping,
        package_versions: Mapping,
        sandbox: str,
        split: str,
    ) -> dict[str, Any]:
        row = {
            "benchmark_id": _check_str(benchmark_id, "benchmark_id"),
            "name": _check_str(name, "name"),
            "author": _check_str(author, "author", empty=True),
            "kind": _check_str(kind, "kind", allowed=SUBMISSION_KINDS),
            "role": _check_str(role, "role", allowed=ROLES),
            "entry": _check_str(entry, "entry", max_len=1000),
            "code_sha256": _check_str(code_sha256, "code_sha256"),
            "hyperparameters_json": _dumps(hyperparameters, "hyperparameters"),
            "package_versions_json": _dumps(package_versions, "package_versions"),
            "sandbox": _check_str(sandbox, "sandbox", empty=True, max_len=64),
            "split": _check_str(split, "split", allowed=SUBMISSION_SPLITS),
            "message": "",
            "stderr_tail": "",
            "attempts": 0,
        }
        if not _SHA256.fullmatch(row["code_sha256"]):
            raise ValueError(f"code_sha256 {code_sha256!r} is not 64 lowercase hex digits")
        return row

    @staticmethod
    def _benchmark_row_id(conn: Connection, benchmark_id: str, version: str) -> int:
        bench = conn.execute(
            sa.select(T_BENCHMARKS.c.id).where(
                T_BENCHMARKS.c.benchmark_id == benchmark_id, T_BENCHMARKS.c.version == version
            )
        ).first()
        if bench is None:
            raise LookupError(
                f"benchmark {benchmark_id!r} version {version!r} is not registered (Store.register_benchmark first)"
            )
        return int(bench.id)

    def create_submission(
        self,
        *,
        benchmark_id: str,
        version: str,
        name: str,
        author: str,
        kind: str,
        role: str,
        entry: str,
        code_sha256: str,
        hyperparameters: Mapping,
        package_versions: Mapping,
        sandbox: str,
        split: str = "test",
        worker_id: str | None = None,
        lease_seconds: float | None = None,
    ) -> int:
        """Record a new submission with status ``running``; return its id.

        For a submission evaluated right here (local ``papergym submit``, the registry's references).
        ``split`` is one of :data:`SUBMISSION_SPLITS`. The (benchmark_id, version) must be registered
        (:meth:`register_benchmark`), else ``LookupError``. The name is recorded in ``board_names`` for
        ``author`` when nobody owns it yet on the board, but never refused here: ownership is enforced
        where outsiders submit (:meth:`enqueue_submission`).

        With ``worker_id`` and ``lease_seconds`` the row runs under a lease like a claimed job: the
        evaluating process renews it with :meth:`heartbeat`; if the process dies (even by SIGKILL) the
        lease expires and :meth:`requeue_expired` ends the row as ``error`` instead of leaving it
        ``running`` forever (there is no stored code to evaluate again).
        """
        row = self._submission_row(
            benchmark_id=benchmark_id,
            name=name,
            author=author,
            kind=kind,
            role=role,
            entry=entry,
            code_sha256=code_sha256,
            hyperparameters=hyperparameters,
            package_versions=package_versions,
            sandbox=sandbox,
            split=split,
        )
        _check_str(sandbox, "sandbox", max_len=64)
        version = _check_str(version, "version")
        if (worker_id is None) != (lease_seconds is None):
            raise ValueError("worker_id and lease_seconds go together: give both (a leased row) or neither")
        lease = None if lease_seconds is None else _check_lease(lease_seconds)
        owner = None if worker_id is None else _check_str(worker_id, "worker_id")
        with self._write() as conn:
            bench_row = self._benchmark_row_id(conn, row["benchmark_id"], version)
            now = _clock(conn)
            if lease is not None:
                row |= {
                    "lease_owner": owner,
                    "lease_expires_at": now + lease,
                    "heartbeat_at": now,
                    "started_at": now,
                    "attempts": 1,
                }
            conn.execute(
                _upsert_ignore(conn, T_BOARD_NAMES, ["benchmark_id", "name"]).values(
                    benchmark_id=row["benchmark_id"], name=row["name"], author=row["author"], created_at=now
                )
            )
            result = conn.execute(
                T_SUBMISSIONS.insert()
                .values(benchmark_version=bench_row, status="running", created_at=now, **row)
                .returning(T_SUBMISSIONS.c.id)
            )
            return int(result.scalar_one())

    def finish_submission(
        self,
        submission_id: int,
        status: str,
        *,
        message: str = "",
        stderr_tail: str = "",
        wall_seconds: float | None = None,
        cpu_seconds: float | None = None,
    ) -> None:
        """Set a submission's final status (one of :data:`FINAL_STATUSES`), message, stderr tail, times
        and ``finished_at``; clear its lease, if any."""
        values = {
            "status": _check_str(status, "status", allowed=FINAL_STATUSES),
            "message": _clean_text(_check_str(message, "message", empty=True, max_len=None), head=MESSAGE_MAX_CHARS),
            "stderr_tail": _clean_text(
                _check_str(stderr_tail, "stderr_tail", empty=True, max_len=None), tail=STDERR_TAIL_MAX_CHARS
            ),
            "wall_seconds": positive_float(wall_seconds, "wall_seconds", allow_zero=True, allow_none=True),
            "cpu_seconds": positive_float(cpu_seconds, "cpu_seconds", allow_zero=True, allow_none=True),
            "lease_owner": None,
            "lease_expires_at": None,
        }
        with self._write() as conn:
            n = conn.execute(
                T_SUBMISSIONS.update()
                .where(T_SUBMISSIONS.c.id == int(submission_id))
                .values(finished_at=_clock(conn), **values)
            ).rowcount
        if n != 1:
            raise LookupError(f"no submission with id {submission_id!r}")

    def delete_submission(self, submission_id: int) -> None:
        """Delete a submission and its runs (e.g. before a reference is re-scored), the curves no other
        run uses, and the legacy curve files of its runs. Its name stays its author's on the board."""
        submission_id = int(submission_id)
        with self._write() as conn:
            if conn.dialect.name == "postgresql":  # no curve writer may reference a curve collected here
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_CURVES_LOCK})
            bench = conn.execute(
                sa.select(T_SUBMISSIONS.c.benchmark_id).where(T_SUBMISSIONS.c.id == submission_id)
            ).first()
            if bench is None:
                raise LookupError(f"no submission with id {submission_id!r}")
            refs = conn.execute(
                sa.select(T_RUNS.c.curve_path, T_RUNS.c.curve_sha256).where(T_RUNS.c.submission_id == submission_id)
            ).all()
            paths = [r.curve_path for r in refs if r.curve_path is not None]
            shas = sorted({r.curve_sha256 for r in refs if r.curve_sha256 is not None})
            conn.execute(T_RUNS.delete().where(T_RUNS.c.submission_id == submission_id))
            conn.execute(T_SUBMISSIONS.delete().where(T_SUBMISSIONS.c.id == submission_id))
            still_used = sa.exists().where(T_RUNS.c.curve_sha256 == T_CURVES.c.sha256)
            for chunk in (shas[i : i + _IN_CHUNK] for i in range(0, len(shas), _IN_CHUNK)):
                conn.execute(T_CURVES.delete().where(T_CURVES.c.sha256.in_(chunk), ~still_used))
        for path in paths:
            self._curve_file(path).unlink(missing_ok=True)
        folder = self.curves_dir / _safe_name(bench.benchmark_id) / str(submission_id)
        try:
            folder.rmdir()
        except OSError:
            pass

    # every column of submissions but the code bytes
    _SUB_COLS = tuple(c for c in T_SUBMISSIONS.c if c.name != "code")

    @staticmethod
    def _submission_record(r: Any) -> dict[str, Any]:
        return {
            "submission_id": r.id,
            "benchmark_id": r.benchmark_id,
            "version": r.version,
            "benchmark_version": r.benchmark_version,
            "name": r.name,
            "author": r.author,
            "kind": r.kind,
            "role": r.role,
            "entry": r.entry,
            "code_sha256": r.code_sha256,
            "hyperparameters": json.loads(r.hyperparameters_json),
            "package_versions": json.loads(r.package_versions_json),
            "sandbox": r.sandbox,
            "status": r.status,
            "message": r.message,
            "stderr_tail": r.stderr_tail,
            "created_at": r.created_at,
            "finished_at": r.finished_at,
            "wall_seconds": r.wall_seconds,
            "cpu_seconds": r.cpu_seconds,
            "split": r.split,
        }

    def submissions(
        self,
        benchmark_id: str | None = None,
        *,
        version: str | None = None,
        split: str | None = None,
        latest_only: bool = False,
    ) -> pd.DataFrame:
        """One row per submission, ordered by id (columns: :data:`SUBMISSION_COLUMNS`).

        ``hyperparameters`` and ``package_versions`` are dicts, ``version`` the benchmark version string,
        ``benchmark_version`` its row id, ``split`` the submission's (:data:`SUBMISSION_SPLITS`; ``split=``
        keeps one). ``latest_only`` keeps, per (benchmark_id, version, name, author, split), only the most
        recently created submission among the finished ones (status not ``queued`` or ``running``), so a
        validation submission never hides its author's test entry.
        """
        s, b = T_SUBMISSIONS, T_BENCHMARKS
        query = sa.select(*self._SUB_COLS, b.c.version).join(b, b.c.id == s.c.benchmark_version).order_by(s.c.id)
        if benchmark_id is not None:
            query = query.where(s.c.benchmark_id == benchmark_id)
        if version is not None:
            query = query.where(b.c.version == version)
        if split is not None:
            query = query.where(s.c.split == _check_str(split, "split", allowed=SUBMISSION_SPLITS))
        with self._read() as conn:
            rows = conn.execute(query).all()
        df = pd.DataFrame.from_records([self._submission_record(r) for r in rows], columns=list(SUBMISSION_COLUMNS))
        if latest_only and len(df):
            df = df[~df["status"].isin(("queued", "running"))]
            df = df.drop_duplicates(["benchmark_id", "version", "name", "author", "split"], keep="last")
        df = df.reset_index(drop=True)
        for col in ("created_at", "finished_at"):
            df[col] = pd.to_datetime(df[col], utc=True)
        for col in ("wall_seconds", "cpu_seconds"):
            df[col] = df[col].astype("float64")
        return df.astype({"submission_id": "int64", "benchmark_version": "int64"})

    def submission(self, submission_id: int) -> dict[str, Any] | None:
        """One submission as a dict, or ``None`` if there is none with that id.

        The keys of :data:`SUBMISSION_COLUMNS` and the job's ``code_name``, ``attr``, ``attempts``,
        ``lease_owner``, ``lease_expires_at``, ``heartbeat_at``, ``started_at``; never the code bytes
        (:meth:`job_code`). Times are timezone-aware UTC ``datetime`` (or ``None``).
        """
        s, b = T_SUBMISSIONS, T_BENCHMARKS
        with self._read() as conn:
            r = conn.execute(
                sa.select(*self._SUB_COLS, b.c.version)
                .join(b, b.c.id == s.c.benchmark_version)
                .where(s.c.id == int(submission_id))
            ).first()
        if r is None:
            return None
        return self._submission_record(r) | {
            "code_name": r.code_name,
            "attr": r.attr,
            "attempts": int(r.attempts),
            "lease_owner": r.lease_owner,
            "lease_expires_at": r.lease_expires_at,
            "heartbeat_at": r.heartbeat_at,
            "started_at": r.started_at,
        }

    def job_code(self, submission_id: int) -> bytes:
        """The submitted file's bytes of a queued submission (``LookupError`` if there is no such
        submission or it has no stored code: a registry reference or a submission evaluated locally)."""
        with self._read() as conn:
            row = conn.execute(sa.select(T_SUBMISSIONS.c.code).where(T_SUBMISSIONS.c.id == int(submission_id))).first()
        if row is None:
            raise LookupError(f"no submission with id {submission_id!r}")
        if row.code is None:
            raise LookupError(
                f"submission {submission_id} has no stored code (a registry reference or a "
                "submission evaluated where it was submitted)"
            )
        return bytes(row.code)

    # -- runs ----------------------------------------------------------------------------------------
    def _validate_runs(self, runs: Sequence[Mapping]) -> list[dict[str, Any]]:
        if isinstance(runs, Mapping) or not isinstance(runs, Sequence):
            raise ValueError(f"runs must be a sequence of mappings, got {type(runs).__name__}")
        out, seen = [], set()
        for i, run in enumerate(runs):
            where = f"runs[{i}]"
            if not isinstance(run, Mapping):
                raise ValueError(f"{where} must be a mapping, got {type(run).__name__}")
            missing = [k for k in _RUN_KEYS_REQUIRED if k not in run]
            unknown = sorted(set(run) - set(_RUN_KEYS_REQUIRED) - set(_RUN_KEYS_OPTIONAL))
            if missing:
                raise ValueError(f"{where} lacks {', '.join(missing)}")
            if unknown:
                raise ValueError(f"{where} has unknown field(s) {', '.join(map(str, unknown))}")
            seed_index = positive_int(run["seed_index"], f"{where}.seed_index", 0)
            metrics = run["metrics"]
            if not isinstance(metrics, Mapping):
                raise ValueError(f"{where}.metrics must be a mapping of metric name -> float")
            clean_metrics: dict[str, float] = {}
            for k, v in metrics.items():
                if not isinstance(k, str) or not k:
                    raise ValueError(f"{where}.metrics: name {k!r} is not a non-empty string")
                if k in RUN_COLUMNS:
                    raise ValueError(f"{where}.metrics: name {k!r} clashes with a column of Store.runs()")
                if v is None:
                    v = math.nan
                if isinstance(v, bool) or not isinstance(v, numbers.Real):
                    raise ValueError(f"{where}.metrics[{k!r}] must be a float, got {v!r}")
                clean_metrics[k] = float(v)
            curve = run.get("curve")
            if curve is not None and not isinstance(curve, pd.DataFrame):
                raise ValueError(f"{where}.curve must be a pandas DataFrame or None, got {type(curve).__name__}")
            error = run.get("error")
            if error is not None and not isinstance(error, str):
                raise ValueError(f"{where}.error must be a string or None, got {type(error).__name__}")
            row = {
                "split": _check_str(run["split"], f"{where}.split", allowed=SPLITS),
                "stratum": _check_str(run["stratum"], f"{where}.stratum"),
                "seed_index": int(seed_index),
                "status": _check_str(run["status"], f"{where}.status", allowed=RUN_STATUSES),
                "metrics_json": _dumps(clean_metrics, f"{where}.metrics"),
                "wall_seconds": positive_float(
                    run.get("wall_seconds"), f"{where}.wall_seconds", allow_zero=True, allow_none=True
                ),
                "cpu_seconds": positive_float(
                    run.get("cpu_seconds"), f"{where}.cpu_seconds", allow_zero=True, allow_none=True
                ),
                "error": None if error is None else _clean_text(error, tail=STDERR_TAIL_MAX_CHARS),
                "curve": curve,
            }
            key = (row["split"], row["stratum"], row["seed_index"])
            if key in seen:
                raise ValueError(f"{where} repeats (split, stratum, seed_index) = {key!r} within the batch")
            seen.add(key)
            out.append(row)
        return out

    def _prepare_runs(self, runs: Sequence[Mapping]) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
        """Validated run rows (their curves replaced by ``curve_sha256``) and the curves' parquet bytes by
        SHA-256: everything that can fail before the database is touched."""
        rows = self._validate_runs(runs)
        blobs: dict[str, bytes] = {}
        for row in rows:
            curve = row.pop("curve")
            row["curve_path"] = row["curve_sha256"] = None
            if curve is not None:
                sha, data = _curve_blob(curve)
                blobs[sha] = data
                row["curve_sha256"] = sha
        return rows, blobs

    def add_runs(self, submission_id: int, runs: Sequence[Mapping]) -> None:
        """Store a batch of runs of a submission, all or nothing.

        Each run is a mapping with ``split`` (``dev`` | ``test``), ``stratum`` (str), ``seed_index``
        (int >= 0), ``status`` (one of :data:`RUN_STATUSES`), ``metrics`` (name -> float; NaN/inf/None
        allowed) and optionally ``wall_seconds``, ``cpu_seconds`` (float >= 0 | None), ``curve`` (a
        DataFrame, stored as zstd parquet bytes in the ``curves`` table under its SHA-256) and ``error``
        (str | None).

        Every run is validated and every curve serialised before anything is written (``ValueError``
        naming the field). The curves and the rows go in one transaction; if it fails -- e.g. a (split,
        stratum, seed_index) the submission already has, which raises ``ValueError`` -- nothing of the
        batch is stored.
        """
        submission_id = int(submission_id)
        rows, blobs = self._prepare_runs(runs)
        if not rows:
            return
        with self._write() as conn:
            if conn.execute(sa.select(T_SUBMISSIONS.c.id).where(T_SUBMISSIONS.c.id == submission_id)).first() is None:
                raise LookupError(f"no submission with id {submission_id!r}")
            self._insert_runs(conn, submission_id, rows, blobs)

    @staticmethod
    def _insert_runs(
        conn: Connection, submission_id: int, rows: list[dict[str, Any]], blobs: Mapping[str, bytes]
    ) -> None:
        """Insert prepared runs (:meth:`_prepare_runs`) and their curves inside the caller's transaction."""
        if not rows:
            return
        r = T_RUNS
        existing = {
            tuple(k)
            for k in conn.execute(
                sa.select(r.c.split, r.c.stratum, r.c.seed_index).where(r.c.submission_id == submission_id)
            )
        }
        dup = [k for k in ((x["split"], x["stratum"], x["seed_index"]) for x in rows) if k in existing]
        if dup:
            raise ValueError(
                f"submission {submission_id} already has run(s) (split, stratum, seed_index) = "
                f"{', '.join(map(repr, dup[:5]))}{' ...' if len(dup) > 5 else ''}"
            )
        if blobs:
            if conn.dialect.name == "postgresql":  # shared: curve writers never wait for each other
                conn.execute(sa.text("SELECT pg_advisory_xact_lock_shared(:k)"), {"k": _PG_CURVES_LOCK})
            now = _clock(conn)
            conn.execute(
                _upsert_ignore(conn, T_CURVES, ["sha256"]),
                [{"sha256": sha, "data": data, "created_at": now} for sha, data in blobs.items()],
            )
        try:
            conn.execute(r.insert(), [{**row, "submission_id": submission_id} for row in rows])
        except sa.exc.IntegrityError as exc:  # a concurrent writer added the same key meanwhile
            raise ValueError(f"submission {submission_id}: runs rejected by the database ({exc.orig})") from exc

    def runs(
        self,
        submission_ids: Sequence[int] | None = None,
        *,
        benchmark_id: str | None = None,
        split: str | None = "test",
    ) -> pd.DataFrame:
        """Runs ordered by (submission_id, stratum, seed_index).

        Columns: :data:`RUN_COLUMNS` (``metrics`` a dict of floats) plus one float column per metric name
        (NaN where a run lacks it). ``curve_path`` is the run's curve reference for :meth:`read_curve`:
        ``"sha256:<hex>"`` for a curve in the database, a path relative to ``curves_dir`` for a run stored
        before revision 0002, ``None`` without a curve. ``split=None`` returns every split. An empty
        result still has the base columns.
        """
        r, s = T_RUNS, T_SUBMISSIONS
        base = sa.select(r).order_by(r.c.submission_id, r.c.stratum, r.c.seed_index, r.c.split)
        if benchmark_id is not None:
            base = base.join(s, s.c.id == r.c.submission_id).where(s.c.benchmark_id == benchmark_id)
        if split is not None:
            base = base.where(r.c.split == _check_str(split, "split", allowed=SPLITS))
        with self._read() as conn:
            if submission_ids is None:
                rows = conn.execute(base).all()
            else:
                ids = sorted({int(i) for i in submission_ids})
                rows = [row for chunk in _chunks(ids) for row in conn.execute(base.where(r.c.submission_id.in_(chunk)))]
        records = [
            {
                "run_id": x.id,
                "submission_id": x.submission_id,
                "split": x.split,
                "stratum": x.stratum,
                "seed_index": x.seed_index,
                "status": x.status,
                "wall_seconds": x.wall_seconds,
                "cpu_seconds": x.cpu_seconds,
                "curve_path": CURVE_REF_PREFIX + x.curve_sha256 if x.curve_sha256 is not None else x.curve_path,
                "error": x.error,
                "metrics": _loads_metrics(x.metrics_json),
            }
            for x in rows
        ]
        df = pd.DataFrame.from_records(records, columns=list(RUN_COLUMNS))
        if submission_ids is not None and len(df):
            df = df.sort_values(["submission_id", "stratum", "seed_index", "split"], kind="stable")
        df = df.reset_index(drop=True)
        names = sorted({k for m in df["metrics"] for k in m})
        for name in names:
            df[name] = np.array([m.get(name, math.nan) for m in df["metrics"]], dtype=float)
        return df.astype(
            {
                "run_id": "int64",
                "submission_id": "int64",
                "seed_index": "int64",
                "wall_seconds": "float64",
                "cpu_seconds": "float64",
            }
        )

    # -- curves ---------------------------------------------------------------------------------------
    def _curve_file(self, curve_path: str) -> Path:
        path = Path(curve_path)
        return path if path.is_absolute() else self.curves_dir / path

    def read_curve(self, curve_path: str) -> pd.DataFrame:
        """The curve DataFrame of a run, from its ``curve_path`` as in :meth:`runs`: ``"sha256:<hex>"``
        is read from the database (``LookupError`` if absent), anything else is a legacy parquet file
        relative to ``curves_dir`` (``FileNotFoundError`` if missing)."""
        if not isinstance(curve_path, str) or not curve_path:
            raise ValueError(f"curve_path must be a non-empty string, got {curve_path!r}")
        if curve_path.startswith(CURVE_REF_PREFIX):
            match = _CURVE_REF_RE.fullmatch(curve_path)
            if match is None:
                raise ValueError(f"bad curve reference {curve_path!r}: expected sha256:<64 lowercase hex digits>")
            with self._read() as conn:
                data = conn.execute(
                    sa.select(T_CURVES.c.data).where(T_CURVES.c.sha256 == match.group(1))
                ).scalar_one_or_none()
            if data is None:
                raise LookupError(f"curve {curve_path} is not in the database {self.url}")
            return pd.read_parquet(io.BytesIO(bytes(data)))
        path = self._curve_file(curve_path)
        if not path.is_file():
            raise FileNotFoundError(f"curve file {path} is missing (curves_dir {self.curves_dir})")
        return pd.read_parquet(path)

    # -- authors and API tokens -----------------------------------------------------------------------
    def create_token(self, author: str) -> str:
        """A new API token for ``author`` (created in ``authors`` if new); returns the plaintext.

        The token is ``"pgt_" + secrets.token_urlsafe(32)``; only its SHA-256 and its first 8 characters
        (for display) are stored, so the plaintext returned here is the only copy. An author may hold
        several tokens at once.
        """
        author = _check_str(author, "author")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self._write() as conn:
            now = _clock(conn)
            conn.execute(_upsert_ignore(conn, T_AUTHORS, ["name"]).values(name=author, created_at=now))
            author_id = conn.execute(sa.select(T_AUTHORS.c.id).where(T_AUTHORS.c.name == author)).scalar_one()
            conn.execute(
                T_API_TOKENS.insert().values(
                    author_id=author_id, token_sha256=_token_sha256(token), prefix=token[:8], created_at=now
                )
            )
        return token

    def revoke_tokens(self, author: str) -> int:
        """Revoke every active token of ``author``; return how many (``LookupError`` for an unknown author)."""
        author = _check_str(author, "author")
        with self._write() as conn:
            author_id = conn.execute(sa.select(T_AUTHORS.c.id).where(T_AUTHORS.c.name == author)).scalar_one_or_none()
            if author_id is None:
                raise LookupError(f"no author {author!r} (Store.create_token creates authors)")
            return int(
                conn.execute(
                    T_API_TOKENS.update()
                    .where(T_API_TOKENS.c.author_id == author_id, T_API_TOKENS.c.revoked_at.is_(None))
                    .values(revoked_at=_clock(conn))
                ).rowcount
            )

    def author_for_token(self, token: str) -> str | None:
        """The author an API token belongs to; ``None`` for an unknown, revoked or malformed token.

        Looks the token up by its SHA-256 and records ``last_used_at`` (at most once a minute per token,
        so authenticated reads do not each cost a write).
        """
        if not isinstance(token, str) or not _TOKEN_RE.fullmatch(token):
            return None
        t, a = T_API_TOKENS, T_AUTHORS
        with self._read() as conn:
            row = conn.execute(
                sa.select(t.c.id, t.c.revoked_at, t.c.last_used_at, a.c.name)
                .join(a, a.c.id == t.c.author_id)
                .where(t.c.token_sha256 == _token_sha256(token))
            ).first()
            now = _clock(conn)
        if row is None or row.revoked_at is not None:
            return None
        if row.last_used_at is None or (now - row.last_used_at).total_seconds() >= _TOKEN_TOUCH_S:
            with self._write() as conn:
                conn.execute(t.update().where(t.c.id == row.id).values(last_used_at=_clock(conn)))
        return row.name

    def authors(self) -> pd.DataFrame:
        """Every author, ordered by id: :data:`AUTHOR_COLUMNS` (``active_tokens`` counts the unrevoked
        tokens, ``last_used_at`` is the latest use of any of the author's tokens)."""
        t, a = T_API_TOKENS, T_AUTHORS
        active = sa.func.count(t.c.id).filter(t.c.revoked_at.is_(None))
        query = (
            sa.select(
                a.c.id,
                a.c.name,
                a.c.created_at,
                active.label("active_tokens"),
                sa.func.max(t.c.last_used_at).label("last_used_at"),
            )
            .select_from(a.outerjoin(t, t.c.author_id == a.c.id))
            .group_by(a.c.id, a.c.name, a.c.created_at)
            .order_by(a.c.id)
        )
        with self._read() as conn:
            rows = conn.execute(query).all()
        df = pd.DataFrame.from_records(
            [
                {
                    "author_id": r.id,
                    "name": r.name,
                    "created_at": r.created_at,
                    "active_tokens": r.active_tokens,
                    "last_used_at": r.last_used_at,
                }
                for r in rows
            ],
            columns=list(AUTHOR_COLUMNS),
        )
        for col in ("created_at", "last_used_at"):
            df[col] = pd.to_datetime(df[col], utc=True)
        return df.astype({"author_id": "int64", "active_tokens": "int64"})

    # -- names ------------------------------------------------------------------------------------------
    def claim_name(self, benchmark_id: str, name: str, author: str) -> None:
        """Make ``name`` on board ``benchmark_id`` ``author``'s, or check that it is already theirs.

        A name belongs to the first author that used it on the board (the registry's references are the
        author ``"papergym"``); :class:`NameTaken` if it is another author's.
        """
        benchmark_id = _check_str(benchmark_id, "benchmark_id")
        name, author = _check_str(name, "name"), _check_str(author, "author")
        with self._write() as conn:
            self._claim_name(conn, benchmark_id, name, author)

    @staticmethod
    def _claim_name(conn: Connection, benchmark_id: str, name: str, author: str) -> None:
        bn = T_BOARD_NAMES
        conn.execute(
            _upsert_ignore(conn, bn, ["benchmark_id", "name"]).values(
                benchmark_id=benchmark_id, name=name, author=author, created_at=_clock(conn)
            )
        )
        owner = conn.execute(
            sa.select(bn.c.author).where(bn.c.benchmark_id == benchmark_id, bn.c.name == name)
        ).scalar_one()
        if owner != author:
            raise NameTaken(
                f"the name {name!r} on board {benchmark_id} belongs to author {owner!r}, who used it "
                f"first; {author!r} must submit under another name"
            )

    # -- the job queue ------------------------------------------------------------------------------------
    def enqueue_submission(
        self,
        *,
        benchmark_id: str,
        version: str,
        name: str,
        author: str,
        kind: str,
        split: str,
        code: bytes,
        code_name: str,
        attr: str,
        hyperparameters: Mapping,
        package_versions: Mapping,
        test_quota_per_day: int | None,
    ) -> int:
        """Queue a submitted file for evaluation by a worker; return the submission id.

        One write transaction: the (benchmark_id, version) must be registered (``LookupError``; nothing
        is registered here); the name is claimed for ``author`` (:class:`NameTaken`); on the ``test``
        split the author's test submissions to this board in the last 24 hours, whatever their status,
        are counted against ``test_quota_per_day`` (:class:`QuotaExceeded`; ``None`` = no limit;
        ``validation`` and ``local`` are never limited); then the row is inserted with status
        ``queued``, role ``submission``, ``entry = "<code_name>:<attr>"`` and the code's SHA-256.
        """
        if not isinstance(code, (bytes, bytearray, memoryview)) or not len(code):
            raise ValueError(f"code must be the submitted file's bytes (non-empty), got {type(code).__name__}")
        code = bytes(code)
        code_name = _check_str(code_name, "code_name")
        if "/" in code_name or "\\" in code_name or code_name in (".", ".."):
            raise ValueError(f"code_name {code_name!r} must be a file name, without a folder")
        attr = _check_str(attr, "attr")
        if not attr.isidentifier():
            raise ValueError(f"attr {attr!r} is not a Python identifier (the factory's name in {code_name})")
        if test_quota_per_day is not None:
            positive_int(test_quota_per_day, "test_quota_per_day", 0)
        row = self._submission_row(
            benchmark_id=benchmark_id,
            name=name,
            author=_check_str(author, "author"),
            kind=kind,
            role="submission",
            entry=f"{code_name}:{attr}",
            code_sha256=hashlib.sha256(code).hexdigest(),
            hyperparameters=hyperparameters,
            package_versions=package_versions,
            sandbox="",
            split=split,
        )
        row |= {"code": code, "code_name": code_name, "attr": attr}
        version = _check_str(version, "version")
        bid, author = row["benchmark_id"], row["author"]
        s = T_SUBMISSIONS
        with self._write() as conn:
            bench_row = self._benchmark_row_id(conn, bid, version)
            if conn.dialect.name == "postgresql":  # one author's enqueues to one board count in turn
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _pg_key("enqueue", bid, author)})
            self._claim_name(conn, bid, row["name"], author)
            now = _clock(conn)
            if row["split"] == "test" and test_quota_per_day is not None:
                recent = (
                    conn.execute(
                        sa.select(s.c.created_at)
                        .where(
                            s.c.benchmark_id == bid,
                            s.c.author == author,
                            s.c.split == "test",
                            s.c.created_at > now - QUOTA_WINDOW,
                        )
                        .order_by(s.c.created_at)
                    )
                    .scalars()
                    .all()
                )
                quota = int(test_quota_per_day)
                if quota == 0:
                    raise QuotaExceeded(
                        f"board {bid} takes no test submissions (quota 0 a day); submit to the validation split"
                    )
                if len(recent) >= quota:
                    frees = recent[len(recent) - quota] + QUOTA_WINDOW
                    raise QuotaExceeded(
                        f"author {author!r} has made {len(recent)} test submissions to board {bid} in the last "
                        f"24 hours, the quota is {quota} a day; the next one is possible from "
                        f"{frees.isoformat(timespec='seconds')} (validation submissions are not limited)"
                    )
            return int(
                conn.execute(
                    s.insert()
                    .values(benchmark_version=bench_row, status="queued", created_at=now, **row)
                    .returning(s.c.id)
                ).scalar_one()
            )

    def claim_job(self, worker_id: str, lease_seconds: float) -> Job | None:
        """Take the oldest queued job for ``worker_id`` under a lease of ``lease_seconds``; ``None`` if
        the queue is empty.

        The row becomes ``running`` with ``lease_owner = worker_id``, ``lease_expires_at = now +
        lease_seconds``, ``started_at = now`` and ``attempts + 1``. PostgreSQL picks the row with
        ``SELECT ... FOR UPDATE SKIP LOCKED`` (concurrent workers take different jobs without waiting);
        SQLite's ``BEGIN IMMEDIATE`` serialises the claimers.
        """
        owner, lease = _check_str(worker_id, "worker_id"), _check_lease(lease_seconds)
        s, b = T_SUBMISSIONS, T_BENCHMARKS
        with self._read() as conn:  # an idle queue is polled without taking SQLite's write lock
            if conn.execute(sa.select(s.c.id).where(s.c.status == "queued").limit(1)).first() is None:
                return None
        with self._write() as conn:
            sid = conn.execute(
                sa.select(s.c.id)
                .where(s.c.status == "queued", s.c.code.is_not(None))
                .order_by(s.c.id)
                .limit(1)
                .with_for_update(skip_locked=True)
            ).scalar_one_or_none()
            if sid is None:
                return None
            now = _clock(conn)
            conn.execute(
                s.update()
                .where(s.c.id == sid)
                .values(
                    status="running",
                    lease_owner=owner,
                    lease_expires_at=now + lease,
                    heartbeat_at=now,
                    started_at=now,
                    attempts=s.c.attempts + 1,
                )
            )
            r = conn.execute(
                sa.select(s, b.c.version).join(b, b.c.id == s.c.benchmark_version).where(s.c.id == sid)
            ).one()
        return Job(
            submission_id=int(r.id),
            benchmark_id=r.benchmark_id,
            version=r.version,
            name=r.name,
            author=r.author,
            kind=r.kind,
            split=r.split,
            code=bytes(r.code),
            code_name=r.code_name,
            attr=r.attr,
            hyperparameters=json.loads(r.hyperparameters_json),
            attempts=int(r.attempts),
        )

    def heartbeat(self, submission_id: int, worker_id: str, lease_seconds: float) -> bool:
        """Extend ``worker_id``'s lease on a running submission to ``now + lease_seconds``.

        ``False`` when the lease is no longer this worker's: the row is not running, another worker holds
        it, or the lease has already expired (an expired lease is lost even before
        :meth:`requeue_expired` runs, so two workers never both believe they hold a job).
        """
        owner, lease = _check_str(worker_id, "worker_id"), _check_lease(lease_seconds)
        s = T_SUBMISSIONS
        with self._write() as conn:
            now = _clock(conn)
            n = conn.execute(
                s.update()
                .where(
                    s.c.id == int(submission_id),
                    s.c.status == "running",
                    s.c.lease_owner == owner,
                    s.c.lease_expires_at > now,
                )
                .values(lease_expires_at=now + lease, heartbeat_at=now)
            ).rowcount
        return n == 1

    def requeue_expired(self, max_attempts: int = 3) -> list[int]:
        """Deal with the running submissions whose lease has expired; return their ids.

        A job (it has stored code) goes back to ``queued`` -- nothing of the lost attempt was stored,
        since runs are only written by :meth:`complete_job` -- unless it has been claimed
        ``max_attempts`` times: then it ends as ``error`` with a message saying the evaluation was lost
        that many times. A leased row without code (:meth:`create_submission` with a lease: the process
        evaluating it stopped) ends as ``error``.
        """
        positive_int(max_attempts, "max_attempts")
        s = T_SUBMISSIONS
        cleared = {"lease_owner": None, "lease_expires_at": None}
        done: list[int] = []
        with self._read() as conn:  # the usual case, nothing expired, without taking SQLite's write lock
            if (
                conn.execute(
                    sa.select(s.c.id)
                    .where(
                        s.c.status == "running", s.c.lease_expires_at.is_not(None), s.c.lease_expires_at <= _clock(conn)
                    )
                    .limit(1)
                ).first()
                is None
            ):
                return done
        with self._write() as conn:
            now = _clock(conn)
            expired = conn.execute(
                sa.select(
                    s.c.id, s.c.attempts, s.c.lease_owner, s.c.lease_expires_at, s.c.code.is_not(None).label("has_code")
                )
                .where(s.c.status == "running", s.c.lease_expires_at.is_not(None), s.c.lease_expires_at <= now)
                .order_by(s.c.id)
                .with_for_update(skip_locked=True)
            ).all()
            for r in expired:
                if not r.has_code:
                    values = {
                        "status": "error",
                        "finished_at": now,
                        **cleared,
                        "message": (
                            f"the process evaluating this submission ({r.lease_owner}) stopped: its lease expired "
                            f"at {r.lease_expires_at.isoformat(timespec='seconds')} without a heartbeat; "
                            "no run was stored"
                        ),
                    }
                elif r.attempts >= max_attempts:
                    values = {
                        "status": "error",
                        "finished_at": now,
                        **cleared,
                        "message": (
                            f"the evaluation was lost {r.attempts} times (its worker stopped or lost its lease "
                            "each time); it is not retried"
                        ),
                    }
                else:
                    values = {"status": "queued", "heartbeat_at": None, "started_at": None, **cleared}
                conn.execute(s.update().where(s.c.id == r.id, s.c.status == "running").values(**values))
                done.append(int(r.id))
        return done

    def complete_job(self, submission_id: int, worker_id: str, outcome: JobOutcome) -> bool:
        """Store what a worker found, if the job is still ``worker_id``'s; return whether it was stored.

        One transaction, fenced by the lease: only while the row is ``running`` under this worker's
        unexpired lease are every run row (validated as in :meth:`add_runs`, curves included) inserted
        and the status, message, stderr tail, ``finished_at``, seconds and sandbox set, and the lease
        cleared. A worker that lost its lease writes nothing and gets ``False``. An invalid outcome
        raises ``ValueError`` before anything is written.
        """
        owner = _check_str(worker_id, "worker_id")
        if not isinstance(outcome, JobOutcome):
            raise ValueError(f"outcome must be a JobOutcome, got {type(outcome).__name__}")
        values = {
            "status": _check_str(outcome.status, "outcome.status", allowed=FINAL_STATUSES),
            "message": _clean_text(
                _check_str(outcome.message, "outcome.message", empty=True, max_len=None), head=MESSAGE_MAX_CHARS
            ),
            "stderr_tail": _clean_text(
                _check_str(outcome.stderr_tail, "outcome.stderr_tail", empty=True, max_len=None),
                tail=STDERR_TAIL_MAX_CHARS,
            ),
            "wall_seconds": positive_float(
                outcome.wall_seconds, "outcome.wall_seconds", allow_zero=True, allow_none=True
            ),
            "cpu_seconds": positive_float(outcome.cpu_seconds, "outcome.cpu_seconds", allow_zero=True, allow_none=True),
            "sandbox": _check_str(outcome.sandbox, "outcome.sandbox", empty=True, max_len=64),
            "lease_owner": None,
            "lease_expires_at": None,
        }
        rows, blobs = self._prepare_runs(outcome.rows)
        submission_id = int(submission_id)
        s = T_SUBMISSIONS
        with self._write() as conn:
            now = _clock(conn)
            mine = conn.execute(
                sa.select(s.c.id)
                .where(
                    s.c.id == submission_id,
                    s.c.status == "running",
                    s.c.lease_owner == owner,
                    s.c.lease_expires_at > now,
                )
                .with_for_update()
            ).first()
            if mine is None:
                return False
            self._insert_runs(conn, submission_id, rows, blobs)
            conn.execute(s.update().where(s.c.id == submission_id).values(finished_at=now, **values))
        return True
