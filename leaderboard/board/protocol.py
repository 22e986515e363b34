"""The parent's checks of what the sandboxed child sends (:mod:`papergym.leaderboard.board.sandbox`): every
decoded message is untrusted until these accept it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from papergym.leaderboard.board import channel as _ch
from papergym.leaderboard.board.limits import ProtocolError, SandboxError

__all__ = [
    "MAX_CALL_BYTES",
    "MAX_MESSAGE_CHARS",
    "MAX_SOLUTION_BYTES",
    "STATUS_BY_TYPE",
    "check_actions",
    "check_reply",
    "check_solver_message",
    "hosted_error",
]

#: the status of a session whose child reports an exception of this type (else ``error``)
STATUS_BY_TYPE = {"MemoryError": "oom", "BudgetExceeded": "timeout"}


# What the child sends is untrusted: every message is checked here before the evaluator uses it (the
# codec has already checked the frame's format, papergym.leaderboard.board.channel). A message that is
# not what the protocol says -- a field missing or of the wrong type, a run index out of range, an
# oversized value -- is a ProtocolError: the session ends with status "error", the evaluator goes on.
#: the most characters kept of an error message, a traceback or a failed run's message from the child
MAX_MESSAGE_CHARS = 4000
#: the largest ``args`` + ``kwargs`` of one call of the evaluator's callables (as :func:`_value_bytes` counts)
MAX_CALL_BYTES = 64 * 2**20
#: the largest solution a solver may report or return (as :func:`_value_bytes` counts)
MAX_SOLUTION_BYTES = 128 * 2**20
_ERROR_FIELDS = frozenset({"type", "message", "traceback"})
_ACTIONS_FIELDS = frozenset({"actions", "failed"})
_CALL_FIELDS = frozenset({"name", "args", "kwargs"})
_REPORT_FIELDS = frozenset({"solution", "iteration", "work"})


def _value_bytes(v: Any, limit: int) -> int:
    """About how many bytes a decoded value holds: the arrays' data, one per character of a string
    (keys included), 8 per number and per container slot. Counting stops once past ``limit``."""
    total = 0
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, np.ndarray):
            total += x.nbytes + 8
        elif isinstance(x, str):
            total += len(x) + 8
        elif isinstance(x, (list, tuple)):
            total += 8 * len(x) + 8
            if total <= limit:
                stack.extend(x)
        elif isinstance(x, dict):
            total += 8 * len(x) + 8 + sum(len(k) for k in x)
            if total <= limit:
                stack.extend(x.values())
        else:
            total += 8
        if total > limit:
            break
    return total


def hosted_error(v: Any, stderr_tail: str) -> SandboxError:
    """The :class:`SandboxError` of the child's error message ``{"type", "message", "traceback"}``
    (strings), or a :class:`ProtocolError` if the message is not one."""
    if not isinstance(v, dict) or not set(v) <= _ERROR_FIELDS or "type" not in v:
        return ProtocolError("a malformed error message (expected a dict of type, message and traceback)", stderr_tail)
    typ, msg, tb = v["type"], v.get("message", ""), v.get("traceback", "")
    if not (isinstance(typ, str) and isinstance(msg, str) and isinstance(tb, str)):
        return ProtocolError("a malformed error message (its type, message and traceback must be strings)", stderr_tail)
    typ, msg, tb = typ[:100], msg[:MAX_MESSAGE_CHARS], tb[:MAX_MESSAGE_CHARS]
    text = f"{typ}: {msg}"
    if tb:
        text = f"{text}\nTraceback (submission frames):\n{tb.rstrip()}"
    return SandboxError(STATUS_BY_TYPE.get(typ, "error"), text, stderr_tail)


def check_reply(op: int, v: Any, during: str, expect: Sequence[int]) -> None:
    """Raise what a decoded message from the child means when it is not one of the ops ``expect``-ed:
    the hosted error of an error message (:func:`hosted_error`), a :class:`ProtocolError` otherwise."""
    if op == _ch.OP_ERROR:
        raise hosted_error(v, "")
    if op not in expect:
        raise ProtocolError(f"unexpected message op {op} during {during}")


def check_actions(v: Any, n: int) -> tuple[np.ndarray, dict[int, str]]:
    """``(actions, failed)`` of the child's actions message for ``n`` runs, checked
    (:class:`ProtocolError` otherwise): ``[actions]`` or ``{"actions", "failed"}``; ``actions`` a
    bool / integer / float array whose first dimension is ``n`` (the trailing shape is the env's to
    check: :func:`papergym.leaderboard.board.evaluate._checked_actions`); ``failed`` maps run indices
    (ASCII decimal strings of ints in ``[0, n)``, no leading zero) to message strings (cut to
    :data:`MAX_MESSAGE_CHARS`)."""
    if isinstance(v, list):
        if len(v) != 1:
            raise ProtocolError(f"an actions message with {len(v)} arrays (expected 1)")
        actions, raw_failed = v[0], {}
    elif isinstance(v, dict) and set(v) == _ACTIONS_FIELDS and isinstance(v["failed"], dict):
        actions, raw_failed = v["actions"], v["failed"]
    else:
        raise ProtocolError("a malformed actions message (expected [actions] or {actions, failed: {run: message}})")
    if not isinstance(actions, np.ndarray) or actions.dtype.kind not in "biuf":
        what = f"an array of dtype {actions.dtype}" if isinstance(actions, np.ndarray) else type(actions).__name__
        raise ProtocolError(f"actions must be a numeric array, got {what}")
    if actions.ndim == 0 or actions.shape[0] != n:
        raise ProtocolError(
            f"actions of shape {actions.shape} for {n} runs (the first dimension must be the number of runs)"
        )
    failed: dict[int, str] = {}
    for k, msg in raw_failed.items():
        ok = k.isascii() and k.isdecimal() and len(k) <= 20 and (k == "0" or k[0] != "0")
        if not ok or int(k) >= n or not isinstance(msg, str):
            raise ProtocolError(
                f"a malformed failed-run entry {k[:40]!r} (expected a run index in [0, {n}) mapped to a message string)"
            )
        failed[int(k)] = msg[:MAX_MESSAGE_CHARS]
    return actions, failed


def check_solver_message(op: int, v: Any, callables: Mapping[str, Callable]) -> tuple[Any, ...]:
    """One message of a solve from the child, checked (:class:`ProtocolError` otherwise):
    ``("solution", solution)``, ``("call", name, args, kwargs)`` -- ``name`` one of ``callables``,
    ``args`` a list, ``kwargs`` a dict, together at most :data:`MAX_CALL_BYTES` -- or ``("report",
    solution, iteration, work)`` -- ``iteration`` None or an int, ``work`` None or a finite number,
    both below 2**63 in size. Solutions are at most :data:`MAX_SOLUTION_BYTES`."""
    if not isinstance(v, dict):
        raise ProtocolError("a message that is not a dict during solve")
    if op == _ch.OP_RPC_CALL:
        name, args, kwargs = v.get("name"), v.get("args"), v.get("kwargs")
        if (
            set(v) != _CALL_FIELDS
            or not isinstance(name, str)
            or name not in callables
            or not isinstance(args, list)
            or not isinstance(kwargs, dict)
        ):
            raise ProtocolError(
                f"a malformed call of {str(name)[:80]!r} (expected name: one of the problem's "
                "callables, args: a list, kwargs: a dict)"
            )
        size = _value_bytes([args, kwargs], MAX_CALL_BYTES)
        if size > MAX_CALL_BYTES:
            raise ProtocolError(f"the arguments of a call of {name!r} exceed {MAX_CALL_BYTES} bytes")
        return "call", name, args, kwargs
    if op == _ch.OP_SOLUTION:
        if set(v) != {"solution"}:
            raise ProtocolError("a malformed solution message (expected {solution})")
        out: tuple[Any, ...] = ("solution", v["solution"])
    elif op == _ch.OP_REPORT:
        it, work = v.get("iteration"), v.get("work")
        ok = (
            set(v) == _REPORT_FIELDS
            and (it is None or (type(it) is int and abs(it) < 2**63))
            and (
                work is None or (type(work) is int and abs(work) < 2**63) or (type(work) is float and np.isfinite(work))
            )
        )
        if not ok:
            raise ProtocolError(
                "a malformed report (expected solution, iteration: None or an int, work: None or a finite number)"
            )
        out = ("report", v["solution"], it, work)
    else:
        raise ProtocolError(f"unexpected message op {op} during solve")
    if _value_bytes(out[1], MAX_SOLUTION_BYTES) > MAX_SOLUTION_BYTES:
        raise ProtocolError(f"a solution larger than {MAX_SOLUTION_BYTES} bytes")
    return out
