"""The shared board's HTTP service (``papergym serve``): submissions in, live boards out.

The service is the public face of a shared leaderboard. It holds the evaluator's configuration (the
board overrides and the secret of the hidden test seeds, :mod:`papergym.leaderboard.board.configs`), takes
submissions from authors who hold a token, queues them in the store (:mod:`papergym.leaderboard.board.store`)
and shows the boards. It never runs submitted code: workers (``papergym worker``,
:mod:`papergym.leaderboard.board.worker`) claim the queued jobs and evaluate them in the sandbox.

Routes
------
``POST /api/v1/submissions``
    multipart form: ``file`` (one ``.py`` file, UTF-8, that :func:`ast.parse` accepts, at most
    ``max_upload_bytes``), ``board``, ``name`` (1-64 printable characters; default: the file's stem),
    ``attr`` (the factory, a Python identifier; default ``make_agent`` on an environment's board,
    ``make_solver`` on a task's), ``split`` (``validation``, the default, or ``test``) and
    ``hyperparameters`` (a JSON object of keyword arguments, at most 16 KiB). Needs ``Authorization:
    Bearer <token>``; the author is the token's. Answers 201 ``{"id", "status": "queued", "url"}``;
    401 without a valid token, 404 for an unknown board, 409 when another author has the name on the
    board, 413 for a file over the limit, 422 for a bad file or field, 429 with ``Retry-After`` when the
    author's daily test-split quota is spent.
``GET /api/v1/submissions/{id}``
    the submission's status and feedback (:func:`papergym.leaderboard.board.evaluate.feedback`: on the
    test split the aggregate score with its CI and run statuses only) -- to its author; everyone else
    gets the same 404 as for an id that does not exist, so ids reveal nothing.
``GET /api/v1/whoami``
    the author of the token (``papergym login`` checks a token with it).
``GET /api/v1/boards``, ``GET /api/v1/boards/{board}``, ``GET /api/v1/boards/{board}.csv``
    the list of boards; one board's ranked table as JSON or CSV (the columns of the HTML page).
``GET /``, ``GET /boards/{board}``
    the HTML board (:mod:`papergym.leaderboard.board.html`), rendered live from the store:
    self-contained, every field escaped.
``GET /healthz``
    liveness and the store's reachability.

The exports (:func:`board_json`, :func:`board_csv`) need no web framework: ``papergym leaderboard
ID --format json|csv`` writes the same from the store.

Every error is JSON ``{"detail": "..."}``. Every response carries security headers: a
Content-Security-Policy that allows no network access and no script (HTML pages: only their inline
column sorter, by hash), ``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY``, ``Referrer-Policy:
no-referrer``; API responses are never cached (``Cache-Control: no-store``). Text a submitter controls
reaches the log only through :func:`papergym.leaderboard.board.terminal.clean_terminal`.
"""

# No ``from __future__ import annotations``: FastAPI resolves the endpoints' annotations (``Request``) in
# this module's globals, and the web framework is imported inside create_app only, so the exports work
# without the 'board' extra.
import ast
import csv
import datetime as _dt
import hashlib
import io
import json
import logging
import math
import re
import threading
from collections.abc import Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import numpy as np
import pandas as pd

from papergym.leaderboard.board.terminal import clean_terminal

if TYPE_CHECKING:  # pragma: no cover
    from fastapi import FastAPI, HTTPException

__all__ = [
    "API_CSP",
    "DEFAULT_ATTRS",
    "EXPORT_COLUMNS",
    "MAX_HYPERPARAMETER_BYTES",
    "SUBMISSION_SPLITS",
    "board_csv",
    "board_json",
    "create_app",
]

log = logging.getLogger("papergym.service")

#: The splits a submission to the service can ask for (``local`` results never come through it).
SUBMISSION_SPLITS: tuple[str, ...] = ("validation", "test")
#: The factory looked up when a submission names none, by board kind.
DEFAULT_ATTRS: Mapping[str, str] = {"env": "make_agent", "task": "make_solver"}
#: Largest accepted ``hyperparameters`` JSON text.
MAX_HYPERPARAMETER_BYTES = 16_384
_MAX_HP_DEPTH = 8
#: Content-Security-Policy of every non-HTML response (the HTML pages add their sorter's hash).
API_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'"
_FORM_OVERHEAD = 64 * 1024  # room for the form fields and multipart framing next to the file
_DRAIN_CAP = 8 * 1024 * 1024  # an oversized body is read (and dropped) up to this, so the client sees the 413
_TOKEN_RE = re.compile(r"[A-Za-z0-9_\-]{8,200}")
_CODE_NAME_RE = re.compile(r"[^A-Za-z0-9_.-]")
_NON_TERMINAL = ("queued", "running")


