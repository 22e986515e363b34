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
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["build_parser", "main"]

logger = logging.getLogger("papergym.leaderboard.cli")


class CLIError(Exception):
    """A bad command-line value (exit status 2)."""


def _parse_seeds(text: str) -> list[int]:
    """``10`` -> 0..9; ``5:15`` -> 5..14; ``1,4,9`` -> those seeds."""
    text = text.strip()
    try:
        if "," in text:
            seeds = [int(x) for x in text.split(",") if x.strip()]
        elif ":" in text:
            a, b = text.split(":", 1)
            seeds = list(range(int(a), int(b)))
        else:
            n = int(text)
            if n < 1:
                raise CLIError(f"--seeds: the number of seeds must be at least 1, got {n}")
            seeds = list(range(n))
    except ValueError:
        raise CLIError(f"--seeds: expected a count (10), a range (5:15) or a list (1,4,9), got {text!r}") from None
    if not seeds:
        raise CLIError(f"--seeds: {text!r} gives no seeds")
    if any(s < 0 for s in seeds):
        raise CLIError(f"--seeds: seeds must be non-negative, got {text!r}")
    return seeds


def _parse_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _parse_list_value(text: str) -> Any:
    """``1000,10000`` -> ``[1000, 10000]``; anything else as :func:`_parse_value`."""
    v = _parse_value(text)
    if isinstance(v, str) and "," in v:
        return [_parse_value(x.strip()) for x in v.split(",") if x.strip()]
    return v


