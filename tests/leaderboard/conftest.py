"""Leaderboard test fixtures: a real, throwaway PostgreSQL server.

``postgres_url`` (session scope) yields ``postgresql+psycopg://...`` of a database on a server this
fixture starts itself: ``initdb`` into a temporary folder, ``pg_ctl start`` listening only on a unix
socket in that folder (no TCP port, so parallel test sessions cannot collide), trust authentication,
``fsync=off``; the server is stopped and its folder removed at the end of the session. PostgreSQL refuses
to run as root, so under root ``initdb``/``pg_ctl`` run as the ``postgres`` system user (``subprocess``'s
``user=``/``group=``) and the folder is handed to it.

``$PAPERGYM_TEST_POSTGRES_URL``, when set, is used instead of starting a server.

Without the server binaries (Debian: ``postgresql``; ``.ci/system-deps`` installs it) or psycopg the
tests that use the fixture skip on a user's machine and fail under ``CI=true``.

``postgres_schema_url`` (function scope) gives each test a fresh, empty schema on that server (the URL
sets ``search_path``), dropped afterwards.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")  # as in tests/conftest.py


def _unavailable(reason: str):
    if IN_CI:
        pytest.fail(f"PostgreSQL tests are required in CI: {reason}")
    pytest.skip(reason)


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    return candidates[-1] if candidates else None


@pytest.fixture(scope="session")
def postgres_url():
    """URL of a database on a throwaway PostgreSQL server (module docstring)."""
    try:
        import psycopg
    except ImportError:
        _unavailable("psycopg is not installed (pip install 'papergym[postgres]')")
    given = os.environ.get("PAPERGYM_TEST_POSTGRES_URL", "").strip()
    if given:
        yield given
        return
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not (initdb and pg_ctl):
        _unavailable(
            "PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql (or run .ci/system-deps)"
        )
    run_as: dict = {}
    owner = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            _unavailable("running as root and there is no 'postgres' system user to run the server as")
        run_as = {"user": owner.pw_uid, "group": owner.pw_gid, "extra_groups": []}

    root = Path(tempfile.mkdtemp(prefix="papergym-pg-"))
    data, sock, log = root / "data", root / "s", root / "server.log"
    sock.mkdir()
    if owner is not None:
        for path in (root, sock):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    if owner is not None:
        env["HOME"] = str(root)

    def pg(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            args, cwd=root, env=env, capture_output=True, text=True, timeout=120, check=check, **run_as
        )

    started = False
    try:
        pg(initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")
        opts = f"-k {sock} -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        proc = pg(pg_ctl, "-D", str(data), "-l", str(log), "-o", opts, "-w", "-t", "60", "start", check=False)
        if proc.returncode != 0:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"pg_ctl start failed:\n{proc.stdout}\n{proc.stderr}\n{tail}")
        started = True
        with psycopg.connect(host=str(sock), port=5432, user="postgres", dbname="postgres", autocommit=True) as conn:
            conn.execute("CREATE DATABASE papergym_test")
        yield f"postgresql+psycopg://postgres@/papergym_test?host={quote(str(sock))}&port=5432"
    finally:
        if started:
            pg(pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_schema_url(postgres_url):
    """``postgres_url`` with a fresh schema first on ``search_path``; the schema is dropped afterwards."""
    import psycopg
    import sqlalchemy as sa

    schema = f"t_{uuid.uuid4().hex[:12]}"
    url = sa.make_url(postgres_url)
    plain = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    yield url.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture(params=["sqlite", "postgres"])
def url(request, tmp_path):
    """A fresh, empty database on each backend: an SQLite file, and a schema of the PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'db' / 'leaderboard.db'}"
    return request.getfixturevalue("postgres_schema_url")
