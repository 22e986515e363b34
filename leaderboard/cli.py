"""The ``papergym`` command.

``papergym compare ENV_ID [options] [--ENV-KWARG VALUE ...]``
    Regret comparison of agents over seeds: prints a table, writes the figure (PNG + SVG), the raw
    results (parquet) and the table to an output folder, and names it. Options the command does not
    know are env constructor arguments: ``--instance piecewise-tents --phases 8`` becomes
    ``instance="piecewise-tents", phases=8`` (values parsed as JSON where possible); ``--dim`` is an
    alias of the dimension argument ``d``. Every value is
    checked before anything runs or is written; a bad one exits with status 2 and a message naming
    it and the valid choices.
``papergym bench TASK_ID [options] [--TASK-KWARG VALUE | --SOLVER-HYPERPARAMETER VALUE ...]``
    Solver benchmark on a task: every solver (or ``--solvers``) on the task's dev instances; prints the
    per-instance metrics, a summary (geometric mean of the primary metric) and the task's own
    statistics, and writes figures and raw results. Options the command does not know are task
    constructor arguments when the task has them (``--sizes 1000,10000``; ``--n`` is an alias of
    ``--sizes``), otherwise hyperparameters of the solvers that accept them; a comma list given for a
    hyperparameter is a sweep (``--m 10,20,50``: one configuration per value).
``papergym sweep NonStatLipschitz-v0 --horizon 2^10..2^16 [--shifts 0,1,2,4,8,16] [--agents mdbe,...] [--seeds N] [--out DIR]``
    Regret scaling: the agents on ``piecewise-tents`` with ``L + 1`` phases for every horizon and shift count
    of the grid; prints mean regret with CIs per cell and the fitted log-log slopes in ``T`` and ``L + 1``
    with bootstrap CIs against the theory; writes CSVs and a log-log PNG
    (:mod:`papergym.leaderboard.runner.sweep`).
``papergym list``
    Environments (with their instance families), solver tasks and agents with their roles.
``papergym submit FILE.py:ATTR --to ID --server URL [--split validation|test] [--name N] [--hp NAME=VALUE ...]``
    Uploads an agent factory (envs) or solver factory (tasks) to a shared board's service, waits for a
    worker to evaluate it (one progress line on stderr) and prints the feedback: on the ``validation``
    split (public seeds) every run's status and metrics and the stderr tail, on the ``test`` split (the
    hidden seeds, ranked) the score with its CI and the run statuses. The token comes from
    ``$PAPERGYM_TOKEN`` or ``papergym login``. Without ``--server``: a *local, unranked* run (split
    ``local``) in the sandbox on this machine, stored in ``--db`` (``--author A``; ``--unsafe-no-sandbox``
    drops the isolation, with a warning).
``papergym leaderboard [ID ...] [--db URL]``, ``papergym leaderboard --html DIR``, ``papergym leaderboard refresh [ID ...]``
    Terminal table(s) of the board(s); the static HTML site; scoring of the registry's reference
    agents/solvers on the current board versions (``--include pinn``, ``--only NAME,...``, ``--force``);
    ``papergym leaderboard ID --format csv|json`` exports one board's table.
    The store is ``--db URL`` (default: ``$PAPERGYM_DB`` or the user's SQLite board).
``papergym serve [--db URL] [--host 127.0.0.1] [--port 8000] [--workers N] [--test-quota N] [--max-upload-kb K]``
    The shared board's HTTP service (:mod:`papergym.leaderboard.board.service`), with ``N`` local
    workers started next to it and stopped with it.
``papergym worker [--db URL] [--scheduler ADDR] [--lease S] [--once]``
    Claims queued submissions from the store and evaluates them in the full sandbox (on a dask cluster
    with ``--scheduler``); needs the evaluator's configuration (its secret) on this machine.
``papergym admin token create AUTHOR`` | ``admin token revoke AUTHOR`` | ``admin authors`` ``[--db URL]``
    API tokens of the board's authors (a new token is printed once; the store keeps only its hash).
``papergym login --server URL [--token T]``
    Checks a token with the board and stores it for that server (mode 0600); the token is read from
    stdin when ``--token`` is not given.

This module parses the command line and sets up logging; each subcommand is implemented in
:mod:`papergym.leaderboard.commands`.
"""  # noqa: E501 - command synopses are definition-list terms, one line each

