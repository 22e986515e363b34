"""The leaderboard store: benchmarks (env/task versions), submissions and their runs, in SQL.

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
  advisory lock; benchmark registration uses ``INSERT ... ON CONFLICT DO NOTHING``, so concurrent
  evaluators never collide.

Tables
------
``papergym_schema``
    one row: ``version`` (int), the schema version. :func:`migrate` applies the steps of
    :data:`MIGRATIONS` (a list of functions; step ``i`` brings version ``i - 1`` to ``i``) in one
    transaction. ``Store(...)`` migrates on open; a database with a newer version than this code knows
    raises :class:`SchemaVersionError`.
``benchmarks``
    ``id``, ``benchmark_id`` (e.g. ``"NonStatLipschitz-v0"``), ``kind`` (``env`` | ``task``), ``version``
    (str, a hash), ``spec_json`` (the public spec and the board config), ``created_at``;
    UNIQUE(``benchmark_id``, ``version``).
``submissions``
    ``id``, ``benchmark_version`` (FK ``benchmarks.id``), ``benchmark_id``, ``name``, ``author``, ``kind``
    (``agent`` | ``solver``), ``role`` (``submission`` | ``paper`` | ``baseline`` | ``oracle`` |
    ``reference``), ``entry`` (``"my_agent.py:make_agent"``, ``"registry:mdbe"``), ``code_sha256``,
    ``hyperparameters_json``, ``package_versions_json``, ``sandbox`` (``bwrap``, ``rlimits``,
    ``in-process``...), ``status`` (``running`` | ``ok`` | ``partial`` | ``error`` | ``timeout`` | ``oom`` |
    ``invalid_action``), ``message``, ``stderr_tail``, ``created_at``, ``finished_at``, ``wall_seconds``,
    ``cpu_seconds``.
``runs``
    ``id``, ``submission_id`` (FK ``submissions.id``), ``split`` (``dev`` | ``test``), ``stratum`` (instance
    family / instance name), ``seed_index`` (int >= 0), ``status`` (``ok`` | ``error`` | ``timeout`` |
    ``oom`` | ``invalid_action``), ``metrics_json``, ``wall_seconds``, ``cpu_seconds``, ``curve_path``,
    ``error``; UNIQUE(``submission_id``, ``split``, ``stratum``, ``seed_index``).

Only the seed *index* is stored, never the HMAC secret or a seed derived from it.

Conventions
-----------
* Times are timezone-aware UTC (``datetime`` with ``tzinfo=UTC``; pandas ``datetime64[ns, UTC]``).
* JSON columns are ``TEXT`` holding strict JSON (``sort_keys``). Non-finite floats, which strict JSON
  lacks, are written as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``. In ``metrics_json`` every
  value is a float, so these strings (and ``null``) read back as ``nan`` / ``inf`` / ``-inf`` / ``nan``;
  in the other JSON columns they stay strings. numpy scalars and arrays are stored as numbers and lists.
* Curves are parquet files under ``curves_dir/<benchmark_id>/<submission_id>/``, written atomically
  (temporary file + ``os.replace``) under a unique name; the run row stores the path *relative to*
  ``curves_dir`` (POSIX separators), so a board folder can move. :meth:`Store.read_curve` resolves it.
* Text is cleaned before it is stored: NUL characters (PostgreSQL refuses them) and lone surrogates
  become U+FFFD; ``message`` keeps its first 2,000 characters and ``stderr_tail`` its last 65,536.
* Invalid arguments raise :class:`ValueError` naming the field; unknown benchmarks or submissions raise
  :class:`LookupError`.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Self

import numpy as np
import pandas as pd
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from .ranking import RUN_STATUSES

__all__ = [
    "BENCHMARK_COLUMNS",
    "BENCHMARK_KINDS",
    "MIGRATIONS",
    "ROLES",
    "RUN_COLUMNS",
    "RUN_STATUSES",
    "SCHEMA_VERSION",
    "SPLITS",
    "SUBMISSION_COLUMNS",
    "SUBMISSION_KINDS",
    "SUBMISSION_STATUSES",
    "SchemaVersionError",
    "Store",
    "default_url",
    "migrate",
]

BENCHMARK_KINDS: tuple[str, ...] = ("env", "task")
SUBMISSION_KINDS: tuple[str, ...] = ("agent", "solver")
ROLES: tuple[str, ...] = ("submission", "paper", "baseline", "oracle", "reference")
SUBMISSION_STATUSES: tuple[str, ...] = ("running", "ok", "partial", "error", "timeout", "oom", "invalid_action")
SPLITS: tuple[str, ...] = ("dev", "test")

BENCHMARK_COLUMNS: tuple[str, ...] = ("id", "benchmark_id", "kind", "version", "spec", "created_at")
SUBMISSION_COLUMNS: tuple[str, ...] = (
    "submission_id", "benchmark_id", "version", "benchmark_version", "name", "author", "kind", "role", "entry",
    "code_sha256", "hyperparameters", "package_versions", "sandbox", "status", "message", "stderr_tail",
    "created_at", "finished_at", "wall_seconds", "cpu_seconds",
)
RUN_COLUMNS: tuple[str, ...] = (
    "run_id", "submission_id", "split", "stratum", "seed_index", "status", "wall_seconds", "cpu_seconds",
    "curve_path", "error", "metrics",
)

SQLITE_BUSY_TIMEOUT_S = 30.0
MESSAGE_MAX_CHARS = 2_000
STDERR_TAIL_MAX_CHARS = 65_536
_PG_MIGRATION_LOCK = 0x70617065  # advisory-lock key ("pape")
_IN_CHUNK = 500  # ids per IN (...) clause


class SchemaVersionError(RuntimeError):
    """The database was written by a newer papergym (its schema version is unknown here)."""


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

def _schema_v1(metadata: sa.MetaData) -> dict[str, sa.Table]:
    """The tables of schema version 1 (module docstring)."""
    schema = sa.Table(
        "papergym_schema", metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.CheckConstraint("id = 1", name="papergym_schema_one_row"),
    )
    benchmarks = sa.Table(
        "benchmarks", metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("benchmark_id", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("version", sa.String(200), nullable=False),
        sa.Column("spec_json", sa.Text, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("benchmark_id", "version", name="benchmarks_id_version"),
    )
    submissions = sa.Table(
        "submissions", metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("benchmark_version", sa.Integer, sa.ForeignKey("benchmarks.id"), nullable=False, index=True),
        sa.Column("benchmark_id", sa.String(200), nullable=False, index=True),
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
    )
    runs = sa.Table(
        "runs", metadata,
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
    )
    return {"schema": schema, "benchmarks": benchmarks, "submissions": submissions, "runs": runs}


def _step1(conn: Connection) -> None:
    """Version 0 -> 1: create every table (a private MetaData, so later schema changes leave it as v1)."""
    md = sa.MetaData()
    _schema_v1(md)
    md.create_all(conn)


#: Ordered migration steps: ``MIGRATIONS[i]`` takes a database from version ``i`` to ``i + 1``. Append a
#: function to change the schema; never edit a released step.
MIGRATIONS: list[Callable[[Connection], None]] = [_step1]
SCHEMA_VERSION = len(MIGRATIONS)

# The current schema, used by the queries (update it together with a new migration step).
_METADATA = sa.MetaData()
_T = _schema_v1(_METADATA)
T_SCHEMA, T_BENCHMARKS, T_SUBMISSIONS, T_RUNS = _T["schema"], _T["benchmarks"], _T["submissions"], _T["runs"]


def _read_version(conn: Connection) -> int:
    if not sa.inspect(conn).has_table("papergym_schema"):
        return 0
    row = conn.execute(sa.select(T_SCHEMA.c.version).where(T_SCHEMA.c.id == 1)).first()
    return 0 if row is None else int(row[0])


def migrate(engine: Engine) -> int:
    """Bring the database to :data:`SCHEMA_VERSION`; return the version.

    Runs every missing step of :data:`MIGRATIONS` and the version update in one write transaction
    (``BEGIN IMMEDIATE`` on SQLite, an advisory lock on PostgreSQL), so concurrent openers serialise and
    a failed step leaves the database as it was. A no-op on an up-to-date database.

    Raises
    ------
    SchemaVersionError
        if the database's version is newer than this code's.
    """
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
        version = _read_version(conn)
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"the leaderboard database {engine.url.render_as_string(hide_password=True)} has schema "
                f"version {version}, newer than this papergym's {SCHEMA_VERSION}: upgrade papergym to use it")
        for step in MIGRATIONS[version:]:
            step(conn)
        if version < SCHEMA_VERSION:
            if version == 0:
                conn.execute(T_SCHEMA.insert().values(id=1, version=SCHEMA_VERSION))
            else:
                conn.execute(T_SCHEMA.update().where(T_SCHEMA.c.id == 1).values(version=SCHEMA_VERSION))
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
        raise ValueError(f"bad leaderboard database URL {shown!r}: expected sqlite:///<file> or "
                         "postgresql+psycopg://user:password@host/database")
    try:
        parsed = sa.make_url(url)
    except (sa.exc.ArgumentError, ValueError):  # ValueError: e.g. a bad port
        raise ValueError(f"bad leaderboard database URL {_mask(url)!r}: cannot be parsed; expected "
                         "sqlite:///<file> or postgresql+psycopg://user:password@host/database") from None
    backend, driver = parsed.get_backend_name(), parsed.get_driver_name()
    if backend == "postgres":
        backend = "postgresql"
    if backend == "sqlite" and parsed.drivername in ("sqlite", "sqlite+pysqlite"):
        return parsed.set(drivername="sqlite+pysqlite")
    if backend == "postgresql" and parsed.drivername in ("postgresql", "postgres", "postgresql+psycopg"):
        return parsed.set(drivername="postgresql+psycopg")
    raise ValueError(f"bad leaderboard database URL {parsed.render_as_string(hide_password=True)!r}: "
                     f"unsupported database/driver {parsed.drivername!r} (driver {driver!r}); use "
                     "sqlite:///<file> or postgresql+psycopg://...")


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
            cur.execute("PRAGMA journal_mode = WAL")
        cur.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn):
        # Writes take the write lock up front (waiting under the busy timeout); reads take a snapshot.
        read_only = conn.get_execution_options().get("papergym_read_only", False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    return engine


def _postgres_engine(url: sa.URL) -> Engine:
    if find_spec("psycopg") is None:
        raise ModuleNotFoundError(
            "a PostgreSQL leaderboard needs psycopg 3: pip install 'papergym[postgres]'", name="psycopg")
    return sa.create_engine(url, pool_pre_ping=True)


# --------------------------------------------------------------------------------------------------
# value helpers
# --------------------------------------------------------------------------------------------------

_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _jsonable(value: Any, field: str) -> Any:
    """Plain JSON data: numpy scalars/arrays unpacked, non-finite floats as strings, keys as str."""
    if isinstance(value, (np.generic, np.ndarray)):
        value = value.tolist()
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, (str, int)) or isinstance(k, bool):
                raise ValueError(f"{field}: key {k!r} is not a string")  # noqa: TRY004 -- documented: invalid inputs raise ValueError
            out[str(k)] = _jsonable(v, f"{field}[{k!r}]")
        return out
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{field}[{i}]") for i, v in enumerate(value)]
    raise ValueError(f"{field}: {type(value).__name__} value {value!r} cannot be stored as JSON")


def _dumps(value: Any, field: str) -> str:
    if not isinstance(value, Mapping):
        raise ValueError(f"{field} must be a mapping, got {type(value).__name__}")  # noqa: TRY004 -- documented: invalid inputs raise ValueError
    return json.dumps(_jsonable(value, field), sort_keys=True, allow_nan=False)


def _loads_metrics(text: str) -> dict[str, float]:
    raw = json.loads(text)
    return {k: (math.nan if v is None else _NONFINITE[v] if isinstance(v, str) else float(v))
            for k, v in raw.items()}


def _clean_text(value: str, *, head: int | None = None, tail: int | None = None) -> str:
    value = value.encode("utf-8", "surrogatepass").decode("utf-8", "replace").replace("\x00", "\ufffd")
    if head is not None and len(value) > head:
        value = value[:head]
    if tail is not None and len(value) > tail:
        value = value[-tail:]
    return value


def _check_str(value: Any, field: str, *, allowed: Sequence[str] | None = None, empty: bool = False,
               max_len: int | None = 200) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{field} must be a string, got {type(value).__name__} {value!r}")  # noqa: TRY004 -- documented: invalid inputs raise ValueError
    if allowed is not None and value not in allowed:
        raise ValueError(f"{field} {value!r} is not one of {', '.join(allowed)}")
    if not empty and not value.strip():
        raise ValueError(f"{field} must not be empty")
    if max_len is not None and len(value) > max_len:
        raise ValueError(f"{field} is longer than {max_len} characters")
    return _clean_text(value)


def _check_seconds(value: Any, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{field} must be a number of seconds or None, got {value!r}")  # noqa: TRY004 -- documented: invalid inputs raise ValueError
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{field} must be finite and >= 0, got {value!r}")
    return value


_SHA256 = re.compile(r"[0-9a-f]{64}")
_RUN_KEYS_REQUIRED = ("split", "stratum", "seed_index", "status", "metrics")
_RUN_KEYS_OPTIONAL = ("wall_seconds", "cpu_seconds", "curve", "error")


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "_"


def _chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    ids = list(ids)
    for i in range(0, len(ids), _IN_CHUNK):
        yield ids[i:i + _IN_CHUNK]


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
        Folder of the curve parquet files. Default: ``<db folder>/curves`` for an SQLite file,
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
            default_curves = (Path(database).expanduser().resolve().parent / "curves" if on_disk
                              else _user_data_dir() / "curves")
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

    def schema_version(self) -> int:
        """The database's schema version (``SCHEMA_VERSION`` once opened)."""
        with self._read() as conn:
            return _read_version(conn)

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
        row = {"benchmark_id": benchmark_id, "kind": kind, "version": version, "spec_json": spec_json,
               "created_at": _now()}
        if self.dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        else:
            from sqlalchemy.dialects.postgresql import insert
        stmt = insert(T_BENCHMARKS).values(**row).on_conflict_do_nothing(index_elements=["benchmark_id", "version"])
        with self._write() as conn:
            conn.execute(stmt)
            existing = conn.execute(
                sa.select(T_BENCHMARKS.c.id, T_BENCHMARKS.c.kind, T_BENCHMARKS.c.spec_json)
                .where(T_BENCHMARKS.c.benchmark_id == benchmark_id, T_BENCHMARKS.c.version == version)
            ).one()
        if existing.kind != kind:
            raise ValueError(f"benchmark {benchmark_id!r} version {version!r} is registered as kind "
                             f"{existing.kind!r}, not {kind!r}")
        if existing.spec_json != spec_json:
            raise ValueError(f"benchmark {benchmark_id!r} version {version!r} is already registered with a "
                             "different spec: a changed spec needs a new version string")
        return int(existing.id)

    def benchmarks(self) -> pd.DataFrame:
        """Every registered version: ``id, benchmark_id, kind, version, spec`` (dict), ``created_at``."""
        with self._read() as conn:
            rows = conn.execute(sa.select(T_BENCHMARKS).order_by(T_BENCHMARKS.c.id)).all()
        records = [{"id": r.id, "benchmark_id": r.benchmark_id, "kind": r.kind, "version": r.version,
                    "spec": json.loads(r.spec_json), "created_at": r.created_at} for r in rows]
        df = pd.DataFrame.from_records(records, columns=list(BENCHMARK_COLUMNS))
        df["created_at"] = pd.to_datetime(df["created_at"], utc=True)
        return df.astype({"id": "int64"})

    def latest_version(self, benchmark_id: str) -> str | None:
        """The most recently registered version of ``benchmark_id``, or ``None`` if it has none."""
        with self._read() as conn:
            row = conn.execute(
                sa.select(T_BENCHMARKS.c.version).where(T_BENCHMARKS.c.benchmark_id == benchmark_id)
                .order_by(T_BENCHMARKS.c.created_at.desc(), T_BENCHMARKS.c.id.desc()).limit(1)
            ).first()
        return None if row is None else row[0]

    # -- submissions -------------------------------------------------------------------------------
    def create_submission(self, *, benchmark_id: str, version: str, name: str, author: str, kind: str, role: str,
                          entry: str, code_sha256: str, hyperparameters: Mapping, package_versions: Mapping,
                          sandbox: str) -> int:
        """Record a new submission with status ``running``; return its id.

        The (benchmark_id, version) must be registered (:meth:`register_benchmark`), else ``LookupError``.
        """
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
            "sandbox": _check_str(sandbox, "sandbox", max_len=64),
            "status": "running", "message": "", "stderr_tail": "", "created_at": _now(),
        }
        if not _SHA256.fullmatch(row["code_sha256"]):
            raise ValueError(f"code_sha256 {code_sha256!r} is not 64 lowercase hex digits")
        version = _check_str(version, "version")
        with self._write() as conn:
            bench = conn.execute(
                sa.select(T_BENCHMARKS.c.id).where(T_BENCHMARKS.c.benchmark_id == row["benchmark_id"],
                                                   T_BENCHMARKS.c.version == version)).first()
            if bench is None:
                raise LookupError(f"benchmark {benchmark_id!r} version {version!r} is not registered "
                                  "(Store.register_benchmark first)")
            result = conn.execute(T_SUBMISSIONS.insert().values(benchmark_version=bench.id, **row)
                                  .returning(T_SUBMISSIONS.c.id))
            return int(result.scalar_one())

    def finish_submission(self, submission_id: int, status: str, *, message: str = "", stderr_tail: str = "",
                          wall_seconds: float | None = None, cpu_seconds: float | None = None) -> None:
        """Set a submission's final status (not ``running``), message, stderr tail, times and ``finished_at``."""
        allowed = tuple(s for s in SUBMISSION_STATUSES if s != "running")
        values = {
            "status": _check_str(status, "status", allowed=allowed),
            "message": _clean_text(_check_str(message, "message", empty=True, max_len=None), head=MESSAGE_MAX_CHARS),
            "stderr_tail": _clean_text(_check_str(stderr_tail, "stderr_tail", empty=True, max_len=None),
                                       tail=STDERR_TAIL_MAX_CHARS),
            "wall_seconds": _check_seconds(wall_seconds, "wall_seconds"),
            "cpu_seconds": _check_seconds(cpu_seconds, "cpu_seconds"),
            "finished_at": _now(),
        }
        with self._write() as conn:
            n = conn.execute(T_SUBMISSIONS.update().where(T_SUBMISSIONS.c.id == int(submission_id))
                             .values(**values)).rowcount
        if n != 1:
            raise LookupError(f"no submission with id {submission_id!r}")

    def delete_submission(self, submission_id: int) -> None:
        """Delete a submission, its runs and their curve files (e.g. before a reference is re-scored)."""
        submission_id = int(submission_id)
        with self._write() as conn:
            bench = conn.execute(sa.select(T_SUBMISSIONS.c.benchmark_id)
                                 .where(T_SUBMISSIONS.c.id == submission_id)).first()
            if bench is None:
                raise LookupError(f"no submission with id {submission_id!r}")
            paths = conn.execute(sa.select(T_RUNS.c.curve_path).where(
                T_RUNS.c.submission_id == submission_id, T_RUNS.c.curve_path.is_not(None))).scalars().all()
            conn.execute(T_RUNS.delete().where(T_RUNS.c.submission_id == submission_id))
            conn.execute(T_SUBMISSIONS.delete().where(T_SUBMISSIONS.c.id == submission_id))
        for path in paths:
            self._curve_file(path).unlink(missing_ok=True)
        folder = self.curves_dir / _safe_name(bench.benchmark_id) / str(submission_id)
        try:
            folder.rmdir()
        except OSError:
            pass

    def submissions(self, benchmark_id: str | None = None, *, version: str | None = None,
                    latest_only: bool = False) -> pd.DataFrame:
        """One row per submission, ordered by id (columns: :data:`SUBMISSION_COLUMNS`).

        ``hyperparameters`` and ``package_versions`` are dicts, ``version`` the benchmark version string,
        ``benchmark_version`` its row id. ``latest_only`` keeps, per (benchmark_id, version, name, author),
        only the most recently created submission among the finished ones (status not ``running``).
        """
        s, b = T_SUBMISSIONS, T_BENCHMARKS
        query = sa.select(s, b.c.version).join(b, b.c.id == s.c.benchmark_version).order_by(s.c.id)
        if benchmark_id is not None:
            query = query.where(s.c.benchmark_id == benchmark_id)
        if version is not None:
            query = query.where(b.c.version == version)
        with self._read() as conn:
            rows = conn.execute(query).all()
        records = [{
            "submission_id": r.id, "benchmark_id": r.benchmark_id, "version": r.version,
            "benchmark_version": r.benchmark_version, "name": r.name, "author": r.author, "kind": r.kind,
            "role": r.role, "entry": r.entry, "code_sha256": r.code_sha256,
            "hyperparameters": json.loads(r.hyperparameters_json),
            "package_versions": json.loads(r.package_versions_json), "sandbox": r.sandbox, "status": r.status,
            "message": r.message, "stderr_tail": r.stderr_tail, "created_at": r.created_at,
            "finished_at": r.finished_at, "wall_seconds": r.wall_seconds, "cpu_seconds": r.cpu_seconds,
        } for r in rows]
        df = pd.DataFrame.from_records(records, columns=list(SUBMISSION_COLUMNS))
        if latest_only and len(df):
            df = df[df["status"] != "running"]
            df = df.drop_duplicates(["benchmark_id", "version", "name", "author"], keep="last")
        df = df.reset_index(drop=True)
        for col in ("created_at", "finished_at"):
            df[col] = pd.to_datetime(df[col], utc=True)
        for col in ("wall_seconds", "cpu_seconds"):
            df[col] = df[col].astype("float64")
        return df.astype({"submission_id": "int64", "benchmark_version": "int64"})

    # -- runs ----------------------------------------------------------------------------------------
    def _validate_runs(self, runs: Sequence[Mapping]) -> list[dict[str, Any]]:
        if isinstance(runs, Mapping) or not isinstance(runs, Sequence):
            raise ValueError(f"runs must be a sequence of mappings, got {type(runs).__name__}")  # noqa: TRY004 -- documented: invalid inputs raise ValueError
        out, seen = [], set()
        for i, run in enumerate(runs):
            where = f"runs[{i}]"
            if not isinstance(run, Mapping):
                raise ValueError(f"{where} must be a mapping, got {type(run).__name__}")  # noqa: TRY004 -- documented: invalid inputs raise ValueError
            missing = [k for k in _RUN_KEYS_REQUIRED if k not in run]
            unknown = sorted(set(run) - set(_RUN_KEYS_REQUIRED) - set(_RUN_KEYS_OPTIONAL))
            if missing:
                raise ValueError(f"{where} lacks {', '.join(missing)}")
            if unknown:
                raise ValueError(f"{where} has unknown field(s) {', '.join(map(str, unknown))}")
            seed_index = run["seed_index"]
            if isinstance(seed_index, bool) or not isinstance(seed_index, numbers.Integral) or seed_index < 0:
                raise ValueError(f"{where}.seed_index must be an int >= 0, got {seed_index!r}")
            metrics = run["metrics"]
            if not isinstance(metrics, Mapping):
                raise ValueError(f"{where}.metrics must be a mapping of metric name -> float")  # noqa: TRY004 -- documented: invalid inputs raise ValueError
            clean_metrics: dict[str, float] = {}
            for k, v in metrics.items():
                if not isinstance(k, str) or not k:
                    raise ValueError(f"{where}.metrics: name {k!r} is not a non-empty string")
                if k in RUN_COLUMNS:
                    raise ValueError(f"{where}.metrics: name {k!r} clashes with a column of Store.runs()")
                if v is None:
                    v = math.nan
                if isinstance(v, bool) or not isinstance(v, numbers.Real):
                    raise ValueError(f"{where}.metrics[{k!r}] must be a float, got {v!r}")  # noqa: TRY004 -- documented: invalid inputs raise ValueError
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
                "wall_seconds": _check_seconds(run.get("wall_seconds"), f"{where}.wall_seconds"),
                "cpu_seconds": _check_seconds(run.get("cpu_seconds"), f"{where}.cpu_seconds"),
                "error": None if error is None else _clean_text(error, tail=STDERR_TAIL_MAX_CHARS),
                "curve": curve,
            }
            key = (row["split"], row["stratum"], row["seed_index"])
            if key in seen:
                raise ValueError(f"{where} repeats (split, stratum, seed_index) = {key!r} within the batch")
            seen.add(key)
            out.append(row)
        return out

    def add_runs(self, submission_id: int, runs: Sequence[Mapping]) -> None:
        """Store a batch of runs of a submission, all or nothing.

        Each run is a mapping with ``split`` (``dev`` | ``test``), ``stratum`` (str), ``seed_index``
        (int >= 0), ``status`` (one of :data:`RUN_STATUSES`), ``metrics`` (name -> float; NaN/inf/None
        allowed) and optionally ``wall_seconds``, ``cpu_seconds`` (float >= 0 | None), ``curve`` (a
        DataFrame, written as parquet under ``curves_dir``) and ``error`` (str | None).

        Every run is validated before anything is written (``ValueError`` naming the field). The rows go
        in one transaction; if it fails -- e.g. a (split, stratum, seed_index) the submission already
        has, which raises ``ValueError`` -- no row is stored and the curve files written for the batch
        are removed.
        """
        submission_id = int(submission_id)
        rows = self._validate_runs(runs)
        if not rows:
            return
        with self._read() as conn:
            bench = conn.execute(sa.select(T_SUBMISSIONS.c.benchmark_id)
                                 .where(T_SUBMISSIONS.c.id == submission_id)).first()
        if bench is None:
            raise LookupError(f"no submission with id {submission_id!r}")
        written: list[Path] = []
        try:
            folder = Path(_safe_name(bench.benchmark_id)) / str(submission_id)
            for row in rows:
                curve = row.pop("curve")
                row["submission_id"] = submission_id
                row["curve_path"] = None
                if curve is None:
                    continue
                rel = folder / (f"{row['split']}-{_safe_name(row['stratum'])}-{row['seed_index']}-"
                                f"{uuid.uuid4().hex[:12]}.parquet")
                target = self.curves_dir / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = target.with_name(f".{target.name}.tmp")
                written.append(tmp)
                curve.to_parquet(tmp)
                os.replace(tmp, target)
                written[-1] = target
                row["curve_path"] = rel.as_posix()
            self._insert_runs(submission_id, rows)
        except BaseException:
            for path in written:
                path.unlink(missing_ok=True)
            raise

    def _insert_runs(self, submission_id: int, rows: list[dict[str, Any]]) -> None:
        r = T_RUNS
        with self._write() as conn:
            if conn.execute(sa.select(T_SUBMISSIONS.c.id).where(T_SUBMISSIONS.c.id == submission_id)).first() is None:
                raise LookupError(f"no submission with id {submission_id!r}")
            existing = {tuple(k) for k in conn.execute(sa.select(r.c.split, r.c.stratum, r.c.seed_index)
                                                       .where(r.c.submission_id == submission_id))}
            dup = [k for k in ((x["split"], x["stratum"], x["seed_index"]) for x in rows) if k in existing]
            if dup:
                raise ValueError(f"submission {submission_id} already has run(s) (split, stratum, seed_index) = "
                                 f"{', '.join(map(repr, dup[:5]))}{' ...' if len(dup) > 5 else ''}")
            try:
                conn.execute(r.insert(), rows)
            except sa.exc.IntegrityError as exc:  # a concurrent writer added the same key meanwhile
                raise ValueError(f"submission {submission_id}: runs rejected by the database "
                                 f"({exc.orig})") from exc

    def runs(self, submission_ids: Sequence[int] | None = None, *, benchmark_id: str | None = None,
             split: str | None = "test") -> pd.DataFrame:
        """Runs ordered by (submission_id, stratum, seed_index).

        Columns: :data:`RUN_COLUMNS` (``metrics`` a dict of floats) plus one float column per metric name
        (NaN where a run lacks it). ``split=None`` returns every split. An empty result still has the base
        columns.
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
        records = [{
            "run_id": x.id, "submission_id": x.submission_id, "split": x.split, "stratum": x.stratum,
            "seed_index": x.seed_index, "status": x.status, "wall_seconds": x.wall_seconds,
            "cpu_seconds": x.cpu_seconds, "curve_path": x.curve_path, "error": x.error,
            "metrics": _loads_metrics(x.metrics_json),
        } for x in rows]
        df = pd.DataFrame.from_records(records, columns=list(RUN_COLUMNS))
        if submission_ids is not None and len(df):
            df = df.sort_values(["submission_id", "stratum", "seed_index", "split"], kind="stable")
        df = df.reset_index(drop=True)
        names = sorted({k for m in df["metrics"] for k in m})
        for name in names:
            df[name] = np.array([m.get(name, math.nan) for m in df["metrics"]], dtype=float)
        return df.astype({"run_id": "int64", "submission_id": "int64", "seed_index": "int64",
                          "wall_seconds": "float64", "cpu_seconds": "float64"})

    # -- curves ---------------------------------------------------------------------------------------
    def _curve_file(self, curve_path: str) -> Path:
        path = Path(curve_path)
        return path if path.is_absolute() else self.curves_dir / path

    def read_curve(self, curve_path: str) -> pd.DataFrame:
        """The curve DataFrame of a run (``curve_path`` as in :meth:`runs`, relative to ``curves_dir``)."""
        path = self._curve_file(curve_path)
        if not path.is_file():
            raise FileNotFoundError(f"curve file {path} is missing (curves_dir {self.curves_dir})")
        return pd.read_parquet(path)
