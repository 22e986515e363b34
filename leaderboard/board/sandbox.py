"""Sandboxed execution of submitted agents and solvers: the leaderboard's trust boundary.

Submitted code is hostile until proven otherwise. The trusted evaluator owns the env / task, the
oracle, the hidden seeds and the store; it starts **one child process per submission** (all test
seeds together) and talks to it over a length-prefixed message channel
(:mod:`papergym.leaderboard.board.channel`) on a dedicated socket (not stdin / stdout). The child runs
:mod:`papergym.leaderboard.board._sandbox_child`, which imports the submitted file and hosts the agent(s) or
the solver. One step round trip carries every seed's feedback and returns every seed's action.

Isolation
---------
``sandbox=`` names one of four modes; the mode actually used is :attr:`SessionReport.sandbox` (and the
store's ``sandbox`` column). :func:`resolve_sandbox` decides it from
:func:`papergym.leaderboard.board.isolation.isolation_status`, which probes each piece once per process:

* ``"full"`` -- what ranked evaluation uses: bubblewrap + a per-job cgroup (memory, pids, cpu) + a
  seccomp filter + a per-job uid. If any piece is unavailable it raises :class:`SandboxUnavailable`
  (status ``error``) naming every missing piece, before anything runs; it never falls back.
* ``"bwrap"`` -- local, unranked use: bubblewrap and the rlimits, plus each of the cgroup, the
  seccomp filter and the per-job uid that works here (as root without a uid pool: uid 65534, shared by
  such sandboxes). :class:`SandboxUnavailable` when bubblewrap does not work.
* ``"auto"``: ``"full"`` when every piece works, else ``"bwrap"`` (with a :class:`SandboxWarning`
  naming what is missing), else :class:`SandboxUnavailable`, which names what is missing and says that
  ``papergym submit --unsafe-no-sandbox`` exists for local experiments. Never silently unisolated.
* ``"unsafe-rlimits"``, only when asked for by that exact name (the CLI's ``--unsafe-no-sandbox``), with
  a loud :class:`SandboxWarning`: the rlimits below, a scrubbed environment, a temporary work dir, a
  new session (its process group is killed on timeout), ``PR_SET_PDEATHSIG``, a meta-path blocker for
  ``papergym`` (best effort), the job cgroup and the per-job uid where available (else uid 65534 if
  the Python installation is reachable by other users; the warning says when the process runs as
  root). No filesystem, network or system-call isolation: it can read every file its uid can read,
  ``/proc/<pid>/environ`` of processes of its uid included. The former name ``"rlimits"`` raises
  :class:`ValueError` naming the new one.

What ``"full"`` enforces, and how:

* bubblewrap (:func:`bwrap_available` runs the real command line with a trivial script) with new pid,
  network, ipc, uts and cgroup namespaces: no network at all (``connect`` fails), no process of the
  machine visible, ``--die-with-parent``, ``--new-session``;
* a filesystem made of read-only binds of only what the runtime needs: ``/usr`` (and the ``/lib*``,
  ``/bin`` links), ``/etc/ld.so.cache``, the Python installation (``sys.base_prefix``,
  ``sys.prefix``, the site-packages folders); ``/proc`` (of the sandbox's pid namespace), a minimal
  ``/dev``, a tmpfs of ``Limits.file_size_mb`` on ``/tmp`` (the work dir) and on ``/dev/shm``.
  papergym is masked: every ``papergym*`` folder in site-packages is covered by an empty tmpfs and
  every ``.pth`` / editable finder that mentions it by ``/dev/null`` (the editable install points at
  the repository, which is not mounted either). The store, the evaluator's secret, ``$HOME`` and the
  repository are not visible. The child script, the channel module and the submitted file are copied
  in read-only (``/sandbox/lib/...``, ``/sandbox/submission/<name>.py``) from memory, so no host path
  leaks;
* ``--clearenv`` with a minimal environment (``HOME=/tmp``, ``PATH``, ``OMP``/``OPENBLAS``/``MKL``/
  ``NUMEXPR``/``NUMBA_NUM_THREADS=1``, ``NUMBA_CACHE_DIR=/tmp/numba``, ``PYTHONHASHSEED=0``,
  ``MPLBACKEND=Agg``), for bubblewrap itself too (the sandbox's pid 1). Python runs with ``-s -P``
  rather than ``-I``: the environment is already cleared, and ``-I`` would drop ``PYTHONHASHSEED``;
* a uid of its own (:func:`papergym.leaderboard.board.isolation.acquire_uid`: a pool of uids no account
  uses, one ``flock``-ed lock file per uid, so concurrent sandboxes of every process on the machine
  get different uids; released when the sandbox ends). The kernel ignores ``RLIMIT_NPROC`` for uid 0,
  also for a uid mapped to 0 in a user namespace, so as root bwrap runs *without* a user namespace
  and the child drops to the job's uid/gid (``setgroups([])``, ``setresgid``, ``setresuid``, which
  also clears every capability) as its very first action, before the submitted file is read. One
  submission's processes therefore never count against another's ``RLIMIT_NPROC``, and it cannot
  signal or read the other's processes. (As a normal user bwrap uses an unprivileged user namespace;
  there is no uid pool then, so ``"full"`` needs root.);
* a job cgroup (:class:`papergym.leaderboard.board.isolation.JobCgroup`, cgroup v2 or v1), joined by the
  launched process between ``fork`` and the ``exec`` of bwrap, so every process and thread of the
  sandbox is in it: memory ``Limits.memory_mb`` with swap 0 -- anonymous memory, page cache and the
  tmpfs / ``memfd`` pages that ``RLIMIT_AS`` does not count; tasks ``Limits.processes`` + 2 (bwrap's
  own two processes); CPU bandwidth ``Limits.cpus``. When the cgroup's OOM killer ends a task (its
  ``oom_kill`` counter), the session ends with status ``oom``. Killing the sandbox SIGKILLs every task
  of the cgroup until it is empty (``cgroup.kill`` on v2), so nothing is left behind, and the cgroup
  folders are removed;
* a seccomp filter (:func:`papergym.leaderboard.board.isolation.seccomp_bpf`, given to bubblewrap as
  ``--seccomp FD``, installed just before the exec of the child): ``EPERM`` for ``ptrace``,
  ``process_vm_readv``/``writev``, mounts, ``unshare``/``setns`` and ``clone`` with a ``CLONE_NEW*`` flag,
  keyrings, ``bpf``, ``perf_event_open``, ``userfaultfd``, io_uring, module / kexec loading, ``reboot``,
  swap, ``open_by_handle_at`` and more (:data:`~papergym.leaderboard.board.isolation.DENIED_SYSCALLS`);
  ``ENOSYS`` for ``clone3`` (glibc then uses ``clone``, whose flags the filter sees), so threads
  (numpy, torch, Python's) and ``fork`` work; another system-call ABI kills the process;
* rlimits, set before the exec of bwrap / python: ``RLIMIT_CPU`` (soft ``cpu_seconds``: SIGXCPU;
  hard 5 s later: SIGKILL), ``RLIMIT_AS`` (``memory_mb``: a large ``malloc`` fails with
  ``MemoryError``, status ``oom``), ``RLIMIT_FSIZE``, ``RLIMIT_NOFILE``, ``RLIMIT_NPROC`` (of the
  job's uid), ``RLIMIT_CORE=0``.

Time limits (:class:`Limits`): per call (one round trip: a step, a start, an import), per episode (an
agent session's start..close, or one solve; a solve's own ``timeout`` too), per submission (the whole
life of the session object, every solve included) and CPU seconds. On any timeout the whole sandbox
is killed (SIGKILL to bwrap, whose pid namespace dies with it; the process group in rlimits mode) and
:class:`SandboxError` with status ``timeout`` is raised. Later calls on a dead agent session raise
the same error again; a solver session starts a fresh child for its next solve.

Statuses: ``error`` (an exception in the submitted code, a protocol violation, a crash, a bad import),
``timeout`` (a time limit, the CPU limit, ``BudgetExceeded`` raised by a solver), ``oom``
(``MemoryError`` inside, or killed by SIGKILL without reaching the CPU limit -- the kernel's OOM
killer), ``invalid_action`` (decided by the evaluator). Every :class:`SandboxError` carries the tail
of the child's stderr (stdout is redirected into it) for the author.

Speed
-----
One step is one round trip over two pipes. What keeps it cheap:

* the hot messages use the channel's JSON-free fast path, and both ends cache the frame layout (the
  header bytes of a given op, dtypes and shapes), so a step's codec is a few microseconds;
* both ends busy-wait for the other's next frame for up to :data:`SPIN_SECONDS` before sleeping --
  a wake-up through the hypervisor costs ~45 us per round trip on the 2-vCPU VM here, a spinning
  round trip ~2 us;
* :func:`papergym.leaderboard.board.evaluate.play` splits a step into :meth:`SandboxedAgentSession.send_step`
  and :meth:`~SandboxedAgentSession.recv_step` and books the previous round's regret in between,
  while the agent computes;
* the parent's reads block (no timer syscalls): a watchdog thread enforces the deadlines.

Measured (``python benchmarks/bench_sandbox.py``, T = 10^5, UCB1 on 32 arms, 20 seeds, bwrap, 2-vCPU
VM): sandboxed / in-process = 1.45 (about 14 us added per step); without the spin it was 4-6.

Sessions
--------
:class:`SandboxedAgentSession` / :class:`InProcessAgentSession` (trusted reference agents) share the
hosting code (:class:`papergym.leaderboard.board._sandbox_child.AgentHost`) and give bit-identical actions;
likewise :class:`SandboxedSolverSession` / :class:`InProcessSolverSession`.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import resource
import shutil
import signal
import site
import stat
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from papergym.leaderboard.board import _sandbox_child as _child
from papergym.leaderboard.board import channel as _ch
from papergym.leaderboard.board import isolation as _iso

__all__ = [
    "SANDBOX_MODES",
    "AgentSession",
    "InProcessAgentSession",
    "InProcessSolverSession",
    "Limits",
    "ProtocolError",
    "SandboxError",
    "SandboxUnavailable",
    "SandboxWarning",
    "SandboxedAgentSession",
    "SandboxedSolverSession",
    "SessionReport",
    "SolverSession",
    "bwrap_available",
    "load_entry",
    "problem_to_public",
    "resolve_sandbox",
    "space_to_public",
]

NOBODY = 65534
SANDBOX_LIB = "/sandbox/lib"
SANDBOX_SUBMISSION = "/sandbox/submission"
_CHILD_NAME = "_pg_sandbox_child.py"
_CHANNEL_NAME = "_pg_channel.py"
#: both ends busy-wait this long for the other's next message before they sleep in ``poll`` (only on
#: a machine that gives the evaluator at least two CPUs; 0 turns it off). A round trip whose reply
#: comes within it costs no wake-up: on the 2-vCPU KVM machine here a pipe round trip between two
#: sleeping processes on different CPUs takes ~45 us (an inter-processor interrupt through the
#: hypervisor), between two spinning ones ~2 us. The spin is bounded, so a slow agent (or a slow
#: evaluator step) costs at most this much CPU per round before the process sleeps; the child's CPU
#: seconds include its spin.
SPIN_SECONDS = 0.002
#: how often a sandbox's watchdog recounts the machine's running sandboxes for its spin gate (seconds)
GATE_SECONDS = 0.25


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
        for name in ("call_seconds", "episode_seconds", "submission_seconds", "cpu_seconds", "memory_mb",
                     "file_size_mb", "open_files", "processes", "stderr_tail_bytes", "cpus"):
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
        super().__init__("error", message if message.startswith("protocol violation") else
                         f"protocol violation: {message}", stderr_tail)


class SandboxWarning(UserWarning):
    """The sandbox runs without some isolation (the message says which)."""


class SandboxUnavailable(SandboxError):
    """The isolation asked for cannot be had on this machine (status ``error``; the message names every
    missing piece). Raised before anything runs."""

    def __init__(self, message: str):
        super().__init__("error", message)


#: the values of ``sandbox=`` (module docstring, Isolation)
SANDBOX_MODES = ("auto", "full", "bwrap", "unsafe-rlimits")


def resolve_sandbox(sandbox: str) -> str:
    """The mode ``sandbox`` (one of :data:`SANDBOX_MODES`) runs as here: ``"full"``, ``"bwrap"`` or
    ``"unsafe-rlimits"`` (module docstring, Isolation). Raises :class:`ValueError` for an unknown name
    (``"rlimits"``: renamed ``"unsafe-rlimits"``) and :class:`SandboxUnavailable` when the isolation
    asked for is not available."""
    if sandbox == "rlimits":
        raise ValueError("sandbox='rlimits' was renamed 'unsafe-rlimits' (the CLI's --unsafe-no-sandbox): it runs "
                         "the submission without filesystem, network or system-call isolation, for local "
                         "experiments on trusted code only")
    if sandbox not in SANDBOX_MODES:
        raise ValueError(f"sandbox must be one of {', '.join(map(repr, SANDBOX_MODES))}, got {sandbox!r}")
    if sandbox == "unsafe-rlimits":
        return sandbox
    st = _iso.isolation_status()
    if sandbox == "full":
        if not st.full:
            raise SandboxUnavailable("sandbox='full' needs every isolation piece; missing here: "
                                     + "; ".join(st.missing()))
        return "full"
    if sandbox == "bwrap":
        if not st.bwrap_ok:
            raise SandboxUnavailable(f"sandbox='bwrap' but bubblewrap does not work here: {st.bwrap_reason}")
        return "bwrap"
    if st.full:
        return "full"
    if st.bwrap_ok:
        warnings.warn("sandbox='auto' runs as 'bwrap', not 'full' (what ranked evaluation needs); missing: "
                      + "; ".join(st.missing()), SandboxWarning, stacklevel=3)
        return "bwrap"
    raise SandboxUnavailable("no sandbox can run here, missing: " + "; ".join(st.missing())
                             + ". For a local experiment on trusted code, `papergym submit --unsafe-no-sandbox` "
                             "(sandbox='unsafe-rlimits') runs it with rlimits only")


@dataclass(frozen=True)
class SessionReport:
    """What :meth:`close` returns: the child's stderr tail, the session's wall seconds, the child's
    CPU seconds (user + system, measured by the parent with ``wait4``, children included) and the
    isolation used (``full`` | ``bwrap`` | ``unsafe-rlimits`` | ``in-process``)."""

    stderr_tail: str
    wall_seconds: float
    cpu_seconds: float
    sandbox: str


# ------------------------------------------------------------------------------------- entries
def load_entry(spec: str) -> tuple[Path, str]:
    """``"path/to/file.py:attr"`` -> ``(resolved file, attr)``.

    Checks the file exists and is a ``.py`` file, and the attribute is a (dotted) Python identifier;
    whether it exists is checked inside the child only (the parent never imports submitted code).
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(f"an entry is 'path/to/file.py:attr' (e.g. my_agent.py:make_agent), got {spec!r}")
    path_s, attr = spec.rsplit(":", 1)
    if not path_s:
        raise ValueError(f"the entry {spec!r} names no file")
    if not attr or not all(p.isidentifier() for p in attr.split(".")):
        raise ValueError(f"the entry {spec!r} names no valid attribute after ':' (a Python identifier, "
                         "e.g. make_agent or MySolver)")
    path = Path(path_s).expanduser()
    if path.suffix != ".py":
        raise ValueError(f"the submitted file must be a .py file, got {path_s!r}")
    if not path.is_file():
        raise FileNotFoundError(f"the submitted file {path_s!r} does not exist")
    return path.resolve(), attr


