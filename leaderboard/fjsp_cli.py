"""``papergym fjsp``: look at flexible job-shop instances, solve one, draw its schedule, convert files.

``papergym fjsp show INSTANCE [--solver NAME] [--time-limit S] [--workers K] [--seed S] [--gantt PATH]``
    Solves one instance and prints its name, size (jobs x machines, operations, flexibility), its
    reference (LB / UB / source from the versioned table, or "none"), the solver's makespan, the gap to the
    reference (negative allowed), CP-SAT's status and bound (``--solver cpsat``) and the seconds taken.
    A makespan below a proven lower bound (the table's LB, the instance bound ``Instance.lower_bound``, CP-SAT's bound)
    prints an ``ERROR`` line and exits with status 1: it means wrong data or a wrong solver.
    ``--gantt PATH`` writes ``<stem>.png`` and ``<stem>.svg``.
``papergym fjsp list``
    The named instance sets with their sizes and how many members have a reference value.
``papergym fjsp train-mistar --instances sd2-10x5 --episodes E --out weights.pt [--seed S] [...]``
    Trains MIStar weights with n-step PPO (torch extra) on generated instances of that family and size,
    logs progress per batch, and writes the weights the ``mistar`` agent loads with ``weights=PATH``.
``papergym fjsp convert IN OUT [--zero-based | --one-based]``
    Reads any supported instance (``.fjs``, SchedulingLab ``.txt``/``.json``, or a catalogue name) and writes
    the 1-based ``.fjs`` form to ``OUT``.

``INSTANCE``: a catalogue name (``brandimarte/mk01``; a member alone, ``mk01``, when exactly one set has
it — ``la01`` is in the three Hurink sets and must be named in full) or the path of a ``.fjs`` / ``.json`` /
``.txt`` file (``.txt`` is read 0-based unless ``--one-based``). ``--solver``: ``cpsat`` (default; needs
the ``fjsp`` extra) or a dispatching rule ``fifo``, ``mor``, ``spt``, ``mwkr``, ``lwkr``, ``random`` (the
constructive rules of ``docs/papers/fjsp-mistar.md``, ties broken by ``--seed``).

Bad values (unknown instance or solver, unreadable file) raise the CLI's ``CLIError`` (exit status 2).
``leaderboard/cli.py`` adds the parser with :func:`add_fjsp_parser` and calls :func:`run_fjsp`; ``main``
here runs the subcommand alone (``python -m papergym.leaderboard.fjsp_cli show mk01``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["add_fjsp_parser", "run_fjsp", "resolve_instance", "main", "SOLVERS"]

RULE_SOLVERS = ("fifo", "mor", "spt", "mwkr", "lwkr", "random")
SOLVERS = ("cpsat",) + RULE_SOLVERS
_SUFFIXES = (".fjs", ".json", ".txt")


def _cli_error():
    # imported lazily: leaderboard/cli.py imports this module
    from papergym.leaderboard.commands.common import CLIError

    return CLIError


def add_fjsp_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``fjsp`` subcommand (with ``show``, ``list``, ``convert``) to ``subparsers``."""
    f = subparsers.add_parser(
        "fjsp",
        allow_abbrev=False,
        help="flexible job shop: show, solve, plot, convert instances",
        description="Flexible job-shop instances: 'show' solves one and prints it against its "
        "reference, 'list' the catalogue, 'convert' writes .fjs.",
    )
    fs = f.add_subparsers(dest="fjsp_command", required=True, metavar="{show,list,convert,train-mistar}")
    s = fs.add_parser(
        "show",
        allow_abbrev=False,
        help="solve an instance and compare with its reference",
        description="Solve one instance (CP-SAT or a dispatching rule) and print the makespan "
        "against the reference; --gantt writes the chart.",
    )
    s.add_argument("instance", help="catalogue name (brandimarte/mk01, or mk01 alone) or a .fjs/.json/.txt file")
    s.add_argument("--solver", default="cpsat", help=f"one of {', '.join(SOLVERS)} (default cpsat)")
    s.add_argument("--time-limit", type=float, default=10.0, help="CP-SAT seconds (default 10)")
    s.add_argument("--workers", type=int, default=2, help="CP-SAT workers (default 2; ≥ 8 for long runs)")
    s.add_argument("--seed", type=int, default=0, help="CP-SAT random seed / rule tie-breaking seed (default 0)")
    s.add_argument("--gantt", metavar="PATH", help="write the Gantt chart to PATH's stem .png and .svg")
    _add_base_flags(s)
    fs.add_parser("list", help="the instance sets with sizes and reference counts")
    c = fs.add_parser(
        "convert",
        allow_abbrev=False,
        help="read any supported format, write 1-based .fjs",
        description="Read an instance (.fjs, .txt, .json or a catalogue name) and write its .fjs form.",
    )
    c.add_argument("input", metavar="IN", help="input file or catalogue name")
    c.add_argument("output", metavar="OUT", help="output .fjs file")
    _add_base_flags(c)
    t = fs.add_parser(
        "train-mistar",
        allow_abbrev=False,
        help="train MIStar weights (n-step PPO; torch extra)",
        description="Train a MIStar policy with n-step PPO on generated instances of one family "
        "and size (MIStar, NeurIPS 2025) and write the weights file the 'mistar' agent loads "
        "with weights=PATH. Progress is logged per batch of episodes; the run is "
        "reproducible from --seed (same threads and library versions).",
    )
    t.add_argument(
        "--instances",
        default="sd2-10x5",
        help="generator family and size, FAMILY-NxM with FAMILY sd1 or sd2 (default sd2-10x5); "
        "validation uses DANIEL's SD2 validation split of that size",
    )
    t.add_argument(
        "--episodes",
        type=int,
        default=2000,
        help="instances to improve (one episode = one instance for --horizon steps; default 2000)",
    )
    t.add_argument("--out", required=True, help="weights file to write (.pt); <out>.history.json holds the log")
    t.add_argument("--envs", type=int, default=20, help="parallel instances per batch (default 20)")
    t.add_argument("--horizon", type=int, default=100, help="improvement steps per training episode (default 100)")
    t.add_argument("--n-step", type=int, default=10, help="steps per PPO update (default 10)")
    t.add_argument("--epochs", type=int, default=4, help="PPO epochs per update (default 4)")
    t.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate (default 1e-3)")
    t.add_argument("--entropy-coef", type=float, default=0.01, help="PPO entropy bonus (default 0.01)")
    t.add_argument("--hidden", type=int, default=64, help="embedding size q (default 64)")
    t.add_argument("--layers", type=int, default=4, help="GNN layers (default 4)")
    t.add_argument("--no-memory", action="store_true", help="train without the memory module (ablation)")
    t.add_argument("--seed", type=int, default=0, help="seed of instances, initialisation and sampling (default 0)")
    t.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    t.add_argument("--validate-every", type=int, default=10, help="validate every K batches (default 10)")
    t.add_argument("--validate-count", type=int, default=20, help="validation instances (default 20; 0 = none)")
    t.add_argument(
        "--validate-horizon", type=int, default=100, help="search steps of each validation run (default 100)"
    )
    t.add_argument(
        "--rollout",
        choices=("search", "single"),
        default="search",
        help="'search' (default): each training step samples --p moves and executes the best, as the "
        "deployed parallel search does; 'single': one sampled move per step (the paper's n-step PPO)",
    )
    t.add_argument("--p", type=int, default=16, help="moves sampled per step with --rollout search (default 16)")
    t.add_argument(
        "--temperature",
        type=float,
        default=1.0,
        help="sampling temperature of training, validation and the agent's default (default 1)",
    )
    t.add_argument(
        "--tabu",
        choices=("reverse", "visited"),
        default="visited",
        help="tabu rule of the search in training and validation (default visited)",
    )
    t.add_argument(
        "--init",
        default="sampled-dispatch",
        help="start solution of every episode, an FJSPImprove-v0 init (default sampled-dispatch)",
    )
    t.add_argument(
        "--teacher", type=float, default=0.0, help="weight of the optional teacher loss (default 0: pure PPO)"
    )
    t.add_argument(
        "--teacher-target",
        choices=("improving", "delta"),
        default="improving",
        help="teacher: softmax(beta*[move improves C_max]) ('improving', default) or "
        "softmax(-beta*dC_max/C_max) ('delta')",
    )
    t.add_argument("--teacher-beta", type=float, default=5.0, help="teacher sharpness beta (default 5)")
    t.add_argument("--resume", action="store_true", help="continue an interrupted run from <out>.ckpt (same arguments)")
    t.add_argument("--max-minutes", type=float, default=None, help="stop after this many minutes (default none)")
    return f


