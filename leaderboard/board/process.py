"""One sandboxed child process hosting a submission, and the round trips with it
(:mod:`papergym.leaderboard.board.sandbox`, Isolation and Speed): launch under bubblewrap or the
unsafe rlimits, deadlines enforced by a watchdog thread, the spin gate, clean-up."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from papergym.leaderboard.board import bwrap as _bw
from papergym.leaderboard.board import channel as _ch
from papergym.leaderboard.board import isolation as _iso
from papergym.leaderboard.board.bwrap import (
    CHILD_NAME,
    NOBODY,
    SANDBOX_LIB,
    SANDBOX_SUBMISSION,
    bwrap_argv,
    child_sources,
    memfd,
    preexec,
    sandbox_env,
)
from papergym.leaderboard.board.limits import (
    SANDBOX_MODES,
    Limits,
    ProtocolError,
    SandboxError,
    SandboxUnavailable,
    SandboxWarning,
    resolve_sandbox,
)
from papergym.leaderboard.board.protocol import check_reply

__all__ = ["GATE_SECONDS", "SPIN_SECONDS", "SandboxProcess"]

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
            b = bytes(self.buf[-self.keep :])
            omitted = self.total - len(b)
        s = b.decode("utf-8", errors="replace")
        return f"[... {omitted} bytes omitted]\n{s}" if omitted > 0 else s


class SandboxProcess:
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
            raise SandboxUnavailable(
                f"sandbox='full' needs the cgroup controllers {', '.join(_iso.CONTROLLERS)}; "
                f"usable here: {', '.join(self._layout.controllers) if self._layout else 'none'}"
            )
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
                self.cgroup = _iso.JobCgroup(
                    self._layout,
                    memory_bytes=int(lim.memory_mb) * 2**20,
                    tasks=int(lim.processes) + (2 if self._bwrap else 0),
                    cpus=lim.cpus,
                )
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
                warnings.warn(
                    f"sandbox clean-up: a process of uid {lease.uid} survived SIGKILL; that uid stays "
                    "out of the pool while this process runs",
                    SandboxWarning,
                    stacklevel=2,
                )

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
                data = child_sources()
                data[f"{SANDBOX_SUBMISSION}/{name}"] = src
                dfds = {dest: memfd(os.path.basename(dest), b) for dest, b in data.items()}
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
                argv = bwrap_argv(dfds, int(lim.file_size_mb) * 2**20, sfd) + ["--info-fd", str(info_w)]
                argv += [
                    sys.executable,
                    "-s",
                    "-P",
                    f"{SANDBOX_LIB}/{CHILD_NAME}",
                    child_fds,
                    f"{SANDBOX_SUBMISSION}/{name}",
                    self.attr,
                    repr(self.spin),
                ]
                if os.geteuid() == 0:
                    lease = self.uid_lease
                    argv.append(f"--drop-uid={lease.uid}:{lease.gid}" if lease else f"--drop-uid={NOBODY}:{NOBODY}")
                # bwrap itself (the sandbox's pid 1, whose /proc/1/environ the child may read as a normal
                # user) gets a scrubbed environment too, not the evaluator's
                env, cwd = sandbox_env("/tmp"), "/"
                pre = preexec(lim, job=self.cgroup)
            else:
                self.tmpdir = tempfile.mkdtemp(prefix="papergym-sandbox-")
                root = Path(self.tmpdir)
                (root / "lib").mkdir()
                (root / "submission").mkdir()
                (root / "work").mkdir()
                for dest, b in child_sources().items():
                    (root / "lib" / os.path.basename(dest)).write_bytes(b)
                (root / "submission" / name).write_bytes(src)
                drop: tuple[int, int] | None = None
                why = ""
                if os.geteuid() == 0:
                    reachable, why = _bw.python_reachable_by_nobody()
                    for p in (root, root / "lib", root / "submission"):
                        os.chmod(p, 0o755)
                    for p in [*(root / "lib").iterdir(), root / "submission" / name]:
                        os.chmod(p, 0o444)
                    if not reachable:  # never run submitted code as root, whatever the mode
                        raise SandboxUnavailable(
                            "sandbox='unsafe-rlimits' as root runs the submission as an unprivileged user, but "
                            f"the Python installation is not reachable by other users ({why}); use the full "
                            "sandbox, or run papergym as a normal user"
                        )
                    lease = self.uid_lease
                    drop = (lease.uid, lease.gid) if lease else (NOBODY, NOBODY)
                    os.chown(root / "work", *drop)
                    os.chmod(root / "work", 0o700)
                warn = (
                    "sandbox='unsafe-rlimits' was asked for: the submission runs with rlimits only -- no "
                    "filesystem isolation (it can read every file its user can read), no network isolation, "
                    "no system-call filter"
                )
                if self.cgroup is None:
                    warn += ", processes that start a new session may escape the kill"
                warnings.warn(warn, SandboxWarning, stacklevel=4)
                argv = [
                    sys.executable,
                    "-s",
                    "-P",
                    str(root / "lib" / CHILD_NAME),
                    child_fds,
                    str(root / "submission" / name),
                    self.attr,
                    repr(self.spin),
                ]
                env = sandbox_env(str(root / "work"))
                cwd = str(root / "work")
                pre = preexec(lim, drop=drop, pdeathsig=True, job=self.cgroup)
            err_r, err_w = os.pipe()
            try:
                self.proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=err_w,
                    stderr=err_w,
                    pass_fds=(c_r, c_w, *fds, *([gate_fd] if gate_fd is not None else [])),
                    env=env,
                    cwd=cwd,
                    preexec_fn=pre,  # noqa: PLW1509 - rlimits must be set between fork and exec
                    start_new_session=True,
                    close_fds=True,
                )
            except (OSError, subprocess.SubprocessError) as exc:
                os.close(err_r)
                raise SandboxError(
                    "error",
                    f"the sandbox could not be started ({type(exc).__name__}: {exc}; "
                    "joining the job cgroup or setting the rlimits failed?)",
                ) from None
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
            return SandboxError(
                "oom",
                f"the memory limit of {self.limits.memory_mb} MiB (memory, tmpfs files and "
                f"memfd pages together) was reached during {during}: the sandbox's cgroup "
                "OOM killer ended it",
                tail,
            )
        sig = None
        if rc is not None and rc < 0:
            sig = -rc
        elif rc is not None and self._bwrap and rc > 128:
            sig = rc - 128
        if sig is not None:
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            if sig == signal.SIGXCPU or (sig == signal.SIGKILL and self.cpu_seconds >= self.limits.cpu_seconds - 0.5):
                return SandboxError(
                    "timeout", f"the CPU time limit of {self.limits.cpu_seconds:g} s was reached during {during}", tail
                )
            if sig == signal.SIGKILL:
                return SandboxError(
                    "oom", f"the sandbox was killed (SIGKILL) during {during}, most likely for memory", tail
                )
            if sig == signal.SIGXFSZ:
                return SandboxError(
                    "error", f"the file size limit of {self.limits.file_size_mb} MiB was exceeded during {during}", tail
                )
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
            raise self.fail(
                ProtocolError(f"an unreadable frame during {during} ({type(exc).__name__}: {str(exc)[:200]})")
            ) from None
        finally:
            self._deadline = None
        try:
            check_reply(op, v, during, expect)
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