def check_entry_statically(path: Path, attr: str) -> None:
    """Refuse an entry whose attribute the file visibly does not define (:func:`top_level_names`; the file is
    parsed, never run) — a typo caught before anything is evaluated or stored. Where the names cannot be
    known statically, the sandboxed child decides."""
    defined = top_level_names(Path(path).read_bytes())
    if defined is not None and attr.split(".")[0] not in defined:
        raise ValueError(f"{path} defines no top-level name {attr.split('.')[0]!r} (it defines: "
                         f"{', '.join(sorted(defined)) or 'nothing'}); nothing was evaluated")


def top_level_names(source: bytes) -> set[str] | None:
    """The names a module's top level binds, read with :mod:`ast` (the code is parsed, never run): functions,
    classes, assignment targets, imports. ``None`` where that cannot be known statically (a syntax error —
    reported by the child with its line —, ``from m import *`` or a write to ``globals()``)."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("globals", "setattr", "exec"):
            return None
    for node in tree.body:
        stack = [node]
        while stack:  # top-level statements, including those inside if/try/with blocks
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(n.name)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                for a in n.names:
                    if a.name == "*":
                        return None
                    names.add((a.asname or a.name).split(".")[0])
            elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    names.update(x.id for x in ast.walk(t) if isinstance(x, ast.Name))
            elif isinstance(n, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                for field in ("body", "orelse", "finalbody", "handlers"):
                    stack.extend(getattr(n, field, []) or [])
            elif isinstance(n, ast.ExceptHandler):
                stack.extend(n.body)
            elif isinstance(n, ast.NamedExpr):
                names.add(n.target.id)
    return names


# ------------------------------------------------------------------------------- public problem
_BASE_KEYS = {"n", "nvec", "low", "high", "dtype", "shape", "start", "spaces", "bounded_below", "bounded_above",
              "low_repr", "high_repr", "seed"}


def _scalar(v: Any) -> bool:
    return isinstance(v, (bool, int, float, str, np.bool_, np.integer, np.floating))


def space_to_public(space: Any) -> dict[str, Any]:
    """A gymnasium space as a plain description (Box / Discrete / MultiBinary / MultiDiscrete / Dict /
    Tuple). A subclass (e.g. papergym's ``MSet(MultiBinary)``) is described as its gymnasium base
    class plus ``attrs``: its public scalar attributes and properties (``m``, ``d``)."""
    from gymnasium import spaces

    bases = (spaces.Box, spaces.Discrete, spaces.MultiBinary, spaces.MultiDiscrete, spaces.Dict, spaces.Tuple)
    base = next((c for c in type(space).__mro__ if c in bases), None)
    if base is None:
        raise TypeError(f"space {type(space).__name__} cannot be sent to a sandbox (supported: "
                        f"{', '.join(b.__name__ for b in bases)} and their subclasses)")
    d: dict[str, Any] = {"type": base.__name__}
    if base is spaces.Box:
        d.update(low=np.asarray(space.low), high=np.asarray(space.high), dtype=str(space.dtype))
    elif base is spaces.Discrete:
        d.update(n=int(space.n), start=int(space.start))
    elif base is spaces.MultiBinary:
        n = space.n
        d.update(n=[int(x) for x in n] if isinstance(n, (tuple, list, np.ndarray)) else int(n))
    elif base is spaces.MultiDiscrete:
        d.update(nvec=np.asarray(space.nvec), dtype=str(space.dtype), start=np.asarray(space.start))
    elif base is spaces.Dict:
        d.update(spaces={str(k): space_to_public(v) for k, v in space.spaces.items()})
    else:
        d.update(spaces=[space_to_public(v) for v in space.spaces])
    if type(space) is not base:
        attrs = {}
        for k, v in vars(space).items():
            if not k.startswith("_") and k not in _BASE_KEYS and _scalar(v):
                attrs[k] = v.item() if isinstance(v, np.generic) else v
        for cls in type(space).__mro__:
            if cls is base:
                break
            for k, v in vars(cls).items():
                if isinstance(v, property) and not k.startswith("_") and k not in _BASE_KEYS and k not in attrs:
                    try:
                        val = getattr(space, k)
                    except Exception:  # noqa: BLE001, S112 - a property that cannot be read is not sent
                        continue
                    if _scalar(val):
                        attrs[k] = val.item() if isinstance(val, np.generic) else val
        d["class"] = type(space).__name__
        d["attrs"] = attrs
    return d


def problem_to_public(problem: Any) -> dict[str, Any]:
    """The public part of a :class:`papergym.envs.spec.ProblemSpec` as JSON values and arrays:
    ``env_id``, ``horizon``, ``params`` and the two spaces (:func:`space_to_public`). The child
    rebuilds a look-alike with attribute access to the parameters and real gymnasium spaces."""
    params = {}
    for k, v in dict(problem.params).items():
        params[str(k)] = v
    return {"env_id": str(problem.env_id), "horizon": int(problem.horizon), "params": params,
            "action_space": space_to_public(problem.action_space),
            "observation_space": space_to_public(problem.observation_space)}


def _roundtrip(value: Any) -> Any:
    """``value`` through the channel's codec (what the child receives)."""
    frame = _ch.encode(0, value)
    return _ch.decode(memoryview(frame)[4:])[1]


# ------------------------------------------------------------------------------------ bubblewrap
def _python_dirs() -> list[str]:
    dirs = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}
    for d in site.getsitepackages():
        if os.path.isdir(d):
            dirs.add(os.path.realpath(d))
    exe_dir = os.path.dirname(os.path.realpath(sys.executable))
    dirs.add(exe_dir)
    out: list[str] = []
    for d in sorted(dirs, key=len):  # drop folders inside another bound folder, and anything under /usr
        if d == "/usr" or d.startswith("/usr/"):
            continue
        if not any(d == o or d.startswith(o + "/") for o in out):
            out.append(d)
    return out


