"""``papergym serve``, ``worker``, ``admin`` and ``login``: the shared board's HTTP service, its workers,
authors and API tokens."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from typing import Any

from papergym.leaderboard.commands.common import CLIError, open_store

__all__ = ["cmd_admin", "cmd_login", "cmd_serve", "cmd_worker"]

logger = logging.getLogger("papergym.leaderboard.cli")  # one logger for the whole command


# ------------------------------------------------------------------------------ the shared board
def _check_full_sandbox(what: str) -> None:
    """Ranked evaluation needs the full sandbox (:mod:`papergym.leaderboard.board.isolation`): checked
    before a worker claims anything, so a machine without it never fails the queue's jobs one by one."""
    from papergym.leaderboard.board.isolation import isolation_status

    status = isolation_status()
    if not status.full:
        raise CLIError(
            f"{what}: this machine cannot run the full sandbox that ranked evaluation needs; missing: "
            + "; ".join(status.missing())
        )


def _die_with_parent() -> Any:
    """A ``preexec_fn`` by which a local worker gets SIGTERM when ``papergym serve`` dies, even by SIGKILL
    (Linux ``prctl(PR_SET_PDEATHSIG)``); ``None`` where there is no prctl. Everything is looked up here,
    in the parent: between fork and exec the child only makes that one call (no import, no lock)."""
    import ctypes
    import signal

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    sig = int(signal.SIGTERM)

    def preexec() -> None:  # pragma: no cover - runs in the child
        prctl(1, sig)  # PR_SET_PDEATHSIG

    return preexec


class _WorkerPool:
    """``papergym serve --workers N``: N ``papergym worker`` processes on the same store, restarted
    (at most once per ``restart_seconds`` each) when one exits, stopped with the service: SIGTERM (a
    worker finishes its job), then SIGKILL after ``grace_seconds`` (the job's lease expires and it is
    requeued)."""

    def __init__(self, n: int, store_url: str, *, restart_seconds: float = 5.0, grace_seconds: float = 30.0):
        import threading

        self.n, self.store_url = n, store_url
        self.restart_seconds, self.grace_seconds = restart_seconds, grace_seconds
        self.procs: list[Any] = []
        self.started: list[float] = []
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._watch, name="papergym-worker-pool", daemon=True)
        self._preexec = _die_with_parent()

    def _spawn(self):
        import os
        import subprocess

        env = {**os.environ, "PAPERGYM_DB": self.store_url}  # not on the command line: ps shows that
        return subprocess.Popen(
            [sys.executable, "-m", "papergym.leaderboard.cli", "worker"],
            env=env,
            preexec_fn=self._preexec,  # noqa: PLW1509 - one prepared prctl call
        )

    def start(self) -> None:
        with self._lock:
            for _ in range(self.n):
                self.procs.append(self._spawn())
                self.started.append(time.monotonic())
        if self.n:
            self._thread.start()

    def _watch(self) -> None:
        while not self._stopping.wait(1.0):
            with self._lock:
                for i, proc in enumerate(self.procs):
                    rc = proc.poll()
                    if rc is None or self._stopping.is_set():
                        continue
                    if time.monotonic() - self.started[i] < self.restart_seconds:
                        continue
                    logger.warning("papergym serve: worker %d exited with status %s; starting another", proc.pid, rc)
                    self.procs[i] = self._spawn()
                    self.started[i] = time.monotonic()

    def stop(self) -> None:
        import signal
        import subprocess

        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()
        with self._lock:
            live = [p for p in self.procs if p.poll() is None]
            for p in live:
                p.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + self.grace_seconds
            for p in live:
                try:
                    p.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:  # still evaluating: its job is requeued when the lease expires
                    p.kill()
                    p.wait()


class _Stopped(Exception):
    """SIGTERM reached ``papergym serve`` (after uvicorn's own graceful shutdown)."""


def cmd_serve(args: argparse.Namespace, extra: list[str]) -> int:
    import logging
    import signal

    if extra:
        raise CLIError(f"unexpected arguments: {' '.join(extra)}")
    from importlib.util import find_spec

    missing = [m for m in ("fastapi", "uvicorn", "python_multipart") if find_spec(m) is None]
    if missing:
        raise CLIError(
            f"papergym serve needs the 'board' extra ({', '.join(missing)} missing): pip install 'papergym[board]'"
        )
    import uvicorn

    if not 1 <= args.port <= 65535:
        raise CLIError(f"--port must be between 1 and 65535, got {args.port}")
    if args.workers < 0:
        raise CLIError(f"--workers must be >= 0, got {args.workers}")
    if args.test_quota < 0:
        raise CLIError(f"--test-quota must be >= 0, got {args.test_quota}")
    if args.max_upload_kb < 1:
        raise CLIError(f"--max-upload-kb must be at least 1, got {args.max_upload_kb}")
    from papergym.leaderboard.board.service import create_app
    from papergym.leaderboard.board.store import SchemaVersionError, default_url

    url = args.db or default_url()
    if args.workers:
        _check_full_sandbox("--workers")
    try:
        app = create_app(url, test_quota_per_day=args.test_quota, max_upload_bytes=args.max_upload_kb * 1024)
    except ImportError as exc:
        raise CLIError(str(exc)) from None
    except (ValueError, SchemaVersionError) as exc:
        raise CLIError(str(exc)) from None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    pool = _WorkerPool(args.workers, url)

    def on_term(signum: int, frame: Any) -> None:  # uvicorn re-raises SIGTERM after its graceful shutdown
        raise _Stopped

    previous = signal.signal(signal.SIGTERM, on_term)
    pool.start()
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="info", server_header=False)
    except (KeyboardInterrupt, _Stopped):
        pass
    finally:
        pool.stop()
        signal.signal(signal.SIGTERM, previous)
    return 0