def _add_base_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--zero-based",
        dest="one_based",
        action="store_const",
        const=False,
        default=None,
        help="machine ids in the file are 0-based (default for .txt)",
    )
    g.add_argument(
        "--one-based",
        dest="one_based",
        action="store_const",
        const=True,
        help="machine ids in the file are 1-based (default for .fjs)",
    )


# ------------------------------------------------------------------------------------------- instances
def _looks_like_path(text: str) -> bool:
    return Path(text).suffix.lower() in _SUFFIXES or Path(text).exists()


def _read_file(text: str, one_based: bool | None):
    from papergym.envs.scheduling.fjsp.instance import InstanceError
    from papergym.envs.scheduling.fjsp.parser import read_instance

    CLIError = _cli_error()
    p = Path(text)
    if not p.exists():
        raise CLIError(f"instance file {text!r} does not exist")
    if p.is_dir():
        raise CLIError(f"instance {text!r} is a folder, not a file")
    if p.suffix.lower() not in _SUFFIXES:
        raise CLIError(f"instance file {text!r}: unsupported suffix {p.suffix!r}; use .fjs, .json or .txt")
    if p.suffix != p.suffix.lower():  # read_instance dispatches on the exact suffix
        one_based = (p.suffix.lower() != ".txt") if one_based is None else one_based
    try:
        if p.suffix.lower() == ".json":
            from papergym.envs.scheduling.fjsp.parser import parse_json

            return parse_json(p.read_text(), name=p.stem, source=str(p))
        return read_instance(p, one_based=one_based)
    except (InstanceError, OSError, UnicodeDecodeError) as exc:
        msg = str(exc)
        raise CLIError(
            f"cannot read the instance file: {msg}" if str(p) in msg else f"cannot read the instance file {text}: {msg}"
        ) from None


