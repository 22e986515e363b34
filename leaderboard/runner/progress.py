"""Progress of :func:`~papergym.leaderboard.runner.compare.compare`, :func:`~papergym.leaderboard.runner.bench.bench`
and :func:`~papergym.leaderboard.runner.sweep.sweep`: :class:`RunProgress`.

On a terminal (stderr is a tty) a tqdm bar. Elsewhere (CI logs, ``nohup``, a pipe) a bar is noise, so a line
such as ``compare NonStatLipschitz-v0: 37/120 runs done (2 failed), 1m12s elapsed, ~2m05s left`` is logged
every ``every`` seconds (from a background thread, so a long run still reports) on the logger
``papergym.leaderboard.runner.progress`` at level WARNING, which the default logging configuration shows.
``every=0`` turns these lines off. Nothing here configures logging.
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
from typing import Any, Self

__all__ = ["DEFAULT_EVERY", "RunProgress", "format_duration"]

logger = logging.getLogger(__name__)

DEFAULT_EVERY = 30.0  # seconds between two progress lines off a terminal


def format_duration(seconds: float) -> str:
    """``75.2`` -> ``1m15s``; ``3725`` -> ``1h02m05s``; ``4.3`` -> ``4s``."""
    s = max(0, round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m{s:02d}s"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


class RunProgress:
    """Counts finished runs and shows them (module docstring).

    ``enabled``: ``None`` (default) = a bar on a terminal, periodic log lines elsewhere; ``True`` = a bar
    even off a terminal; ``False`` = nothing at all. ``label`` starts each line (``"compare NonStatLipschitz-v0"``);
    ``unit`` names what is counted (``"runs"``, ``"solves"``). ``every``: seconds between two log lines
    (``0`` or less: none). ``total`` may be lowered with :meth:`skip` (runs found in the cache).
    """

    def __init__(
        self,
        total: int,
        label: str,
        *,
        unit: str = "runs",
        enabled: bool | None = None,
        every: float = DEFAULT_EVERY,
        stream: Any = None,
    ):
        if every is None or math.isnan(every) or every < 0:
            raise ValueError(f"progress interval must be a number of seconds >= 0, got {every!r}")
        self.total, self.label, self.unit = int(total), label, unit
        self.done = self.failed = 0
        self.every = float(every)
        self.t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar = None
        stream = sys.stderr if stream is None else stream
        tty = bool(getattr(stream, "isatty", lambda: False)())
        if enabled is True or (enabled is None and tty):
            from tqdm.auto import tqdm

            self._bar = tqdm(total=self.total, desc=label, unit=unit.rstrip("s") or unit, file=stream)
        elif enabled is None and self.every > 0:
            self._thread = threading.Thread(target=self._loop, name="papergym-progress", daemon=True)
            self._thread.start()

    # ------------------------------------------------------------------ counting
    def update(self, n: int = 1, *, failed: int = 0) -> None:
        """``n`` more runs finished, ``failed`` of them not ok."""
        self.done += int(n)
        self.failed += int(failed)
        if self._bar is not None:
            self._bar.update(n)

    def skip(self, n: int) -> None:
        """``n`` runs of the total need no work (found in the cache)."""
        self.total = max(self.done, self.total - int(n))
        if self._bar is not None:
            self._bar.total = self.total
            self._bar.refresh()

    def add(self, n: int) -> None:
        """``n`` more runs to do."""
        self.total += int(n)
        if self._bar is not None:
            self._bar.total = self.total
            self._bar.refresh()

    # ------------------------------------------------------------------ lines
    def line(self) -> str:
        """The progress line as it is logged."""
        elapsed = time.monotonic() - self.t0
        text = (
            f"{self.label}: {self.done}/{self.total} {self.unit} done ({self.failed} failed), "
            f"{format_duration(elapsed)} elapsed"
        )
        if 0 < self.done < self.total:
            text += f", ~{format_duration(elapsed / self.done * (self.total - self.done))} left"
        return text

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            logger.warning(self.line(), extra={"papergym_progress": True})

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