def cmd_worker(args: argparse.Namespace, extra: list[str]) -> int:
    import logging

    if extra:
        raise CLIError(f"unexpected arguments: {' '.join(extra)}")
    if not args.lease > 0:
        raise CLIError(f"--lease must be positive, got {args.lease}")
    from papergym.leaderboard.board.configs import load_evaluator_config
    from papergym.leaderboard.board.evaluate import evaluate_job
    from papergym.leaderboard.board.worker import Worker

    try:
        secret = load_evaluator_config().secret
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if not secret:
        raise CLIError(
            "the evaluator configuration has no secret: copy the board's evaluator config "
            "($PAPERGYM_EVALUATOR_CONFIG, created by `papergym serve`) to this machine"
        )
    if args.scheduler is not None:
        try:
            from papergym.leaderboard.board.isolation import isolation_status
            from papergym.leaderboard.runner.executors import dask_client

            client, cluster = dask_client(1, args.scheduler)
        except (RuntimeError, OSError, ValueError) as exc:
            raise CLIError(f"--scheduler: {exc}") from None
        status = client.submit(isolation_status, pure=False).result()
        if not status.full:
            raise CLIError(
                "--scheduler: the cluster's workers cannot run the full sandbox; missing: "
                + "; ".join(status.missing())
            )

        def evaluate(job: Any) -> Any:  # on the cluster: the job (its code) and the secret travel to it
            return client.submit(evaluate_job, job, secret=secret, sandbox="full", pure=False).result()
    else:
        _check_full_sandbox("papergym worker")
        cluster = None

        def evaluate(job: Any) -> Any:
            return evaluate_job(job, secret=secret, sandbox="full")

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    store = open_store(args.db)
    try:
        # Worker.run handles SIGTERM / SIGINT: the first finishes the job in hand, a second abandons it
        worker = Worker(store, evaluate, lease_seconds=float(args.lease))
        if args.once:
            worker.run_once()
        else:
            worker.run()
    except KeyboardInterrupt:  # before the worker's own handlers were in place
        return 130
    finally:
        store.close()
        if cluster is not None:
            client.close()
            cluster.close()
        elif args.scheduler is not None:
            client.close()
    return 0


def cmd_admin(args: argparse.Namespace, extra: list[str]) -> int:
    from papergym.leaderboard.board.evaluate import REFERENCE_AUTHOR, check_label
    from papergym.leaderboard.board.terminal import clean_terminal

    if extra:
        raise CLIError(f"unexpected arguments: {' '.join(extra)}")
    if args.admin_command == "token":
        try:
            check_label(args.author, "author")
        except ValueError as exc:
            raise CLIError(f"AUTHOR: {exc}") from None
        if args.author == REFERENCE_AUTHOR:
            raise CLIError(f"AUTHOR: {REFERENCE_AUTHOR!r} is reserved for the registry's reference agents and solvers")
    store = open_store(args.db)
    try:
        if args.admin_command == "authors":
            authors = store.authors()
            if not len(authors):
                print("no authors yet: papergym admin token create AUTHOR")
                return 0
            print(f"{'author':<32} {'active tokens':>13}  {'created (UTC)':<20} last used (UTC)")
            for a in authors.itertuples(index=False):
                used = "-" if _isna(a.last_used_at) else a.last_used_at.strftime("%Y-%m-%d %H:%M")
                print(
                    f"{clean_terminal(a.name)[:32]:<32} {int(a.active_tokens):>13}  "
                    f"{a.created_at.strftime('%Y-%m-%d %H:%M'):<20} {used}"
                )
            return 0
        if args.action == "create":
            token = store.create_token(args.author)
            print(token)
            print(
                f"papergym: the API token of {clean_terminal(args.author)!r} (shown once: the store keeps only its "
                "hash); the author runs `papergym login --server URL` and pastes it",
                file=sys.stderr,
            )
            return 0
        try:
            n = store.revoke_tokens(args.author)
        except LookupError as exc:
            raise CLIError(f"AUTHOR: {exc}") from None
        print(f"revoked {n} token(s) of {clean_terminal(args.author)!r}")
        return 0
    finally:
        store.close()


def _isna(x: Any) -> bool:
    import pandas as pd

    return x is None or bool(pd.isna(x))


def cmd_login(args: argparse.Namespace, extra: list[str]) -> int:
    from papergym.leaderboard.board.client import (
        BoardClient,
        BoardClientError,
        is_local,
        normalize_server,
        save_token,
    )
    from papergym.leaderboard.board.terminal import clean_terminal

    if extra:
        raise CLIError(f"unexpected arguments: {' '.join(extra)}")
    try:
        server = normalize_server(args.server)
    except ValueError as exc:
        raise CLIError(f"--server: {exc}") from None
    token = args.token
    if token is None:
        if sys.stdin.isatty():
            import getpass

            token = getpass.getpass(f"API token for {server}: ")
        else:
            token = sys.stdin.readline()
    token = token.strip()
    if not token:
        raise CLIError("no token given: pass --token or write it to stdin")
    if server.startswith("http://") and not is_local(server):
        print(f"papergym: warning: {server} is plain http: the token travels unencrypted; use https", file=sys.stderr)
    try:
        with BoardClient(server, token) as client:
            author = client.whoami()
    except BoardClientError as exc:
        if exc.status == 401:
            raise CLIError(f"the board at {server} refused the token (unknown or revoked); nothing saved") from None
        raise CLIError(f"{exc}; nothing saved") from None
    try:
        path = save_token(server, token)
    except (ValueError, OSError) as exc:
        raise CLIError(str(exc)) from None
    print(f"logged in to {server} as {clean_terminal(author)!r}; the token is saved in {path}")
    return 0
