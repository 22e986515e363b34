"""The ``papergym`` command.

``papergym compare ENV_ID [options] [--ENV-KWARG VALUE ...]``
    Regret comparison of agents over seeds: prints a table, writes the figure (PNG + SVG), the raw
    results (parquet) and the table to an output folder, and names it. Options the command does not
    know are env constructor arguments: ``--instance piecewise-tents --phases 8`` becomes
    ``instance="piecewise-tents", phases=8`` (values parsed as JSON where possible); ``--dim`` is an
    alias of the dimension argument ``d``. Every value is
    checked before anything runs or is written; a bad one exits with status 2 and a message naming
    it and the valid choices.
``papergym list``
    Environments (with their instance families), solver tasks and agents with their roles.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["main", "build_parser"]


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


def _parse_extra(extra: list[str]) -> dict[str, Any]:
    """``--some-name value`` / ``--some-name=value`` pairs -> ``{"some_name": value}``."""
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
                raise CLIError(f"option --{name} needs a value")
            value = extra[i + 1]
            i += 2
        out[name.replace("-", "_")] = _parse_value(value)
    return out


# spelling a user may reach for -> the constructor argument (applied only where the env has the target)
_ALIASES = {"dim": "d"}


def _apply_aliases(env_id: str, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    import inspect

    from papergym.leaderboard.runner import _env_class

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
    from papergym.leaderboard.executors import BACKENDS

    p = argparse.ArgumentParser(prog="papergym", allow_abbrev=False,
                                description="papergym: benchmark gym of NeurIPS 2025 papers")
    sub = p.add_subparsers(dest="command", required=True, metavar="{compare,list}")

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

    sub.add_parser("list", help="environments, tasks and agents")
    return p


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
    print("Solver tasks")
    print("  (none registered yet)")
    return 0


def _cmd_compare(args: argparse.Namespace, extra: list[str]) -> int:
    import papergym.envs as penvs
    from papergym.agents.base import UnknownAgentError, get_agent_info, list_agents
    from papergym.leaderboard.runner import compare, resolve_env_kwargs, validate_hyperparameters

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
    seeds = _parse_seeds(args.seeds if args.seeds is not None else str(defaults.get("seeds", 10)))
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
    if args.backend == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise CLIError("--backend dask needs the 'dask' extra: pip install 'papergym[dask]'") from None
    out = Path(args.out) if args.out else Path("papergym-out") / env_id / time.strftime("%Y%m%d-%H%M%S")
    if out.exists() and not out.is_dir():
        raise CLIError(f"--out: {out} exists and is not a folder")

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
        return _cmd_compare(args, extra)
    except CLIError as exc:
        return _fail(str(exc))
    except BrokenPipeError:  # output piped into `head` and closed: not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