def resolve_instance(text: str, *, one_based: bool | None = None):
    """The :class:`Instance` named by ``text`` (catalogue name, member shorthand or file path); ``CLIError``
    otherwise."""
    from papergym.envs.scheduling.fjsp.instance import InstanceError
    from papergym.envs.scheduling.fjsp.sets import FIXED_SETS, UnknownInstanceError, list_sets, load_instance, load_set

    CLIError = _cli_error()
    text = str(text).strip()
    if not text:
        raise CLIError("instance: empty name")
    if _looks_like_path(text):
        return _read_file(text, one_based)
    if "/" in text:
        try:
            return load_instance(text)
        except (UnknownInstanceError, InstanceError, ValueError) as exc:
            raise CLIError(f"unknown instance {text!r}: {exc}") from None
    matches = []
    for set_name in FIXED_SETS:
        try:
            members = load_set(set_name)
        except (UnknownInstanceError, InstanceError, OSError):
            continue  # a set whose files are not installed
        matches += [i for i in members if i.name.split("/", 1)[1].lower() == text.lower()]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise CLIError(f"instance {text!r} is ambiguous; name one of: {', '.join(i.name for i in matches)}")
    raise CLIError(
        f"unknown instance {text!r}: not a file and no catalogue member of that name; names look like "
        f"'brandimarte/mk01' (or 'mk01' alone when unique) or a path ending in .fjs/.json/.txt; "
        f"sets: {', '.join(list_sets())} (see 'papergym fjsp list')"
    )