def _papergym_masks() -> tuple[list[str], list[str]]:
    """(folders, files) in site-packages that would make papergym importable."""
    dirs, files = [], []
    for sp in site.getsitepackages():
        try:
            entries = os.listdir(sp)
        except OSError:
            continue
        for name in entries:
            p = os.path.join(sp, name)
            low = name.lower()
            if os.path.isdir(p):
                if low == "papergym" or low.startswith(("papergym-", "papergym.")):
                    dirs.append(p)
            elif "papergym" in low:
                files.append(p)
            elif low.endswith(".pth"):
                try:
                    with open(p, "rb") as fh:
                        if b"papergym" in fh.read(1 << 16):
                            files.append(p)
                except OSError:
                    pass
    return dirs, files


def _sandbox_env(home: str) -> dict[str, str]:
    return {"HOME": home, "TMPDIR": home, "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "NUMEXPR_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", "VECLIB_MAXIMUM_THREADS": "1",
            "NUMBA_CACHE_DIR": f"{home}/numba", "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg",
            "PYTHONDONTWRITEBYTECODE": "1"}


def _bwrap_argv(data_fds: Mapping[str, int], tmp_bytes: int, seccomp_fd: int | None = None) -> list[str]:
    """bubblewrap's options (before the command); ``data_fds``: sandbox path -> fd of its content;
    ``seccomp_fd``: an fd of the BPF program bubblewrap installs before it execs the command."""
    root = os.geteuid() == 0
    argv = ["bwrap"]
    if root:  # no user namespace: the child drops to the job's uid itself (module docstring)
        argv += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    else:
        argv += ["--unshare-all"]
    argv += ["--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
    for top in ("/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin"):
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    if os.path.exists("/etc/ld.so.cache"):
        argv += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    # the private /tmp (and /proc, /dev) first: bubblewrap applies its operations in order, so a Python
    # installation or virtual environment that lives under /tmp (a CI venv) is bound on top of it, not hidden
    # /dev/shm writable like /tmp (POSIX semaphores of multiprocessing live there); the job cgroup counts both
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(tmp_bytes), "--perms", "1777", "--tmpfs", "/dev/shm",
             "--size", str(tmp_bytes), "--perms", "1777", "--tmpfs", "/tmp", "--chdir", "/tmp"]
    made = {"/", "/usr", "/tmp", "/dev", "/proc"}
    binds = _python_dirs()
    for d in binds + [SANDBOX_LIB, SANDBOX_SUBMISSION]:
        parts = Path(d).parts
        for k in range(2, len(parts) + (1 if d.startswith("/sandbox") else 0)):
            anc = str(Path(*parts[:k]))
            if anc not in made and not anc.startswith("/usr/"):
                made.add(anc)
                argv += ["--perms", "0755", "--dir", anc]
    for d in binds:
        argv += ["--ro-bind", d, d]
    mask_dirs, mask_files = _papergym_masks()
    for d in mask_dirs:
        argv += ["--tmpfs", d]
    for f in mask_files:
        argv += ["--ro-bind", "/dev/null", f]
    for dest, fd in data_fds.items():
        argv += ["--perms", "0444", "--ro-bind-data", str(fd), dest]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--clearenv"]
    for k, v in _sandbox_env("/tmp").items():
        argv += ["--setenv", k, v]
    return argv


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _preexec(limits: Limits, *, drop: tuple[int, int] | None = None, pdeathsig: bool = False,
             job: _iso.JobCgroup | None = None) -> Callable[[], None]:
    """What the launched process does between ``fork`` and ``exec``: join the job cgroup ``job`` first
    (so everything it starts is inside), set the rlimits, ``PR_SET_PDEATHSIG`` when asked, and drop to
    ``drop = (uid, gid)`` (the unsafe-rlimits mode; under bwrap the child drops itself)."""
    mem = int(limits.memory_mb) * 2**20
    fsize = int(limits.file_size_mb) * 2**20
    cpu = int(np.ceil(limits.cpu_seconds))
    nproc = int(limits.processes)
    nofile = int(limits.open_files)

    def fn() -> None:
        if job is not None:
            job.join()
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if pdeathsig:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if drop is not None:
            os.setgroups([])
            os.setresgid(drop[1], drop[1], drop[1])
            os.setresuid(drop[0], drop[0], drop[0])

    return fn


