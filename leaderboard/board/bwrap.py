"""The bubblewrap command line of the leaderboard's sandbox (:mod:`papergym.leaderboard.board.sandbox`): the
read-only view of the Python installation, the folders and files that would make papergym importable
(masked), the scrubbed environment, the sandbox's own files (the child and the channel, passed as
``memfd`` s), the rlimits set between ``fork`` and ``exec``, and the probes of what works here."""

from __future__ import annotations

import ctypes
import functools
import os
import resource
import shutil
import signal
import site
import stat
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from papergym.leaderboard.board import _sandbox_child as _child
from papergym.leaderboard.board import channel as _ch
from papergym.leaderboard.board import isolation as _iso
from papergym.leaderboard.board.limits import Limits

__all__ = [
    "CHILD_NAME",
    "NOBODY",
    "SANDBOX_LIB",
    "SANDBOX_SUBMISSION",
    "bwrap_argv",
    "bwrap_available",
    "child_sources",
    "memfd",
    "preexec",
    "python_reachable_by_nobody",
    "sandbox_env",
]

NOBODY = 65534
SANDBOX_LIB = "/sandbox/lib"
SANDBOX_SUBMISSION = "/sandbox/submission"
CHILD_NAME = "_pg_sandbox_child.py"
_CHANNEL_NAME = "_pg_channel.py"


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


def sandbox_env(home: str) -> dict[str, str]:
    return {
        "HOME": home,
        "TMPDIR": home,
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
        "NUMBA_NUM_THREADS": "1",
        "VECLIB_MAXIMUM_THREADS": "1",
        "NUMBA_CACHE_DIR": f"{home}/numba",
        "PYTHONHASHSEED": "0",
        "MPLBACKEND": "Agg",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def bwrap_argv(data_fds: Mapping[str, int], tmp_bytes: int, seccomp_fd: int | None = None) -> list[str]:
    """bubblewrap's options (before the command); ``data_fds``: sandbox path -> fd of its content;
    ``seccomp_fd``: an fd of the BPF program bubblewrap installs before it execs the command."""
    root = os.geteuid() == 0
    argv = ["bwrap"]
    if root:  # no user namespace: the child drops to the job's uid itself (sandbox.py, Isolation)
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
    argv += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(tmp_bytes),
        "--perms",
        "1777",
        "--tmpfs",
        "/dev/shm",
        "--size",
        str(tmp_bytes),
        "--perms",
        "1777",
        "--tmpfs",
        "/tmp",
        "--chdir",
        "/tmp",
    ]
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
    for k, v in sandbox_env("/tmp").items():
        argv += ["--setenv", k, v]
    return argv


def memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def preexec(
    limits: Limits, *, drop: tuple[int, int] | None = None, pdeathsig: bool = False, job: _iso.JobCgroup | None = None
) -> Callable[[], None]:
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


def child_sources(submission: bytes | None = None) -> dict[str, bytes]:
    lib = Path(_child.__file__).read_bytes(), Path(_ch.__file__).read_bytes()
    return {f"{SANDBOX_LIB}/{CHILD_NAME}": lib[0], f"{SANDBOX_LIB}/{_CHANNEL_NAME}": lib[1]}


@functools.lru_cache(maxsize=1)
def bwrap_available() -> tuple[bool, str]:
    """Whether bubblewrap works here: the real command line runs a trivial script (cached).

    Returns ``(True, "bubblewrap X.Y.Z")`` or ``(False, reason)``.
    """
    exe = shutil.which("bwrap")
    if exe is None:
        return False, "bwrap is not installed (Debian/Ubuntu package 'bubblewrap')"
    script = (
        b"import os, sys, numpy\n"
        b"if '--drop' in sys.argv:\n"
        b"    os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)\n"
        b"import gymnasium\n"
        b"try:\n    import papergym\nexcept ImportError:\n    print('ok')\n"
    )
    fd = memfd("probe", script)
    try:
        argv = bwrap_argv({f"{SANDBOX_LIB}/probe.py": fd}, 16 * 2**20)
        argv += [sys.executable, "-s", "-P", f"{SANDBOX_LIB}/probe.py"] + (["--drop"] if os.geteuid() == 0 else [])
        try:
            r = subprocess.run(
                argv,
                pass_fds=(fd,),
                capture_output=True,
                timeout=60,
                env=sandbox_env("/tmp"),
                check=False,
                preexec_fn=preexec(Limits()),
            )
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


def python_reachable_by_nobody() -> tuple[bool, str]:
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
