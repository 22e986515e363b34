"""The isolation pieces of the sandbox beyond bubblewrap, each probed, none optional in ``sandbox="full"``.

:mod:`papergym.leaderboard.board.sandbox` runs every submission in a bubblewrap sandbox; this module adds
the three pieces that make one submission unable to hurt the machine or another submission:

* **a per-job cgroup** (:class:`JobCgroup`): memory (``Limits.memory_mb``, swap 0), tasks
  (``Limits.processes``) and CPU bandwidth (``Limits.cpus``) of everything the sandbox starts. The
  launched process writes itself into the job's ``cgroup.procs`` between ``fork`` and ``exec`` (the
  ``preexec`` function), so bubblewrap and every process and thread it starts are inside. The memory
  controller charges tmpfs files (``/tmp``, ``/dev/shm``) and ``memfd`` pages to the cgroup as shmem,
  which ``RLIMIT_AS`` does not see. cgroup v2 (``memory.max``, ``memory.swap.max``, ``pids.max``,
  ``cpu.max``; ``memory.events`` ``oom_kill``; ``cgroup.kill``) and v1 (``memory.limit_in_bytes`` and
  ``memory.memsw.limit_in_bytes``, ``pids.max``, ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``;
  ``memory.oom_control`` ``oom_kill``; SIGKILL through a pidfd to every task of ``cgroup.procs`` until
  it is empty) are both supported. Job folders are ``<own cgroup>/papergym/job-<pidns>-<pid>-<rnd>``
  (its creator's pid namespace and pid, a random tag) in each hierarchy (nested in the evaluator's own
  cgroup, so an outer limit still binds), removed at clean-up once the processes are gone, with the
  ``papergym`` folder when it is empty; the folders of an evaluator killed before its clean-up are swept
  (their tasks killed first) when a job is next created there (:func:`sweep_stale`). Under cgroup v2 a
  cgroup that holds processes cannot hand controllers to a child, so unless the evaluator runs in the
  root cgroup, ``$PAPERGYM_CGROUP_PARENT`` must name a delegated folder (e.g. a systemd unit's cgroup
  with ``Delegate=yes``, the worker itself in a leaf below it).
* **a seccomp filter** (:func:`seccomp_bpf`, built with ``pyseccomp`` over the system's
  ``libseccomp``): default allow; ``EPERM`` for the system calls in :data:`DENIED_SYSCALLS` (debugging
  other processes, mounts and namespaces, kernel keyrings, BPF, perf, module and kexec loading, reboot,
  swap, io_uring, ...) and for ``clone`` with any ``CLONE_NEW*`` flag; ``ENOSYS`` for ``clone3`` (its
  flags are in memory, out of a filter's reach, and glibc falls back to ``clone`` on ``ENOSYS``), so
  threads and ``fork`` keep working. The compiled BPF goes to bubblewrap as ``--seccomp FD``;
  bubblewrap installs it just before it execs the child, after its own mounts. System calls of another
  ABI (32-bit ``int 0x80``, x32) kill the process (the filter's bad-architecture action).
* **a per-job uid** (:func:`acquire_uid`): a uid/gid of its own for every concurrent sandbox, from
  :data:`UID_POOL` (``61000-61183``: in Debian's 60000-64999 range of accounts created on demand,
  below systemd's ``DynamicUser=`` range 61184-65519; ``$PAPERGYM_SANDBOX_UIDS`` as ``FIRST-LAST``
  overrides it), skipping every uid or gid that ``/etc/passwd`` / ``/etc/group`` use and every uid that
  owns a process. Processes on the machine coordinate through ``fcntl.flock`` on one lock file per uid
  in a root-only folder (``/run/papergym/uids``, else ``<tmp>/papergym-uids-0``); the lock is held for
  the sandbox's life and released (after a SIGKILL to any process the uid still owns) when it ends. The
  child drops to that uid as its first action, so ``RLIMIT_NPROC`` counts one job only.

:func:`isolation_status` probes all of it once per process (cached): bubblewrap through
:func:`papergym.leaderboard.board.sandbox.bwrap_available`, the cgroup controllers by creating and removing a
probe cgroup with each limit written, the seccomp filter by installing the exact exported BPF in a
throw-away Python process that checks ``unshare(CLONE_NEWUSER)`` -> ``EPERM`` while a thread and a
``fork`` still work, the uid pool by its lock folder and a free uid.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import grp
import os
import pwd
import secrets
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = [
    "DENIED_SYSCALLS",
    "UID_POOL",
    "IsolationError",
    "IsolationStatus",
    "JobCgroup",
    "UidLease",
    "acquire_uid",
    "isolation_status",
    "seccomp_bpf",
    "seccomp_memfd",
    "uid_held",
    "uid_processes",
]

CONTROLLERS = ("memory", "pids", "cpu")
CPU_PERIOD_US = 100_000
PARENT_NAME = "papergym"


class IsolationError(RuntimeError):
    """An isolation piece cannot be set up (the message says which and why)."""


# ========================================================================================= seccomp
#: system calls refused with EPERM inside the sandbox (``clone3``: ENOSYS; ``clone`` with a namespace flag: EPERM)
DENIED_SYSCALLS = (
    # other processes' memory and state
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "process_madvise",
    "pidfd_getfd",
    "kcmp",
    # mounts and namespaces
    "mount",
    "umount2",
    "pivot_root",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "chroot",
    # kernel keyrings, BPF, perf, userfaultfd, io_uring, fanotify
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "fanotify_init",
    # the kernel itself and the machine
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "syslog",
    "quotactl",
    "iopl",
    "ioperm",
    "vhangup",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    # file handles (bypass path permissions)
    "open_by_handle_at",
    "name_to_handle_at",
)
#: every namespace flag ``clone`` accepts (CLONE_NEWTIME, 0x80, only exists for clone3 / unshare)
CLONE_NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}


@functools.lru_cache(maxsize=1)
def seccomp_bpf() -> bytes:
    """The sandbox's seccomp filter as BPF bytes (compiled once per process; module docstring).

    Raises :class:`IsolationError` when ``pyseccomp`` / ``libseccomp`` is missing or does not know a
    system call of :data:`DENIED_SYSCALLS` (a filter that silently skipped one would not be the filter
    documented here)."""
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:
        raise IsolationError(
            f"pyseccomp / libseccomp unavailable ({exc}): pip install pyseccomp "
            "(papergym[board]) and apt-get install libseccomp2"
        ) from None
    try:
        f = sc.SyscallFilter(defaction=sc.ALLOW)
        f.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)  # another ABI (int 0x80, x32): the whole process dies
        for name in DENIED_SYSCALLS:
            try:
                f.add_rule(sc.ERRNO(errno.EPERM), name)
            except (OSError, ValueError, RuntimeError) as exc:
                raise IsolationError(f"libseccomp cannot filter system call {name!r}: {exc}") from None
        for flag in CLONE_NAMESPACE_FLAGS.values():  # clone(flags, ...): flags is argument 0 on x86-64 and arm64
            f.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        fd = os.memfd_create("papergym-seccomp", 0)
        try:
            with os.fdopen(os.dup(fd), "wb") as fh:
                f.export_bpf(fh)
            os.lseek(fd, 0, os.SEEK_SET)
            chunks = []
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
        finally:
            os.close(fd)
    except IsolationError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever libseccomp says, the filter is unavailable
        raise IsolationError(f"building the seccomp filter failed: {type(exc).__name__}: {exc}") from None
    data = b"".join(chunks)
    if not data or len(data) % 8:
        raise IsolationError(f"libseccomp exported a malformed BPF program ({len(data)} bytes)")
    return data


def seccomp_memfd() -> int:
    """A new memfd holding :func:`seccomp_bpf`'s bytes, at offset 0 (for ``bwrap --seccomp FD``; the caller
    closes it)."""
    data = seccomp_bpf()
    fd = os.memfd_create("papergym-seccomp", 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


_SECCOMP_CHECK = r"""
import ctypes, errno, os, sys, threading
data = sys.stdin.buffer.read()
libc = ctypes.CDLL(None, use_errno=True)
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
buf = ctypes.create_string_buffer(data, len(data))
prog = Prog(len(data) // 8, ctypes.cast(buf, ctypes.c_void_p))
UL = ctypes.c_ulong
if libc.prctl(38, UL(1), UL(0), UL(0), UL(0)) != 0:  # PR_SET_NO_NEW_PRIVS
    sys.exit("prctl(PR_SET_NO_NEW_PRIVS) failed: " + os.strerror(ctypes.get_errno()))
if libc.prctl(22, UL(2), ctypes.byref(prog), UL(0), UL(0)) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
    sys.exit("prctl(PR_SET_SECCOMP) failed: " + os.strerror(ctypes.get_errno()))
r = libc.unshare(0x10000000)
if r == 0 or ctypes.get_errno() != errno.EPERM:
    sys.exit("unshare(CLONE_NEWUSER) was not refused with EPERM")
box = []
t = threading.Thread(target=box.append, args=(1,))
t.start(); t.join()
pid = os.fork()
if pid == 0:
    os._exit(7)
if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 7 or box != [1]:
    sys.exit("a thread or fork failed under the filter")
print("ok")
"""


def _probe_seccomp() -> tuple[bool, str]:
    try:
        data = seccomp_bpf()
    except IsolationError as exc:
        return False, str(exc)
    try:
        r = subprocess.run(
            [sys.executable, "-I", "-c", _SECCOMP_CHECK], input=data, capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"the seccomp check could not run: {exc}"
    if r.returncode != 0 or r.stdout.strip() != b"ok":
        why = (r.stderr.decode(errors="replace").strip() or r.stdout.decode(errors="replace").strip())[-300:]
        return False, f"the kernel did not apply the seccomp filter as expected (exit {r.returncode}): {why}"
    if not _bwrap_has_seccomp():
        return False, "this bubblewrap has no --seccomp option (bubblewrap >= 0.3 needed)"
    return True, (
        f"seccomp filter of {len(data) // 8} BPF instructions ({len(DENIED_SYSCALLS)} system calls "
        "refused, clone with namespace flags refused, clone3 -> ENOSYS)"
    )


def _bwrap_has_seccomp() -> bool:
    try:
        r = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--seccomp" in r.stdout + r.stderr


# ========================================================================================= cgroups
def _unescape(s: str) -> str:
    """Octal escapes of /proc/self/mountinfo (``\\040`` = space)."""
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 4 <= len(s) and s[i + 1 : i + 4].isdigit():
            out.append(chr(int(s[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def _mounts() -> list[tuple[str, str, str, list[str]]]:
    """(mount root, mount point, fstype, super options) of every cgroup / cgroup2 mount."""
    out = []
    try:
        with open("/proc/self/mountinfo") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return out
    for line in lines:
        pre, sep, post = line.partition(" - ")
        if not sep:
            continue
        a, b = pre.split(), post.split()
        if len(a) < 5 or len(b) < 3 or b[0] not in ("cgroup", "cgroup2"):
            continue
        out.append((_unescape(a[3]), _unescape(a[4]), b[0], b[2].split(",")))
    return out


def _own_cgroups() -> dict[str, str]:
    """Controller (``""`` for cgroup v2, ``name=...`` for named v1 hierarchies) -> this process's path."""
    out: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as fh:
            for line in fh.read().splitlines():
                parts = line.split(":", 2)
                if len(parts) != 3:
                    continue
                for c in parts[1].split(",") if parts[1] else [""]:
                    out[c] = parts[2]
    except OSError:
        pass
    return out


def _folder(mount_root: str, mount_point: str, own: str) -> str:
    """The folder of the cgroup ``own`` on a mount of its hierarchy (mounted at ``mount_root``)."""
    root = mount_root.rstrip("/")
    rel = own[len(root) :] if root and (own == root or own.startswith(root + "/")) else own
    return os.path.normpath(mount_point + "/" + rel.lstrip("/"))


def _write(path: str, value: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _read(path: str) -> str:
    with open(path) as fh:
        return fh.read()


@dataclass(frozen=True)
class CgroupLayout:
    """Where job cgroups go: ``version`` 1 or 2, ``parents`` controller -> the ``papergym`` parent folder
    (under v2 one folder for all controllers), ``controllers`` those usable."""

    version: int
    parents: dict[str, str]
    controllers: tuple[str, ...]


def _v2_layout(mounts: list, own: dict[str, str]) -> tuple[CgroupLayout | None, str]:
    m = next((m for m in mounts if m[2] == "cgroup2"), None)
    if m is None:
        return None, "no cgroup2 mount"
    given = os.environ.get("PAPERGYM_CGROUP_PARENT", "").strip()
    if given:
        base = os.path.realpath(given)
        if not os.path.isdir(base):
            return None, f"$PAPERGYM_CGROUP_PARENT={given!r} is not a folder"
        parent = os.path.join(base, PARENT_NAME)
    else:
        mine = own.get("")
        if mine is None:
            return None, "this process is in no cgroup v2"
        folder = _folder(m[0], m[1], mine)
        if os.path.normpath(folder) != os.path.normpath(m[1]):
            return None, (
                f"this process is in cgroup {mine!r}, which holds processes, so cgroup v2 cannot hand "
                "controllers to a job below it: run the worker in a delegated cgroup (systemd "
                "Delegate=yes) and set $PAPERGYM_CGROUP_PARENT to a folder there"
            )
        base, parent = folder, os.path.join(folder, PARENT_NAME)
    try:
        avail = _read(os.path.join(base, "cgroup.controllers")).split()
    except OSError as exc:
        return None, f"cannot read {base}/cgroup.controllers: {exc.strerror}"
    ctl = tuple(c for c in CONTROLLERS if c in avail)
    if not ctl:
        return None, f"cgroup v2 at {base} offers none of {', '.join(CONTROLLERS)}"
    return CgroupLayout(2, {c: parent for c in ctl}, ctl), ""


def _v1_layout(mounts: list, own: dict[str, str]) -> tuple[CgroupLayout | None, str]:
    parents = {}
    for c in CONTROLLERS:
        m = next((m for m in mounts if m[2] == "cgroup" and c in m[3]), None)
        if m is not None and c in own:
            parents[c] = os.path.join(_folder(m[0], m[1], own[c]), PARENT_NAME)
    if not parents:
        return None, "no cgroup v1 hierarchy of memory, pids or cpu is mounted"
    return CgroupLayout(1, parents, tuple(c for c in CONTROLLERS if c in parents)), ""


def _cgroup_layout() -> tuple[CgroupLayout | None, str]:
    """The hierarchy with the most of memory / pids / cpu (v2 first when tied)."""
    mounts, own = _mounts(), _own_cgroups()
    if not mounts:
        return None, "no cgroup file system is mounted (/sys/fs/cgroup)"
    v2, why2 = _v2_layout(mounts, own)
    v1, why1 = _v1_layout(mounts, own)
    best = max([x for x in (v2, v1) if x is not None], key=lambda x: len(x.controllers), default=None)
    if best is None:
        return None, f"cgroup v2: {why2}; cgroup v1: {why1}"
    return best, ""


class JobCgroup:
    """The cgroup(s) of one sandboxed job, created with their limits (module docstring).

    ``memory_bytes``: memory + swap limit (tmpfs and memfd pages included); ``tasks``: ``pids.max``;
    ``cpus``: CPU bandwidth in CPUs. :attr:`procs_files` are what the launched process writes ``0``
    into before it execs (see :meth:`join`); :meth:`kill_all` then :meth:`remove` at the end."""

    def __init__(self, layout: CgroupLayout, *, memory_bytes: int, tasks: int, cpus: float, name: str | None = None):
        self.layout = layout
        self.version = layout.version
        self.name = name or _job_name("job")
        self.memory_bytes = int(memory_bytes)
        self.folders: dict[str, str] = {}  # controller -> job folder
        self._made: list[str] = []
        sweep_stale(layout.parents.values())
        try:
            for c in layout.controllers:
                folder = os.path.join(layout.parents[c], self.name)
                if folder not in self._made:
                    self._mkdir(layout.parents[c], folder)
                self.folders[c] = folder
            self._limits(memory_bytes, tasks, cpus)
        except OSError as exc:
            self.remove()
            raise IsolationError(f"cannot set up the job cgroup {self.name}: {exc}") from None
        self.procs_files = sorted({os.path.join(f, "cgroup.procs") for f in self.folders.values()})

    def _mkdir(self, parent: str, folder: str) -> None:
        enable = " ".join(f"+{c}" for c in self.layout.controllers)
        for _ in range(50):  # another job's remove() may take the empty parent away in between
            try:
                if self.version == 2:  # the controllers must be enabled on the way down (idempotent)
                    _write(os.path.join(os.path.dirname(parent), "cgroup.subtree_control"), enable)
                    os.makedirs(parent, exist_ok=True)
                    _write(os.path.join(parent, "cgroup.subtree_control"), enable)
                else:
                    os.makedirs(parent, exist_ok=True)
                os.mkdir(folder)
                self._made.append(folder)
                return
            except FileNotFoundError:
                time.sleep(0.001)
        raise IsolationError(f"cannot create {folder}: its parent keeps disappearing")

    def _limits(self, memory_bytes: int, tasks: int, cpus: float) -> None:
        f = self.folders
        quota = max(1000, round(float(cpus) * CPU_PERIOD_US))  # the kernel's minimum quota is 1 ms
        if self.version == 2:
            if "memory" in f:
                _write(f"{f['memory']}/memory.max", str(memory_bytes))
                if os.path.exists(f"{f['memory']}/memory.swap.max"):
                    _write(f"{f['memory']}/memory.swap.max", "0")
            if "pids" in f:
                _write(f"{f['pids']}/pids.max", str(int(tasks)))
            if "cpu" in f:
                _write(f"{f['cpu']}/cpu.max", f"{quota} {CPU_PERIOD_US}")
            return
        if "memory" in f:
            _write(f"{f['memory']}/memory.limit_in_bytes", str(memory_bytes))
            if os.path.exists(f"{f['memory']}/memory.memsw.limit_in_bytes"):  # swap accounting enabled
                _write(f"{f['memory']}/memory.memsw.limit_in_bytes", str(memory_bytes))
        if "pids" in f:
            _write(f"{f['pids']}/pids.max", str(int(tasks)))
        if "cpu" in f:
            _write(f"{f['cpu']}/cpu.cfs_period_us", str(CPU_PERIOD_US))
            _write(f"{f['cpu']}/cpu.cfs_quota_us", str(quota))

    def join(self) -> None:
        """Move the calling process into the job (for a ``preexec`` function: no allocation-heavy work)."""
        for p in self.procs_files:
            fd = os.open(p, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)

    def pids(self) -> set[int]:
        out: set[int] = set()
        for p in self.procs_files:
            try:
                out.update(int(x) for x in _read(p).split())
            except (OSError, ValueError):
                pass
        return out

    def oom_killed(self) -> bool:
        """Whether the kernel's OOM killer ended a task of the job (its memory limit was reached)."""
        mem = self.folders.get("memory")
        if mem is None:
            return False
        try:
            if self.version == 2:
                ev = dict(line.split() for line in _read(f"{mem}/memory.events").splitlines() if line.strip())
                return int(ev.get("oom_kill", 0)) > 0
            ctl = dict(line.split() for line in _read(f"{mem}/memory.oom_control").splitlines() if line.strip())
            if "oom_kill" in ctl:
                return int(ctl["oom_kill"]) > 0
            # kernels before 4.13 have no oom_kill counter: the limit was hit and usage reached it
            return int(_read(f"{mem}/memory.failcnt")) > 0 and int(
                _read(f"{mem}/memory.max_usage_in_bytes")
            ) >= self.memory_bytes - (1 << 20)
        except (OSError, ValueError):
            return False

    def peak_memory(self) -> int | None:
        """The job's peak memory in bytes (``memory.peak`` / ``memory.max_usage_in_bytes``), if known."""
        mem = self.folders.get("memory")
        if mem is None:
            return None
        try:
            return int(_read(f"{mem}/{'memory.peak' if self.version == 2 else 'memory.max_usage_in_bytes'}"))
        except (OSError, ValueError):
            return None

    def kill_all(self, timeout: float = 5.0) -> bool:
        """SIGKILL every task of the job until none is left (:func:`_kill_tasks`). Returns whether the job is
        empty."""
        return _kill_tasks(self.procs_files if self._made else [], self.version, timeout)

    def remove(self, timeout: float = 5.0) -> None:
        """Kill what is left, remove the job folders and the ``papergym`` parents that are then empty.
        Raises :class:`IsolationError` naming a folder that could not be removed."""
        if self._made:
            self.kill_all(timeout)
        left = []
        for folder in reversed(self._made):
            end = time.monotonic() + timeout
            while True:
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:  # EBUSY while the last exiting tasks are released
                    if time.monotonic() > end:
                        left.append(f"{folder} ({exc.strerror})")
                        break
                    self.kill_all(0.0)
                    time.sleep(0.005)
        parents = {os.path.dirname(f) for f in self._made}
        self._made = []
        for parent in parents:
            with contextlib.suppress(OSError):  # in use by another job (ENOTEMPTY / EBUSY): kept
                os.rmdir(parent)
        if left:
            raise IsolationError(f"cgroup folders left behind: {', '.join(left)}")


def _pid_ns() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _job_name(kind: str) -> str:
    """``<kind>-<pid namespace>-<pid>-<random>``: who made it, so a crashed evaluator's folders can be swept."""
    return f"{kind}-{_pid_ns()}-{os.getpid()}-{secrets.token_hex(4)}"


def _kill_tasks(procs_files: list[str], version: int, timeout: float) -> bool:
    """SIGKILL every task listed in ``procs_files`` until none is left: ``cgroup.kill`` under v2 when the
    kernel has it; else a pidfd per task, signalled only while the task is still listed, so a recycled
    pid is never hit. Returns whether they are empty."""
    end = time.monotonic() + timeout
    kill_files = []
    if version == 2:
        kill_files = [
            k for k in (os.path.join(os.path.dirname(p), "cgroup.kill") for p in procs_files) if os.path.exists(k)
        ]

    def listed() -> set[int]:
        out: set[int] = set()
        for p in procs_files:
            with contextlib.suppress(OSError, ValueError):
                out.update(int(x) for x in _read(p).split())
        return out

    while True:
        pids = listed()
        if not pids:
            return True
        if kill_files:
            for k in kill_files:
                with contextlib.suppress(OSError):
                    _write(k, "1")
        else:
            fds = {}
            for pid in pids:
                with contextlib.suppress(OSError):
                    fds[pid] = os.pidfd_open(pid)
            try:
                still = listed()
                for pid, fd in fds.items():
                    if pid in still:
                        with contextlib.suppress(OSError):
                            signal.pidfd_send_signal(fd, signal.SIGKILL)
            finally:
                for fd in fds.values():
                    os.close(fd)
        if time.monotonic() > end:
            return not listed()
        time.sleep(0.002)


def sweep_stale(parents: Iterable[str]) -> list[str]:
    """Remove the job folders under ``parents`` whose evaluator (same pid namespace) no longer runs -- one
    killed before its clean-up -- after killing any task left in them. Returns the folders removed."""
    ns, removed = str(_pid_ns()), []
    for parent in set(parents):
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        version = 2 if os.path.exists(os.path.join(parent, "cgroup.controllers")) else 1
        for name in names:
            parts = name.split("-")
            if (
                len(parts) != 4
                or parts[0] not in ("job", "probe")
                or parts[1] != ns
                or not parts[2].isdigit()
                or os.path.exists(f"/proc/{parts[2]}")
            ):
                continue
            folder = os.path.join(parent, name)
            _kill_tasks([os.path.join(folder, "cgroup.procs")], version, 2.0)
            with contextlib.suppress(OSError):
                os.rmdir(folder)
                removed.append(folder)
    return removed


def _probe_cgroup() -> tuple[int | None, tuple[str, ...], str]:
    if os.geteuid() != 0 and not os.environ.get("PAPERGYM_CGROUP_PARENT"):
        return None, (), "creating cgroups needs root (or $PAPERGYM_CGROUP_PARENT naming a delegated cgroup v2 folder)"
    layout, why = _cgroup_layout()
    if layout is None:
        return None, (), why
    usable, problems = [], []
    for c in layout.controllers:
        one = CgroupLayout(layout.version, {c: layout.parents[c]}, (c,))
        try:
            job = JobCgroup(one, memory_bytes=64 << 20, tasks=8, cpus=1.0, name=_job_name("probe"))
        except IsolationError as exc:
            problems.append(f"{c}: {exc}")
            continue
        try:
            job.remove()
        except IsolationError as exc:
            problems.append(f"{c}: {exc}")
            continue
        usable.append(c)
    if not usable:
        return None, (), f"cgroup v{layout.version}: " + "; ".join(problems)
    where = ", ".join(f"{c}: {layout.parents[c]}" for c in usable)
    reason = f"cgroup v{layout.version} ({where})"
    if problems:
        reason += "; unusable: " + "; ".join(problems)
    missing = [c for c in CONTROLLERS if c not in usable and not any(p.startswith(c + ":") for p in problems)]
    if missing:
        reason += f"; controllers not available: {', '.join(missing)}"
    return layout.version, tuple(usable), reason


def usable_layout(status: IsolationStatus) -> CgroupLayout | None:
    """The cgroup layout restricted to the controllers the probe found usable (None if none)."""
    if status.cgroup_version is None or not status.cgroup_controllers:
        return None
    layout, _ = _cgroup_layout()
    if layout is None or layout.version != status.cgroup_version:
        return None
    ctl = tuple(c for c in layout.controllers if c in status.cgroup_controllers)
    return CgroupLayout(layout.version, {c: layout.parents[c] for c in ctl}, ctl) if ctl else None


# ======================================================================================== uid pool
#: the default uids (and gids, the same numbers) handed to sandboxes (module docstring)
UID_POOL = range(61000, 61184)


def _pool() -> range:
    """:data:`UID_POOL`, or ``$PAPERGYM_SANDBOX_UIDS`` (``FIRST-LAST``) when set."""
    raw = os.environ.get("PAPERGYM_SANDBOX_UIDS", "").strip()
    if not raw:
        return UID_POOL
    try:
        a, b = (int(x) for x in raw.split("-"))
    except ValueError:
        raise IsolationError(f"$PAPERGYM_SANDBOX_UIDS must be FIRST-LAST (e.g. 61000-61183), got {raw!r}") from None
    if not 1000 <= a <= b < 2**31 - 1 or a <= 65534 <= b:
        raise IsolationError(
            f"$PAPERGYM_SANDBOX_UIDS={raw!r} is not a range of ordinary uids (1000 <= FIRST <= LAST, without 65534)"
        )
    return range(a, b + 1)


def _lock_dir(create: bool = True) -> str:
    """The root-only folder of the per-uid lock files (created 0700; refused when not safe)."""
    problems = []
    for d in ("/run/papergym/uids", os.path.join(tempfile.gettempdir(), "papergym-uids-0")):
        try:
            if create:
                for p in (os.path.dirname(d), d) if d.startswith("/run/") else (d,):
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(p, 0o700)
            st = os.lstat(d)
        except OSError as exc:
            problems.append(f"{d}: {exc.strerror}")
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            problems.append(f"{d} is not a folder owned by uid {os.geteuid()} and writable only by it")
            continue
        return d
    raise IsolationError("no safe folder for the uid locks: " + "; ".join(problems))


def uid_processes(uid: int) -> list[int]:
    """Pids of the processes whose real, effective or saved uid is ``uid``."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/status", "rb") as fh:
                for line in fh:
                    if line.startswith(b"Uid:"):
                        if str(uid).encode() in line.split()[1:4]:
                            out.append(int(d))
                        break
        except OSError:
            continue
    return out


def _taken_ids() -> set[int]:
    return {p.pw_uid for p in pwd.getpwall()} | {g.gr_gid for g in grp.getgrall()}


@dataclass
class UidLease:
    """A uid (and the gid of the same number) held for one sandbox; :meth:`release` gives it back."""

    uid: int
    gid: int
    path: str
    fd: int | None = field(default=None, repr=False)

    def release(self, timeout: float = 5.0) -> bool:
        """SIGKILL whatever process the uid still owns, then drop the lock (idempotent). Returns False,
        keeping the lock (the uid stays out of the pool for this process's life), if a process of the uid
        outlives ``timeout``: a uid is never handed to a new job while an old job's process runs under it."""
        if self.fd is None:
            return True
        end = time.monotonic() + timeout
        while pids := uid_processes(self.uid):
            if time.monotonic() > end:
                return False
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)
        os.close(self.fd)
        self.fd = None
        return True


def acquire_uid() -> UidLease:
    """A free uid of the pool, locked for this process until :meth:`UidLease.release` (module docstring).
    Raises :class:`IsolationError` when not root or when every uid of the pool is in use."""
    if os.geteuid() != 0:
        raise IsolationError("per-job uids need root (the worker runs as root)")
    pool = _pool()
    folder = _lock_dir()
    taken = _taken_ids()
    for uid in pool:  # the lowest free one: as many lock files as sandboxes ever ran at once
        if uid in taken:
            continue
        path = os.path.join(folder, f"{uid}.lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        if uid_processes(uid):  # a process outside any lease uses it: not ours to hand out
            os.close(fd)
            continue
        return UidLease(uid, uid, path, fd)
    raise IsolationError(
        f"every uid of the sandbox pool {pool.start}-{pool.stop - 1} is in use "
        "(too many concurrent sandboxes; $PAPERGYM_SANDBOX_UIDS widens the pool)"
    )


def sandboxes_running() -> int:
    """How many sandboxes of the full mode run on this machine now: the pool uids whose lock some process
    holds (this one's included). 0 when the lock folder does not exist."""
    try:
        folder = _lock_dir(create=False)
        names = os.listdir(folder)
    except (OSError, IsolationError):
        return 0
    return sum(1 for n in names if n.endswith(".lock") and n[:-5].isdecimal() and uid_held(int(n[:-5])))


def uid_held(uid: int) -> bool:
    """Whether some process (this one included) holds the lock of pool uid ``uid``."""
    try:
        fd = os.open(os.path.join(_lock_dir(create=False), f"{uid}.lock"), os.O_RDWR | os.O_CLOEXEC)
    except (OSError, IsolationError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _probe_uids() -> tuple[bool, str]:
    try:
        pool = _pool()
        lease = acquire_uid()
    except IsolationError as exc:
        return False, str(exc)
    except OSError as exc:
        return False, f"uid pool lock files: {exc}"
    lease.release()
    return True, f"per-job uids {pool.start}-{pool.stop - 1} (locks in {os.path.dirname(lease.path)})"


# ========================================================================================== status
@dataclass(frozen=True)
class IsolationStatus:
    """What :func:`isolation_status` found: each piece, whether it works, and why (not)."""

    bwrap_ok: bool
    bwrap_reason: str
    cgroup_version: int | None
    cgroup_controllers: tuple[str, ...]
    cgroup_reason: str
    seccomp_ok: bool
    seccomp_reason: str
    uid_pool_ok: bool
    uid_pool_reason: str

    @property
    def cgroup_ok(self) -> bool:
        """A cgroup with every controller of :data:`CONTROLLERS` (memory, pids, cpu)."""
        return self.cgroup_version is not None and all(c in self.cgroup_controllers for c in CONTROLLERS)

    @property
    def full(self) -> bool:
        """Every piece works: ``sandbox="full"`` can run."""
        return self.bwrap_ok and self.cgroup_ok and self.seccomp_ok and self.uid_pool_ok

    def missing(self) -> list[str]:
        """One human-readable line per missing piece (empty when :attr:`full`)."""
        out = []
        if not self.bwrap_ok:
            out.append(f"bubblewrap: {self.bwrap_reason}")
        if not self.cgroup_ok:
            have = ", ".join(self.cgroup_controllers) or "none"
            out.append(f"cgroup (memory, pids, cpu; usable: {have}): {self.cgroup_reason}")
        if not self.seccomp_ok:
            out.append(f"seccomp: {self.seccomp_reason}")
        if not self.uid_pool_ok:
            out.append(f"per-job uid: {self.uid_pool_reason}")
        return out


@functools.lru_cache(maxsize=1)
def isolation_status() -> IsolationStatus:
    """Probe every isolation piece once (cached for the process; module docstring)."""
    from papergym.leaderboard.board.sandbox import bwrap_available

    bw_ok, bw_why = bwrap_available()
    version, ctl, cg_why = _probe_cgroup()
    sc_ok, sc_why = _probe_seccomp()
    uid_ok, uid_why = _probe_uids()
    return IsolationStatus(bw_ok, bw_why, version, ctl, cg_why, sc_ok, sc_why, uid_ok, uid_why)