def _child_sources(submission: bytes | None = None) -> dict[str, bytes]:
    lib = Path(_child.__file__).read_bytes(), Path(_ch.__file__).read_bytes()
    return {f"{SANDBOX_LIB}/{_CHILD_NAME}": lib[0], f"{SANDBOX_LIB}/{_CHANNEL_NAME}": lib[1]}


@functools.lru_cache(maxsize=1)
def bwrap_available() -> tuple[bool, str]:
    """Whether bubblewrap works here: the real command line runs a trivial script (cached).

    Returns ``(True, "bubblewrap X.Y.Z")`` or ``(False, reason)``.
    """
    exe = shutil.which("bwrap")
    if exe is None:
        return False, "bwrap is not installed (Debian/Ubuntu package 'bubblewrap')"
    script = (b"import os, sys, numpy\n"
              b"if '--drop' in sys.argv:\n"
              b"    os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)\n"
              b"import gymnasium\n"
              b"try:\n    import papergym\nexcept ImportError:\n    print('ok')\n")
    fd = _memfd("probe", script)
    try:
        argv = _bwrap_argv({f"{SANDBOX_LIB}/probe.py": fd}, 16 * 2**20)
        argv += [sys.executable, "-s", "-P", f"{SANDBOX_LIB}/probe.py"] + (["--drop"] if os.geteuid() == 0 else [])
        try:
            r = subprocess.run(argv, pass_fds=(fd,), capture_output=True, timeout=60, env=_sandbox_env("/tmp"), check=False,
                               preexec_fn=_preexec(Limits()))
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"bwrap probe failed: {exc}"
    finally:
        os.close(fd)
    out = r.stdout.decode(errors="replace").strip()
    if r.returncode != 0 or out != "ok":
        err = (r.stderr.decode(errors="replace").strip() or out)[-500:]
        return False, f"bwrap probe failed (exit {r.returncode}): {err}"
    ver = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    return True, ver or "bubblewrap"


def _python_reachable_by_nobody() -> tuple[bool, str]:
    """Whether another user (uid 65534, a pool uid) can traverse to and read the Python installation
    (for the unsafe-rlimits mode, which runs it from the host's file system)."""
    for d in _python_dirs() + [os.path.realpath(sys.executable)]:
        p = Path(d)
        for anc in [*reversed(p.parents), p]:
            try:
                st = os.stat(anc)
            except OSError:
                return False, f"{anc} cannot be inspected"
            need = stat.S_IXOTH if stat.S_ISDIR(st.st_mode) else stat.S_IROTH
            if not st.st_mode & need:
                return False, f"{anc} is not accessible to other users"
    return True, ""


