"""``papergym bench``: solver benchmark on a task (:mod:`papergym.leaderboard.runner.bench`)."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from typing import Any

from papergym.leaderboard.commands.common import (
    CLIError,
    check_backend_and_out,
    file_solver,
    parse_extra,
    parse_hp,
    parse_seeds,
    progress_args,
    report_failures,
)

__all__ = ["cmd_bench"]

logger = logging.getLogger("papergym.leaderboard.cli")  # one logger for the whole command


# task-argument spelling a user may reach for -> the task constructor argument
_TASK_ALIASES = {"n": "sizes"}


def cmd_bench(args: argparse.Namespace, extra: list[str]) -> int:
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
        bench,
        resolve_task_kwargs,
        solver_configs,
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
        seeds = parse_seeds(args.solver_seeds) if args.solver_seeds is not None else [0]
    except CLIError as exc:
        raise CLIError(str(exc).replace("--seeds", "--solver-seeds")) from None
    if args.solvers:
        solvers = [
            file_solver(a.strip(), task_id) if ":" in a else a.strip() for a in args.solvers.split(",") if a.strip()
        ]
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
    for name, value in parse_extra(extra, lists=True, flags=switches).items():
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
            raise CLIError(
                f"--{name.replace('_', '-')} is neither an argument of {task_id} "
                f"({', '.join(sorted(p for p in task_params))}) nor a hyperparameter of the solvers run "
                f"({', '.join(solvers)})"
            )
        for s in takers:
            if isinstance(value, list):
                sweep.setdefault(s, {})[name] = value
            else:
                hps.setdefault(s, {})[name] = value
    for s, hp in parse_hp(args.hp).items():
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
            budget = Budget(
                max_seconds=args.budget_seconds if args.budget_seconds is not None else d.max_seconds,
                max_iterations=args.max_iterations if args.max_iterations is not None else d.max_iterations,
                max_work=d.max_work,
            )
        validate_solver_hyperparameters(task_id, solver_configs(solvers, hps, sweep))
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
    out = check_backend_and_out(args, task_id)
    progress_kw = progress_args(args)

    t0 = time.perf_counter()
    res = bench(
        task_id,
        solvers=solvers,
        instances=instances,
        seeds=seeds,
        budget=budget,
        backend=args.backend,
        out=args.cache_dir,
        cache=not args.no_cache,
        task_kwargs=kwargs,
        hyperparameters=hps,
        sweep=sweep,
        split=args.split,
        n_jobs=args.n_jobs,
        scheduler=args.scheduler,
        **progress_kw,
    )
    wall = time.perf_counter() - t0
    kw = ", ".join(f"{k}={v}" for k, v in res.task_kwargs.items())
    print(f"{task_id}  ({kw})")
    print(
        f"{res.runs['instance'].nunique()} instances x {len(res.summary)} solver configurations x {len(seeds)} "
        f"seed(s), backend {args.backend}, {wall:.1f} s wall\n"
    )
    print(res.format_table())
    extra_text = res.extra_report()
    if extra_text:
        print("\n" + extra_text)
    print(
        f"\ngeo-mean {res.primary}: geometric mean over instances (failures scored by the task), 95% bootstrap CI;"
        "\nseconds: wall time of solve(), scoring excluded."
    )
    res.save(out)
    print(f"\nresults written to {out}/ (summary.csv, table.txt, runs.parquet, curves.parquet, figures)")
    # a timeout or a diverged run is a result (scored by the task): reported, never a failure; a crash is one
    failed = [e for e in res.errors if e["status"] in ("error", "oom")]
    diverged = [e for e in res.errors if e["status"] == "diverged"]
    timeouts = [e for e in res.errors if e["status"] not in ("error", "oom", "diverged")]
    if diverged:
        e = diverged[0]
        print(
            f"\n{len(diverged)} solve(s) diverged (scored by the task); first: {e['solver']} on {e['instance']}",
            file=sys.stderr,
        )
    if timeouts:
        e = timeouts[0]
        print(
            f"\n{len(timeouts)} solve(s) ran out of budget ({e['status']}; scored by the task); first: {e['solver']} "
            f"on {e['instance']}: {e['error']}",
            file=sys.stderr,
        )
    return report_failures(failed, "solver", "solve", args.allow_failures)
