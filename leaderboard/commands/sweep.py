"""``papergym sweep``: regret scaling over horizons and significant shifts
(:mod:`papergym.leaderboard.runner.sweep`)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from papergym.leaderboard.commands.common import (
    CLIError,
    add_run_flags,
    apply_aliases,
    check_backend_and_out,
    parse_extra,
    parse_hp,
    parse_seeds,
    progress_args,
    report_failures,
)

__all__ = ["add_sweep_parser", "cmd_sweep"]


def add_sweep_parser(sub: Any) -> None:
    from papergym.leaderboard.runner.executors import BACKENDS

    w = sub.add_parser(
        "sweep",
        allow_abbrev=False,
        help="regret scaling over horizons and significant shifts",
        description="Runs agents on NonStatLipschitz-v0 piecewise-tents with L + 1 phases for every "
        "horizon T and shift count L of the grid, prints the mean regret per cell and "
        "the fitted log-log slopes of R_T in T and in L + 1 (bootstrap CIs over seeds) "
        "against the theory, and writes sweep.csv, runs.csv, slopes.csv, table.txt and "
        "sweep.png. Unknown --options are env arguments (--dim 2, --noise gaussian).",
    )
    w.add_argument("env_id", help="environment id (NonStatLipschitz-v0)")
    w.add_argument(
        "--horizon",
        required=True,
        help="horizons: 2^a..2^b (every power of two between) or a comma list of 2^k / integers (2^10,2^12,5000)",
    )
    w.add_argument("--shifts", default="0,1,2,4,8,16", help="numbers of shifts L (comma list; default 0,1,2,4,8,16)")
    w.add_argument("--agents", default="mdbe", help="comma-separated agent names (default mdbe)")
    w.add_argument("--seeds", default="8", help="count (8), range (5:15) or list (1,4,9); default 8")
    w.add_argument(
        "--hp",
        action="append",
        default=[],
        metavar="AGENT.NAME=VALUE",
        help="agent hyperparameter, repeatable (e.g. --hp mdbe.c0=0.3)",
    )
    w.add_argument("--backend", choices=BACKENDS, default="joblib", help="executor (default joblib)")
    w.add_argument("--n-jobs", type=int, help="workers (default: all cores)")
    w.add_argument("--scheduler", help="dask scheduler address, or 'slurm' (with --backend dask)")
    w.add_argument("--out", help="output folder (default: papergym-out/<env>/sweep-<time>)")
    w.add_argument("--cache-dir", help="folder of cached cell files (default: the user cache)")
    w.add_argument("--no-cache", action="store_true", help="recompute cells even if cached")
    w.add_argument("--quiet", action="store_true", help="no progress bar")
    add_run_flags(w)


def cmd_sweep(args: argparse.Namespace, extra: list[str]) -> int:
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
    seeds = parse_seeds(args.seeds)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    if not agents:
        raise CLIError("--agents: no agent named")
    for a in agents:
        try:
            get_agent_info(a, env_id)
        except UnknownAgentError as exc:
            raise CLIError(f"--agents: {exc}") from None
    hps = parse_hp(args.hp)
    for a in hps:
        if a not in agents:
            raise CLIError(f"--hp: agent {a!r} is not among the swept agents ({', '.join(agents)})")
    if args.n_jobs is not None and args.n_jobs < 1:
        raise CLIError(f"--n-jobs must be at least 1, got {args.n_jobs}")
    if args.scheduler and args.backend != "dask":
        raise CLIError("--scheduler needs --backend dask")
    env_kwargs = apply_aliases(env_id, parse_extra(extra))
    try:
        check_grid(horizons, shifts, env_kwargs)
        resolved = resolve_env_kwargs(
            env_id, {**env_kwargs, "instance": "piecewise-tents", "phases": max(shifts) + 1}, max(horizons)
        )
        validate_hyperparameters(env_id, hps, resolved)
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from None
    if not args.out:
        args.out = str(Path("papergym-out") / env_id / time.strftime("sweep-%Y%m%d-%H%M%S"))
    out = check_backend_and_out(args, env_id)
    progress_kw = progress_args(args)
    t0 = time.perf_counter()
    try:
        res = sweep(
            horizons,
            shifts,
            agents,
            seeds,
            env_kwargs=env_kwargs,
            hyperparameters=hps,
            backend=args.backend,
            n_jobs=args.n_jobs,
            scheduler=args.scheduler,
            cache_dir=args.cache_dir,
            cache=not args.no_cache,
            **progress_kw,
        )
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    wall = time.perf_counter() - t0
    print(
        f"{env_id} sweep: piecewise-tents with L + 1 phases, "
        + ", ".join(f"{k}={v}" for k, v in env_kwargs.items())
        + ("; " if env_kwargs else "")
        + f"{len(horizons)} horizons x {len(shifts)} shift counts x {len(seeds)} seeds, {wall:.1f} s wall\n"
    )
    print(res.format_table())
    d = res.d
    print(
        f"\nmean R_T: final dynamic regret over seeds, 95% percentile-bootstrap CI; L~ (oracle): mean number of "
        f"significant shifts\nthe oracle finds (the fit uses the nominal L); R_T/((L+1)^a T^b): a = 1/{d + 2}, "
        f"b = {d + 1}/{d + 2}.\nslopes: least squares of log mean R_T on log T and log(L+1) over the cells, 95% "
        f"percentile-bootstrap CI\nover seeds (one resample for all cells); theory: R_T ~ (L~+1)^(1/{d + 2}) "
        f"T^({d + 1}/{d + 2})."
    )
    res.save(out)
    print(f"\nresults written to {out}/ (sweep.csv, runs.csv, slopes.csv, table.txt, sweep.png)")
    return report_failures(res.errors, "agent", "run", args.allow_failures)