from __future__ import annotations

import argparse
import logging
import os
import sys
import time

from papergym.leaderboard.commands import (
    bench,
    board,
    check,
    compare,
    listing,
    service,
    submit,
    sweep,
)
from papergym.leaderboard.commands.common import CLIError, add_run_flags, fail

__all__ = ["build_parser", "main"]


def _version() -> str:
    """The installed distribution's version (``importlib.metadata``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("papergym")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without an install
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    from papergym.leaderboard.runner.executors import BACKENDS

    p = argparse.ArgumentParser(
        prog="papergym", allow_abbrev=False, description="papergym: benchmark gym of NeurIPS 2025 papers"
    )
    p.add_argument("--version", action="version", version=f"papergym {_version()}")
    p.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="more messages on stderr: -v informational (INFO), -vv debugging (DEBUG)",
    )
    p.add_argument(
        "-q",
        dest="log_quiet",
        action="store_true",
        help="errors only on stderr: no warnings, no progress (results still print)",
    )
    sub = p.add_subparsers(
        dest="command",
        required=True,
        metavar="{compare,sweep,bench,list,submit,leaderboard,serve,worker,admin,login,fjsp}",
    )

    # allow_abbrev=False: env arguments such as --m or --d must never be taken for a prefix of --mode
    c = sub.add_parser(
        "compare",
        allow_abbrev=False,
        help="regret comparison of agents over seeds on an environment",
        description="Regret comparison of agents over seeds. Unknown --options are env "
        "constructor arguments (e.g. --phases 8).",
    )
    c.add_argument("env_id", help="environment id, e.g. NonStatLipschitz-v0")
    c.add_argument("--agents", help="comma-separated agent names (default: all registered for the env)")
    c.add_argument(
        "--seeds",
        help="count (10), range (5:15) or list (1,4,9); default: the env's compare "
        "default (NonStatLipschitz-v0: 100, the paper's protocol), else 10",
    )
    c.add_argument(
        "--horizon",
        type=int,
        help="number of rounds T (default: the env's compare default, NonStatLipschitz-v0: 100000, else the env's own)",
    )
    c.add_argument("--instance", help="instance family (see `papergym list`)")
    c.add_argument("--backend", choices=BACKENDS, default="joblib", help="executor (default joblib)")
    c.add_argument("--n-jobs", type=int, help="workers (default: all cores)")
    c.add_argument("--scheduler", help="dask scheduler address, or 'slurm' (with --backend dask)")
    c.add_argument("--out", help="output folder (default: papergym-out/<env>/<time>)")
    c.add_argument("--cache-dir", help="folder of cached cell files (default: the user cache)")
    c.add_argument("--no-cache", action="store_true", help="recompute cells even if cached")
    c.add_argument(
        "--hp",
        action="append",
        default=[],
        metavar="AGENT.NAME=VALUE",
        help="agent hyperparameter, repeatable (e.g. --hp mdbe.c0=0.3)",
    )
    c.add_argument(
        "--mode",
        choices=("auto", "batched", "per-run"),
        default="auto",
        help="batched numpy runs where available (auto) or one Gymnasium loop per seed",
    )
    c.add_argument("--log-x", action="store_true", help="log-scaled round axis in the figure")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    add_run_flags(c)

    b = sub.add_parser(
        "bench",
        allow_abbrev=False,
        help="solver benchmark on a task",
        description="Solver benchmark on a task. Unknown --options are task arguments (e.g. "
        "--sizes 1000,10000) or solver hyperparameters (e.g. --m 50; a comma list "
        "sweeps: --m 10,20,50).",
    )
    b.add_argument("task_id", help="task id, e.g. NystromODE-v0")
    b.add_argument(
        "--solvers",
        help="comma-separated solver names or FILE.py:ATTR (a solver class or factory "
        "loaded from a file) (default: all registered for the task)",
    )
    b.add_argument("--instances", help="comma-separated instance names or prefixes (e.g. L1,N3/n=100/s0)")
    b.add_argument(
        "--split",
        choices=("dev", "test"),
        default="dev",
        help="dev (public seeds) or test (hidden seeds, needs $PAPERGYM_TEST_SECRET)",
    )
    b.add_argument("--solver-seeds", help="solver seeds: count (3 -> 0,1,2), range a:b or list (default: seed 0)")
    b.add_argument("--budget-seconds", type=float, help="wall-clock budget per solve (default: the task's)")
    b.add_argument("--max-iterations", type=int, help="iteration budget per solve (default: the task's)")
    b.add_argument("--backend", choices=BACKENDS, default="joblib", help="executor (default joblib)")
    b.add_argument("--n-jobs", type=int, help="workers (default: all cores)")
    b.add_argument("--scheduler", help="dask scheduler address, or 'slurm' (with --backend dask)")
    b.add_argument("--out", help="output folder (default: papergym-out/<task>/<time>)")
    b.add_argument("--cache-dir", help="folder of cached cell files (default: the user cache)")
    b.add_argument("--no-cache", action="store_true", help="recompute cells even if cached")
    b.add_argument(
        "--hp",
        action="append",
        default=[],
        metavar="SOLVER.NAME=VALUE",
        help="solver hyperparameter, repeatable (e.g. --hp nystrom-lssvm.m=50)",
    )
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    add_run_flags(b)

    sub.add_parser("list", help="environments, tasks and agents")

    s = sub.add_parser(
        "submit",
        allow_abbrev=False,
        help="submit an agent or solver to a leaderboard",
        description="Submit an agent factory (for an environment) or solver factory (for a "
        "task) to a shared board's service (--server URL): a worker evaluates it in "
        "the sandbox on the validation split (public seeds, full feedback) or the "
        "test split (hidden seeds, ranked). Without --server the file is evaluated "
        "here, as a local, unranked run.",
    )
    s.add_argument(
        "entry",
        help="FILE.py:ATTR, the factory: make_agent(problem, *, seed, **hp) (or a batched "
        "factory taking seeds=[...]), or a solver class/factory (seed=..., **hp)",
    )
    s.add_argument("--to", required=True, dest="benchmark", help="environment or task id")
    s.add_argument("--name", help="name on the board (default: the file's stem)")
    s.add_argument(
        "--hp",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="hyperparameter passed to the factory, repeatable",
    )
    s.add_argument(
        "--server",
        metavar="URL",
        help="the board's service (e.g. https://board.example.org); token from $PAPERGYM_TOKEN or `papergym login`",
    )
    s.add_argument(
        "--split",
        choices=("validation", "test"),
        help="with --server: validation (public seeds, full feedback; the default) or test "
        "(hidden seeds, ranked, a daily quota)",
    )
    s.add_argument(
        "--author",
        help="local run: author recorded in the store (default: anonymous); with --server the author is the token's",
    )
    s.add_argument("--db", help="local run: store URL (default: $PAPERGYM_DB or the user's SQLite board)")
    s.add_argument(
        "--sandbox",
        choices=("auto", "full", "bwrap"),
        default="auto",
        help="local run: isolation (auto: the full sandbox where available, else bubblewrap)",
    )
    s.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="local run: rlimits only, no filesystem or network isolation (only for code you trust)",
    )
    s.add_argument(
        "--time-limit", type=float, help="local run: total seconds for the submission (default: the sandbox's)"
    )
    s.add_argument("--quiet", action="store_true", help="no progress messages")

    lb = sub.add_parser(
        "leaderboard",
        allow_abbrev=False,
        help="show, render or refresh the leaderboards",
        description="papergym leaderboard [ID ...] prints the boards; --html DIR writes the "
        "static site; 'refresh [ID ...]' scores the reference agents and solvers; "
        "'delete SUBMISSION_ID ...' removes submissions and their runs (the id column "
        "of the printed board).",
    )
    lb.add_argument(
        "targets",
        nargs="*",
        metavar="[refresh|delete] ID",
        help="benchmark ids (default: all with results); after 'delete': submission ids",
    )
    lb.add_argument("--db", help="store URL (default: $PAPERGYM_DB or the user's SQLite board)")
    lb.add_argument("--html", metavar="DIR", help="write the static site (index.html + a page per board) to DIR")
    lb.add_argument(
        "--include",
        default="",
        help="refresh: also score these references skipped by default for their cost (comma list, e.g. pinn)",
    )
    lb.add_argument("--only", help="refresh: only these references (comma list)")
    lb.add_argument(
        "--force",
        action="store_true",
        help="refresh: re-score references already scored; delete: also a submission being evaluated",
    )
    lb.add_argument(
        "--format", choices=("csv", "json"), help="export one board's table (the columns of its HTML page) to stdout"
    )
    lb.add_argument("--quiet", action="store_true", help="no progress messages")

    sv = sub.add_parser(
        "serve",
        allow_abbrev=False,
        help="run a shared board's HTTP service",
        description="The shared board's HTTP service: submissions from token holders, live "
        "board pages and exports. It holds the evaluator configuration (created "
        "with a fresh secret on first start). --workers N starts N local workers "
        "next to it (one machine); elsewhere, run `papergym worker --db URL` on "
        "each machine against the same PostgreSQL store.",
    )
    sv.add_argument("--db", help="store URL (default: $PAPERGYM_DB or the user's SQLite board)")
    sv.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; put a TLS reverse proxy in front of a public board)",
    )
    sv.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    sv.add_argument(
        "--workers",
        type=int,
        default=0,
        help="local `papergym worker` processes to run next to the service (default 0)",
    )
    sv.add_argument(
        "--test-quota", type=int, default=5, help="test-split submissions per author and board in 24 hours (default 5)"
    )
    sv.add_argument("--max-upload-kb", type=int, default=1000, help="largest submission file in KiB (default 1000)")

    wk = sub.add_parser(
        "worker",
        allow_abbrev=False,
        help="evaluate queued submissions of a shared board",
        description="Claims queued submissions from the store under a lease and evaluates them "
        "in the full sandbox; a job whose worker dies is requeued when its lease "
        "expires. Needs the evaluator configuration (its secret) of the board.",
    )
    wk.add_argument("--db", help="store URL (default: $PAPERGYM_DB or the user's SQLite board)")
    wk.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="evaluate on a dask cluster: its scheduler address (tcp://host:8786) or 'slurm'",
    )
    wk.add_argument(
        "--lease", type=float, default=60.0, help="seconds of a job's lease, renewed while it runs (default 60)"
    )
    wk.add_argument("--once", action="store_true", help="evaluate at most one queued job, then exit")

    ad = sub.add_parser(
        "admin",
        allow_abbrev=False,
        help="authors and API tokens of a shared board",
        description="papergym admin token create AUTHOR | token revoke AUTHOR | authors",
    )
    ad_sub = ad.add_subparsers(dest="admin_command", required=True, metavar="{token,authors}")
    tk = ad_sub.add_parser("token", allow_abbrev=False, help="create or revoke an author's API tokens")
    tk.add_argument("action", choices=("create", "revoke"))
    tk.add_argument("author", help="the author's name (1-64 printable characters)")
    tk.add_argument("--db", help="store URL (default: $PAPERGYM_DB or the user's SQLite board)")
    au = ad_sub.add_parser("authors", allow_abbrev=False, help="list the authors and their active tokens")
    au.add_argument("--db", help="store URL (default: $PAPERGYM_DB or the user's SQLite board)")

    lg = sub.add_parser(
        "login",
        allow_abbrev=False,
        help="store an API token for a board's service",
        description="Checks the token with the board and stores it for that server in the user "
        "config folder (mode 0600). Without --token it is read from stdin.",
    )
    lg.add_argument("--server", required=True, metavar="URL", help="the board's service")
    lg.add_argument("--token", help="the token (default: read from stdin)")
    ck = sub.add_parser(
        "check",
        allow_abbrev=False,
        help="conformance test of an agent or solver file before submitting it (in-process, not sandboxed)",
        description="Runs FILE.py:ATTR against a board: static (the file parses, ATTR is "
        "defined), import (the right kind of factory for the id), protocol (a short "
        "episode / solve on the first public seed), determinism (the same seed twice), "
        "run (a short run with the board's configuration and metric per seed). It runs "
        "IN THIS PROCESS, NOT SANDBOXED: it is your own code on your own machine. "
        "Exit status 0 when every check passes, 1 otherwise, 2 on bad arguments.",
    )
    ck.add_argument("entry", help="FILE.py:ATTR, as for papergym submit")
    ck.add_argument("--to", required=True, dest="benchmark", help="environment or task id")
    ck.add_argument(
        "--seeds",
        help="public seeds: a list (0,1), range (0:3) or count (3); the first is used by "
        "the protocol and determinism checks (default: seed 0, and the board's "
        "public validation split for the short run)",
    )
    ck.add_argument(
        "--quick",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="short run: env horizons capped at 1000 rounds, a task's first 3 strata (default on; "
        "--no-quick: the board's horizon and every stratum)",
    )
    ck.add_argument(
        "--hp",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="hyperparameter passed to the factory, repeatable",
    )
    ck.add_argument("--json", action="store_true", help="print the report as JSON")
    from papergym.leaderboard.fjsp_cli import add_fjsp_parser

    add_fjsp_parser(sub)
    sweep.add_sweep_parser(sub)
    return p


class _StderrHandler(logging.StreamHandler):
    """Writes to the current ``sys.stderr`` (which tests and callers may swap)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


