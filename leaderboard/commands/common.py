"""What the ``papergym`` subcommands share: command-line errors, value parsing (seeds, env / task
arguments, hyperparameters), run flags and failure reports, the store, submitted ``FILE.py:ATTR``
agents and solvers."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

__all__ = [
    "CLIError",
    "add_run_flags",
    "apply_aliases",
    "check_backend_and_out",
    "env_module",
    "fail",
    "file_agent",
    "file_solver",
    "open_store",
    "parse_extra",
    "parse_hp",
    "parse_seeds",
    "progress_args",
    "report_failures",
    "submit_hp",
]

logger = logging.getLogger("papergym.leaderboard.cli")  # one logger for the whole command


class CLIError(Exception):
    """A bad command-line value (exit status 2)."""


def parse_seeds(text: str) -> list[int]:
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


def parse_extra(extra: list[str], lists: bool = False, flags: frozenset[str] = frozenset()) -> dict[str, Any]:
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


def apply_aliases(env_id: str, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    import inspect

    from papergym.leaderboard.runner.compare import env_class

    params = inspect.signature(env_class(env_id)).parameters
    out: dict[str, Any] = {}
    for k, v in env_kwargs.items():
        target = _ALIASES.get(k)
        if target is not None and k not in params and target in params:
            if target in env_kwargs:
                raise CLIError(f"--{k} is an alias of --{target}; give only one of them")
            k = target
        out[k] = v
    return out


def parse_hp(items: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        if "=" not in item or "." not in item.split("=", 1)[0]:
            raise CLIError(f"--hp: expected AGENT.NAME=VALUE (e.g. mdbe.c0=0.3), got {item!r}")
        lhs, value = item.split("=", 1)
        agent, name = lhs.split(".", 1)
        out.setdefault(agent, {})[name.replace("-", "_")] = _parse_value(value)
    return out


def add_run_flags(p: argparse.ArgumentParser) -> None:
    """Options shared by ``compare``, ``bench`` and ``sweep``."""
    p.add_argument(
        "--progress-every",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="when stderr is not a terminal: a progress line every SECONDS (default 30; 0: none)",
    )
    p.add_argument(
        "--allow-failures", action="store_true", help="exit 0 even when runs failed (they are still reported)"
    )


def progress_args(args: argparse.Namespace) -> dict[str, Any]:
    """``progress`` and ``progress_every`` of the runners from ``--quiet``, ``-q`` and ``--progress-every``."""
    if not args.progress_every >= 0:
        raise CLIError(f"--progress-every must be a number of seconds >= 0, got {args.progress_every}")
    quiet = args.quiet or args.log_quiet
    return {"progress": False if quiet else None, "progress_every": args.progress_every}


def report_failures(errors: list[dict[str, Any]], who: str, what: str, allow: bool) -> int:
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


def open_store(url: str | None):
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


def submit_hp(items: list[str]) -> dict[str, Any]:
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


def check_backend_and_out(args: argparse.Namespace, target_id: str) -> Path:
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


def file_agent(spec: str, env_id: str) -> str:
    """``--agents FILE.py:ATTR``: register ``ATTR`` (an agent class or factory) for ``env_id`` as a baseline named
    ``file-<stem>-<attr>`` (:func:`_load_file_attr`) and return that name."""
    from papergym.agents.base import register_agent

    name, factory = _load_file_attr(spec, "--agents", "an agent")
    register_agent(name, factory, envs=[env_id], role="baseline", description=f"{spec} (loaded from a file)")
    return name


def file_solver(spec: str, task_id: str) -> str:
    """``--solvers FILE.py:ATTR``: register ``ATTR`` (a solver class or factory taking ``seed=`` and its
    hyperparameters) for ``task_id`` as a baseline named ``file-<stem>-<attr>`` and return that name."""
    from papergym.agents.base import register_solver

    name, factory = _load_file_attr(spec, "--solvers", "a solver")
    try:
        register_solver(name, factory, tasks=[task_id], role="baseline", description=f"{spec} (loaded from a file)")
    except ValueError as exc:
        raise CLIError(f"--solvers: {exc}") from None
    return name


def fail(msg: str) -> int:
    print(f"papergym: error: {msg}", file=sys.stderr)
    return 2


def env_module(env_id: str):
    import importlib

    import gymnasium as gym

    return importlib.import_module(gym.spec(env_id).entry_point.split(":")[0])