# --------------------------------------------------------------------------------------- process
class _TailReader(threading.Thread):
    """Reads a pipe until EOF, keeping the last ``keep`` bytes."""

    def __init__(self, fd: int, keep: int):
        super().__init__(daemon=True)
        self.fd = fd
        self.keep = int(keep)
        self.buf = bytearray()
        self.total = 0
        self.lock = threading.Lock()

    def run(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            with self.lock:
                self.total += len(chunk)
                self.buf += chunk
                if len(self.buf) > 2 * self.keep:
                    del self.buf[: len(self.buf) - self.keep]
        try:
            os.close(self.fd)
        except OSError:
            pass

    def tail(self) -> str:
        with self.lock:
            b = bytes(self.buf[-self.keep:])
            omitted = self.total - len(b)
        s = b.decode("utf-8", errors="replace")
        return f"[... {omitted} bytes omitted]\n{s}" if omitted > 0 else s


_STATUS_BY_TYPE = {"MemoryError": "oom", "BudgetExceeded": "timeout"}


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


def _hosted_error(v: Any, stderr_tail: str) -> SandboxError:
    """The :class:`SandboxError` of the child's error message ``{"type", "message", "traceback"}``
    (strings), or a :class:`ProtocolError` if the message is not one."""
    if not isinstance(v, dict) or not set(v) <= _ERROR_FIELDS or "type" not in v:
        return ProtocolError("a malformed error message (expected a dict of type, message and traceback)",
                             stderr_tail)
    typ, msg, tb = v["type"], v.get("message", ""), v.get("traceback", "")
    if not (isinstance(typ, str) and isinstance(msg, str) and isinstance(tb, str)):
        return ProtocolError("a malformed error message (its type, message and traceback must be strings)",
                             stderr_tail)
    typ, msg, tb = typ[:100], msg[:MAX_MESSAGE_CHARS], tb[:MAX_MESSAGE_CHARS]
    text = f"{typ}: {msg}"
    if tb:
        text = f"{text}\nTraceback (submission frames):\n{tb.rstrip()}"
    return SandboxError(_STATUS_BY_TYPE.get(typ, "error"), text, stderr_tail)


def _check_reply(op: int, v: Any, during: str, expect: Sequence[int]) -> None:
    """Raise what a decoded message from the child means when it is not one of the ops ``expect``-ed:
    the hosted error of an error message (:func:`_hosted_error`), a :class:`ProtocolError` otherwise."""
    if op == _ch.OP_ERROR:
        raise _hosted_error(v, "")
    if op not in expect:
        raise ProtocolError(f"unexpected message op {op} during {during}")


def _check_actions(v: Any, n: int) -> tuple[np.ndarray, dict[int, str]]:
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
        raise ProtocolError(f"actions of shape {actions.shape} for {n} runs (the first dimension must be the "
                            "number of runs)")
    failed: dict[int, str] = {}
    for k, msg in raw_failed.items():
        ok = k.isascii() and k.isdecimal() and len(k) <= 20 and (k == "0" or k[0] != "0")
        if not ok or int(k) >= n or not isinstance(msg, str):
            raise ProtocolError(f"a malformed failed-run entry {k[:40]!r} (expected a run index in [0, {n}) "
                                "mapped to a message string)")
        failed[int(k)] = msg[:MAX_MESSAGE_CHARS]
    return actions, failed


def _check_solver_message(op: int, v: Any, callables: Mapping[str, Callable]) -> tuple[Any, ...]:
    """One message of a solve from the child, checked (:class:`ProtocolError` otherwise):
    ``("solution", solution)``, ``("call", name, args, kwargs)`` -- ``name`` one of ``callables``,
    ``args`` a list, ``kwargs`` a dict, together at most :data:`MAX_CALL_BYTES` -- or ``("report",
    solution, iteration, work)`` -- ``iteration`` None or an int, ``work`` None or a finite number,
    both below 2**63 in size. Solutions are at most :data:`MAX_SOLUTION_BYTES`."""
    if not isinstance(v, dict):
        raise ProtocolError("a message that is not a dict during solve")
    if op == _ch.OP_RPC_CALL:
        name, args, kwargs = v.get("name"), v.get("args"), v.get("kwargs")
        if set(v) != _CALL_FIELDS or not isinstance(name, str) or name not in callables \
                or not isinstance(args, list) or not isinstance(kwargs, dict):
            raise ProtocolError(f"a malformed call of {str(name)[:80]!r} (expected name: one of the problem's "
                                "callables, args: a list, kwargs: a dict)")
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
        ok = set(v) == _REPORT_FIELDS and (it is None or (type(it) is int and abs(it) < 2**63)) \
            and (work is None or (type(work) is int and abs(work) < 2**63)
                 or (type(work) is float and np.isfinite(work)))
        if not ok:
            raise ProtocolError("a malformed report (expected solution, iteration: None or an int, work: None "
                                "or a finite number)")
        out = ("report", v["solution"], it, work)
    else:
        raise ProtocolError(f"unexpected message op {op} during solve")
    if _value_bytes(out[1], MAX_SOLUTION_BYTES) > MAX_SOLUTION_BYTES:
        raise ProtocolError(f"a solution larger than {MAX_SOLUTION_BYTES} bytes")
    return out


class _Sandbox:
    """One child process hosting a submission (either isolation), and the round trips with it."""

    def __init__(self, source: Path | str, attr: str, limits: Limits, sandbox: str):
        if sandbox == "rlimits" or sandbox not in SANDBOX_MODES:
            resolve_sandbox(sandbox)  # the ValueError naming the modes (or the new name of "rlimits")
        self.source = Path(source)
        if not self.source.is_file():
            raise FileNotFoundError(f"the submitted file {str(source)!r} does not exist")
        if self.source.suffix != ".py":
            raise ValueError(f"the submitted file must be a .py file, got {str(source)!r}")
        if not attr or not all(p.isidentifier() for p in attr.split(".")):
            raise ValueError(f"bad attribute name {attr!r}")
        self.attr = attr
        self.limits = limits
        self.mode = resolve_sandbox(sandbox)  # SandboxUnavailable before anything runs
        self._bwrap = self.mode != "unsafe-rlimits"
        st = _iso.isolation_status()
        # the pieces this sandbox uses: all of them in "full" (resolve_sandbox checked), what works otherwise
        self._layout = _iso.usable_layout(st)
        if self.mode == "full" and (self._layout is None or set(self._layout.controllers) != set(_iso.CONTROLLERS)):
            raise SandboxUnavailable(f"sandbox='full' needs the cgroup controllers {', '.join(_iso.CONTROLLERS)}; "
                                     f"usable here: {', '.join(self._layout.controllers) if self._layout else 'none'}")
        self._use_seccomp = self._bwrap and st.seccomp_ok
        self._use_uids = st.uid_pool_ok
        #: the job's cgroup and uid while a child runs (None otherwise, or where that piece is not used)
        self.cgroup: _iso.JobCgroup | None = None
        self.uid_lease: _iso.UidLease | None = None
        self.proc: subprocess.Popen | None = None
        self.chan: _ch.Channel | None = None
        self.reader: _TailReader | None = None
        self.tmpdir: str | None = None
        self.cpu_seconds = 0.0
        self.sampled_cpu = 0.0
        self.child_pid = 0
        self.created = time.monotonic()
        self.submission_deadline = self.created + limits.submission_seconds
        self._labels: dict[float, str] = {}
        self.dead: SandboxError | None = None
        self.spin = SPIN_SECONDS if len(os.sched_getaffinity(0)) >= 2 else 0.0
        self._gate: Any = None  # the spin gate (_open_spin_gate)
        self._deadline: tuple[float, str] | None = None
        self._timed_out: str | None = None
        self._stop = threading.Event()

    # ---- life cycle
    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    def _isolate(self) -> None:
        """Take a uid of the pool and create the job cgroup (where this sandbox uses them)."""
        lim = self.limits
        try:
            if self._use_uids and os.geteuid() == 0:
                self.uid_lease = _iso.acquire_uid()
            if self._layout is not None:
                self.cgroup = _iso.JobCgroup(self._layout, memory_bytes=int(lim.memory_mb) * 2**20,
                                             tasks=int(lim.processes) + (2 if self._bwrap else 0), cpus=lim.cpus)
        except (_iso.IsolationError, OSError) as exc:
            self._release_isolation()
            raise SandboxUnavailable(f"the sandbox's isolation could not be set up: {exc}") from None

    def _release_isolation(self) -> None:
        """Remove the job cgroup (its processes killed first) and give the uid back."""
        job, self.cgroup = self.cgroup, None
        lease, self.uid_lease = self.uid_lease, None
        try:
            if job is not None:
                job.remove()
        except _iso.IsolationError as exc:
            warnings.warn(f"sandbox clean-up: {exc}", SandboxWarning, stacklevel=2)
        finally:
            if lease is not None and not lease.release():
                warnings.warn(f"sandbox clean-up: a process of uid {lease.uid} survived SIGKILL; that uid stays "
                              "out of the pool while this process runs", SandboxWarning, stacklevel=2)

    def launch(self) -> None:
        lim = self.limits
        self._isolate()
        c_r, p_w = os.pipe()  # parent -> child
        p_r, c_w = os.pipe()  # child -> parent
        os.set_inheritable(c_r, True)
        os.set_inheritable(c_w, True)
        child_fds = f"{c_r},{c_w}"
        gate_fd = self._open_spin_gate()
        if gate_fd is not None:
            child_fds += f",{gate_fd}"
        name = self.source.name
        fds: list[int] = []
        info_r: int | None = None
        try:
            src = self.source.read_bytes()
            if self._bwrap:
                data = _child_sources()
                data[f"{SANDBOX_SUBMISSION}/{name}"] = src
                dfds = {dest: _memfd(os.path.basename(dest), b) for dest, b in data.items()}
                fds = list(dfds.values())
                sfd = None
                if self._use_seccomp:
                    try:
                        sfd = _iso.seccomp_memfd()
                    except _iso.IsolationError as exc:
                        raise SandboxUnavailable(f"the seccomp filter is unavailable: {exc}") from None
                    fds.append(sfd)
                info_r, info_w = os.pipe()
                fds.append(info_w)
                argv = _bwrap_argv(dfds, int(lim.file_size_mb) * 2**20, sfd) + ["--info-fd", str(info_w)]
                argv += [sys.executable, "-s", "-P", f"{SANDBOX_LIB}/{_CHILD_NAME}", child_fds,
                         f"{SANDBOX_SUBMISSION}/{name}", self.attr, repr(self.spin)]
                if os.geteuid() == 0:
                    lease = self.uid_lease
                    argv.append(f"--drop-uid={lease.uid}:{lease.gid}" if lease else f"--drop-uid={NOBODY}:{NOBODY}")
                # bwrap itself (the sandbox's pid 1, whose /proc/1/environ the child may read as a normal
                # user) gets a scrubbed environment too, not the evaluator's
                env, cwd = _sandbox_env("/tmp"), "/"
                pre = _preexec(lim, job=self.cgroup)
            else:
                self.tmpdir = tempfile.mkdtemp(prefix="papergym-sandbox-")
                root = Path(self.tmpdir)
                (root / "lib").mkdir()
                (root / "submission").mkdir()
                (root / "work").mkdir()
                for dest, b in _child_sources().items():
                    (root / "lib" / os.path.basename(dest)).write_bytes(b)
                (root / "submission" / name).write_bytes(src)
                drop: tuple[int, int] | None = None
                why = ""
                if os.geteuid() == 0:
                    reachable, why = _python_reachable_by_nobody()
                    for p in (root, root / "lib", root / "submission"):
                        os.chmod(p, 0o755)
                    for p in [*(root / "lib").iterdir(), root / "submission" / name]:
                        os.chmod(p, 0o444)
                    if not reachable:  # never run submitted code as root, whatever the mode
                        raise SandboxUnavailable(
                            "sandbox='unsafe-rlimits' as root runs the submission as an unprivileged user, but "
                            f"the Python installation is not reachable by other users ({why}); use the full "
                            "sandbox, or run papergym as a normal user")
                    lease = self.uid_lease
                    drop = (lease.uid, lease.gid) if lease else (NOBODY, NOBODY)
                    os.chown(root / "work", *drop)
                    os.chmod(root / "work", 0o700)
                warn = ("sandbox='unsafe-rlimits' was asked for: the submission runs with rlimits only -- no "
                        "filesystem isolation (it can read every file its user can read), no network isolation, "
                        "no system-call filter")
                if self.cgroup is None:
                    warn += ", processes that start a new session may escape the kill"
                warnings.warn(warn, SandboxWarning, stacklevel=4)
                argv = [sys.executable, "-s", "-P", str(root / "lib" / _CHILD_NAME), child_fds,
                        str(root / "submission" / name), self.attr, repr(self.spin)]
                env = _sandbox_env(str(root / "work"))
                cwd = str(root / "work")
                pre = _preexec(lim, drop=drop, pdeathsig=True, job=self.cgroup)
            err_r, err_w = os.pipe()
            try:
                self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=err_w, stderr=err_w,
                                             pass_fds=(c_r, c_w, *fds, *([gate_fd] if gate_fd is not None else [])), env=env, cwd=cwd,
                                             preexec_fn=pre, start_new_session=True, close_fds=True)  # noqa: PLW1509 - rlimits must be set between fork and exec
            except (OSError, subprocess.SubprocessError) as exc:
                os.close(err_r)
                raise SandboxError("error", f"the sandbox could not be started ({type(exc).__name__}: {exc}; "
                                            "joining the job cgroup or setting the rlimits failed?)") from None
            finally:
                os.close(err_w)
        except BaseException:
            os.close(p_r)
            os.close(p_w)
            if info_r is not None:
                os.close(info_r)
            if self.tmpdir is not None:
                shutil.rmtree(self.tmpdir, ignore_errors=True)
                self.tmpdir = None
            self._release_isolation()
            raise
        finally:
            for fd in (c_r, c_w, *fds, *([gate_fd] if gate_fd is not None else [])):
                os.close(fd)
        self.reader = _TailReader(err_r, lim.stderr_tail_bytes)
        self.reader.start()
        self.chan = _ch.Channel(p_r, p_w, spin_seconds=self.spin, spin_gate=self._gate)
        self._stop = threading.Event()
        self._watchdog = threading.Thread(target=self._watch, daemon=True)
        self._watchdog.start()
        self.child_pid = self.proc.pid
        if self._bwrap:  # the host pid of the python inside (for its CPU time)
            try:
                with os.fdopen(info_r, "rb") as fh:
                    info = json.loads(fh.read(4096) or b"{}")
                self.child_pid = int(info.get("child-pid", self.proc.pid))
            except (OSError, ValueError):
                pass

    @property
    def total_cpu(self) -> float:
        return max(self.cpu_seconds, self.sampled_cpu)

    def sample_cpu(self) -> None:
        """CPU seconds of the python process (children it reaped included), from /proc: bubblewrap's
        pid-1 does not pass its child's rusage on to ``wait4``."""
        def ticks(pid: int) -> int:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            return sum(int(x) for x in fields[11:15])

        try:
            pids = [self.child_pid]
            with open(f"/proc/{self.child_pid}/task/{self.child_pid}/children", "rb") as fh:
                pids += [int(x) for x in fh.read().split()]
            total = sum(ticks(p) for p in pids)
            self.sampled_cpu = max(self.sampled_cpu, total / os.sysconf("SC_CLK_TCK"))
        except (OSError, ValueError, IndexError):
            pass

    def tail(self, wait: float = 0.0) -> str:
        if self.reader is None:
            return ""
        if wait:
            self.reader.join(wait)
        return self.reader.tail()

    def _reap(self, block: bool, grace: float = 0.0) -> None:
        """Wait for the process (collecting its rusage); kill it after ``grace`` seconds."""
        p = self.proc
        if p is None or p.returncode is not None:
            return
        end = time.monotonic() + grace
        while True:
            try:
                pid, status, ru = os.wait4(p.pid, 0 if block and time.monotonic() >= end else os.WNOHANG)
            except ChildProcessError:
                p.returncode = -1
                return
            if pid:
                p.returncode = os.waitstatus_to_exitcode(status)
                self.cpu_seconds += ru.ru_utime + ru.ru_stime
                return
            if time.monotonic() >= end:
                if not block:
                    return
                self._signal_all()
            else:
                time.sleep(0.005)

    def _signal_all(self) -> None:
        p = self.proc
        if p is None or p.returncode is not None:
            return
        for fn in (lambda: os.killpg(p.pid, signal.SIGKILL), lambda: os.kill(p.pid, signal.SIGKILL)):
            try:
                fn()
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self) -> None:
        """SIGKILL the sandbox: bwrap (whose pid namespace dies with it) or the process group, then every
        task left in the job cgroup."""
        if self._bwrap and self.alive:
            self.sample_cpu()
        self._signal_all()
        self._reap(block=True)
        if self.cgroup is not None:
            self.cgroup.kill_all()
        if self.chan is not None:
            self.chan.close()

    def cleanup(self) -> None:
        """Kill, then remove the work dir and the job cgroup, and give the uid back."""
        self._stop.set()
        self.kill()
        if self.reader is not None:
            self.reader.join(1.0)
        if self.tmpdir is not None:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None
        self._release_isolation()

    def fail(self, err: SandboxError) -> SandboxError:
        """Kill the child and remember ``err`` (later calls raise it again)."""
        self.kill()
        if not err.stderr_tail:
            err.stderr_tail = self.tail(wait=0.5)
        self.dead = err
        return err

    def _exit_error(self, during: str) -> SandboxError:
        """The child closed the channel: why (from its exit status)."""
        self._reap(block=True, grace=2.0)
        rc = self.proc.returncode if self.proc is not None else None
        tail = self.tail(wait=0.5)
        if self.cgroup is not None and self.cgroup.oom_killed():
            return SandboxError("oom", f"the memory limit of {self.limits.memory_mb} MiB (memory, tmpfs files and "
                                       f"memfd pages together) was reached during {during}: the sandbox's cgroup "
                                       "OOM killer ended it", tail)
        sig = None
        if rc is not None and rc < 0:
            sig = -rc
        elif rc is not None and self._bwrap and rc > 128:
            sig = rc - 128
        if sig is not None:
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            if sig == signal.SIGXCPU or (sig == signal.SIGKILL and self.cpu_seconds >= self.limits.cpu_seconds - 0.5):
                return SandboxError("timeout", f"the CPU time limit of {self.limits.cpu_seconds:g} s was reached "
                                               f"during {during}", tail)
            if sig == signal.SIGKILL:
                return SandboxError("oom", f"the sandbox was killed (SIGKILL) during {during}, most likely for "
                                           "memory", tail)
            if sig == signal.SIGXFSZ:
                return SandboxError("error", f"the file size limit of {self.limits.file_size_mb} MiB was exceeded "
                                             f"during {during}", tail)
            return SandboxError("error", f"the submission crashed ({name}) during {during}", tail)
        return SandboxError("error", f"the submission's process exited (code {rc}) during {during}", tail)

    # ---- round trips
    def deadline(self, seconds: float, episode_deadline: float | None) -> tuple[float, str]:
        # once per round trip: no list, no formatting on the usual path (the per-call limit binds)
        end = time.monotonic() + seconds
        if end <= self.submission_deadline and (episode_deadline is None or end <= episode_deadline):
            label = self._labels.get(seconds)
            if label is None:
                label = self._labels[seconds] = f"per-call limit of {seconds:g} s"
            return end, label
        if episode_deadline is not None and episode_deadline < self.submission_deadline:
            return episode_deadline, f"per-episode limit of {self.limits.episode_seconds:g} s"
        return self.submission_deadline, f"per-submission limit of {self.limits.submission_seconds:g} s"

    def check(self) -> None:
        if self.dead is not None:
            raise SandboxError(self.dead.status, self.dead.message, self.dead.stderr_tail)

    def _open_spin_gate(self) -> int | None:
        """The spin gate shared with the child (:class:`~papergym.leaderboard.board.channel.Channel`): a
        one-page memfd, mapped here read-write and by the child read-only, open (1) while this machine's
        full-mode sandboxes leave a CPU for each spinning end (two per sandbox), closed (0) otherwise --
        four processes spinning on two CPUs make every round trip wait for a time slice (about 3.5 ms
        here, against 0.02 ms spinning alone). Counted at launch and every :data:`GATE_SECONDS` by the
        watchdog. ``None`` (always spin) without busy-waiting or without the uid pool to count with."""
        self._gate = None
        if not self.spin or self.uid_lease is None:
            return None
        import mmap

        fd = os.memfd_create("papergym-spin-gate", os.MFD_CLOEXEC)
        os.ftruncate(fd, mmap.PAGESIZE)
        self._gate = mmap.mmap(fd, mmap.PAGESIZE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self._update_gate()
        os.set_inheritable(fd, True)
        return fd

    def _update_gate(self) -> None:
        if self._gate is not None:
            self._gate[0] = 1 if 2 * _iso.sandboxes_running() <= len(os.sched_getaffinity(0)) else 0

    def _watch(self) -> None:
        """Kill the child when the deadline of the round trip in flight passes (the reads block); keep the
        spin gate up to date."""
        next_gate = time.monotonic() + GATE_SECONDS
        while not self._stop.wait(0.02):
            if self._gate is not None and time.monotonic() > next_gate:
                self._update_gate()
                next_gate = time.monotonic() + GATE_SECONDS
            dl = self._deadline
            if dl is not None and time.monotonic() > dl[0]:
                self._timed_out = dl[1]
                self._signal_all()
                return

    def _arm(self, deadline: tuple[float, str] | None) -> None:
        if deadline is not None and time.monotonic() > deadline[0]:
            self._timed_out = deadline[1]
        self._deadline = deadline

    def _broken(self, during: str) -> SandboxError:
        if self._timed_out is not None:
            return SandboxError("timeout", f"{during} exceeded the {self._timed_out}")
        return self._exit_error(during)

    def send(self, frame: bytes, deadline: tuple[float, str], during: str) -> None:
        self._arm(deadline)
        try:
            if self._timed_out is not None:
                raise _ch.ChannelClosed("deadline passed")
            self.chan.send_frame(frame)
        except _ch.ChannelClosed:
            raise self.fail(self._broken(during)) from None
        finally:
            self._deadline = None

    def recv(self, deadline: tuple[float, str], during: str, expect: Sequence[int]) -> tuple[int, Any]:
        self._arm(deadline)
        try:
            if self._timed_out is not None:
                raise _ch.ChannelClosed("deadline passed")
            op, v = self.chan.recv()
        except _ch.ChannelClosed:
            raise self.fail(self._broken(during)) from None
        except _ch.ChannelProtocolError as exc:
            if self._timed_out is not None:  # killed by the watchdog in the middle of a frame
                raise self.fail(self._broken(during)) from None
            raise self.fail(ProtocolError(f"{exc} (during {during})")) from None
        except Exception as exc:  # noqa: BLE001 - the codec raises only the above; anything else is still the frame's fault
            raise self.fail(ProtocolError(f"an unreadable frame during {during} ({type(exc).__name__}: "
                                          f"{str(exc)[:200]})")) from None
        finally:
            self._deadline = None
        try:
            _check_reply(op, v, during, expect)
        except SandboxError as err:
            raise self.fail(err) from None
        return op, v

    def close(self) -> None:
        """Ask the child to exit, then reap it (killed if it does not within 2 s)."""
        if self.alive and self.dead is None and self.chan is not None:
            if self._bwrap:
                self.sample_cpu()
            try:
                self._deadline = (time.monotonic() + 2.0, "close")
                self.chan.send(_ch.OP_CLOSE)
                self.chan.recv(time.monotonic() + 2.0)
            except Exception:  # noqa: BLE001, S110 - closing: any failure just means kill
                pass
            self._reap(block=True, grace=2.0)
        self.cleanup()


# -------------------------------------------------------------------------------------- sessions
class AgentSession(Protocol):
    """One submission's agents over every seed (module docstring)."""

    def start(self, problem: dict, seeds: Sequence[Any], hyperparameters: Mapping[str, Any]) -> None: ...

    def step(self, observations: Any, rewards: np.ndarray | None,
             active: np.ndarray) -> tuple[np.ndarray, dict[int, str]]: ...

    def close(self) -> SessionReport: ...


class SandboxedAgentSession:
    """The submitted ``attr`` of ``source`` hosted in a sandboxed child (module docstring).

    ``start(problem, seeds, hyperparameters)``: ``problem`` is :func:`problem_to_public`'s dict;
    ``seeds`` ints or :class:`numpy.random.SeedSequence` s. ``step(observations, rewards, active)``
    -> ``(actions, failed)`` (see :class:`papergym.leaderboard.board._sandbox_child.AgentHost`).
    ``close()`` -> :class:`SessionReport`. Any failure of the whole session raises
    :class:`SandboxError`; the session is then dead and later calls raise the same error.
    """

    def __init__(self, source: Path | str, attr: str, *, limits: Limits = Limits(), sandbox: str = "auto"):
        self._sb = _Sandbox(source, attr, limits, sandbox)
        self.limits = limits
        self.sandbox = self._sb.mode
        self._episode_deadline: float | None = None
        self._in_flight: tuple[float, str] | None = None
        self._n = 0
        self._t0 = time.monotonic()
        self._report: SessionReport | None = None

    def __enter__(self) -> SandboxedAgentSession:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, problem: Mapping[str, Any], seeds: Sequence[Any], hyperparameters: Mapping[str, Any] = {}) -> None:
        sb = self._sb
        sb.check()
        if sb.proc is not None:
            raise RuntimeError("start() was already called on this session")
        try:
            frame = _ch.encode(_ch.OP_START_AGENT, {"problem": dict(problem), "seeds": list(seeds),
                                                    "hyperparameters": dict(hyperparameters)})
        except TypeError as exc:
            raise TypeError(f"the problem / seeds / hyperparameters cannot be sent to the sandbox: {exc}") from None
        self._n = len(seeds)
        self._t0 = time.monotonic()
        self._episode_deadline = self._t0 + self.limits.episode_seconds
        sb.launch()
        dl = sb.deadline(self.limits.call_seconds, self._episode_deadline)
        sb.send(frame, dl, "start (import and agent construction)")
        sb.recv(dl, "start (import and agent construction)", (_ch.OP_OK,))

    def step(self, observations: Any, rewards: np.ndarray | None, active: np.ndarray) -> tuple[np.ndarray, dict[int, str]]:
        self.send_step(observations, rewards, active)
        return self.recv_step()

    def send_step(self, observations: Any, rewards: np.ndarray | None, active: np.ndarray) -> None:
        """The first half of :meth:`step`: send the round's feedback (the evaluator may work while the
        agent computes, then call :meth:`recv_step`)."""
        sb = self._sb
        sb.check()
        if sb.proc is None:
            raise RuntimeError("step() before start()")
        if self._in_flight is not None:
            raise RuntimeError("send_step() twice without recv_step()")
        active = np.asarray(active, dtype=bool)
        if type(observations) is not np.ndarray and isinstance(observations, Mapping):
            frame = _ch.encode(_ch.OP_STEP, {"active": active, "observations": dict(observations),
                                             "rewards": None if rewards is None else np.asarray(rewards)})
        else:
            frame = _ch.encode_arrays(_ch.OP_STEP, [active, observations] if rewards is None
                                      else [active, observations, rewards])
        dl = sb.deadline(self.limits.call_seconds, self._episode_deadline)
        sb.send(frame, dl, "step")
        self._in_flight = dl

    def recv_step(self) -> tuple[np.ndarray, dict[int, str]]:
        """The second half of :meth:`step`: the agent's actions and failed runs."""
        sb = self._sb
        dl, self._in_flight = self._in_flight, None
        if dl is None:
            raise RuntimeError("recv_step() without send_step()")
        _, v = sb.recv(dl, "step", (_ch.OP_ACTIONS,))
        try:
            return _check_actions(v, self._n)
        except ProtocolError as err:
            raise sb.fail(err) from None

    def close(self) -> SessionReport:
        if self._report is None:
            self._sb.close()
            self._report = SessionReport(self._sb.tail(), time.monotonic() - self._t0, self._sb.total_cpu,
                                         self._sb.mode)
        return self._report

    def __del__(self) -> None:
        sb = getattr(self, "_sb", None)
        if sb is not None and sb.alive:
            sb.cleanup()