# ------------------------------------------------------------------------------------------ helpers
def _json_safe(value: Any) -> Any:
    """Plain JSON data: NaN / inf -> null, numpy and pandas scalars unpacked, times as ISO-8601."""
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_json_safe(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, pd.Timestamp | _dt.datetime | _dt.date):
        return value.isoformat()
    return str(value)


def _error(status: int, detail: str, headers: Mapping[str, str] | None = None) -> "HTTPException":
    from fastapi import HTTPException

    return HTTPException(status_code=status, detail=detail, headers=dict(headers or {}))


def _code_name(filename: str | None) -> str:
    """The uploaded file's base name (no folders, of either OS), made of safe characters; must end in .py."""
    if not filename:
        raise _error(422, "file: the upload has no file name; send a .py file")
    base = PureWindowsPath(PurePosixPath(filename).name).name
    if not base.endswith(".py") or base == ".py":
        raise _error(422, f"file: a submission is one .py file, got {clean_terminal(base)[:100]!r}")
    return _CODE_NAME_RE.sub("_", base)[-100:]


def _check_code(code: bytes, code_name: str) -> str:
    """The file as text: UTF-8 and Python that parses (else 422, naming the line)."""
    try:
        text = code.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _error(422, f"file: {code_name} is not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    if "\x00" in text:
        raise _error(422, f"file: {code_name} contains a NUL character")
    try:
        ast.parse(text, filename=code_name)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        raise _error(422, f"file: {code_name} is not valid Python: {exc.msg} ({where})") from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise _error(422, f"file: {code_name} cannot be parsed: {type(exc).__name__}") from None
    return text


def _check_attr(attr: str) -> str:
    if len(attr) > 200 or not attr.isidentifier():
        raise _error(
            422,
            f"attr: expected the factory's name in the file, a Python identifier (make_agent, "
            f"MySolver), got {clean_terminal(attr)[:100]!r}",
        )
    return attr


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _check_hyperparameters(text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    if len(text.encode("utf-8")) > MAX_HYPERPARAMETER_BYTES:
        raise _error(422, f"hyperparameters: at most {MAX_HYPERPARAMETER_BYTES} bytes of JSON")

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        hp = json.loads(text, parse_constant=no_constant)
    except (ValueError, RecursionError) as exc:
        raise _error(422, f"hyperparameters: not valid JSON ({exc})") from None
    if not isinstance(hp, dict):
        raise _error(422, f"hyperparameters: expected a JSON object of keyword arguments, got {type(hp).__name__}")
    bad = [k for k in hp if not k.isidentifier()]
    if bad:
        raise _error(422, f"hyperparameters: names must be Python identifiers, got {clean_terminal(bad[0])[:64]!r}")
    if _depth(hp) > _MAX_HP_DEPTH:
        raise _error(422, f"hyperparameters: nested deeper than {_MAX_HP_DEPTH} levels")
    return hp


def _form_text(form: Any, key: str, *, max_len: int = 1000) -> str | None:
    value = form.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _error(422, f"{key}: expected a text field, got a file")
    if len(value) > max_len:
        raise _error(422, f"{key}: longer than {max_len} characters")
    return value


def _retry_after(exc: Exception, store: Any, board: str, author: str, quota: int) -> int:
    """Seconds until ``author`` may submit to ``board``'s test split again: the exception's
    ``retry_after`` when the store gives one, else when the oldest test submission of the last 24 hours
    that counts against the quota leaves the window (the store's rolling day,
    :meth:`papergym.leaderboard.board.store.Store.enqueue_submission`)."""
    from papergym.leaderboard.board.store import QUOTA_WINDOW

    given = getattr(exc, "retry_after", None)
    if isinstance(given, int | float) and math.isfinite(given) and given > 0:
        return max(1, math.ceil(given))
    window = QUOTA_WINDOW.total_seconds()
    if quota < 1:
        return math.ceil(window)
    now = pd.Timestamp.now(tz="UTC")
    subs = store.submissions(board, split="test")
    created = sorted(subs.loc[(subs.author == author) & (subs.created_at > now - QUOTA_WINDOW), "created_at"])
    if len(created) < quota:  # freed meanwhile
        return 1
    frees = created[len(created) - quota] + QUOTA_WINDOW
    return max(1, min(math.ceil(window), math.ceil((frees - now).total_seconds())))


# ---------------------------------------------------------------------------------- board exports
#: Columns of the CSV export (and of every JSON entry), in the HTML page's order.
EXPORT_COLUMNS: tuple[str, ...] = (
    "rank",
    "rank_interval",
    "name",
    "author",
    "role",
    "score",
    "ci_low",
    "ci_high",
    "runs",
    "status",
    "code_sha256",
    "date",
    "note",
)
_CSV_TEXT = ("name", "author", "note", "status", "runs", "role")


def _entries(bb: Any) -> list[dict[str, Any]]:
    """The rows of a board as the HTML page shows them (ranked first, then unranked), with the raw
    numbers next to the labels."""
    from papergym.leaderboard.board.text import (
        ordered_table,
        rank_interval_label,
        rank_label,
        status_counts_label,
        unranked_note,
    )

    ranked, unranked = ordered_table(bb.table)
    out = []
    for is_ranked, part in ((True, ranked), (False, unranked)):
        for _, row in part.iterrows():
            out.append(
                {
                    "submission_id": int(row["submission_id"]),
                    "rank": rank_label(row),
                    "rank_interval": rank_interval_label(row),
                    "rank_point": row["rank"] if is_ranked else None,
                    "rank_lo": row["rank_lo"] if is_ranked else None,
                    "rank_hi": row["rank_hi"] if is_ranked else None,
                    "tie": bool(row["tie"]) if is_ranked else False,
                    "ranked": is_ranked,
                    "name": row["name"],
                    "author": row["author"],
                    "role": row["role"],
                    "score": row["score"],
                    "ci_low": row["ci_low"],
                    "ci_high": row["ci_high"],
                    "runs": status_counts_label(row),
                    "n_runs": row["n_runs"],
                    "status": row["status"],
                    "code_sha256": row["code_sha256"],
                    "date": row["date"],
                    "note": "" if is_ranked else unranked_note(row),
                }
            )
    return _json_safe(out)


def board_json(bb: Any, *, generated: str) -> dict[str, Any]:
    """One board as JSON data: its header (kind, version, metric, direction, strata, seeds) and its
    entries (:data:`EXPORT_COLUMNS` and the raw rank numbers)."""
    return _json_safe(
        {
            "board": bb.benchmark_id,
            "kind": bb.kind,
            "version": bb.version,
            "metric": bb.metric,
            "direction": bb.direction,
            "description": bb.description,
            "strata": list(bb.strata),
            "seeds_per_stratum": int(bb.n_seeds),
            "generated": generated,
            "columns": list(EXPORT_COLUMNS),
            "entries": _entries(bb),
        }
    )


def _csv_cell(key: str, value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    # a cell a spreadsheet would run as a formula (CSV injection) is quoted as text
    if key in _CSV_TEXT and text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + text
    return text


def board_csv(bb: Any) -> str:
    """One board's table as CSV (:data:`EXPORT_COLUMNS`); names that would start a spreadsheet formula
    get a leading ``'``."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(EXPORT_COLUMNS)
    for e in _entries(bb):
        w.writerow([_csv_cell(c, e[c]) for c in EXPORT_COLUMNS])
    return buf.getvalue()


# --------------------------------------------------------------------------------------- the cache
class _BoardCache:
    """Boards are rebuilt from the store only when something changed: the key of an entry is a digest
    of the (id, status) pairs of the submissions it depends on and of the evaluator configuration, so a
    page is never stale and an unchanged board costs one query. One lock serialises the rebuilds (the
    figures are drawn with matplotlib, whose rc settings are global)."""

    def __init__(self, store: Any):
        self.store = store
        self.lock = threading.RLock()  # a page's build reads its board through the cache
        self.entries: dict[str, tuple[str, Any]] = {}

    def _key(self, benchmark_id: str | None) -> str:
        from papergym.leaderboard.board.configs import config_path

        subs = self.store.submissions(benchmark_id)
        h = hashlib.sha256()
        for sid, status in zip(subs["submission_id"].tolist(), subs["status"].tolist()):
            h.update(f"{sid}:{status};".encode())
        path = config_path()
        try:
            st = path.stat()
            h.update(f"{st.st_mtime_ns}:{st.st_size}".encode())
        except OSError:
            h.update(b"no-config")
        return h.hexdigest()

    def get(self, name: str, benchmark_id: str | None, build: Callable[[], Any]) -> Any:
        with self.lock:
            key = self._key(benchmark_id)
            hit = self.entries.get(name)
            if hit is not None and hit[0] == key:
                return hit[1]
            value = build()
            self.entries[name] = (key, value)
            return value


class _TerminalSafe(logging.Filter):
    """Log records whose arguments (a request path, a submission's name) cannot carry terminal escapes:
    every string argument goes through :func:`clean_terminal` before it is formatted."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(clean_terminal(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, Mapping):
            record.args = {k: clean_terminal(v) if isinstance(v, str) else v for k, v in record.args.items()}
        if isinstance(record.msg, str):
            record.msg = clean_terminal(record.msg)
        return True


def _install_log_filter() -> None:
    """The filter on the service's and uvicorn's loggers (once per process)."""
    for name in ("papergym.service", "uvicorn.access", "uvicorn.error"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _TerminalSafe) for f in logger.filters):
            logger.addFilter(_TerminalSafe())


def _now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


# ---------------------------------------------------------------------------------------- the app
def create_app(
    store_url: str, *, test_quota_per_day: int = 5, max_upload_bytes: int = 1_000_000, secret: str | None = None
) -> "FastAPI":
    """The board's HTTP service over the store at ``store_url`` (module docstring for the routes).

    Parameters
    ----------
    store_url
        The store (``sqlite:///...`` or ``postgresql+psycopg://...``); opened (and migrated) here.
    test_quota_per_day
        Test-split submissions an author may make per day (the store counts them); the validation
        split has no quota.
    max_upload_bytes
        Largest accepted submission file.
    secret
        The evaluator's secret, when the operator keeps it outside the configuration file (at least 16
        characters). ``None``: the configuration's, created (mode 0600) on first start, so that the
        board's workers on this machine evaluate on the same hidden seeds. The service itself never
        uses or sends it (workers evaluate); it refuses to start without one. Every board configuration
        is checked here too, so a bad evaluator configuration stops the service before it accepts
        anything.
    """
    from fastapi import FastAPI, HTTPException, Request
    from fastapi.responses import HTMLResponse, JSONResponse, Response
    from starlette.concurrency import run_in_threadpool
    from starlette.datastructures import UploadFile

    from papergym.leaderboard.board.configs import (
        board_config,
        board_ids,
        load_evaluator_config,
    )
    from papergym.leaderboard.board.evaluate import (
        REFERENCE_AUTHOR,
        check_label,
        package_versions,
    )
    from papergym.leaderboard.board.html import (
        PAGE_CSP,
        render_benchmark_page,
        render_index,
    )
    from papergym.leaderboard.board.ranking import build_benchmark_board, build_board
    from papergym.leaderboard.board.store import NameTaken, QuotaExceeded, Store

    if isinstance(test_quota_per_day, bool) or not isinstance(test_quota_per_day, int) or test_quota_per_day < 0:
        raise ValueError(f"test_quota_per_day must be an integer >= 0, got {test_quota_per_day!r}")
    if isinstance(max_upload_bytes, bool) or not isinstance(max_upload_bytes, int) or max_upload_bytes < 1:
        raise ValueError(f"max_upload_bytes must be a positive integer, got {max_upload_bytes!r}")
    cfg = load_evaluator_config(create_secret=secret is None)
    if secret is not None and (not isinstance(secret, str) or len(secret) < 16):
        raise ValueError("secret must be a string of at least 16 characters")
    _install_log_filter()
    ids = board_ids()
    kinds = {bid: board_config(bid).kind for bid in ids}  # raises ValueError on a bad board override
    versions = package_versions()
    store = Store(store_url)
    cache = _BoardCache(store)

    @asynccontextmanager
    async def lifespan(app):
        log.info("papergym board service on %s (%d boards, evaluator config %s)", store.url, len(ids), cfg.path)
        try:
            yield
        finally:
            store.close()

    app = FastAPI(
        title="papergym leaderboard", version="1", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None
    )
    app.state.store = store
    app.state.test_quota_per_day = test_quota_per_day
    app.state.max_upload_bytes = max_upload_bytes

    # ---- headers on every response
    def _secure(request: Request, response: Response) -> Response:
        is_html = response.headers.get("content-type", "").startswith("text/html")
        response.headers["Content-Security-Policy"] = f"{PAGE_CSP}; frame-ancestors 'none'" if is_html else API_CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cross-Origin-Resource-Policy"] = "same-origin"
        if request.url.path.startswith("/api/") or request.url.path == "/healthz":
            response.headers["Cache-Control"] = "no-store"
        else:
            response.headers["Cache-Control"] = "no-cache"
        return response

    @app.middleware("http")
    async def security_headers(request: Request, call_next):
        return _secure(request, await call_next(request))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception):
        log.error(
            "internal error on %s %s: %s",
            request.method,
            clean_terminal(request.url.path)[:200],
            clean_terminal(f"{type(exc).__name__}: {exc}")[:500],
            exc_info=exc,
        )
        return _secure(request, JSONResponse({"detail": "internal server error"}, status_code=500))

    # ---- authentication
    def _author(request: Request) -> str:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise _error(
                401,
                "missing token: send 'Authorization: Bearer <token>' (ask the board's operator "
                "for one; papergym login --server URL stores it)",
                {"WWW-Authenticate": "Bearer"},
            )
        author = store.author_for_token(token) if _TOKEN_RE.fullmatch(token) else None
        if author is None:
            raise _error(401, "invalid or revoked token", {"WWW-Authenticate": 'Bearer error="invalid_token"'})
        return author

    # ---- the board
    def _board_id(board: str) -> str:
        if board not in kinds:
            raise _error(404, f"unknown board {clean_terminal(board)[:100]!r}; GET /api/v1/boards lists them")
        return board

    def _bb(board: str) -> Any:
        return cache.get(f"board:{board}", board, lambda: (build_benchmark_board(store, board), _now_iso()))

    @app.get("/healthz")
    def healthz():
        import sqlalchemy as sa

        try:
            schema = store.schema_version()
        except (sa.exc.SQLAlchemyError, OSError) as exc:  # the store is down: say so, without the URL's secrets
            raise _error(503, f"store unreachable: {type(exc).__name__}") from None
        return {"status": "ok", "store": store.dialect, "schema_version": schema}

    @app.get("/api/v1/whoami")
    def whoami(request: Request):
        return {"author": _author(request)}

    @app.post("/api/v1/submissions", status_code=201)
    async def create_submission(request: Request):
        author = await run_in_threadpool(_author, request)
        if author == REFERENCE_AUTHOR:
            raise _error(403, f"the author {REFERENCE_AUTHOR!r} is reserved for the registry's references")
        limit = max_upload_bytes + _FORM_OVERHEAD
        length = request.headers.get("content-length", "")
        declared = int(length) if length.isascii() and length.isdecimal() else None
        too_big = declared is not None and declared > limit
        body = bytearray()
        if not (too_big and declared > _DRAIN_CAP):
            # an oversized body is still read (and dropped) up to _DRAIN_CAP, so the client, which sends
            # all of it before it reads the answer, gets the 413 instead of a broken connection
            seen = 0
            async for chunk in request.stream():
                seen += len(chunk)
                if not too_big:
                    body += chunk
                    too_big = len(body) > limit
                if too_big and seen > _DRAIN_CAP:
                    break
        if too_big:
            raise _error(413, f"the upload is larger than the board's limit of {max_upload_bytes} bytes")
        payload = bytes(body)

        async def replay():
            return {"type": "http.request", "body": payload, "more_body": False}

        parsed = Request(request.scope, replay)
        try:
            form = await parsed.form(max_files=1, max_fields=8, max_part_size=MAX_HYPERPARAMETER_BYTES + 1024)
        except HTTPException as exc:
            raise _error(422, f"the request is not a valid multipart form: {exc.detail}") from None
        try:
            return await _submit(request, author, form)
        finally:
            await form.close()

    async def _submit(request: Request, author: str, form: Any) -> JSONResponse:
        board = _form_text(form, "board", max_len=200)
        if not board:
            raise _error(422, "board: missing; GET /api/v1/boards lists the boards")
        _board_id(board)
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise _error(422, "file: missing; send the submission as the multipart file field 'file'")
        code = await upload.read(max_upload_bytes + 1)
        if len(code) > max_upload_bytes:
            raise _error(413, f"file: larger than the board's limit of {max_upload_bytes} bytes")
        code_name = _code_name(upload.filename)
        await run_in_threadpool(_check_code, code, code_name)
        name = _form_text(form, "name", max_len=200)
        name = name if name is not None and name != "" else code_name[:-3][:64]
        try:
            check_label(name, "name")
        except ValueError as exc:
            raise _error(422, f"name: {exc}") from None
        attr = _form_text(form, "attr", max_len=300)
        attr = _check_attr(attr if attr else DEFAULT_ATTRS[kinds[board]])
        split = _form_text(form, "split", max_len=50) or "validation"
        if split not in SUBMISSION_SPLITS:
            raise _error(422, f"split: {clean_terminal(split)[:50]!r} is not one of {', '.join(SUBMISSION_SPLITS)}")
        hp = _check_hyperparameters(_form_text(form, "hyperparameters", max_len=MAX_HYPERPARAMETER_BYTES))
        kind = "solver" if kinds[board] == "task" else "agent"

        def enqueue() -> int:
            from papergym.leaderboard.board.evaluate import register_board

            _, version = register_board(store, board)
            return store.enqueue_submission(
                benchmark_id=board,
                version=version,
                name=name,
                author=author,
                kind=kind,
                split=split,
                code=code,
                code_name=code_name,
                attr=attr,
                hyperparameters=hp,
                package_versions=versions,
                test_quota_per_day=test_quota_per_day if split == "test" else None,
            )

        try:
            sid = await run_in_threadpool(enqueue)
        except NameTaken as exc:
            raise _error(409, str(exc)) from None
        except QuotaExceeded as exc:
            wait = await run_in_threadpool(_retry_after, exc, store, board, author, test_quota_per_day)
            raise _error(429, str(exc), {"Retry-After": str(wait)}) from None
        except ValueError as exc:
            raise _error(422, str(exc)) from None
        log.info(
            "%s",
            clean_terminal(
                f"submission {sid} queued: {name!r} by {author!r} on {board}, split {split}, "
                f"{len(code)} bytes ({hashlib.sha256(code).hexdigest()[:12]})"
            ),
        )
        url = f"/api/v1/submissions/{sid}"
        return JSONResponse({"id": sid, "status": "queued", "url": url}, status_code=201, headers={"Location": url})

    @app.get("/api/v1/submissions/{sid}")
    def get_submission(sid: str, request: Request):
        author = _author(request)
        hidden = _error(404, f"no submission {clean_terminal(sid)[:20]} of yours")
        if not (sid.isascii() and sid.isdecimal()) or len(sid) > 18:
            raise hidden
        sub = store.submission(int(sid))
        if sub is None or sub.get("author") != author:
            raise hidden
        from papergym.leaderboard.board.evaluate import feedback

        fb = feedback(store, int(sid))
        return JSONResponse(
            _json_safe(
                {
                    "id": int(sid),
                    "status": fb.get("status", sub.get("status")),
                    "done": fb.get("status", sub.get("status")) not in _NON_TERMINAL,
                    "feedback": fb,
                }
            )
        )

    @app.get("/api/v1/boards")
    def list_boards():
        return {
            "boards": [
                {
                    "board": bid,
                    "kind": kinds[bid],
                    "description": board_config(bid).description,
                    "default_attr": DEFAULT_ATTRS[kinds[bid]],
                    "url": f"/api/v1/boards/{quote(bid)}",
                    "csv": f"/api/v1/boards/{quote(bid)}.csv",
                    "html": f"/boards/{quote(bid)}",
                }
                for bid in ids
            ]
        }

    @app.get("/api/v1/boards/{board}.csv")
    def get_board_csv(board: str):
        bb, _ = _bb(_board_id(board))
        return Response(
            board_csv(bb),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{board}.csv"'},
        )

    @app.get("/api/v1/boards/{board}")
    def get_board(board: str):
        bb, generated = _bb(_board_id(board))
        return JSONResponse(board_json(bb, generated=generated))

    @app.get("/", response_class=HTMLResponse)
    def index_page():
        def build():
            board = build_board(store)
            return render_index(board, page_url=lambda b: "boards/" + quote(b))

        return HTMLResponse(cache.get("index", None, build))

    @app.get("/boards/{board}", response_class=HTMLResponse)
    def board_page(board: str):
        bid = _board_id(board)

        def build():  # the same board (scores, intervals) as the JSON and CSV exports
            bb, generated = _bb(bid)
            return render_benchmark_page(bb, generated=generated, index_url="../")

        return HTMLResponse(cache.get(f"page:{bid}", bid, build))

    return app
