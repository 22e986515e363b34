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
``papergym list``
    Environments (with their instance families), solver tasks and agents with their roles.
``papergym submit FILE.py:ATTR --to ID [--name N] [--author A] [--hp NAME=VALUE ...] [--db URL]``
    Evaluates a submitted agent factory (envs) or solver factory (tasks) in the sandbox on the board's
    hidden test seeds, stores the result and prints where it ranks.
``papergym leaderboard [ID ...] [--db URL]``, ``papergym leaderboard --html DIR``, ``papergym leaderboard refresh [ID ...]``
    Terminal table(s) of the board(s); the static HTML site; scoring of the registry's reference
    agents/solvers on the current board versions (``--include pinn``, ``--only NAME,...``, ``--force``).
    The store is ``--db URL`` (default: ``$PAPERGYM_DB`` or the user's SQLite board).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["build_parser", "main"]


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


def build_parser() -> argparse.ArgumentParser:
    from papergym.leaderboard.runner.executors import BACKENDS

    p = argparse.ArgumentParser(prog="papergym", allow_abbrev=False,
                                description="papergym: benchmark gym of NeurIPS 2025 papers")
    sub = p.add_subparsers(dest="command", required=True, metavar="{compare,bench,list,submit,leaderboard,fjsp}")

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

    b = sub.add_parser("bench", allow_abbrev=False, help="solver benchmark on a task",
                       description="Solver benchmark on a task. Unknown --options are task arguments (e.g. "
                                   "--sizes 1000,10000) or solver hyperparameters (e.g. --m 50; a comma list "
                                   "sweeps: --m 10,20,50).")
    b.add_argument("task_id", help="task id, e.g. NystromODE-v0")
    b.add_argument("--solvers", help="comma-separated solver names (default: all registered for the task)")
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

    sub.add_parser("list", help="environments, tasks and agents")

    s = sub.add_parser("submit", allow_abbrev=False, help="evaluate an agent or solver on a leaderboard",
                       description="Evaluate a submitted agent factory (for an environment) or solver factory "
                                   "(for a task) in the sandbox on the board's hidden test seeds, store the "
                                   "result and print where it ranks.")
    s.add_argument("entry", help="FILE.py:ATTR, the factory: make_agent(problem, *, seed, **hp) (or a batched "
                                 "factory taking seeds=[...]), or a solver class/factory (seed=..., **hp)")
    s.add_argument("--to", required=True, dest="benchmark", help="environment or task id")
    s.add_argument("--name", help="name on the board (default: the file's stem)")
    s.add_argument("--author", default="anonymous", help="author shown on the board")
    s.add_argument("--hp", action="append", default=[], metavar="NAME=VALUE",
                   help="hyperparameter passed to the factory, repeatable")
    s.add_argument("--db", help="store URL (default: $PAPERGYM_DB or the user's SQLite board)")
    s.add_argument("--sandbox", choices=("auto", "bwrap", "rlimits"), default="auto",
                   help="isolation: bubblewrap + rlimits (auto when available), or rlimits only")
    s.add_argument("--time-limit", type=float, help="total seconds for the submission (default: the sandbox's)")
    s.add_argument("--quiet", action="store_true", help="no progress messages")

    lb = sub.add_parser("leaderboard", allow_abbrev=False, help="show, render or refresh the leaderboards",
                        description="papergym leaderboard [ID ...] prints the boards; --html DIR writes the "
                                    "static site; 'refresh [ID ...]' scores the reference agents and solvers.")
    lb.add_argument("targets", nargs="*", metavar="[refresh] ID", help="benchmark ids (default: all with results)")
    lb.add_argument("--db", help="store URL (default: $PAPERGYM_DB or the user's SQLite board)")
    lb.add_argument("--html", metavar="DIR", help="write the static site (index.html + a page per board) to DIR")
    lb.add_argument("--include", default="", help="refresh: also score these references skipped by default "
                                                  "for their cost (comma list, e.g. pinn)")
    lb.add_argument("--only", help="refresh: only these references (comma list)")
    lb.add_argument("--force", action="store_true", help="refresh: re-score references already scored")
    lb.add_argument("--quiet", action="store_true", help="no progress messages")
    from papergym.leaderboard.fjsp_cli import add_fjsp_parser

    add_fjsp_parser(sub)
    return p


def _open_store(url: str | None):
    from papergym.leaderboard.board.store import Store

    try:
        return Store(url)
    except ImportError as exc:
        raise CLIError(str(exc)) from None
    except ValueError as exc:
        raise CLIError(f"--db: {exc}") from None


def _rank_line(bb: Any, sid: int) -> str:
    import math

    tab = bb.table
    row = tab[tab.submission_id == sid]
    if not len(row):
        return f"submission {sid} is not on the current board of {bb.benchmark_id}"
    r = row.iloc[0]
    n_ranked = int(tab.ranked.sum())
    if not r.ranked:
        why = r.message or ("reference line, never ranked" if r.role in ("oracle", "reference") else r.status)
        return f"not ranked ({r.status}): {why}"
    lo, hi = int(r.rank_lo), int(r.rank_hi)
    interval = f"{lo}" if lo == hi else f"{lo}-{hi}"
    tie = " (tied)" if r.tie else ""
    score = f"{r.score:.6g}" if math.isfinite(r.score) else "-"
    return (f"rank {int(r['rank'])}{tie} of {n_ranked} on {bb.benchmark_id} (95% rank interval {interval}); "
            f"{bb.metric} = {score} [{r.ci_low:.6g}, {r.ci_high:.6g}]")


def _cmd_submit(args: argparse.Namespace, extra: list[str]) -> int:
    from papergym.leaderboard.board.ranking import build_benchmark_board
    from papergym.leaderboard.board.configs import board_ids
    from papergym.leaderboard.board.evaluate import submit
    from papergym.leaderboard.board.text import format_board_table
    from papergym.leaderboard.board.sandbox import Limits, bwrap_available, load_entry

    if extra:
        raise CLIError(f"unexpected arguments: {' '.join(extra)}")
    ids = board_ids()
    if args.benchmark not in ids:
        raise CLIError(f"--to: unknown environment or task {args.benchmark!r}; valid: {', '.join(ids)}")
    try:
        load_entry(args.entry)
    except (ValueError, FileNotFoundError) as exc:
        raise CLIError(f"entry: {exc}") from None
    hp: dict[str, Any] = {}
    for item in args.hp:
        if "=" not in item:
            raise CLIError(f"--hp: expected NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        hp[k.replace("-", "_")] = _parse_value(v)
    if args.sandbox == "bwrap" and not bwrap_available()[0]:
        raise CLIError(f"--sandbox bwrap: bubblewrap is not usable here: {bwrap_available()[1]}")
    limits = Limits()
    if args.time_limit is not None:
        if not args.time_limit > 0:
            raise CLIError(f"--time-limit must be positive, got {args.time_limit}")
        import dataclasses

        limits = dataclasses.replace(limits, submission_seconds=float(args.time_limit))
    from papergym.leaderboard.board.evaluate import REFERENCE_AUTHOR, _check_label

    try:
        _check_label(args.name if args.name is not None else Path(args.entry.rsplit(":", 1)[0]).stem, "name")
        _check_label(args.author, "author")
    except ValueError as exc:
        raise CLIError(f"--name/--author: {exc}") from None
    if args.author == REFERENCE_AUTHOR:
        raise CLIError(f"--author: {REFERENCE_AUTHOR!r} is reserved for the registry's reference agents and solvers")
    store = _open_store(args.db)
    if args.sandbox == "auto" and not bwrap_available()[0]:
        print(f"papergym: warning: bubblewrap unavailable ({bwrap_available()[1]}); the submission runs with "
              "rlimits only (no filesystem or network isolation)", file=sys.stderr)
    progress = None if args.quiet else (lambda msg: print(f"  {msg}", file=sys.stderr))
    sid = submit(store, args.entry, args.benchmark, name=args.name, author=args.author, hyperparameters=hp,
                 sandbox=args.sandbox, limits=limits, progress=progress)
    bb = build_benchmark_board(store, args.benchmark)
    sub = store.submissions(args.benchmark)
    row = sub[sub.submission_id == sid].iloc[0]
    print(f"submission {sid} ({row['name']} by {row.author}) on {args.benchmark}: {row.status}")
    if row.status != "ok" and row.message:
        print(f"  {row.message}")
    if row.status != "ok" and isinstance(row.stderr_tail, str) and row.stderr_tail.strip():
        print("  stderr (tail):")
        print("    " + "\n    ".join(row.stderr_tail.strip().splitlines()[-15:]))
    print(_rank_line(bb, sid))
    print()
    print(format_board_table(bb))
    store.close()
    return 0 if row.status == "ok" else 1


def _cmd_leaderboard(args: argparse.Namespace, extra: list[str]) -> int:
    from papergym.leaderboard.board.ranking import build_benchmark_board, build_board
    from papergym.leaderboard.board.configs import board_ids

    if extra:
        raise CLIError(f"unexpected arguments: {' '.join(extra)}")
    targets = list(args.targets)
    do_refresh = bool(targets) and targets[0] == "refresh"
    if do_refresh:
        targets = targets[1:]
    valid = board_ids()
    bad = [t for t in targets if t not in valid]
    if bad:
        raise CLIError(f"unknown environment or task {bad[0]!r}; valid: {', '.join(valid)}")
    if not do_refresh and (args.include or args.only or args.force):
        raise CLIError("--include, --only and --force go with 'papergym leaderboard refresh'")
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
                print(f"{bid:24s} {name:24s} {st}")
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
            print(format_board_table(build_benchmark_board(store, bid)))
        return 0
    finally:
        store.close()


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
    return out


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
    from papergym.agents.base import list_agents

    print("Environments")
    for env_id in penvs.list_envs():
        mod = _env_module(env_id)
        inst = getattr(mod, "INSTANCES", ())
        print(f"  {env_id}" + (f"  instances: {', '.join(inst)}" if inst else ""))
        for a in list_agents(env_id):
            desc = f"  {a.description}" if a.description else ""
            print(f"    {a.name:<20} {a.role:<9}{desc}")
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
        solvers = [a.strip() for a in args.solvers.split(",") if a.strip()]
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
                print(f"(skipping {info.name}: needs {', '.join(info.requires)})", file=sys.stderr)
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

    t0 = time.perf_counter()
    res = bench(task_id, solvers=solvers, instances=instances, seeds=seeds, budget=budget, backend=args.backend,
                out=args.cache_dir, cache=not args.no_cache, task_kwargs=kwargs, hyperparameters=hps, sweep=sweep,
                split=args.split, n_jobs=args.n_jobs, scheduler=args.scheduler,
                progress=False if args.quiet else None)
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
    if res.errors:
        e = res.errors[0]
        print(f"\n{len(res.errors)} solve(s) did not finish ok; first: {e['solver']} on {e['instance']}: "
              f"{e['status']}: {e['error']}", file=sys.stderr)
    # a timeout is a result (scored by the task); a crash is not
    return 1 if any(e["status"] in ("error", "oom") for e in res.errors) else 0


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
        except (ValueError, KeyError) as exc:
            raise CLIError(str(exc)) from None
    seeds = _parse_seeds(args.seeds if args.seeds is not None else str(default_seeds))
    horizon = args.horizon if args.horizon is not None else defaults.get("horizon")
    if args.agents:
        agents = [a.strip() for a in args.agents.split(",") if a.strip()]
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
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from None
    out = _check_backend_and_out(args, env_id)

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
        progress=False if args.quiet else None,
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
        print(f"\nresults written to {out}/ (summary.csv, table.txt, runs.parquet, curves.parquet, regret.png, regret.svg)")
        if res.errors:
            print(f"\n{len(res.errors)} run(s) failed; first error: {res.errors[0]['error']}", file=sys.stderr)
            return 1
        return 0
    regret_name = getattr(_env_module(env_id), "REGRET_NAME", "cumulative regret")
    print(f"\nfinal regret: mean {regret_name} R_T at T over seeds, 95% percentile-bootstrap CI;")
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

        plt.close(res.plot(out / "regret", log_x=True))
    print(f"\nresults written to {out}/ (summary.csv, table.txt, runs.parquet, curves.parquet, regret.png, regret.svg)")
    if res.errors:
        print(f"\n{len(res.errors)} run(s) failed; first error: {res.errors[0]['error']}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    try:
        if args.command == "list":
            if extra:
                raise CLIError(f"unexpected arguments: {' '.join(extra)}")
            return _cmd_list()
        if args.command == "bench":
            return _cmd_bench(args, extra)
        if args.command == "submit":
            return _cmd_submit(args, extra)
        if args.command == "leaderboard":
            return _cmd_leaderboard(args, extra)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
