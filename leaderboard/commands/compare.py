"""``papergym compare``: regret comparison of agents over seeds on an environment
(:mod:`papergym.leaderboard.runner.compare`)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from papergym.leaderboard.commands.common import (
    CLIError,
    apply_aliases,
    check_backend_and_out,
    env_module,
    file_agent,
    parse_extra,
    parse_hp,
    parse_seeds,
    progress_args,
    report_failures,
)

__all__ = ["cmd_compare"]


def _compare_defaults(env_id: str) -> dict[str, Any]:
    """``COMPARE_DEFAULTS`` of the env's module (horizon, seeds of ``papergym compare``), if any."""
    return dict(getattr(env_module(env_id), "COMPARE_DEFAULTS", {}))


def cmd_compare(args: argparse.Namespace, extra: list[str]) -> int:
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
    env_kwargs = apply_aliases(env_id, parse_extra(extra))
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
    seeds_for = getattr(env_module(env_id), "compare_seeds", None)
    if args.seeds is None and seeds_for is not None and user_kwargs:  # e.g. every member of a given set
        try:
            default_seeds = seeds_for(env_kwargs) or default_seeds
        except (ValueError, KeyError, OSError) as exc:
            raise CLIError(str(exc)) from None
    seeds = parse_seeds(args.seeds if args.seeds is not None else str(default_seeds))
    horizon = args.horizon if args.horizon is not None else defaults.get("horizon")
    if args.agents:
        agents = [file_agent(a.strip(), env_id) if ":" in a else a.strip() for a in args.agents.split(",") if a.strip()]
        for a in agents:
            try:
                get_agent_info(a, env_id)
            except UnknownAgentError as exc:
                raise CLIError(f"--agents: {exc}") from None
    else:
        agents = [a.name for a in list_agents(env_id)]
    hps = parse_hp(args.hp)
    for a in hps:
        if a not in agents:
            raise CLIError(f"--hp: agent {a!r} is not among the compared agents ({', '.join(agents)})")
    try:
        resolved = resolve_env_kwargs(env_id, env_kwargs, horizon)
        validate_hyperparameters(env_id, hps, resolved)
    except (ValueError, TypeError, OSError) as exc:
        raise CLIError(str(exc)) from None
    out = check_backend_and_out(args, env_id)
    progress_kw = progress_args(args)

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
        print(
            "\ncells: makespan C_max, gap (C_max - ref)/ref to the reference value "
            "(negative: better than the reference),"
            "\nmean seconds per run (env + agent); LB: the proven lower bound used for regret; ref: best known value"
            "\n(provenance above). Summary: mean gap over the instances with a reference, instances at or below it."
        )
        res.save(out)
        print(
            f"\nresults written to {out}/ (summary.csv, table.txt, runs.parquet, curves.parquet, "
            f"{res.figure_name}.png, {res.figure_name}.svg)"
        )
        return report_failures(res.errors, "agent", "run", args.allow_failures)
    regret_name = getattr(env_module(env_id), "REGRET_NAME", "cumulative regret")
    print(f"\n{res.regret_column}: mean over seeds of {regret_name} at the horizon T, 95% percentile-bootstrap CI;")
    if res.has_simple_regret:
        print(
            "R(T/2): mean R at T/2; flatness: mean (R_T - R_T/2) / R_T (0: regret stopped growing, 0.5: linear);\n"
            "simple regret: mean f* - max_t f(x_t) (best point played), 95% bootstrap CI;"
        )
    if "static_regret" in res.summary.columns:
        print(
            "static regret: pseudo-regret against the best FIXED action in hindsight (the paper's regret; final\n"
            "regret is against each round's best action), mean and 95% bootstrap CI;"
        )
    if "regret_per_ln_n" in res.summary.columns:
        print("R/ln n, R/sqrt(nmd): the pseudo-regret at n divided by ln n and by sqrt(n m d), mean over seeds;")
    if "gr_draws_per_round" in res.summary.columns:
        print("GR draws/round: mean geometric-resampling redraws per round (FTPL);")
    if "gap_last" in res.summary.columns:
        tol = res.env_kwargs.get("gap_tol", 1e-6)
        print(
            "gap last / avg-iterate: the gap of the last iterate and of the average of all iterates (games: the\n"
            "exploitability of the agent's strategy, NI error for role=both; mean field: F^s(mu) - F^s(mu*)), "
            "means over seeds;\n"
            "NI last / avg: the Nikaido-Isoda error of the joint profile (agent and built-in opponent);\n"
            f"steps to tol: first step (= best-response evaluation) with gap <= {tol:g} (horizon + 1 if never);\n"
            "rate: per-step linear convergence factor fitted on log gap (second half before the round-off floor);\n"
            "cycling: fraction of runs whose gap did not decrease over the last 20% of steps; "
            "W1 to mu*: Wasserstein-1\n"
            "distance of the last iterate to the minimiser; diverged: fraction of runs the agent flagged as divergent;"
        )
        if "converged" in res.summary.columns:
            print(
                "kappa: the oracle's contraction bound of the best-response map (games: l1 bound; "
                "mean field: W1 constant,\n"
                "an estimate for interaction); contractive: fraction of runs with kappa < 1; "
                "status: converged (gap <= tol,\n"
                "certified by the contraction or a unique equilibrium), not converged, "
                "not contractive (no certificate:\n"
                "the paper's theorem does not apply), grid-edge (mass at the truncation boundary: an artefact);"
            )
    if "sum_sigma" in res.summary.columns:
        print(
            "sum sigma(x_t): mean over seeds of sum_t sigma_{t-1}(x_t), posterior standard deviations at the\n"
            "queried points (GP-UCB with width B: R_T <= 2B sum sigma);"
        )
    if "L_tilde" in res.runs.columns:
        d = int(res.env_kwargs.get("d", 1))
        lt = res.runs.drop_duplicates("seed").L_tilde.astype(float)
        print(
            f"L~: significant shifts of the instance (oracle), mean {lt.mean():.2f} over seeds "
            f"(min {lt.min():.0f}, max {lt.max():.0f});\n"
            f"norm. regret: R_T / ((L~+1)^(1/{d + 2}) T^({d + 1}/{d + 2})), mean over seeds;"
        )
    if "detections" in res.summary.columns and res.summary.detections.notna().any():
        print(
            "detected: restarts that are the first in a phase [tau_i, tau_i+1), i >= 1; false alarms: the others;"
            "\ndelay: mean rounds from tau_i to its detection;"
        )
    print("ms/step: wall milliseconds per round of one run (batched runs share the time).")
    res.save(out)
    if args.log_x:
        import matplotlib.pyplot as plt

        plt.close(res.plot(out / res.figure_name, log_x=True))
    print(
        f"\nresults written to {out}/ (summary.csv, table.txt, runs.parquet, curves.parquet, "
        f"{res.figure_name}.png, {res.figure_name}.svg)"
    )
    return report_failures(res.errors, "agent", "run", args.allow_failures)
