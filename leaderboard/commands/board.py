"""``papergym leaderboard``: terminal tables, the static HTML site, exports, refresh and deletion."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from papergym.leaderboard.commands.common import CLIError, open_store

__all__ = ["cmd_leaderboard"]


def cmd_leaderboard(args: argparse.Namespace, extra: list[str]) -> int:
    from papergym.leaderboard.board.configs import board_ids
    from papergym.leaderboard.board.ranking import build_benchmark_board, build_board
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
    store = open_store(args.db)
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
            print(
                "no results yet: run `papergym leaderboard refresh` to score the reference agents, "
                "or `papergym submit FILE.py:ATTR --to ID`"
            )
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
    store = open_store(args.db)
    try:
        subs = {sid: store.submission(sid) for sid in sids}
        missing = [str(sid) for sid, sub in subs.items() if sub is None]
        if missing:
            raise CLIError(f"delete: no submission with id {', '.join(missing)} in this store (nothing deleted)")
        busy = [str(sid) for sid, sub in subs.items() if sub["status"] == "running"]
        if busy and not args.force:
            raise CLIError(
                f"delete: submission {', '.join(busy)} is being evaluated; --force deletes it anyway "
                "(its worker's results are then refused) (nothing deleted)"
            )
        for sid, sub in subs.items():
            store.delete_submission(sid)
            what = clean_terminal(
                f"{sub['name']} by {sub['author']} on {sub['benchmark_id']} "
                f"(version {sub['version']}, {sub['role']}, {sub['status']})"
            )
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

    store = open_store(args.db)
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