# ------------------------------------------------------------------------------------------- commands
def _fmt_gap(c: float, ref: float) -> str:
    return f"{100.0 * (c - ref) / ref:+.2f} %"


def _cmd_show(args: argparse.Namespace) -> int:
    import numpy as np

    from papergym.envs.scheduling.fjsp.graph import evaluate, validate_schedule
    from papergym.envs.scheduling.fjsp.sets import reference

    CLIError = _cli_error()
    solver = str(args.solver).lower()
    if solver == "random-dispatch":
        solver = "random"
    if solver not in SOLVERS:
        raise CLIError(f"--solver: unknown solver {args.solver!r}; valid: {', '.join(SOLVERS)}")
    if solver == "cpsat":
        if not (args.time_limit > 0 and math.isfinite(args.time_limit)):
            raise CLIError(f"--time-limit must be a positive number of seconds, got {args.time_limit}")
        if args.workers < 1:
            raise CLIError(f"--workers must be at least 1, got {args.workers}")
        try:
            import ortools  # noqa: F401
        except ImportError:
            raise CLIError(
                "--solver cpsat needs OR-Tools: pip install 'papergym[fjsp]' "
                f"(or use a dispatching rule: {', '.join(RULE_SOLVERS)})"
            ) from None
    if not 0 <= args.seed < 2**31:
        raise CLIError(f"--seed must be in [0, 2**31), got {args.seed}")
    inst = resolve_instance(args.instance, one_based=args.one_based)
    ref = reference(inst.name) if inst.name else None

    print(f"instance    {inst.name or args.instance}")
    print(
        f"size        {inst.n_jobs} jobs x {inst.n_machines} machines, {inst.n_ops} operations, "
        f"flexibility {inst.flexibility:.2f}"
    )
    if ref is None:
        print("reference   none")
    else:
        lb = "-" if ref.lb is None else str(ref.lb)
        ub = "-" if ref.ub is None else str(ref.ub)
        extra = " (optimal)" if ref.optimal and not ref.flag else ""
        flag = f"  [flagged: {ref.flag}]" if ref.flag else ""
        print(f"reference   LB {lb} / UB {ub}{extra}, source: {ref.source}{flag}")
    inst_lb = inst.lower_bound()

    t0 = time.perf_counter()
    cp = None
    if solver == "cpsat":
        from papergym.baselines.scheduling.cpsat import solve_cpsat

        cp = solve_cpsat(inst, time_limit=float(args.time_limit), num_workers=int(args.workers), seed=int(args.seed))
        seconds = time.perf_counter() - t0
        if cp.solution is None:
            print(
                f"solver      cpsat (OR-Tools {cp.settings['ortools']}, {args.workers} workers, "
                f"{args.time_limit:g} s limit, seed {args.seed})"
            )
            print(
                f"makespan    none: CP-SAT found no solution within the limit (status {cp.status}, "
                f"bound {cp.lower_bound})"
            )
            print(f"seconds     {seconds:.2f}")
            return 1
        machine, start, makespan = cp.machine, cp.start, int(cp.makespan)
        sol = cp.solution
        label = (
            f"cpsat (OR-Tools {cp.settings['ortools']}, {args.workers} workers, {args.time_limit:g} s limit, "
            f"seed {args.seed}, hint mwkr = {cp.settings['hint_makespan']})"
        )
    else:
        from papergym.envs.scheduling.fjsp.improve import dispatch_solution

        sol = dispatch_solution(inst, solver, np.random.default_rng(int(args.seed)))
        ev = evaluate(inst, sol)
        machine, start, makespan = sol.assign.copy(), ev.heads.copy(), int(ev.cmax)
        seconds = time.perf_counter() - t0
        how = {"spt": "shortest startable pair", "random": "uniform startable pair"}.get(solver, "EET machine rule")
        label = f"{solver} (dispatching rule, {how}, tie seed {args.seed})"
    validate_schedule(inst, machine, start, makespan=makespan)

    print(f"solver      {label}")
    print(f"makespan    {makespan}")
    if ref is not None and ref.ub:
        gap = f"{_fmt_gap(makespan, ref.ub)} vs UB {ref.ub}"
        if ref.lb and ref.lb != ref.ub:
            gap += f"; {_fmt_gap(makespan, ref.lb)} vs LB {ref.lb}"
        print(f"gap         {gap}")
    elif ref is not None and ref.lb:
        print(f"gap         {_fmt_gap(makespan, ref.lb)} vs LB {ref.lb}")
    else:
        print(f"gap         n/a (no reference); {_fmt_gap(makespan, inst_lb)} vs the instance bound {inst_lb}")
    if cp is not None:
        print(f"status      {cp.status}, CP-SAT bound {cp.lower_bound}")
    print(f"seconds     {seconds:.2f}")

    code = 0
    bounds = [("the instance bound (Instance.lower_bound)", inst_lb)]
    if ref is not None and ref.lb is not None and not ref.flag:
        bounds.append((f"the reference LB ({ref.source})", int(ref.lb)))
    if cp is not None:
        bounds.append(("CP-SAT's bound", int(cp.lower_bound)))
    for what, b in bounds:
        if makespan < b:
            print(
                f"ERROR: makespan {makespan} is below {what} {b}: the instance data or the solver is wrong",
                file=sys.stderr,
            )
            code = 1

    if args.gantt:
        from papergym.envs.scheduling.fjsp.gantt import gantt_paths, plot_gantt

        crit = evaluate(inst, sol).critical
        title = f"{inst.name or Path(args.instance).stem}: {solver}, makespan {makespan}"
        if ref is not None and ref.ub:
            title += f" (reference {ref.ub})"
        try:
            plot_gantt(inst, machine, start, title=title, path=args.gantt, critical=crit)
        except OSError as exc:
            raise CLIError(f"--gantt: cannot write {args.gantt}: {exc}") from None
        png, svg = gantt_paths(args.gantt)
        print(f"gantt       {png}, {svg}")
    return code