def _in_process_error(e: _child.HostedError) -> SandboxError:
    text = f"{e.type}: {e.message}"
    if e.traceback:
        text += f"\nTraceback (last frames):\n{e.traceback.rstrip()}"
    return SandboxError(_STATUS_BY_TYPE.get(e.type, "error"), text, "")


class InProcessAgentSession:
    """Trusted agents (reference agents) hosted in this process with the same
    :class:`~papergym.leaderboard.board._sandbox_child.AgentHost` as the sandbox child, the problem, seeds
    and hyperparameters passed through the same codec: bit-identical actions. No limits enforced."""

    def __init__(self, factory: Callable[..., Any]):
        self.factory = factory
        self.host: _child.AgentHost | None = None
        self._t0 = time.monotonic()
        self._c0 = time.process_time()

    def start(self, problem: Mapping[str, Any], seeds: Sequence[Any], hyperparameters: Mapping[str, Any] = {}) -> None:
        v = _roundtrip({"problem": dict(problem), "seeds": list(seeds), "hyperparameters": dict(hyperparameters)})
        self._t0, self._c0 = time.monotonic(), time.process_time()
        try:
            self.host = _child.AgentHost(self.factory, _child.problem_from_public(v["problem"]), v["seeds"],
                                         v["hyperparameters"])
        except _child.HostedError as e:
            raise _in_process_error(e) from None

    def step(self, observations: Any, rewards: np.ndarray | None, active: np.ndarray) -> tuple[np.ndarray, dict[int, str]]:
        if self.host is None:
            raise RuntimeError("step() before start()")
        if isinstance(observations, Mapping):
            obs: Any = {k: np.array(x) for k, x in observations.items()}
        else:
            obs = np.array(observations)
        try:
            actions, failed = self.host.step(obs, None if rewards is None else np.array(rewards, copy=True), active)
        except _child.HostedError as e:
            raise _in_process_error(e) from None
        return actions, failed

    def close(self) -> SessionReport:
        return SessionReport("", time.monotonic() - self._t0, time.process_time() - self._c0, "in-process")


