"""Limits, modes, errors and reports of the leaderboard's sandbox (:mod:`papergym.leaderboard.board.sandbox`):
:class:`Limits` of one sandboxed submission, the ``sandbox=`` modes (:data:`SANDBOX_MODES`,
:func:`resolve_sandbox`), the errors a session raises and the :class:`SessionReport` it returns."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from papergym.leaderboard.board import isolation as _iso

__all__ = [
    "SANDBOX_MODES",
    "Limits",
    "ProtocolError",
    "SandboxError",
    "SandboxUnavailable",
    "SandboxWarning",
    "SessionReport",
    "resolve_sandbox",
]


# --------------------------------------------------------------------------------------- limits
@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed submission.

    Attributes
    ----------
    call_seconds:
        Wall time of one round trip (an agent step of every seed, a start / import). Default 60.
    episode_seconds:
        Wall time of an agent session from ``start`` to ``close``, and of one solve. Default 3600.
    submission_seconds:
        Wall time of the whole session object (every solve of a solver session). Default 4 h.
    cpu_seconds:
        CPU seconds of the child process (``RLIMIT_CPU`` backstop: SIGXCPU, SIGKILL 5 s later).
        Default 4 h.
    memory_mb:
        Memory of the whole sandbox: the job cgroup's limit (swap 0; anonymous memory, page cache,
        tmpfs files and ``memfd`` pages together; its OOM kill is status ``oom``) and each process's
        address space (``RLIMIT_AS``). Default 4096 MiB.
    file_size_mb:
        Largest file the child may write (``RLIMIT_FSIZE``), and the size of its ``/tmp`` and
        ``/dev/shm`` tmpfs under bwrap. Default 256 MiB.
    open_files:
        ``RLIMIT_NOFILE``. Default 256.
    processes:
        Processes and threads of the submission: the job cgroup's ``pids.max`` (plus bubblewrap's own
        two) and ``RLIMIT_NPROC`` of the job's uid. Default 32.
    cpus:
        CPU bandwidth of the sandbox in CPUs (the job cgroup's CPU quota per 100 ms period). Default 1.
    stderr_tail_bytes:
        How much of the end of the child's stderr / stdout is kept. Default 8 KiB.
    """

    call_seconds: float = 60.0
    episode_seconds: float = 3600.0
    submission_seconds: float = 4 * 3600.0
    cpu_seconds: float = 4 * 3600.0
    memory_mb: int = 4096
    file_size_mb: int = 256
    open_files: int = 256
    processes: int = 32
    stderr_tail_bytes: int = 8192
    cpus: float = 1.0

    def __post_init__(self) -> None:
        for name in (
            "call_seconds",
            "episode_seconds",
            "submission_seconds",
            "cpu_seconds",
            "memory_mb",
            "file_size_mb",
            "open_files",
            "processes",
            "stderr_tail_bytes",
            "cpus",
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise ValueError(f"Limits.{name} must be a positive number, got {v!r}")


class SandboxError(Exception):
    """A sandboxed submission failed. ``status``: ``error`` | ``timeout`` | ``oom`` |
    ``invalid_action``; ``message``: what happened (the submission's traceback lines included);
    ``stderr_tail``: the end of its stderr / stdout."""

    def __init__(self, status: str, message: str, stderr_tail: str = ""):
        super().__init__(f"[{status}] {message}")
        self.status = status
        self.message = message
        self.stderr_tail = stderr_tail


class ProtocolError(SandboxError):
    """The child broke the channel's protocol (garbage, a truncated frame, a wrong op): status error."""

    def __init__(self, message: str, stderr_tail: str = ""):
        super().__init__(
            "error",
            message if message.startswith("protocol violation") else f"protocol violation: {message}",
            stderr_tail,
        )


class SandboxWarning(UserWarning):
    """The sandbox runs without some isolation (the message says which)."""


class SandboxUnavailable(SandboxError):
    """The isolation asked for cannot be had on this machine (status ``error``; the message names every
    missing piece). Raised before anything runs."""

    def __init__(self, message: str):
        super().__init__("error", message)


#: the values of ``sandbox=`` (:mod:`papergym.leaderboard.board.sandbox`, Isolation)
SANDBOX_MODES = ("auto", "full", "bwrap", "unsafe-rlimits")


def resolve_sandbox(sandbox: str) -> str:
    """The mode ``sandbox`` (one of :data:`SANDBOX_MODES`) runs as here: ``"full"``, ``"bwrap"`` or
    ``"unsafe-rlimits"`` (:mod:`papergym.leaderboard.board.sandbox`, Isolation). Raises :class:`ValueError` for
    an unknown name (``"rlimits"``: renamed ``"unsafe-rlimits"``) and :class:`SandboxUnavailable` when the
    isolation asked for is not available."""
    if sandbox == "rlimits":
        raise ValueError(
            "sandbox='rlimits' was renamed 'unsafe-rlimits' (the CLI's --unsafe-no-sandbox): it runs "
            "the submission without filesystem, network or system-call isolation, for local "
            "experiments on trusted code only"
        )
    if sandbox not in SANDBOX_MODES:
        raise ValueError(f"sandbox must be one of {', '.join(map(repr, SANDBOX_MODES))}, got {sandbox!r}")
    if sandbox == "unsafe-rlimits":
        return sandbox
    st = _iso.isolation_status()
    if sandbox == "full":
        if not st.full:
            raise SandboxUnavailable(
                "sandbox='full' needs every isolation piece; missing here: " + "; ".join(st.missing())
            )
        return "full"
    if sandbox == "bwrap":
        if not st.bwrap_ok:
            raise SandboxUnavailable(f"sandbox='bwrap' but bubblewrap does not work here: {st.bwrap_reason}")
        return "bwrap"
    if st.full:
        return "full"
    if st.bwrap_ok:
        warnings.warn(
            "sandbox='auto' runs as 'bwrap', not 'full' (what ranked evaluation needs); missing: "
            + "; ".join(st.missing()),
            SandboxWarning,
            stacklevel=3,
        )
        return "bwrap"
    raise SandboxUnavailable(
        "no sandbox can run here, missing: "
        + "; ".join(st.missing())
        + ". For a local experiment on trusted code, `papergym submit --unsafe-no-sandbox` "
        "(sandbox='unsafe-rlimits') runs it with rlimits only"
    )


@dataclass(frozen=True)
class SessionReport:
    """What :meth:`close` returns: the child's stderr tail, the session's wall seconds, the child's
    CPU seconds (user + system, measured by the parent with ``wait4``, children included) and the
    isolation used (``full`` | ``bwrap`` | ``unsafe-rlimits`` | ``in-process``)."""

    stderr_tail: str
    wall_seconds: float
    cpu_seconds: float
    sandbox: str
