"""``papergym submit``: a submission to a shared board's service, or a local, unranked run in the
sandbox on this machine."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from papergym.leaderboard.commands.common import CLIError, open_store, submit_hp

__all__ = ["cmd_submit", "rank_line"]


def rank_line(bb: Any, sid: int) -> str:
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
    line = (
        f"rank {int(r['rank'])}{tie} of {n_ranked} on {bb.benchmark_id} (95% rank interval {interval}); "
        f"{bb.metric} = {score} [{r.ci_low:.6g}, {r.ci_high:.6g}]"
    )
    if not tab.role.isin(("paper", "baseline", "oracle", "reference")).any():
        line += (
            f"\n(the board has no reference entries yet, so this rank compares nothing: "
            f"`papergym leaderboard refresh {bb.benchmark_id}` scores the paper's method and its baselines)"
        )
    return line


def cmd_submit(args: argparse.Namespace, extra: list[str]) -> int:
    from papergym.leaderboard.board.configs import board_ids
    from papergym.leaderboard.board.evaluate import REFERENCE_AUTHOR, check_label
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
    hp = submit_hp(args.hp)
    name = args.name if args.name is not None else path.stem
    try:
        check_label(name, "name")
    except ValueError as exc:
        raise CLIError(f"--name: {exc}") from None
    if args.server is not None:
        local_only = [
            opt
            for opt, given in (
                ("--author", args.author is not None),
                ("--db", args.db is not None),
                ("--sandbox", args.sandbox != "auto"),
                ("--unsafe-no-sandbox", args.unsafe_no_sandbox),
                ("--time-limit", args.time_limit is not None),
            )
            if given
        ]
        if local_only:
            raise CLIError(
                f"{', '.join(local_only)}: only for a local run; with --server the board's service "
                "decides (the author is the token's)"
            )
        return _submit_remote(args, name, hp)
    if args.split is not None:
        raise CLIError("--split goes with --server: a run without a server is a local, unranked run (split 'local')")
    author = args.author if args.author is not None else "anonymous"
    try:
        check_label(author, "author")
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
            raise CLIError(
                "--sandbox full: the full sandbox is not available here; missing: " + "; ".join(status.missing())
            )
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
    store = open_store(args.db)
    try:
        progress = None if args.quiet else (lambda msg: print(f"  {msg}", file=sys.stderr))
        try:
            sid = submit(
                store,
                args.entry,
                args.benchmark,
                name=name,
                author=author,
                hyperparameters=hp,
                sandbox=sandbox,
                limits=limits,
                progress=progress,
            )
        except SandboxError as exc:  # e.g. no sandbox mode usable on this machine
            raise CLIError(f"--sandbox {args.sandbox}: {exc}") from None
        fb = feedback(store, sid)
        bb = build_benchmark_board(store, args.benchmark)
    finally:
        store.close()
    print(format_feedback({"id": sid, "status": fb["status"], "feedback": fb}))
    print(rank_line(bb, sid) + " (this machine's board)")
    print()
    print(format_board_table(bb))
    print(
        f"\nThis was a LOCAL run, UNRANKED on any shared board (split 'local': evaluated on this machine with its "
        "own secret and seeds; the rank above is on this machine's store only).\nTo be ranked, submit it to a "
        f"board's service: papergym submit {args.entry} --to {args.benchmark} --server URL --split test"
    )
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
        raise CLIError(
            f"no token for {server}: set ${TOKEN_ENV} or run `papergym login --server {server}` "
            "(the board's operator creates tokens with `papergym admin token create AUTHOR`)"
        )
    if server.startswith("http://") and not is_local(server):
        print(f"papergym: warning: {server} is plain http: the token travels unencrypted; use https", file=sys.stderr)
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
                print(
                    f"submitted {clean_terminal(name)} to {args.benchmark} ({split} split) as submission "
                    f"{sub['id']}; waiting for a worker",
                    file=sys.stderr,
                )
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
                print(
                    f"\npapergym: stopped waiting; submission {sub['id']} stays queued on the board "
                    f"({server}/api/v1/submissions/{sub['id']})",
                    file=sys.stderr,
                )
            return 130
    if tty and not args.quiet:
        print(file=sys.stderr)
    print(format_feedback(answer))
    if split == "test" and answer.get("status") == "ok":
        print(f"\nthe board: {server}/boards/{args.benchmark}")
    return 0 if answer.get("status") == "ok" else 1