class SolverSession(Protocol):
    """One submission's solver over several solves (module docstring)."""

    def solve(self, problem: dict, callables: Mapping[str, Callable], budget: Mapping[str, Any],
              hyperparameters: Mapping[str, Any], seed: Any, *, report: Callable[[Any, int | None, float | None], None],
              timeout: float) -> tuple[Any, float]: ...

    def close(self) -> SessionReport: ...


def _report_ack(report: Callable, solution: Any, iteration: Any, work: Any) -> dict[str, str]:
    try:
        report(solution, iteration, work)
    except Exception as exc:  # noqa: BLE001 - sent back to the solver as its error
        return {"error": _child.short(exc), "type": type(exc).__name__}
    return {}


class SandboxedSolverSession:
    """The submitted solver factory ``attr`` of ``source`` in one sandboxed child for several solves.

    ``solve(problem, callables, budget, hyperparameters, seed, *, report, timeout)`` -> ``(solution,
    solver seconds)``: ``problem`` a nested dict of JSON values / arrays (namespaces in the child),
    ``callables`` dotted name -> the real function (an RPC stub in the child); ``budget`` a mapping
    of ``max_seconds`` / ``max_iterations`` / ``max_work``; ``report(solution, iteration, work)`` is
    called here for each of the solver's reports (its exception goes back to the solver as
    ``ValueError``, or ``BudgetExceeded`` if that is its class name); solver seconds = the solve's wall
    time minus the time spent in ``report``. ``timeout``: wall seconds of this solve (report time
    excluded; also bounded by the episode and submission limits). A failure raises
    :class:`SandboxError`; after a timeout / crash the next solve starts a fresh child.
    """

    def __init__(self, source: Path | str, attr: str, *, limits: Limits = Limits(), sandbox: str = "auto"):
        self._sb = _Sandbox(source, attr, limits, sandbox)
        self.limits = limits
        self.sandbox = self._sb.mode
        self._t0 = time.monotonic()
        self._cpu = 0.0
        self._tails: list[str] = []
        self._report: SessionReport | None = None

    def __enter__(self) -> SandboxedSolverSession:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ensure(self) -> None:
        sb = self._sb
        if sb.proc is not None and (sb.dead is not None or not sb.alive):
            sb.cleanup()
            self._cpu += sb.total_cpu
            self._tails.append(sb.tail())
            sb.cpu_seconds = sb.sampled_cpu = 0.0
            sb.proc = sb.chan = sb.reader = None
            sb.dead = sb._timed_out = sb._deadline = None
        if sb.proc is None:
            if time.monotonic() >= sb.submission_deadline:
                raise SandboxError("timeout", f"the per-submission limit of {self.limits.submission_seconds:g} s "
                                              "was reached")
            sb.launch()
            dl = sb.deadline(self.limits.call_seconds, None)
            sb.send(_ch.encode(_ch.OP_LOAD), dl, "import")
            sb.recv(dl, "import", (_ch.OP_OK,))

    def solve(self, problem: Mapping[str, Any], callables: Mapping[str, Callable], budget: Mapping[str, Any],
              hyperparameters: Mapping[str, Any], seed: Any, *, report: Callable[[Any, int | None, float | None], None],
              timeout: float) -> tuple[Any, float]:
        if self._report is not None:
            raise RuntimeError("solve() after close()")
        self._ensure()
        sb = self._sb
        try:
            frame = _ch.encode(_ch.OP_SOLVE, {"problem": dict(problem), "callables": list(callables),
                                              "budget": dict(budget), "hyperparameters": dict(hyperparameters),
                                              "seed": seed})
        except TypeError as exc:
            raise TypeError(f"the problem / budget / hyperparameters cannot be sent to the sandbox: {exc}") from None
        t0 = time.monotonic()
        in_report = 0.0
        limit = min(float(timeout), self.limits.episode_seconds)
        what = f"the solve's time limit of {limit:g} s"

        def deadline() -> tuple[float, str]:
            end = t0 + limit + in_report
            if end <= sb.submission_deadline:
                return end, what
            return sb.submission_deadline, f"per-submission limit of {self.limits.submission_seconds:g} s"

        sb.send(frame, deadline(), "solve")
        expect = (_ch.OP_RPC_CALL, _ch.OP_REPORT, _ch.OP_SOLUTION)
        while True:
            op, v = sb.recv(deadline(), "solve", expect)
            try:
                msg = _check_solver_message(op, v, callables)
            except ProtocolError as err:
                raise sb.fail(err) from None
            if msg[0] == "solution":
                wall = time.monotonic() - t0
                return msg[1], wall - in_report
            if msg[0] == "call":
                _, name, args, kwargs = msg
                try:
                    res: dict[str, Any] = {"result": callables[name](*args, **kwargs)}
                    out = _ch.encode(_ch.OP_RPC_RETURN, res)
                except Exception as exc:  # noqa: BLE001 - the solver's bad call: ValueError in the child
                    out = _ch.encode(_ch.OP_RPC_RETURN, {"error": f"{name}: {_child.short(exc)}"})
                sb.send(out, deadline(), "solve")
            else:  # report
                _, solution, it, work = msg
                r0 = time.monotonic()
                ack = _report_ack(report, solution, it, work)
                in_report += time.monotonic() - r0
                sb.send(_ch.encode(_ch.OP_REPORT_ACK, ack), deadline(), "solve")

    def close(self) -> SessionReport:
        if self._report is None:
            sb = self._sb
            sb.close()
            tails = [t for t in [*self._tails, sb.tail()] if t]
            tail = "\n".join(tails)[-self.limits.stderr_tail_bytes:]
            self._report = SessionReport(tail, time.monotonic() - self._t0, self._cpu + sb.total_cpu, sb.mode)
        return self._report

    def __del__(self) -> None:
        sb = getattr(self, "_sb", None)
        if sb is not None and sb.alive:
            sb.cleanup()