def _parse_extra(extra: list[str], lists: bool = False, flags: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``--some-name value`` / ``--some-name=value`` pairs -> ``{"some_name": value}``; a name in ``flags`` (a
    switch, e.g. a task's boolean argument) may also stand alone: ``--step-size-grid`` -> ``True``."""
    out: dict[str, Any] = {}
    i = 0
    while i < len(extra):
        tok = extra[i]
        if not tok.startswith("--") or len(tok) < 3:
            raise CLIError(f"unexpected argument {tok!r}")
        if "=" in tok:
            name, value = tok[2:].split("=", 1)
            i += 1
        else:
            name = tok[2:]
            if i + 1 >= len(extra) or extra[i + 1].startswith("--"):
                if name.replace("-", "_") in flags:
                    out[name.replace("-", "_")] = True
                    i += 1
                    continue
                raise CLIError(f"option --{name} needs a value")
            value = extra[i + 1]
            i += 2
        out[name.replace("-", "_")] = _parse_list_value(value) if lists else _parse_value(value)
    return out


# spelling a user may reach for -> the constructor argument (applied only where the env has the target)
_ALIASES = {"dim": "d", "jobs": "n_jobs", "machines": "n_machines"}  # --n-jobs is the workers option


def _apply_aliases(env_id: str, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    import inspect

    from papergym.leaderboard.runner.compare import _env_class

    params = inspect.signature(_env_class(env_id)).parameters
    out: dict[str, Any] = {}
    for k, v in env_kwargs.items():
        target = _ALIASES.get(k)
        if target is not None and k not in params and target in params:
            if target in env_kwargs:
                raise CLIError(f"--{k} is an alias of --{target}; give only one of them")
            k = target
        out[k] = v
    return out


def _parse_hp(items: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        if "=" not in item or "." not in item.split("=", 1)[0]:
            raise CLIError(f"--hp: expected AGENT.NAME=VALUE (e.g. mdbe.c0=0.3), got {item!r}")
        lhs, value = item.split("=", 1)
        agent, name = lhs.split(".", 1)
        out.setdefault(agent, {})[name.replace("-", "_")] = _parse_value(value)
    return out


def _version() -> str:
    """The installed distribution's version (``importlib.metadata``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("papergym")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without an install
        return "unknown (not installed)"


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    """Options shared by ``compare``, ``bench`` and ``sweep``."""
    p.add_argument("--progress-every", type=float, default=30.0, metavar="SECONDS",
                   help="when stderr is not a terminal: a progress line every SECONDS (default 30; 0: none)")
    p.add_argument("--allow-failures", action="store_true",
                   help="exit 0 even when runs failed (they are still reported)")


def _progress_args(args: argparse.Namespace) -> dict[str, Any]:
    """``progress`` and ``progress_every`` of the runners from ``--quiet``, ``-q`` and ``--progress-every``."""
    if not args.progress_every >= 0:
        raise CLIError(f"--progress-every must be a number of seconds >= 0, got {args.progress_every}")
    quiet = args.quiet or args.log_quiet
    return {"progress": False if quiet else None, "progress_every": args.progress_every}


def _report_failures(errors: list[dict[str, Any]], who: str, what: str, allow: bool) -> int:
    """Print the failed runs to stderr (their count, then the first error of each ``who`` (agent or solver))
    and return the exit status: 1, or 0 with ``--allow-failures``."""
    if not errors:
        return 0
    by: dict[str, list[dict[str, Any]]] = {}
    for e in errors:
        by.setdefault(str(e.get(who)), []).append(e)
    lines = [f"\n{len(errors)} {what}(s) failed:"]
    for name, errs in by.items():
        e = errs[0]
        where = ", ".join(f"{k} {e[k]}" for k in ("instance", "horizon", "shifts", "seed") if k in e)
        status = f"{e['status']}: " if e.get("status") not in (None, "error") else ""
        lines.append(f"  {name}: {len(errs)} failed; first ({where}): {status}{e.get('error', '')}")
    if allow:
        lines.append("(--allow-failures: exit status 0)")
    print("\n".join(lines), file=sys.stderr)
    return 0 if allow else 1


def build_parser() -> argparse.ArgumentParser:
    from papergym.leaderboard.runner.executors import BACKENDS

    p = argparse.ArgumentParser(prog="papergym", allow_abbrev=False,
                                description="papergym: benchmark gym of NeurIPS 2025 papers")
    p.add_argument("--version", action="version", version=f"papergym {_version()}")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="more messages on stderr: -v informational (INFO), -vv debugging (DEBUG)")
    p.add_argument("-q", dest="log_quiet", action="store_true",
                   help="errors only on stderr: no warnings, no progress (results still print)")
    sub = p.add_subparsers(dest="command", required=True,
                           metavar="{compare,sweep,bench,list,submit,leaderboard,serve,worker,admin,login,fjsp}")

    # allow_abbrev=False: env arguments such as --m or --d must never be taken for a prefix of --mode
    c = sub.add_parser("compare", allow_abbrev=False, help="regret comparison of agents over seeds on an environment",
                       description="Regret comparison of agents over seeds. Unknown --options are env "
                                   "constructor arguments (e.g. --phases 8).")
    c.add_argument("env_id", help="environment id, e.g. NonStatLipschitz-v0")
    c.add_argument("--agents", help="comma-separated agent names (default: all registered for the env)")
    c.add_argument("--seeds", help="count (10), range (5:15) or list (1,4,9); default: the env's compare "
                                    "default (NonStatLipschitz-v0: 100, the paper's protocol), else 10")
    c.add_argument("--horizon", type=int, help="number of rounds T (default: the env's compare default, "
                                               "NonStatLipschitz-v0: 100000, else the env's own)")
    c.add_argument("--instance", help="instance family (see `papergym list`)")
    c.add_argument("--backend", choices=BACKENDS, default="joblib", help="executor (default joblib)")
    c.add_argument("--n-jobs", type=int, help="workers (default: all cores)")
    c.add_argument("--scheduler", help="dask scheduler address, or 'slurm' (with --backend dask)")
    c.add_argument("--out", help="output folder (default: papergym-out/<env>/<time>)")
    c.add_argument("--cache-dir", help="folder of cached cell files (default: the user cache)")
    c.add_argument("--no-cache", action="store_true", help="recompute cells even if cached")
    c.add_argument("--hp", action="append", default=[], metavar="AGENT.NAME=VALUE",
                   help="agent hyperparameter, repeatable (e.g. --hp mdbe.c0=0.3)")
    c.add_argument("--mode", choices=("auto", "batched", "per-run"), default="auto",
                   help="batched numpy runs where available (auto) or one Gymnasium loop per seed")
    c.add_argument("--log-x", action="store_true", help="log-scaled round axis in the figure")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_run_flags(c)

    b = sub.add_parser("bench", allow_abbrev=False, help="solver benchmark on a task",
                       description="Solver benchmark on a task. Unknown --options are task arguments (e.g. "
                                   "--sizes 1000,10000) or solver hyperparameters (e.g. --m 50; a comma list "
                                   "sweeps: --m 10,20,50).")
    b.add_argument("task_id", help="task id, e.g. NystromODE-v0")
    b.add_argument("--solvers", help="comma-separated solver names or FILE.py:ATTR (a solver class or factory "
                                     "loaded from a file) (default: all registered for the task)")
    b.add_argument("--instances", help="comma-separated instance names or prefixes (e.g. L1,N3/n=100/s0)")
    b.add_argument("--split", choices=("dev", "test"), default="dev",
                   help="dev (public seeds) or test (hidden seeds, needs $PAPERGYM_TEST_SECRET)")
    b.add_argument("--solver-seeds", help="solver seeds: count (3 -> 0,1,2), range a:b or list (default: seed 0)")
    b.add_argument("--budget-seconds", type=float, help="wall-clock budget per solve (default: the task's)")
    b.add_argument("--max-iterations", type=int, help="iteration budget per solve (default: the task's)")
    b.add_argument("--backend", choices=BACKENDS, default="joblib", help="executor (default joblib)")
    b.add_argument("--n-jobs", type=int, help="workers (default: all cores)")
    b.add_argument("--scheduler", help="dask scheduler address, or 'slurm' (with --backend dask)")
    b.add_argument("--out", help="output folder (default: papergym-out/<task>/<time>)")
    b.add_argument("--cache-dir", help="folder of cached cell files (default: the user cache)")
    b.add_argument("--no-cache", action="store_true", help="recompute cells even if cached")
    b.add_argument("--hp", action="append", default=[], metavar="SOLVER.NAME=VALUE",
                   help="solver hyperparameter, repeatable (e.g. --hp nystrom-lssvm.m=50)")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_run_flags(b)

    sub.add_parser("list", help="environments, tasks and agents")

    s = sub.add_parser("submit", allow_abbrev=False, help="submit an agent or solver to a leaderboard",
                       description="Submit an agent factory (for an environment) or solver factory (for a "
                                   "task) to a shared board's service (--server URL): a worker evaluates it in "
                                   "the sandbox on the validation split (public seeds, full feedback) or the "
                                   "test split (hidden seeds, ranked). Without --server the file is evaluated "
                                   "here, as a local, unranked run.")
    s.add_argument("entry", help="FILE.py:ATTR, the factory: make_agent(problem, *, seed, **hp) (or a batched "
                                 "factory taking seeds=[...]), or a solver class/factory (seed=..., **hp)")
    s.add_argument("--to", required=True, dest="benchmark", help="environment or task id")
    s.add_argument("--name", help="name on the board (default: the file's stem)")
    s.add_argument("--hp", action="append", default=[], metavar="NAME=VALUE",
                   help="hyperparameter passed to the factory, repeatable")
    s.add_argument("--server", metavar="URL", help="the board's service (e.g. https://board.example.org); "
                                                   "token from $PAPERGYM_TOKEN or `papergym login`")
    s.add_argument("--split", choices=("validation", "test"),
                   help="with --server: validation (public seeds, full feedback; the default) or test "
                        "(hidden seeds, ranked, a daily quota)")
    s.add_argument("--author", help="local run: author recorded in the store (default: anonymous); with "
                                    "--server the author is the token's")
    s.add_argument("--db", help="local run: store URL (default: $PAPERGYM_DB or the user's SQLite board)")
    s.add_argument("--sandbox", choices=("auto", "full", "bwrap"), default="auto",
                   help="local run: isolation (auto: the full sandbox where available, else bubblewrap)")
    s.add_argument("--unsafe-no-sandbox", action="store_true",
                   help="local run: rlimits only, no filesystem or network isolation (only for code you trust)")
    s.add_argument("--time-limit", type=float, help="local run: total seconds for the submission "
                                                     "(default: the sandbox's)")
    s.add_argument("--quiet", action="store_true", help="no progress messages")

    lb = sub.add_parser("leaderboard", allow_abbrev=False, help="show, render or refresh the leaderboards",
                        description="papergym leaderboard [ID ...] prints the boards; --html DIR writes the "
                                    "static site; 'refresh [ID ...]' scores the reference agents and solvers; "
                                    "'delete SUBMISSION_ID ...' removes submissions and their runs (the id column "
                                    "of the printed board).")
    lb.add_argument("targets", nargs="*", metavar="[refresh|delete] ID",
                    help="benchmark ids (default: all with results); after 'delete': submission ids")
    lb.add_argument("--db", help="store URL (default: $PAPERGYM_DB or the user's SQLite board)")
    lb.add_argument("--html", metavar="DIR", help="write the static site (index.html + a page per board) to DIR")
    lb.add_argument("--include", default="", help="refresh: also score these references skipped by default "
                                                  "for their cost (comma list, e.g. pinn)")
    lb.add_argument("--only", help="refresh: only these references (comma list)")
    lb.add_argument("--force", action="store_true", help="refresh: re-score references already scored; "
                                                          "delete: also a submission being evaluated")
    lb.add_argument("--format", choices=("csv", "json"),
                    help="export one board's table (the columns of its HTML page) to stdout")
    lb.add_argument("--quiet", action="store_true", help="no progress messages")

    sv = sub.add_parser("serve", allow_abbrev=False, help="run a shared board's HTTP service",
                        description="The shared board's HTTP service: submissions from token holders, live "
                                    "board pages and exports. It holds the evaluator configuration (created "
                                    "with a fresh secret on first start). --workers N starts N local workers "
                                    "next to it (one machine); elsewhere, run `papergym worker --db URL` on "
                                    "each machine against the same PostgreSQL store.")
    sv.add_argument("--db", help="store URL (default: $PAPERGYM_DB or the user's SQLite board)")
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; put a TLS "
                                                       "reverse proxy in front of a public board)")
    sv.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    sv.add_argument("--workers", type=int, default=0, help="local `papergym worker` processes to run next to "
                                                           "the service (default 0)")
    sv.add_argument("--test-quota", type=int, default=5, help="test-split submissions per author and board in "
                                                              "24 hours (default 5)")
    sv.add_argument("--max-upload-kb", type=int, default=1000, help="largest submission file in KiB "
                                                                   "(default 1000)")

    wk = sub.add_parser("worker", allow_abbrev=False, help="evaluate queued submissions of a shared board",
                        description="Claims queued submissions from the store under a lease and evaluates them "
                                    "in the full sandbox; a job whose worker dies is requeued when its lease "
                                    "expires. Needs the evaluator configuration (its secret) of the board.")
    wk.add_argument("--db", help="store URL (default: $PAPERGYM_DB or the user's SQLite board)")
    wk.add_argument("--scheduler", metavar="ADDR", help="evaluate on a dask cluster: its scheduler address "
                                                        "(tcp://host:8786) or 'slurm'")
    wk.add_argument("--lease", type=float, default=60.0, help="seconds of a job's lease, renewed while it runs "
                                                             "(default 60)")
    wk.add_argument("--once", action="store_true", help="evaluate at most one queued job, then exit")

    ad = sub.add_parser("admin", allow_abbrev=False, help="authors and API tokens of a shared board",
                        description="papergym admin token create AUTHOR | token revoke AUTHOR | authors")
    ad_sub = ad.add_subparsers(dest="admin_command", required=True, metavar="{token,authors}")
    tk = ad_sub.add_parser("token", allow_abbrev=False, help="create or revoke an author's API tokens")
    tk.add_argument("action", choices=("create", "revoke"))
    tk.add_argument("author", help="the author's name (1-64 printable characters)")
    tk.add_argument("--db", help="store URL (default: $PAPERGYM_DB or the user's SQLite board)")
    au = ad_sub.add_parser("authors", allow_abbrev=False, help="list the authors and their active tokens")
    au.add_argument("--db", help="store URL (default: $PAPERGYM_DB or the user's SQLite board)")

    lg = sub.add_parser("login", allow_abbrev=False, help="store an API token for a board's service",
                        description="Checks the token with the board and stores it for that server in the user "
                                    "config folder (mode 0600). Without --token it is read from stdin.")
    lg.add_argument("--server", required=True, metavar="URL", help="the board's service")
    lg.add_argument("--token", help="the token (default: read from stdin)")
    ck = sub.add_parser("check", allow_abbrev=False, help="conformance test of an agent or solver file before "
                                                         "submitting it (in-process, not sandboxed)",
                        description="Runs FILE.py:ATTR against a board: static (the file parses, ATTR is "
                                    "defined), import (the right kind of factory for the id), protocol (a short "
                                    "episode / solve on the first public seed), determinism (the same seed twice), "
                                    "run (a short run with the board's configuration and metric per seed). It runs "
                                    "IN THIS PROCESS, NOT SANDBOXED: it is your own code on your own machine. "
                                    "Exit status 0 when every check passes, 1 otherwise, 2 on bad arguments.")
    ck.add_argument("entry", help="FILE.py:ATTR, as for papergym submit")
    ck.add_argument("--to", required=True, dest="benchmark", help="environment or task id")
    ck.add_argument("--seeds", help="public seeds: a list (0,1), range (0:3) or count (3); the first is used by "
                                    "the protocol and determinism checks (default: seed 0, and the board's "
                                    "public validation split for the short run)")
    ck.add_argument("--quick", action=argparse.BooleanOptionalAction, default=True,
                    help="short run: env horizons capped at 1000 rounds, a task's first 3 strata (default on; "
                         "--no-quick: the board's horizon and every stratum)")
    ck.add_argument("--hp", action="append", default=[], metavar="NAME=VALUE",
                    help="hyperparameter passed to the factory, repeatable")
    ck.add_argument("--json", action="store_true", help="print the report as JSON")
    from papergym.leaderboard.fjsp_cli import add_fjsp_parser

    add_fjsp_parser(sub)
    _add_sweep_parser(sub)
    return p


def _open_store(url: str | None):
    from papergym.leaderboard.board.store import Store

    try:
        store = Store(url)
    except ImportError as exc:
        raise CLIError(str(exc)) from None
    except ValueError as exc:
        raise CLIError(f"--db: {exc}") from None
    # a submission whose evaluating process died (its lease expired) is requeued, or ended as `error`
    # when it was evaluated locally: no `running` row stays forever
    store.requeue_expired()
    return store


def _rank_line(bb: Any, sid: int) -> str:
    import math

    from papergym.leaderboard.board.terminal import clean_terminal

    tab = bb.table
    row = tab[tab.submission_id == sid]
    if not len(row):
        return f"submission {sid} is not on the current board of {bb.benchmark_id}"
    r = row.iloc[0]
    n_ranked = int(tab.ranked.sum())
    if not r.ranked:
        why = r.message or ("reference line, never ranked" if r.role in ("oracle", "reference") else r.status)
        return f"not ranked ({clean_terminal(r.status)}): {clean_terminal(why)}"  # the message is the submission's
    lo, hi = int(r.rank_lo), int(r.rank_hi)
    interval = f"{lo}" if lo == hi else f"{lo}-{hi}"
    tie = " (tied)" if r.tie else ""
    score = f"{r.score:.6g}" if math.isfinite(r.score) else "-"
    line = (f"rank {int(r['rank'])}{tie} of {n_ranked} on {bb.benchmark_id} (95% rank interval {interval}); "
            f"{bb.metric} = {score} [{r.ci_low:.6g}, {r.ci_high:.6g}]")
    if not tab.role.isin(("paper", "baseline", "oracle", "reference")).any():
        line += (f"\n(the board has no reference entries yet, so this rank compares nothing: "
                 f"`papergym leaderboard refresh {bb.benchmark_id}` scores the paper's method and its baselines)")
    return line


def _submit_hp(items: list[str]) -> dict[str, Any]:
    hp: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise CLIError(f"--hp: expected NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        k = k.replace("-", "_")
        if not k.isidentifier():
            raise CLIError(f"--hp: {k!r} is not a valid argument name")
        hp[k] = _parse_value(v)
    return hp


def _cmd_submit(args: argparse.Namespace, extra: list[str]) -> int:
    from papergym.leaderboard.board.configs import board_ids
    from papergym.leaderboard.board.evaluate import REFERENCE_AUTHOR, _check_label
    from papergym.leaderboard.board.sandbox import check_entry_statically, load_entry

    if extra:
        raise CLIError(f"unexpected arguments: {' '.join(extra)}")
    ids = board_ids()
    if args.benchmark not in ids:
        raise CLIError(f"--to: unknown environment or task {args.benchmark!r}; valid: {', '.join(ids)}")
    try:
        path, attr = load_entry(args.entry)
        check_entry_statically(path, attr)
    except (ValueError, FileNotFoundError) as exc:
        raise CLIError(f"entry: {exc}") from None
    hp = _submit_hp(args.hp)
    name = args.name if args.name is not None else path.stem
    try:
        _check_label(name, "name")
    except ValueError as exc:
        raise CLIError(f"--name: {exc}") from None
    if args.server is not None:
        local_only = [opt for opt, given in (("--author", args.author is not None), ("--db", args.db is not None),
                                             ("--sandbox", args.sandbox != "auto"),
                                             ("--unsafe-no-sandbox", args.unsafe_no_sandbox),
                                             ("--time-limit", args.time_limit is not None)) if given]
        if local_only:
            raise CLIError(f"{', '.join(local_only)}: only for a local run; with --server the board's service "
                           "decides (the author is the token's)")
        return _submit_remote(args, name, hp)
    if args.split is not None:
        raise CLIError("--split goes with --server: a run without a server is a local, unranked run "
                       "(split 'local')")
    author = args.author if args.author is not None else "anonymous"
    try:
        _check_label(author, "author")
    except ValueError as exc:
        raise CLIError(f"--author: {exc}") from None
    if author == REFERENCE_AUTHOR:
        raise CLIError(f"--author: {REFERENCE_AUTHOR!r} is reserved for the registry's reference agents and solvers")
    return _submit_local(args, name, author, hp)


_UNSAFE_WARNING = """\
papergym: WARNING: --unsafe-no-sandbox: the submitted file runs with resource limits (rlimits) ONLY.
papergym: WARNING: it can read and write your files, use the network and see everything your user can.
papergym: WARNING: use it only for code you wrote or fully trust; the result is local and unranked."""


def _local_sandbox(args: argparse.Namespace) -> str:
    """The sandbox mode of a local run (:mod:`papergym.leaderboard.board.sandbox`), checked up front."""
    if args.unsafe_no_sandbox:
        if args.sandbox != "auto":
            raise CLIError(f"--unsafe-no-sandbox and --sandbox {args.sandbox} exclude each other")
        print(_UNSAFE_WARNING, file=sys.stderr)
        return "unsafe-rlimits"
    if args.sandbox == "bwrap":
        from papergym.leaderboard.board.sandbox import bwrap_available

        ok, why = bwrap_available()
        if not ok:
            raise CLIError(f"--sandbox bwrap: bubblewrap is not usable here: {why}")
    elif args.sandbox == "full":
        from papergym.leaderboard.board.isolation import isolation_status

        status = isolation_status()
        if not status.full:
            raise CLIError("--sandbox full: the full sandbox is not available here; missing: "
                           + "; ".join(status.missing()))
    return args.sandbox


def _submit_local(args: argparse.Namespace, name: str, author: str, hp: dict[str, Any]) -> int:
    """``papergym submit`` without ``--server``: evaluated here, stored with split ``local`` in this
    machine's store (whose boards show it next to the references scored here, never on a shared board)."""
    import dataclasses

    from papergym.leaderboard.board.client import format_feedback
    from papergym.leaderboard.board.evaluate import feedback, submit
    from papergym.leaderboard.board.ranking import build_benchmark_board
    from papergym.leaderboard.board.sandbox import Limits, SandboxError
    from papergym.leaderboard.board.text import format_board_table

    limits = Limits()
    if args.time_limit is not None:
        if not args.time_limit > 0:
            raise CLIError(f"--time-limit must be positive, got {args.time_limit}")
        limits = dataclasses.replace(limits, submission_seconds=float(args.time_limit))
    sandbox = _local_sandbox(args)
    store = _open_store(args.db)
    try:
        progress = None if args.quiet else (lambda msg: print(f"  {msg}", file=sys.stderr))
        try:
            sid = submit(store, args.entry, args.benchmark, name=name, author=author, hyperparameters=hp,
                         sandbox=sandbox, limits=limits, progress=progress)
        except SandboxError as exc:  # e.g. no sandbox mode usable on this machine
            raise CLIError(f"--sandbox {args.sandbox}: {exc}") from None
        fb = feedback(store, sid)
        bb = build_benchmark_board(store, args.benchmark)
    finally:
        store.close()
    print(format_feedback({"id": sid, "status": fb["status"], "feedback": fb}))
    print(_rank_line(bb, sid) + " (this machine's board)")
    print()
    print(format_board_table(bb))
    print(f"\nThis was a LOCAL run, UNRANKED on any shared board (split 'local': evaluated on this machine with its "
          "own secret and seeds; the rank above is on this machine's store only).\nTo be ranked, submit it to a "
          f"board's service: papergym submit {args.entry} --to {args.benchmark} --server URL --split test")
    return 0 if fb["status"] == "ok" else 1


def _submit_remote(args: argparse.Namespace, name: str, hp: dict[str, Any]) -> int:
    """``papergym submit --server URL``: upload, poll with one progress line on stderr, print the feedback."""
    from papergym.leaderboard.board.client import (
        TOKEN_ENV,
        BoardClient,
        BoardClientError,
        format_feedback,
        is_local,
        load_token,
        normalize_server,
    )
    from papergym.leaderboard.board.sandbox import load_entry
    from papergym.leaderboard.board.terminal import clean_terminal

    try:
        server = normalize_server(args.server)
        token = load_token(server)
    except ValueError as exc:
        raise CLIError(f"--server: {exc}") from None
    if not token:
        raise CLIError(f"no token for {server}: set ${TOKEN_ENV} or run `papergym login --server {server}` "
                       "(the board's operator creates tokens with `papergym admin token create AUTHOR`)")
    if server.startswith("http://") and not is_local(server):
        print(f"papergym: warning: {server} is plain http: the token travels unencrypted; use https",
              file=sys.stderr)
    path, attr = load_entry(args.entry)
    split = args.split or "validation"
    tty = sys.stderr.isatty()
    last = [""]

    def progress(answer: dict[str, Any], elapsed: float) -> None:
        if args.quiet:
            return
        line = f"  submission {answer.get('id')}: {clean_terminal(answer.get('status'))} ({elapsed:.0f} s)"
        if tty:
            print("\r" + line.ljust(60), end="", file=sys.stderr, flush=True)
        elif answer.get("status") != last[0]:
            print(line, file=sys.stderr, flush=True)
        last[0] = str(answer.get("status"))

    sub: dict[str, Any] = {}
    with BoardClient(server, token) as client:
        try:
            sub = client.submit(path, board=args.benchmark, attr=attr, name=name, split=split, hyperparameters=hp)
            if not args.quiet:
                print(f"submitted {clean_terminal(name)} to {args.benchmark} ({split} split) as submission "
                      f"{sub['id']}; waiting for a worker", file=sys.stderr)
            answer = client.wait(int(sub["id"]), progress=progress)
        except BoardClientError as exc:
            if tty and last[0]:
                print(file=sys.stderr)
            hint = ""
            if exc.status == 401:
                hint = f"\n(check the token: `papergym login --server {server}`, or ${TOKEN_ENV})"
            elif exc.status == 429 and exc.retry_after:
                hint = f"\n(try again in {exc.retry_after / 3600:.1f} h; the validation split has no quota)"
            print(f"papergym: error: {exc}{hint}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            if sub:
                print(f"\npapergym: stopped waiting; submission {sub['id']} stays queued on the board "
                      f"({server}/api/v1/submissions/{sub['id']})", file=sys.stderr)
            return 130
    if tty and not args.quiet:
        print(file=sys.stderr)
    print(format_feedback(answer))
    if split == "test" and answer.get("status") == "ok":
        print(f"\nthe board: {server}/boards/{args.benchmark}")
    return 0 if answer.get("status") == "ok" else 1


def _cmd_leaderboard(args: argparse.Namespace, extra: list[str]) -> int:
    from papergym.leaderboard.board.ranking import build_benchmark_board, build_board
    from papergym.leaderboard.board.configs import board_ids
    from papergym.leaderboard.board.terminal import clean_terminal

    if extra:
        raise CLIError(f"unexpected arguments: {' '.join(extra)}")
    targets = list(args.targets)
    if targets and targets[0] == "delete":
        return _delete_submissions(args, targets[1:])
    do_refresh = bool(targets) and targets[0] == "refresh"
    if do_refresh:
        targets = targets[1:]
    valid = board_ids()
    bad = [t for t in targets if t not in valid]
    if bad:
        raise CLIError(f"unknown environment or task {bad[0]!r}; valid: {', '.join(valid)}")
    if not do_refresh and (args.include or args.only or args.force):
        raise CLIError("--include, --only and --force go with 'papergym leaderboard refresh'")
    if args.format is not None:
        if do_refresh or args.html is not None or len(targets) != 1:
            raise CLIError("--format exports one board: papergym leaderboard ID --format csv|json")
        return _export_board(args, targets[0])
    if args.html is not None:
        out = Path(args.html)
        if out.exists() and not out.is_dir():
            raise CLIError(f"--html: {out} exists and is not a folder")
    store = _open_store(args.db)
    try:
        if do_refresh:
            from papergym.leaderboard.board.evaluate import refresh

            include = [x.strip() for x in args.include.split(",") if x.strip()]
            only = [x.strip() for x in args.only.split(",") if x.strip()] if args.only else None
            progress = None if args.quiet else (lambda msg: print(f"  {msg}", file=sys.stderr))
            t0 = time.perf_counter()
            done = refresh(store, targets or None, include=include, only=only, force=args.force, progress=progress)
            for bid, name, st in done:
                print(clean_terminal(f"{bid:24s} {name:24s} {st}"))
            print(f"refreshed {len(done)} reference entries in {time.perf_counter() - t0:.1f} s")
            if args.html is None:
                return 0
        if args.html is not None:
            from papergym.leaderboard.board.html import write_site

            board = build_board(store, targets or None)
            index = write_site(board, args.html)
            print(f"wrote {index} ({len(board.benchmarks)} board(s))")
            return 0
        from papergym.leaderboard.board.text import format_board_table

        registered = set(store.benchmarks().benchmark_id) if len(store.benchmarks()) else set()
        ids = targets or [b for b in valid if b in registered]
        if not ids:
            print("no results yet: run `papergym leaderboard refresh` to score the reference agents, "
                  "or `papergym submit FILE.py:ATTR --to ID`")
            return 0
        for i, bid in enumerate(ids):
            if i:
                print()
            # the table's cells are cleaned (names, authors, messages are the submitters'); the whole
            # text once more, so that no later column can bring an escape sequence in
            print(clean_terminal(format_board_table(build_benchmark_board(store, bid))))
        return 0
    finally:
        store.close()


def _delete_submissions(args: argparse.Namespace, ids: list[str]) -> int:
    """``papergym leaderboard delete SUBMISSION_ID ...``: each submission and its runs, all or nothing checked
    up front (every id must exist; one being evaluated needs ``--force``)."""
    from papergym.leaderboard.board.terminal import clean_terminal

    if not ids:
        raise CLIError("delete: give the submission ids to delete (the id column of `papergym leaderboard ID`)")
    if args.html is not None or args.format is not None or args.include or args.only:
        raise CLIError("delete takes only submission ids, --db and --force")
    try:
        sids = [int(x) for x in ids]
    except ValueError:
        raise CLIError(f"delete: submission ids are integers, got {' '.join(ids)!r}") from None
    if len(set(sids)) != len(sids):
        raise CLIError("delete: a submission id is given twice")
    store = _open_store(args.db)
    try:
        subs = {sid: store.submission(sid) for sid in sids}
        missing = [str(sid) for sid, sub in subs.items() if sub is None]
        if missing:
            raise CLIError(f"delete: no submission with id {', '.join(missing)} in this store (nothing deleted)")
        busy = [str(sid) for sid, sub in subs.items() if sub["status"] == "running"]
        if busy and not args.force:
            raise CLIError(f"delete: submission {', '.join(busy)} is being evaluated; --force deletes it anyway "
                           "(its worker's results are then refused) (nothing deleted)")
        for sid, sub in subs.items():
            store.delete_submission(sid)
            what = clean_terminal(f"{sub['name']} by {sub['author']} on {sub['benchmark_id']} "
                                  f"(version {sub['version']}, {sub['role']}, {sub['status']})")
            print(f"deleted submission {sid}: {what}")
            if sub["role"] in ("paper", "baseline", "oracle", "reference"):
                print(f"  a reference entry: `papergym leaderboard refresh {sub['benchmark_id']}` scores it again")
    finally:
        store.close()
    return 0


def _export_board(args: argparse.Namespace, benchmark_id: str) -> int:
    """``papergym leaderboard ID --format csv|json``: the board's table, as the service exports it."""
    import datetime as _dt

    from papergym.leaderboard.board.ranking import build_benchmark_board
    from papergym.leaderboard.board.service import board_csv, board_json

    store = _open_store(args.db)
    try:
        bb = build_benchmark_board(store, benchmark_id)
    finally:
        store.close()
    if args.format == "csv":
        sys.stdout.write(board_csv(bb))
    else:
        now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        print(json.dumps(board_json(bb, generated=now), indent=1, allow_nan=False))
    return 0


# ------------------------------------------------------------------------------ the shared board
def _check_full_sandbox(what: str) -> None:
    """Ranked evaluation needs the full sandbox (:mod:`papergym.leaderboard.board.isolation`): checked
    before a worker claims anything, so a machine without it never fails the queue's jobs one by one."""
    from papergym.leaderboard.board.isolation import isolation_status

    status = isolation_status()
    if not status.full:
        raise CLIError(f"{what}: this machine cannot run the full sandbox that ranked evaluation needs; missing: "
                       + "; ".join(status.missing()))


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
        return subprocess.Popen([sys.executable, "-m", "papergym.leaderboard.cli", "worker"], env=env,
                                preexec_fn=self._preexec)  # noqa: PLW1509 -- one prepared prctl call

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


def _cmd_serve(args: argparse.Namespace, extra: list[str]) -> int:
    import logging
    import signal

    if extra:
        raise CLIError(f"unexpected arguments: {' '.join(extra)}")
    from importlib.util import find_spec

    missing = [m for m in ("fastapi", "uvicorn", "python_multipart") if find_spec(m) is None]
    if missing:
        raise CLIError(f"papergym serve needs the 'board' extra ({', '.join(missing)} missing): "
                       "pip install 'papergym[board]'")
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


def _cmd_worker(args: argparse.Namespace, extra: list[str]) -> int:
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
        raise CLIError("the evaluator configuration has no secret: copy the board's evaluator config "
                       "($PAPERGYM_EVALUATOR_CONFIG, created by `papergym serve`) to this machine")
    if args.scheduler is not None:
        try:
            from papergym.leaderboard.board.isolation import isolation_status
            from papergym.leaderboard.runner.executors import _dask_client

            client, cluster = _dask_client(1, args.scheduler)
        except (RuntimeError, OSError, ValueError) as exc:
            raise CLIError(f"--scheduler: {exc}") from None
        status = client.submit(isolation_status, pure=False).result()
        if not status.full:
            raise CLIError("--scheduler: the cluster's workers cannot run the full sandbox; missing: "
                           + "; ".join(status.missing()))

        def evaluate(job: Any) -> Any:  # on the cluster: the job (its code) and the secret travel to it
            return client.submit(evaluate_job, job, secret=secret, sandbox="full", pure=False).result()
    else:
        _check_full_sandbox("papergym worker")
        cluster = None

        def evaluate(job: Any) -> Any:
            return evaluate_job(job, secret=secret, sandbox="full")

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    store = _open_store(args.db)
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


def _cmd_admin(args: argparse.Namespace, extra: list[str]) -> int:
    from papergym.leaderboard.board.evaluate import REFERENCE_AUTHOR, _check_label
    from papergym.leaderboard.board.terminal import clean_terminal

    if extra:
        raise CLIError(f"unexpected arguments: {' '.join(extra)}")
    if args.admin_command == "token":
        try:
            _check_label(args.author, "author")
        except ValueError as exc:
            raise CLIError(f"AUTHOR: {exc}") from None
        if args.author == REFERENCE_AUTHOR:
            raise CLIError(f"AUTHOR: {REFERENCE_AUTHOR!r} is reserved for the registry's reference agents and solvers")
    store = _open_store(args.db)
    try:
        if args.admin_command == "authors":
            authors = store.authors()
            if not len(authors):
                print("no authors yet: papergym admin token create AUTHOR")
                return 0
            print(f"{'author':<32} {'active tokens':>13}  {'created (UTC)':<20} last used (UTC)")
            for a in authors.itertuples(index=False):
                used = "-" if _isna(a.last_used_at) else a.last_used_at.strftime("%Y-%m-%d %H:%M")
                print(f"{clean_terminal(a.name)[:32]:<32} {int(a.active_tokens):>13}  "
                      f"{a.created_at.strftime('%Y-%m-%d %H:%M'):<20} {used}")
            return 0
        if args.action == "create":
            token = store.create_token(args.author)
            print(token)
            print(f"papergym: the API token of {clean_terminal(args.author)!r} (shown once: the store keeps only its "
                  "hash); the author runs `papergym login --server URL` and pastes it", file=sys.stderr)
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


def _cmd_login(args: argparse.Namespace, extra: list[str]) -> int:
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
        print(f"papergym: warning: {server} is plain http: the token travels unencrypted; use https",
              file=sys.stderr)
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


def _check_backend_and_out(args: argparse.Namespace, target_id: str) -> Path:
    """The dask extra where ``--backend dask`` asks for it, and the output folder (``--out`` or
    ``papergym-out/<id>/<time>``), which must not be a file. Shared by ``compare`` and ``bench``."""
    if args.backend == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise CLIError("--backend dask needs the 'dask' extra: pip install 'papergym[dask]'") from None
    out = Path(args.out) if args.out else Path("papergym-out") / target_id / time.strftime("%Y%m%d-%H%M%S")
    if out.exists() and not out.is_dir():
        raise CLIError(f"--out: {out} exists and is not a folder")
    anc = out
    while not anc.exists() and anc != anc.parent:  # the nearest existing folder must take new folders
        anc = anc.parent
    if not anc.is_dir():
        raise CLIError(f"--out: cannot create {out}: {anc} is not a folder")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise CLIError(f"--out: cannot create {out}: {anc} is not writable")
    return out


def _load_file_attr(spec: str, option: str, what: str) -> tuple[str, Any]:
    """``FILE.py:ATTR`` of ``option``: import the file (run locally and unsandboxed, like any script you run) and
    return ``(name, ATTR)``, the name being ``file-<stem>-<attr>``. The module is registered with cloudpickle to
    travel by value: workers cannot import the file by its made-up name."""
    import importlib.util
    import re

    path, _, attr = spec.rpartition(":")
    file = Path(path)
    if not path or not attr or file.suffix != ".py":
        raise CLIError(f"{option}: {spec!r}: expected {what} name or FILE.py:ATTR")
    if not file.is_file():
        raise CLIError(f"{option}: {spec!r}: no such file {path!r}")
    if not attr.isidentifier():
        raise CLIError(f"{option}: {spec!r}: {attr!r} is not a Python name")
    name = "file-" + re.sub(r"[^a-z0-9]+", "-", f"{file.stem}-{attr}".lower()).strip("-")
    modname = "papergym_user_" + re.sub(r"\W", "_", name)
    mod_spec = importlib.util.spec_from_file_location(modname, file)
    module = importlib.util.module_from_spec(mod_spec)
    sys.modules[modname] = module
    try:
        mod_spec.loader.exec_module(module)  # type: ignore[union-attr]
    except Exception as exc:  # noqa: BLE001 - the user's file: name what failed
        del sys.modules[modname]
        raise CLIError(f"{option}: importing {path} failed: {type(exc).__name__}: {exc}") from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        del sys.modules[modname]
        raise CLIError(f"{option}: {path} has no callable {attr!r}")
    import cloudpickle

    cloudpickle.register_pickle_by_value(module)
    logger.info("%s: loaded %s from %s as %r", option, attr, path, name)
    return name, factory


def _file_agent(spec: str, env_id: str) -> str:
    """``--agents FILE.py:ATTR``: register ``ATTR`` (an agent class or factory) for ``env_id`` as a baseline named
    ``file-<stem>-<attr>`` (:func:`_load_file_attr`) and return that name."""
    from papergym.agents.base import register_agent

    name, factory = _load_file_attr(spec, "--agents", "an agent")
    register_agent(name, factory, envs=[env_id], role="baseline", description=f"{spec} (loaded from a file)")
    return name


def _file_solver(spec: str, task_id: str) -> str:
    """``--solvers FILE.py:ATTR``: register ``ATTR`` (a solver class or factory taking ``seed=`` and its
    hyperparameters) for ``task_id`` as a baseline named ``file-<stem>-<attr>`` and return that name."""
    from papergym.agents.base import register_solver

    name, factory = _load_file_attr(spec, "--solvers", "a solver")
    try:
        register_solver(name, factory, tasks=[task_id], role="baseline", description=f"{spec} (loaded from a file)")
    except ValueError as exc:
        raise CLIError(f"--solvers: {exc}") from None
    return name


def _fail(msg: str) -> int:
    print(f"papergym: error: {msg}", file=sys.stderr)
    return 2


def _env_module(env_id: str):
    import importlib

    import gymnasium as gym

    return importlib.import_module(gym.spec(env_id).entry_point.split(":")[0])


def _compare_defaults(env_id: str) -> dict[str, Any]:
    """``COMPARE_DEFAULTS`` of the env's module (horizon, seeds of ``papergym compare``), if any."""
    return dict(getattr(_env_module(env_id), "COMPARE_DEFAULTS", {}))


def _cmd_list() -> int:
    import papergym.envs as penvs
    from papergym.agents.base import list_agents, list_unavailable_agents

    print("Environments")
    for env_id in penvs.list_envs():
        mod = _env_module(env_id)
        inst = getattr(mod, "INSTANCES", ())
        print(f"  {env_id}" + (f"  instances: {', '.join(inst)}" if inst else ""))
        for a in list_agents(env_id):
            desc = f"  {a.description}" if a.description else ""
            print(f"    {a.name:<20} {a.role:<9}{desc}")
        for u in list_unavailable_agents(env_id):
            print(f"    {u.name:<20} {u.role:<9}  [unavailable: {u.reason}]")
    from papergym.agents.base import list_solvers
    from papergym.envs.tasks.base import list_tasks

    print("Solver tasks")
    for task_id in list_tasks():
        print(f"  {task_id}")
        for s in list_solvers(task_id):
            desc = f"  {s.description}" if s.description else ""
            req = f"  [needs {', '.join(s.requires)}]" if s.requires else ""
            print(f"    {s.name:<20} {s.role:<9}{desc}{req}")
    return 0


# task-argument spelling a user may reach for -> the task constructor argument
_TASK_ALIASES = {"n": "sizes"}


def _cmd_bench(args: argparse.Namespace, extra: list[str]) -> int:
    import inspect

    from papergym.agents.base import UnknownSolverError, get_solver_info, list_solvers
    from papergym.envs.tasks.base import (
        Budget,
        MissingSecretError,
        UnknownTaskError,
        check_task_id,
        task_factory,
    )
    from papergym.leaderboard.runner.bench import (
        _configs,
        bench,
        resolve_task_kwargs,
        validate_solver_hyperparameters,
    )

    try:
        task_id = check_task_id(args.task_id)
    except UnknownTaskError as exc:
        raise CLIError(str(exc)) from None
    if args.n_jobs is not None and args.n_jobs < 1:
        raise CLIError(f"--n-jobs must be at least 1, got {args.n_jobs}")
    if args.scheduler and args.backend != "dask":
        raise CLIError("--scheduler needs --backend dask")
    try:
        seeds = _parse_seeds(args.solver_seeds) if args.solver_seeds is not None else [0]
    except CLIError as exc:
        raise CLIError(str(exc).replace("--seeds", "--solver-seeds")) from None
    if args.solvers:
        solvers = [_file_solver(a.strip(), task_id) if ":" in a else a.strip()
                   for a in args.solvers.split(",") if a.strip()]
        for s in solvers:
            try:
                get_solver_info(s, task_id)
            except UnknownSolverError as exc:
                raise CLIError(f"--solvers: {exc}") from None
    else:
        solvers = []
        for info in list_solvers(task_id):
            try:
                for pkg in info.requires:
                    __import__(pkg)
            except ImportError:
                logger.warning("skipping solver %s: needs %s", info.name, ", ".join(info.requires))
                continue
            solvers.append(info.name)
    # unknown options: task kwargs where the task takes them, else solver hyperparameters
    sig = inspect.signature(task_factory(task_id)).parameters
    task_params = set(sig)
    switches = frozenset(n for n, p in sig.items() if isinstance(p.default, bool))  # e.g. --step-size-grid
    task_kwargs: dict[str, Any] = {}
    hps: dict[str, dict[str, Any]] = {}
    sweep: dict[str, dict[str, list[Any]]] = {}
    for name, value in _parse_extra(extra, lists=True, flags=switches).items():
        target = name if name in task_params else _TASK_ALIASES.get(name)
        if target in task_params:
            if target in task_kwargs:
                raise CLIError(f"--{name.replace('_', '-')} is an alias of --{target}; give only one of them")
            task_kwargs[target] = value
            continue
        takers = []
        for s in solvers:
            if name in get_solver_info(s, task_id).hyperparameters:
                takers.append(s)
        if not takers:
            raise CLIError(f"--{name.replace('_', '-')} is neither an argument of {task_id} "
                           f"({', '.join(sorted(p for p in task_params))}) nor a hyperparameter of the solvers run "
                           f"({', '.join(solvers)})")
        for s in takers:
            if isinstance(value, list):
                sweep.setdefault(s, {})[name] = value
            else:
                hps.setdefault(s, {})[name] = value
    for s, hp in _parse_hp(args.hp).items():
        if s not in solvers:
            raise CLIError(f"--hp: solver {s!r} is not among the solvers run ({', '.join(solvers)})")
        hps.setdefault(s, {}).update(hp)
    budget = None
    try:
        kwargs = resolve_task_kwargs(task_id, task_kwargs)
        from papergym.envs.tasks.base import make_task

        task = make_task(task_id, **kwargs)
        if args.budget_seconds is not None or args.max_iterations is not None:
            d = task.default_budget
            budget = Budget(max_seconds=args.budget_seconds if args.budget_seconds is not None else d.max_seconds,
                            max_iterations=args.max_iterations if args.max_iterations is not None else d.max_iterations,
                            max_work=d.max_work)
        validate_solver_hyperparameters(task_id, _configs(solvers, hps, sweep))
        instances = [x.strip() for x in args.instances.split(",") if x.strip()] if args.instances else None
        if instances is not None:
            from papergym.envs.tasks.base import instances_by_name

            instances_by_name(task, instances, args.split)
        elif args.split == "test":
            task.instances("test")
    except MissingSecretError as exc:
        raise CLIError(str(exc)) from None
    except (ValueError, TypeError, ImportError) as exc:
        raise CLIError(str(exc)) from None
    out = _check_backend_and_out(args, task_id)
    progress_kw = _progress_args(args)

    t0 = time.perf_counter()
    res = bench(task_id, solvers=solvers, instances=instances, seeds=seeds, budget=budget, backend=args.backend,
                out=args.cache_dir, cache=not args.no_cache, task_kwargs=kwargs, hyperparameters=hps, sweep=sweep,
                split=args.split, n_jobs=args.n_jobs, scheduler=args.scheduler, **progress_kw)
    wall = time.perf_counter() - t0
    kw = ", ".join(f"{k}={v}" for k, v in res.task_kwargs.items())
    print(f"{task_id}  ({kw})")
    print(f"{res.runs['instance'].nunique()} instances x {len(res.summary)} solver configurations x {len(seeds)} "
          f"seed(s), backend {args.backend}, {wall:.1f} s wall\n")
    print(res.format_table())
    extra_text = res.extra_report()
    if extra_text:
        print("\n" + extra_text)
    print(f"\ngeo-mean {res.primary}: geometric mean over instances (failures scored by the task), 95% bootstrap CI;"
          "\nseconds: wall time of solve(), scoring excluded.")
    res.save(out)
    print(f"\nresults written to {out}/ (summary.csv, table.txt, runs.parquet, curves.parquet, figures)")
    # a timeout or a diverged run is a result (scored by the task): reported, never a failure; a crash is one
    failed = [e for e in res.errors if e["status"] in ("error", "oom")]
    diverged = [e for e in res.errors if e["status"] == "diverged"]
    timeouts = [e for e in res.errors if e["status"] not in ("error", "oom", "diverged")]
    if diverged:
        e = diverged[0]
        print(f"\n{len(diverged)} solve(s) diverged (scored by the task); first: {e['solver']} on {e['instance']}",
              file=sys.stderr)
    if timeouts:
        e = timeouts[0]
        print(f"\n{len(timeouts)} solve(s) ran out of budget ({e['status']}; scored by the task); first: {e['solver']} "
              f"on {e['instance']}: {e['error']}", file=sys.stderr)
    return _report_failures(failed, "solver", "solve", args.allow_failures)


def _cmd_compare(args: argparse.Namespace, extra: list[str]) -> int:
    import papergym.envs as penvs
    from papergym.agents.base import UnknownAgentError, get_agent_info, list_agents
    from papergym.leaderboard.runner.compare import (
        compare,
        resolve_env_kwargs,
        validate_hyperparameters,
    )

    # ---- validate everything before anything runs or is written
    try:
        env_id = penvs.check_env_id(args.env_id)
    except penvs.UnknownEnvError as exc:
        raise CLIError(str(exc)) from None
    env_kwargs = _apply_aliases(env_id, _parse_extra(extra))
    if args.instance is not None:
        env_kwargs["instance"] = args.instance
    if args.horizon is not None and args.horizon < 1:
        raise CLIError(f"--horizon must be a positive integer, got {args.horizon}")
    if args.n_jobs is not None and args.n_jobs < 1:
        raise CLIError(f"--n-jobs must be at least 1, got {args.n_jobs}")
    if args.scheduler and args.backend != "dask":
        raise CLIError("--scheduler needs --backend dask")
    defaults = _compare_defaults(env_id)
    user_kwargs = set(env_kwargs)
    for k, v in defaults.get("env_kwargs", {}).items():  # env defaults of `compare` (e.g. FJSP's instance set)
        if k not in env_kwargs and not ({"family", "instance", "path"} & user_kwargs):
            env_kwargs[k] = v
    for k, v in defaults.get("env_kwargs_always", {}).items():  # e.g. the games' role=both, unless given
        env_kwargs.setdefault(k, v)
    default_seeds = defaults.get("seeds", 10)
    seeds_for = getattr(_env_module(env_id), "compare_seeds", None)
    if args.seeds is None and seeds_for is not None and user_kwargs:  # e.g. every member of a given set
        try:
            default_seeds = seeds_for(env_kwargs) or default_seeds
        except (ValueError, KeyError, OSError) as exc:
            raise CLIError(str(exc)) from None
    seeds = _parse_seeds(args.seeds if args.seeds is not None else str(default_seeds))
    horizon = args.horizon if args.horizon is not None else defaults.get("horizon")
    if args.agents:
        agents = [_file_agent(a.strip(), env_id) if ":" in a else a.strip()
                  for a in args.agents.split(",") if a.strip()]
        for a in agents:
            try:
                get_agent_info(a, env_id)
            except UnknownAgentError as exc:
                raise CLIError(f"--agents: {exc}") from None
    else:
        agents = [a.name for a in list_agents(env_id)]
    hps = _parse_hp(args.hp)
    for a in hps:
        if a not in agents:
            raise CLIError(f"--hp: agent {a!r} is not among the compared agents ({', '.join(agents)})")
    try:
        resolved = resolve_env_kwargs(env_id, env_kwargs, horizon)
        validate_hyperparameters(env_id, hps, resolved)
    except (ValueError, TypeError, OSError) as exc:
        raise CLIError(str(exc)) from None
    out = _check_backend_and_out(args, env_id)
    progress_kw = _progress_args(args)

    t0 = time.perf_counter()
    res = compare(
        env_id,
        agents=agents,
        seeds=seeds,
        horizon=horizon,
        env_kwargs=env_kwargs,
        backend=args.backend,
        out=args.cache_dir,
        cache=not args.no_cache,
        hyperparameters=hps,
        n_jobs=args.n_jobs,
        scheduler=args.scheduler,
        mode=args.mode,
        **progress_kw,
    )
    wall = time.perf_counter() - t0
    kw = ", ".join(f"{k}={v}" for k, v in res.env_kwargs.items())
    print(f"{env_id}  ({kw})")
    print(f"{len(seeds)} seeds, backend {args.backend}, {wall:.1f} s wall\n")
    print(res.format_table())
    if res.per_instance:
        print("\ncells: makespan C_max, gap (C_max - ref)/ref to the reference value (negative: better than the reference),"
              "\nmean seconds per run (env + agent); LB: the proven lower bound used for regret; ref: best known value"
              "\n(provenance above). Summary: mean gap over the instances with a reference, instances at or below it.")
        res.save(out)
        print(f"\nresults written to {out}/ (summary.csv, table.txt, runs.parquet, curves.parquet, "
              f"{res.figure_name}.png, {res.figure_name}.svg)")
        return _report_failures(res.errors, "agent", "run", args.allow_failures)
    regret_name = getattr(_env_module(env_id), "REGRET_NAME", "cumulative regret")
    print(f"\n{res.regret_column}: mean over seeds of {regret_name} at the horizon T, 95% percentile-bootstrap CI;")
    if res.has_simple_regret:
        print("R(T/2): mean R at T/2; flatness: mean (R_T - R_T/2) / R_T (0: regret stopped growing, 0.5: linear);\n"
              "simple regret: mean f* - max_t f(x_t) (best point played), 95% bootstrap CI;")
    if "static_regret" in res.summary.columns:
        print("static regret: pseudo-regret against the best FIXED action in hindsight (the paper's regret; final\n"
              "regret is against each round's best action), mean and 95% bootstrap CI;")
    if "regret_per_ln_n" in res.summary.columns:
        print("R/ln n, R/sqrt(nmd): the pseudo-regret at n divided by ln n and by sqrt(n m d), mean over seeds;")
    if "gr_draws_per_round" in res.summary.columns:
        print("GR draws/round: mean geometric-resampling redraws per round (FTPL);")
    if "gap_last" in res.summary.columns:
        tol = res.env_kwargs.get("gap_tol", 1e-6)
        print("gap last / avg-iterate: the gap of the last iterate and of the average of all iterates (games: the\n"
              "exploitability of the agent's strategy, NI error for role=both; mean field: F^s(mu) - F^s(mu*)), means over seeds;\n"
              "NI last / avg: the Nikaido-Isoda error of the joint profile (agent and built-in opponent);\n"
              f"steps to tol: first step (= best-response evaluation) with gap <= {tol:g} (horizon + 1 if never);\n"
              "rate: per-step linear convergence factor fitted on log gap (second half before the round-off floor);\n"
              "cycling: fraction of runs whose gap did not decrease over the last 20% of steps; W1 to mu*: Wasserstein-1\n"
              "distance of the last iterate to the minimiser; diverged: fraction of runs the agent flagged as divergent;")
        if "converged" in res.summary.columns:
            print("kappa: the oracle's contraction bound of the best-response map (games: l1 bound; mean field: W1 constant,\n"
                  "an estimate for interaction); contractive: fraction of runs with kappa < 1; status: converged (gap <= tol,\n"
                  "certified by the contraction or a unique equilibrium), not converged, not contractive (no certificate:\n"
                  "the paper's theorem does not apply), grid-edge (mass at the truncation boundary: an artefact);")
    if "sum_sigma" in res.summary.columns:
        print("sum sigma(x_t): mean over seeds of sum_t sigma_{t-1}(x_t), posterior standard deviations at the\n"
              "queried points (GP-UCB with width B: R_T <= 2B sum sigma);")
    if "L_tilde" in res.runs.columns:
        d = int(res.env_kwargs.get("d", 1))
        lt = res.runs.drop_duplicates("seed").L_tilde.astype(float)
        print(f"L~: significant shifts of the instance (oracle), mean {lt.mean():.2f} over seeds "
              f"(min {lt.min():.0f}, max {lt.max():.0f});\n"
              f"norm. regret: R_T / ((L~+1)^(1/{d + 2}) T^({d + 1}/{d + 2})), mean over seeds;")
    if "detections" in res.summary.columns and res.summary.detections.notna().any():
        print("detected: restarts that are the first in a phase [tau_i, tau_i+1), i >= 1; false alarms: the others;"
              "\ndelay: mean rounds from tau_i to its detection;")
    print("ms/step: wall milliseconds per round of one run (batched runs share the time).")
    res.save(out)
    if args.log_x:
        import matplotlib.pyplot as plt

        plt.close(res.plot(out / res.figure_name, log_x=True))
    print(f"\nresults written to {out}/ (summary.csv, table.txt, runs.parquet, curves.parquet, "
          f"{res.figure_name}.png, {res.figure_name}.svg)")
    return _report_failures(res.errors, "agent", "run", args.allow_failures)


def _add_sweep_parser(sub: Any) -> None:
    from papergym.leaderboard.runner.executors import BACKENDS

    w = sub.add_parser("sweep", allow_abbrev=False, help="regret scaling over horizons and significant shifts",
                       description="Runs agents on NonStatLipschitz-v0 piecewise-tents with L + 1 phases for every "
                                   "horizon T and shift count L of the grid, prints the mean regret per cell and "
                                   "the fitted log-log slopes of R_T in T and in L + 1 (bootstrap CIs over seeds) "
                                   "against the theory, and writes sweep.csv, runs.csv, slopes.csv, table.txt and "
                                   "sweep.png. Unknown --options are env arguments (--dim 2, --noise gaussian).")
    w.add_argument("env_id", help="environment id (NonStatLipschitz-v0)")
    w.add_argument("--horizon", required=True, help="horizons: 2^a..2^b (every power of two between) or a comma "
                                                   "list of 2^k / integers (2^10,2^12,5000)")
    w.add_argument("--shifts", default="0,1,2,4,8,16", help="numbers of shifts L (comma list; default 0,1,2,4,8,16)")
    w.add_argument("--agents", default="mdbe", help="comma-separated agent names (default mdbe)")
    w.add_argument("--seeds", default="8", help="count (8), range (5:15) or list (1,4,9); default 8")
    w.add_argument("--hp", action="append", default=[], metavar="AGENT.NAME=VALUE",
                   help="agent hyperparameter, repeatable (e.g. --hp mdbe.c0=0.3)")
    w.add_argument("--backend", choices=BACKENDS, default="joblib", help="executor (default joblib)")
    w.add_argument("--n-jobs", type=int, help="workers (default: all cores)")
    w.add_argument("--scheduler", help="dask scheduler address, or 'slurm' (with --backend dask)")
    w.add_argument("--out", help="output folder (default: papergym-out/<env>/sweep-<time>)")
    w.add_argument("--cache-dir", help="folder of cached cell files (default: the user cache)")
    w.add_argument("--no-cache", action="store_true", help="recompute cells even if cached")
    w.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_run_flags(w)


def _cmd_sweep(args: argparse.Namespace, extra: list[str]) -> int:
    import papergym.envs as penvs
    from papergym.agents.base import UnknownAgentError, get_agent_info
    from papergym.leaderboard.runner.compare import resolve_env_kwargs, validate_hyperparameters
    from papergym.leaderboard.runner.sweep import SWEEP_ENV, check_grid, parse_horizons, parse_shifts, sweep

    try:
        env_id = penvs.check_env_id(args.env_id)
    except penvs.UnknownEnvError as exc:
        raise CLIError(str(exc)) from None
    if env_id != SWEEP_ENV:
        raise CLIError(f"sweep runs {SWEEP_ENV} (its shift count is a parameter of piecewise-tents), got {env_id!r}")
    try:
        horizons = parse_horizons(args.horizon)
        shifts = parse_shifts(args.shifts)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    seeds = _parse_seeds(args.seeds)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    if not agents:
        raise CLIError("--agents: no agent named")
    for a in agents:
        try:
            get_agent_info(a, env_id)
        except UnknownAgentError as exc:
            raise CLIError(f"--agents: {exc}") from None
    hps = _parse_hp(args.hp)
    for a in hps:
        if a not in agents:
            raise CLIError(f"--hp: agent {a!r} is not among the swept agents ({', '.join(agents)})")
    if args.n_jobs is not None and args.n_jobs < 1:
        raise CLIError(f"--n-jobs must be at least 1, got {args.n_jobs}")
    if args.scheduler and args.backend != "dask":
        raise CLIError("--scheduler needs --backend dask")
    env_kwargs = _apply_aliases(env_id, _parse_extra(extra))
    try:
        check_grid(horizons, shifts, env_kwargs)
        resolved = resolve_env_kwargs(env_id, {**env_kwargs, "instance": "piecewise-tents",
                                               "phases": max(shifts) + 1}, max(horizons))
        validate_hyperparameters(env_id, hps, resolved)
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from None
    if not args.out:
        args.out = str(Path("papergym-out") / env_id / time.strftime("sweep-%Y%m%d-%H%M%S"))
    out = _check_backend_and_out(args, env_id)
    progress_kw = _progress_args(args)
    t0 = time.perf_counter()
    try:
        res = sweep(horizons, shifts, agents, seeds, env_kwargs=env_kwargs, hyperparameters=hps,
                    backend=args.backend, n_jobs=args.n_jobs, scheduler=args.scheduler, cache_dir=args.cache_dir,
                    cache=not args.no_cache, **progress_kw)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    wall = time.perf_counter() - t0
    print(f"{env_id} sweep: piecewise-tents with L + 1 phases, "
          + ", ".join(f"{k}={v}" for k, v in env_kwargs.items()) + ("; " if env_kwargs else "")
          + f"{len(horizons)} horizons x {len(shifts)} shift counts x {len(seeds)} seeds, {wall:.1f} s wall\n")
    print(res.format_table())
    d = res.d
    print(f"\nmean R_T: final dynamic regret over seeds, 95% percentile-bootstrap CI; L~ (oracle): mean number of "
          f"significant shifts\nthe oracle finds (the fit uses the nominal L); R_T/((L+1)^a T^b): a = 1/{d + 2}, "
          f"b = {d + 1}/{d + 2}.\nslopes: least squares of log mean R_T on log T and log(L+1) over the cells, 95% "
          f"percentile-bootstrap CI\nover seeds (one resample for all cells); theory: R_T ~ (L~+1)^(1/{d + 2}) "
          f"T^({d + 1}/{d + 2}).")
    res.save(out)
    print(f"\nresults written to {out}/ (sweep.csv, runs.csv, slopes.csv, table.txt, sweep.png)")
    return _report_failures(res.errors, "agent", "run", args.allow_failures)


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


def _cmd_check(args: argparse.Namespace, extra: list[str]) -> int:
    """``papergym check FILE.py:ATTR --to ID``: :func:`papergym.leaderboard.check.run_checks`, in-process."""
    from papergym.leaderboard.check import run_checks

    if extra:
        raise CLIError(f"unexpected arguments: {' '.join(extra)}")
    seeds = _parse_seeds(args.seeds) if args.seeds is not None else None
    hp = _submit_hp(args.hp)
    progress = None if args.json else (lambda msg: print(f"  {msg}", file=sys.stderr))
    try:
        report = run_checks(args.entry, args.benchmark, seeds=seeds, quick=args.quick, hyperparameters=hp,
                            progress=progress)
    except (ValueError, FileNotFoundError) as exc:
        msg = str(exc)
        raise CLIError(msg if msg.startswith("--") else f"entry: {msg}") from None
    print(json.dumps(report.as_dict(), indent=1) if args.json else report.format())
    return 0 if report.passed else 1


def main(argv: list[str] | None = None) -> int:
    t_main = time.perf_counter()
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    try:
        level = _log_level(args)
    except CLIError as exc:
        return _fail(str(exc))
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
            print(f"\npapergym {args.command}: {format_duration(whole)} wall in all ({whole:.1f} s: start-up, runs, "
                  "figures)")
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
            return _cmd_list()
        if args.command == "bench":
            return _cmd_bench(args, extra)
        if args.command == "submit":
            return _cmd_submit(args, extra)
        if args.command == "check":
            return _cmd_check(args, extra)
        if args.command == "leaderboard":
            return _cmd_leaderboard(args, extra)
        if args.command == "serve":
            return _cmd_serve(args, extra)
        if args.command == "worker":
            return _cmd_worker(args, extra)
        if args.command == "admin":
            return _cmd_admin(args, extra)
        if args.command == "login":
            return _cmd_login(args, extra)
        if args.command == "sweep":
            return _cmd_sweep(args, extra)
        if args.command == "fjsp":
            if extra:
                raise CLIError(f"unexpected arguments: {' '.join(extra)}")
            from papergym.leaderboard.fjsp_cli import run_fjsp

            return run_fjsp(args)
        return _cmd_compare(args, extra)
    except CLIError as exc:
        return _fail(str(exc))
    except BrokenPipeError:  # output piped into `head` and closed: not an error of ours
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        resumable = args.command in ("compare", "bench", "sweep")
        print("\npapergym: interrupted" + ("; finished runs are cached: run the same command again to resume"
                                            if resumable else ""), file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