def _cmd_list() -> int:
    from papergym.envs.scheduling.fjsp.instance import InstanceError
    from papergym.envs.scheduling.fjsp.sets import UnknownInstanceError, bks_table, list_sets, load_set

    table = bks_table()
    rows = []
    for name in list_sets():
        try:
            insts = load_set(name)
        except (UnknownInstanceError, InstanceError, OSError, ValueError) as exc:
            rows.append((name, "-", "-", "-", f"unavailable: {exc}"))
            continue
        sizes = sorted({(i.n_jobs, i.n_machines) for i in insts})
        size = (
            f"{sizes[0][0]}x{sizes[0][1]}"
            if len(sizes) == 1
            else f"{sizes[0][0]}x{sizes[0][1]} .. {sizes[-1][0]}x{sizes[-1][1]}"
        )
        ops = [i.n_ops for i in insts]
        n_ref = sum(1 for i in insts if i.name in table)
        n_opt = sum(1 for i in insts if i.name in table and table[i.name].optimal and not table[i.name].flag)
        first = insts[0].name.split("/", 1)[1]
        last = insts[-1].name.split("/", 1)[1]
        rows.append(
            (
                name,
                str(len(insts)),
                size,
                f"{min(ops)}-{max(ops)}" if min(ops) != max(ops) else str(ops[0]),
                f"{n_ref} ({n_opt} optimal); members {first}..{last}",
            )
        )
    head = ("set", "instances", "jobs x machines", "operations", "references")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(4)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths + [0])).rstrip())
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths + [0])).rstrip())
    print("\nsingle instances: <set>/<member>, e.g. brandimarte/mk01, sd2-10x5/007 (a member alone when unique)")
    return 0