class _Formatter(logging.Formatter):
    """Progress lines and INFO as they are; ``papergym: warning: ...`` / ``papergym: error: ...``; DEBUG with
    the logger's name."""

    def format(self, record: logging.LogRecord) -> str:
        msg = record.getMessage()
        if record.exc_info:
            msg += "\n" + self.formatException(record.exc_info)
        if getattr(record, "papergym_progress", False) or record.levelno == logging.INFO:
            return msg
        if record.levelno < logging.INFO:
            return f"[{record.name}] {msg}"
        return f"papergym: {record.levelname.lower()}: {msg}"


def _log_level(args: argparse.Namespace) -> int:
    """``-q``: errors only; default WARNING; ``-v`` INFO; ``-vv`` DEBUG."""
    if args.log_quiet:
        if args.verbose:
            raise CLIError("-q and -v exclude each other")
        return logging.ERROR
    return {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)


def _process_seconds() -> float | None:
    """Seconds since this process started (Linux ``/proc``), start-up included; ``None`` elsewhere."""
    try:
        with open("/proc/self/stat") as fh:
            start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


def main(argv: list[str] | None = None) -> int:
    t_main = time.perf_counter()
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    try:
        level = _log_level(args)
    except CLIError as exc:
        return fail(str(exc))
    # the command's handler on the package logger (never the root logger); serve and worker configure their own
    pkg_logger = logging.getLogger("papergym")
    old_level = pkg_logger.level
    handler = None
    pkg_logger.setLevel(level)
    if args.command not in ("serve", "worker"):
        handler = _StderrHandler()
        handler.setFormatter(_Formatter())
        pkg_logger.addHandler(handler)
    try:
        rc = _dispatch(args, extra)
        if args.command in ("compare", "bench", "sweep") and rc in (0, 1):
            from papergym.leaderboard.runner.progress import format_duration

            whole = _process_seconds() if argv is None else None
            whole = time.perf_counter() - t_main if whole is None else whole
            print(
                f"\npapergym {args.command}: {format_duration(whole)} wall in all ({whole:.1f} s: start-up, runs, "
                "figures)"
            )
        return rc
    finally:
        if handler is not None:
            pkg_logger.removeHandler(handler)
        pkg_logger.setLevel(old_level)


