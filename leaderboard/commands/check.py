"""``papergym check``: the conformance test of an agent or solver file
(:func:`papergym.leaderboard.check.run_checks`)."""

from __future__ import annotations

import argparse
import json
import sys

from papergym.leaderboard.commands.common import CLIError, parse_seeds, submit_hp

__all__ = ["cmd_check"]


def cmd_check(args: argparse.Namespace, extra: list[str]) -> int:
    """``papergym check FILE.py:ATTR --to ID``: :func:`papergym.leaderboard.check.run_checks`, in-process."""
    from papergym.leaderboard.check import run_checks

    if extra:
        raise CLIError(f"unexpected arguments: {' '.join(extra)}")
    seeds = parse_seeds(args.seeds) if args.seeds is not None else None
    hp = submit_hp(args.hp)
    progress = None if args.json else (lambda msg: print(f"  {msg}", file=sys.stderr))
    try:
        report = run_checks(
            args.entry, args.benchmark, seeds=seeds, quick=args.quick, hyperparameters=hp, progress=progress
        )
    except (ValueError, FileNotFoundError) as exc:
        msg = str(exc)
        raise CLIError(msg if msg.startswith("--") else f"entry: {msg}") from None
    print(json.dumps(report.as_dict(), indent=1) if args.json else report.format())
    return 0 if report.passed else 1