def _cmd_convert(args: argparse.Namespace) -> int:
    from papergym.envs.scheduling.fjsp.parser import write_fjs

    CLIError = _cli_error()
    inst = resolve_instance(args.input, one_based=args.one_based)
    out = Path(args.output)
    if out.is_dir():
        raise CLIError(f"OUT: {out} is a folder; give a file name (e.g. {out / 'instance.fjs'})")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_fjs(inst, out)
    except OSError as exc:
        raise CLIError(f"cannot write {out}: {exc}") from None
    note = "" if out.suffix.lower() == ".fjs" else " (note: the suffix is not .fjs)"
    print(f"wrote {out}: {inst.n_jobs} jobs x {inst.n_machines} machines, {inst.n_ops} operations, 1-based .fjs{note}")
    return 0


def run_fjsp(args: argparse.Namespace) -> int:
    """Run ``papergym fjsp <show|list|convert|train-mistar>``; returns the exit status, raises ``CLIError`` on bad
    input."""
    cmd = getattr(args, "fjsp_command", None)
    if cmd == "show":
        return _cmd_show(args)
    if cmd == "list":
        return _cmd_list()
    if cmd == "convert":
        return _cmd_convert(args)
    if cmd == "train-mistar":
        return _cmd_train_mistar(args)
    raise _cli_error()(f"fjsp: unknown subcommand {cmd!r}; valid: show, list, convert, train-mistar")


def _cmd_train_mistar(args: argparse.Namespace) -> int:
    import re

    CLIError = _cli_error()
    m = re.fullmatch(r"(sd1|sd2)-(\d+)x(\d+)", str(args.instances).strip().lower())
    if not m:
        raise CLIError(
            f"--instances: expected FAMILY-NxM with FAMILY sd1 or sd2 (e.g. sd2-10x5), got {args.instances!r}"
        )
    out = Path(args.out)
    if out.suffix != ".pt":
        raise CLIError(f"--out: the weights file must end in .pt, got {args.out!r}")
    if out.is_dir():
        raise CLIError(f"--out: {args.out!r} is a folder")
    if args.max_minutes is not None and not args.max_minutes > 0:
        raise CLIError(f"--max-minutes must be > 0, got {args.max_minutes!r}")
    try:
        from papergym.agents.scheduling.mistar.train import TrainConfig, train_to_file
    except ModuleNotFoundError as exc:
        raise CLIError(
            f"train-mistar needs the torch extra ({exc.name} is missing): pip install 'papergym[torch]'"
        ) from None
    cfg = TrainConfig(
        family=m.group(1),
        n_jobs=int(m.group(2)),
        n_machines=int(m.group(3)),
        episodes=args.episodes,
        n_envs=args.envs,
        horizon=args.horizon,
        n_step=args.n_step,
        epochs=args.epochs,
        lr=args.lr,
        hidden=args.hidden,
        layers=args.layers,
        memory=not args.no_memory,
        seed=args.seed,
        threads=args.threads,
        validate_every=args.validate_every,
        validate_count=args.validate_count,
        validate_horizon=args.validate_horizon,
        rollout=args.rollout,
        p=args.p,
        search_temperature=args.temperature,
        search_tabu=args.tabu,
        init=args.init,
        entropy_coef=args.entropy_coef,
        distill_coef=args.teacher,
        distill_target=args.teacher_target,
        distill_beta=args.teacher_beta,
        max_seconds=None if args.max_minutes is None else 60.0 * args.max_minutes,
    )
    try:
        cfg.check()
    except ValueError as exc:
        raise CLIError(f"train-mistar: {exc}") from None
    try:
        train_to_file(cfg, out, log=lambda line: print(line, flush=True), resume=args.resume)
    except (FileNotFoundError, ValueError) as exc:
        raise CLIError(f"train-mistar: {exc}") from None
    return 0


def main(argv: list[str] | None = None) -> int:
    """``papergym fjsp ARGV...`` on its own (``argv`` without the leading ``fjsp``; the same exit statuses
    as ``papergym``)."""
    CLIError = _cli_error()
    parser = argparse.ArgumentParser(prog="papergym", allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True)
    add_fjsp_parser(sub)
    args = parser.parse_args(["fjsp", *(sys.argv[1:] if argv is None else argv)])
    try:
        return run_fjsp(args)
    except CLIError as exc:
        print(f"papergym: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
