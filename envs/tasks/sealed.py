"""Callables served to a solver that do not lead back to the evaluator's private state.

A task's public problem carries callables -- gradients, oracles, a communication step -- that run in the
evaluator. Handing the solver a bound method (``oracle.grad``) or a closure hands it the whole evaluator too:
``problem.oracle.grad.__self__.x_star`` or ``fn.__closure__[0].cell_contents``. :func:`seal` wraps such a
callable in a :class:`SealedCall`: an object with no instance attributes (empty ``__slots__``), no
``__self__``, ``__func__``, ``__wrapped__`` or closure, whose call looks the target up in a module-private
table keyed by the proxy itself. What a solver reaches from the problem by ``vars()``, attributes, closures and
``__self__`` is then only public data.

Limits (stated, not hidden): in one Python process everything is reachable in the end -- through the
``gc`` module, the interpreter's frames or this module's globals. Only process separation stops that; that is
what the leaderboard's sandbox does (the solver runs in another process and the callables are served by
messages). In-process ``papergym bench`` is the submitter's own local tuning loop; sealing keeps an honest
solver from reading the answer by accident and makes reading it on purpose an explicit act of introspection.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["SealedCall", "seal"]

# proxy -> target; weak keys, so a table entry lives exactly as long as its proxy
_TARGETS: weakref.WeakKeyDictionary[SealedCall, Callable[..., Any]] = weakref.WeakKeyDictionary()
_NAMES: weakref.WeakKeyDictionary[SealedCall, str] = weakref.WeakKeyDictionary()


class SealedCall:
    """A callable proxy with no reachable state (see the module docstring). Build it with :func:`seal`."""

    __slots__ = ("__weakref__",)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _TARGETS[self](*args, **kwargs)

    def __repr__(self) -> str:
        return f"<sealed callable {_NAMES.get(self, '?')}>"

    def __reduce__(self):
        raise TypeError(
            f"{self!r} cannot be pickled: it runs in the evaluator (the board's sandbox serves it by messages)"
        )

    def __copy__(self) -> SealedCall:
        return self

    def __deepcopy__(self, memo: dict) -> SealedCall:
        return self


def seal(fn: Callable[..., Any], name: str | None = None) -> SealedCall:
    """``fn`` behind a :class:`SealedCall`; ``name`` (default ``fn.__qualname__``) is only for ``repr``.
    Sealing a sealed callable returns it unchanged."""
    if isinstance(fn, SealedCall):
        return fn
    if not callable(fn):
        raise TypeError(f"seal needs a callable, got {type(fn).__name__}")
    proxy = SealedCall()
    _TARGETS[proxy] = fn
    _NAMES[proxy] = str(name or getattr(fn, "__qualname__", None) or type(fn).__name__)
    return proxy