def _as_value_error(name: str, fn: Callable) -> Callable:
    """``fn`` whose exceptions become ``ValueError("name: Type: message")``, as through the sandbox."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the solver's bad call, as in the sandbox
            raise ValueError(f"{name}: {_child.short(exc)}") from None

    return call


class InProcessSolverSession:
    """A trusted solver factory run in this process with the same problem building as the child
    (nested namespaces, the real callables at their dotted names). ``timeout`` is not enforced
    (trusted code); ``BudgetExceeded`` still maps to status ``timeout``."""

    def __init__(self, factory: Callable[..., Any]):
        self.factory = factory
        self._t0 = time.monotonic()
        self._c0 = time.process_time()

    def solve(self, problem: Mapping[str, Any], callables: Mapping[str, Callable], budget: Mapping[str, Any],
              hyperparameters: Mapping[str, Any], seed: Any, *, report: Callable[[Any, int | None, float | None], None],
              timeout: float) -> tuple[Any, float]:
        v = _roundtrip({"problem": dict(problem), "budget": dict(budget), "hyperparameters": dict(hyperparameters),
                        "seed": seed})
        ns = _child.solver_problem(v["problem"], {k: _as_value_error(k, fn) for k, fn in callables.items()})
        in_report = 0.0

        def rep(solution: Any, iteration: int | None = None, work: float | None = None) -> None:
            nonlocal in_report
            r0 = time.monotonic()
            try:
                report(solution, iteration, work)
            finally:
                in_report += time.monotonic() - r0

        t0 = time.monotonic()
        try:
            solver = _child.make_solver(self.factory, v["seed"], v["hyperparameters"])
            solution = solver.solve(ns, _child.budget_namespace(v["budget"]), rep)
        except Exception as exc:
            raise _in_process_error(_child.describe(exc)) from exc
        return solution, time.monotonic() - t0 - in_report

    def close(self) -> SessionReport:
        return SessionReport("", time.monotonic() - self._t0, time.process_time() - self._c0, "in-process")
