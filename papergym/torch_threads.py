"""The torch thread guard: ``torch.set_num_threads(n)`` around a call, the former count restored after.

papergym's torch solvers and task builders train small CPU models, where one intra-op thread is faster
than several and leaves the other cores to parallel workers (``papergym bench --n-jobs``); the guard
also keeps a solve from changing the thread count of the process that called it. torch is imported
when the guard is entered, so modules that use it still import on the core install without torch.

Use it as a context manager (it yields the ``torch`` module) or as a decorator::

    with torch_threads(1) as torch:
        ...

    @torch_threads(1)
    def train(...): ...
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["torch_threads"]


@contextlib.contextmanager
def torch_threads(n: int = 1) -> Iterator[Any]:
    """``torch.set_num_threads(n)`` inside the block (or the decorated call); the former count is
    restored on exit, also when the block raises. Yields the ``torch`` module."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield torch
    finally:
        torch.set_num_threads(old)