def _dispatch(args: argparse.Namespace, extra: list[str]) -> int:
    try:
        if args.command == "list":
            if extra:
                raise CLIError(f"unexpected arguments: {' '.join(extra)}")
            return listing.cmd_list()
        if args.command == "bench":
            return bench.cmd_bench(args, extra)
        if args.command == "submit":
            return submit.cmd_submit(args, extra)
        if args.command == "check":
            return check.cmd_check(args, extra)
        if args.command == "leaderboard":
            return board.cmd_leaderboard(args, extra)
        if args.command == "serve":
            return service.cmd_serve(args, extra)
        if args.command == "worker":
            return service.cmd_worker(args, extra)
        if args.command == "admin":
            return service.cmd_admin(args, extra)
        if args.command == "login":
            return service.cmd_login(args, extra)
        if args.command == "sweep":
            return sweep.cmd_sweep(args, extra)
        if args.command == "fjsp":
            if extra:
                raise CLIError(f"unexpected arguments: {' '.join(extra)}")
            from papergym.leaderboard.fjsp_cli import run_fjsp

            return run_fjsp(args)
        return compare.cmd_compare(args, extra)
    except CLIError as exc:
        return fail(str(exc))
    except BrokenPipeError:  # output piped into `head` and closed: not an error of ours
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        resumable = args.command in ("compare", "bench", "sweep")
        print(
            "\npapergym: interrupted"
            + ("; finished runs are cached: run the same command again to resume" if resumable else ""),
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
