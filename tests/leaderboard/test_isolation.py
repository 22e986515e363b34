"""Isolation that fails closed (papergym.leaderboard.board.isolation and the sandbox's modes).

The hostile submissions (tests/leaderboard/submissions/: memfd_hog, tmpfs_hog, thread_hog, syscalls,
whoami, threads_honest) run under ``sandbox="full"``: bubblewrap + a job cgroup + seccomp + a uid per
job. Those tests need root, bubblewrap, cgroups and libseccomp: they skip on a machine without them and
fail under CI=true. The fail-closed tests patch the cached probe (not the kernel) and run anywhere.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import papergym.envs  # noqa: F401 - registers the envs
from papergym.leaderboard.board import isolation as iso
from papergym.leaderboard.board import process as sb_mod
from papergym.leaderboard.board.sandbox import (
    Limits,
    SandboxedAgentSession,
    SandboxedSolverSession,
    SandboxError,
    SandboxUnavailable,
    SandboxWarning,
    problem_to_public,
    resolve_sandbox,
)

SUB = Path(__file__).parent / "submissions"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
LIM = Limits(call_seconds=30.0, episode_seconds=60.0, submission_seconds=120.0, cpu_seconds=60.0)


@pytest.fixture(scope="module")
def problem() -> dict:
    return problem_to_public(gym.make("NonStatLipschitz-v0").unwrapped.problem)


@pytest.fixture
def full() -> str:
    st = iso.isolation_status()
    if not st.full:
        if IN_CI:
            pytest.fail(f"the full sandbox must work in CI: {'; '.join(st.missing())}")
        pytest.skip(f"full sandbox unavailable: {'; '.join(st.missing())}")
    return "full"


def _session(name: str, limits: Limits = LIM, sandbox: str = "full", attr: str = "Agent") -> SandboxedAgentSession:
    return SandboxedAgentSession(SUB / f"{name}.py", attr, limits=limits, sandbox=sandbox)


def _job(sess: SandboxedAgentSession) -> tuple[int, list[str]]:
    """The running session's uid and cgroup folders."""
    sb = sess._sb
    assert sb.uid_lease is not None and sb.cgroup is not None
    return sb.uid_lease.uid, sorted(set(sb.cgroup.folders.values()))


def _assert_nothing_left(uid: int, folders: list[str]) -> None:
    """No process of the job's uid, no cgroup folder, the uid free again."""
    deadline = time.monotonic() + 5
    while iso.uid_processes(uid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert iso.uid_processes(uid) == []
    assert [f for f in folders if os.path.exists(f)] == []
    assert not iso.uid_held(uid)


def _step(sess, n: int = 1) -> np.ndarray:
    a, failed = sess.step(np.zeros((n, 1)), None, np.ones(n, bool))
    assert failed == {}
    return a


# ------------------------------------------------------------------------------------------- memory
@pytest.mark.parametrize(
    "hog,limits",
    [
        ("memfd_hog", dataclasses.replace(LIM, memory_mb=512)),  # memfds of 192 MiB: below RLIMIT_FSIZE
        ("tmpfs_hog", dataclasses.replace(LIM, memory_mb=512, file_size_mb=2048)),  # tmpfs big enough: memory binds
    ],
)
def test_memory_that_rlimit_as_misses_is_oom(problem, full, hog, limits):
    """Holding 1.5 GiB in memfds / tmpfs files (invisible to RLIMIT_AS) under a 512 MiB limit ends as oom,
    and the OOM-killed sandbox leaves nothing behind."""
    sess = _session(hog, limits, full)
    sess.start(problem, [1], {"total_mb": 1536})
    uid, folders = _job(sess)
    with pytest.raises(SandboxError) as e:
        _step(sess)
    sess.close()
    assert e.value.status == "oom", e.value
    assert "memory limit of 512 MiB" in e.value.message and "during step" in e.value.message
    assert "holding 1536 MiB" not in e.value.stderr_tail
    _assert_nothing_left(uid, folders)


# ---------------------------------------------------------------------------------------- processes
def test_a_busy_neighbour_does_not_make_threads_fail(problem, full):
    """One submission holding 30 threads while another starts threads, at the same time: each job has its
    own uid (RLIMIT_NPROC) and pids cgroup, so the honest one is not starved."""
    hog = _session("thread_hog", sandbox=full)
    honest = _session("threads_honest", sandbox=full)
    try:
        hog.start(problem, [1], {"n": 30})
        held = _step(hog)[0, 0]
        assert held >= 25  # 32 tasks per job: bwrap's two and the main thread are outside the 30
        honest.start(problem, [1, 2], {"workers": 4})
        want = sum(float(np.sum(np.arange(1000.0) * (i + 1))) for i in range(4)) / 1e7
        for _ in range(5):
            assert _step(honest, 2).tolist() == [[want], [want]]
        assert _step(hog)[0, 0] == held  # still holding them
    finally:
        hog.close()
        honest.close()


# ------------------------------------------------------------------------------------------ seccomp
def test_seccomp_refuses_dangerous_system_calls(problem, full):
    sess = _session("syscalls", sandbox=full)
    with pytest.raises(SandboxError) as e:
        sess.start(problem, [1], {})
    sess.close()
    assert e.value.status == "error" and "REPORT" in e.value.message, e.value
    got = dict(kv.split("=") for kv in e.value.message.split("REPORT ", 1)[1].split()[:10])
    for call in ("ptrace", "unshare", "mount", "keyctl", "bpf", "perf_event_open", "clone_newuser"):
        assert got[call] == "EPERM", (call, got)
    assert got["clone3"] == "ENOSYS"  # glibc falls back to clone, whose flags the filter sees
    assert got["thread"] == "ok" and got["fork"] == "ok"


def test_seccomp_filter_is_cached_and_well_formed():
    data = iso.seccomp_bpf()
    assert data is iso.seccomp_bpf() and len(data) % 8 == 0 and len(data) // 8 > len(iso.DENIED_SYSCALLS)
    fd = iso.seccomp_memfd()
    try:
        assert os.read(fd, len(data) + 1) == data
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------------------ uids
def test_concurrent_sandboxes_run_under_different_uids(problem, full):
    a, b = _session("whoami", sandbox=full), _session("whoami", sandbox=full)
    a.start(problem, [1], {})
    b.start(problem, [1], {})
    (ua, ga), (ub, gb) = _step(a)[0].tolist(), _step(b)[0].tolist()
    assert ua != ub and ua == ga and ub == gb
    pool = iso._pool()
    assert int(ua) in pool and int(ub) in pool
    assert iso.uid_held(int(ua)) and iso.uid_held(int(ub))
    jobs = [_job(a), _job(b)]
    assert [j[0] for j in jobs] == [int(ua), int(ub)]
    assert iso.uid_processes(int(ua)) and iso.uid_processes(int(ub))
    a.close()
    b.close()
    for uid, folders in jobs:
        _assert_nothing_left(uid, folders)


def test_spin_gate_closes_while_sandboxes_compete_for_the_cpus(problem, full):
    """Both ends of a channel busy-wait only while the machine's sandboxes leave a CPU to each spinning
    process (two per sandbox): with more, every round trip would wait for a time slice."""
    cpus = len(os.sched_getaffinity(0))
    a = _session("whoami", sandbox=full)
    a.start(problem, [1], {})
    _step(a)
    gate_a = a._sb._gate
    if cpus < 2:  # no busy-wait at all on one CPU: no gate
        assert gate_a is None
        a.close()
        return
    assert gate_a[0] == (2 <= cpus) and a._sb.chan.spin_gate is gate_a
    b = _session("whoami", sandbox=full)
    b.start(problem, [1], {})
    _step(b)
    time.sleep(3 * sb_mod.GATE_SECONDS)
    assert iso.sandboxes_running() == 2
    assert gate_a[0] == b._sb._gate[0] == (4 <= cpus)
    _step(a), _step(b)  # both still answer, whether they spin or sleep
    b.close()
    time.sleep(3 * sb_mod.GATE_SECONDS)
    assert gate_a[0] == (2 <= cpus)
    a.close()


def test_nothing_left_after_a_timeout_kill(problem, full):
    lim = dataclasses.replace(LIM, call_seconds=1.0)
    sess = _session("loop_act", lim, full)
    sess.start(problem, [1], {})
    uid, folders = _job(sess)
    assert all(os.path.isdir(f) for f in folders)
    _step(sess)
    with pytest.raises(SandboxError) as e:  # loops forever from the second act on
        sess.step(np.zeros((1, 1)), np.zeros(1), np.ones(1, bool))
    assert e.value.status == "timeout"
    sess.close()
    _assert_nothing_left(uid, folders)


def test_uid_pool_locks_across_processes(full):
    """A uid held by another process (its own flock) is never handed out here."""
    import subprocess
    import sys

    first = iso.acquire_uid()
    code = (
        "import sys\nfrom papergym.leaderboard.board import isolation as iso\n"
        "l = iso.acquire_uid(); print(l.uid, flush=True); sys.stdin.read(); l.release()"
    )
    other = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        theirs = int(other.stdout.readline())
        assert theirs != first.uid and iso.uid_held(theirs)
        mine = iso.acquire_uid()
        assert mine.uid not in (first.uid, theirs)
        mine.release()
    finally:
        other.communicate("")
    first.release()
    assert not iso.uid_held(first.uid) and not iso.uid_held(theirs)


# ------------------------------------------------------------------------------------- fail closed
def _patched(monkeypatch, **changes) -> iso.IsolationStatus:
    """The cached probe reports ``changes`` (the kernel is left alone); no process may start."""
    real = iso.isolation_status()
    fake = dataclasses.replace(real, **changes)
    monkeypatch.setattr(iso, "isolation_status", lambda: fake)

    def refuse(*a, **k):
        raise AssertionError("a sandbox process was started although the isolation is unavailable")

    monkeypatch.setattr(sb_mod.subprocess, "Popen", refuse)
    monkeypatch.setattr(iso, "JobCgroup", refuse)
    monkeypatch.setattr(iso, "acquire_uid", refuse)
    return fake


def test_full_refuses_when_a_piece_is_missing(problem, monkeypatch):
    _patched(
        monkeypatch,
        seccomp_ok=False,
        seccomp_reason="libseccomp missing (test)",
        cgroup_version=1,
        cgroup_controllers=("memory",),
        cgroup_reason="pids and cpu not mounted (test)",
    )
    for cls, attr in ((SandboxedAgentSession, "good_batched.py"), (SandboxedSolverSession, "solver_good.py")):
        with pytest.raises(SandboxUnavailable) as e:
            cls(SUB / attr, "Agent" if cls is SandboxedAgentSession else "Solver", sandbox="full")
        assert e.value.status == "error"
        assert "libseccomp missing (test)" in e.value.message and "pids and cpu not mounted" in e.value.message
    with pytest.raises(SandboxUnavailable, match="seccomp"):
        resolve_sandbox("full")
    # "auto" with bubblewrap but not every piece: "bwrap", with a warning naming what is missing
    with pytest.warns(SandboxWarning, match="libseccomp missing"):
        assert resolve_sandbox("auto") == "bwrap"


def test_auto_without_bubblewrap_refuses(problem, monkeypatch):
    _patched(monkeypatch, bwrap_ok=False, bwrap_reason="bwrap is not installed (test)")
    for mode in ("auto", "bwrap", "full"):
        with pytest.raises(SandboxUnavailable, match="bwrap is not installed") as e:
            _session("good_batched", sandbox=mode)
        assert e.value.status == "error"
    with pytest.raises(SandboxUnavailable, match="--unsafe-no-sandbox"):
        resolve_sandbox("auto")


def test_old_and_unknown_modes_are_refused():
    with pytest.raises(ValueError, match="renamed 'unsafe-rlimits'.*--unsafe-no-sandbox"):
        _session("good_batched", sandbox="rlimits")
    with pytest.raises(ValueError, match="must be one of"):
        _session("good_batched", sandbox="none")
    assert resolve_sandbox("unsafe-rlimits") == "unsafe-rlimits"


def test_submit_fails_closed_and_stores_nothing(tmp_path, monkeypatch):
    """The evaluator's submit refuses before anything runs or is stored (the attack was a submission run
    unisolated and stored ok)."""
    from papergym.leaderboard.board import evaluate as E
    from papergym.leaderboard.board.store import Store

    monkeypatch.setenv("PAPERGYM_DB", f"sqlite:///{tmp_path / 'board.db'}")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    _patched(monkeypatch, bwrap_ok=False, bwrap_reason="bwrap is not installed (test)")
    store = Store()
    try:
        with pytest.raises(SandboxUnavailable, match="--unsafe-no-sandbox"):
            E.submit(
                store,
                f"{SUB / 'good_batched.py'}:Agent",
                "NonStatLipschitz-v0",
                author="tester",
                secret="0123456789abcdef0123456789abcdef",
            )
        assert len(store.submissions()) == 0
    finally:
        store.close()


def test_status_reports_every_missing_piece():
    st = iso.IsolationStatus(False, "no bwrap", None, (), "no cgroup", False, "no seccomp", False, "not root")
    assert not st.full and not st.cgroup_ok
    assert st.missing() == [
        "bubblewrap: no bwrap",
        "cgroup (memory, pids, cpu; usable: none): no cgroup",
        "seccomp: no seccomp",
        "per-job uid: not root",
    ]
    ok = iso.IsolationStatus(True, "", 2, ("memory", "pids", "cpu"), "", True, "", True, "")
    assert ok.full and ok.missing() == []
    assert iso.isolation_status() is iso.isolation_status()  # probed once


def test_job_cgroup_limits_and_removal(full):
    """The limits written are the ones asked for, a process that joins is inside, and removal kills it
    and leaves no folder (either cgroup version)."""
    import subprocess
    import sys

    layout = iso.usable_layout(iso.isolation_status())
    job = iso.JobCgroup(layout, memory_bytes=300 << 20, tasks=7, cpus=0.5)
    try:
        f = job.folders
        if job.version == 2:
            assert Path(f["memory"], "memory.max").read_text().strip() == str(300 << 20)
            assert Path(f["cpu"], "cpu.max").read_text().split() == ["50000", "100000"]
        else:
            assert Path(f["memory"], "memory.limit_in_bytes").read_text().strip() == str(300 << 20)
            assert Path(f["cpu"], "cpu.cfs_quota_us").read_text().strip() == "50000"
        assert Path(f["pids"], "pids.max").read_text().strip() == "7"
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], preexec_fn=job.join)  # noqa: PLW1509 - joins between fork and exec, as the sandbox does
        deadline = time.monotonic() + 5
        while p.pid not in job.pids() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert job.pids() == {p.pid}
        reaper = threading.Thread(target=p.wait)
        reaper.start()
        assert job.kill_all()
        reaper.join(5)
        assert p.returncode == -9 and not job.oom_killed()
    finally:
        job.remove()
    assert not any(os.path.exists(x) for x in job.folders.values())


def test_folders_of_a_killed_evaluator_are_swept(full):
    """An evaluator killed before its clean-up leaves a job folder (maybe with a task): the next job
    created there kills the task and removes the folder."""
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a pid that no longer runs: the "killed evaluator"
    layout = iso.usable_layout(iso.isolation_status())
    stale = iso.JobCgroup(
        layout, memory_bytes=256 << 20, tasks=8, cpus=1.0, name=f"job-{iso._pid_ns()}-{dead.pid}-deadbeef"
    )
    orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], preexec_fn=stale.join)  # noqa: PLW1509
    folders = list(stale.folders.values())
    fresh = iso.JobCgroup(layout, memory_bytes=256 << 20, tasks=8, cpus=1.0)
    try:
        assert orphan.wait(10) == -9
        assert not any(os.path.exists(f) for f in folders)
        assert all(os.path.isdir(f) for f in fresh.folders.values())
    finally:
        fresh.remove()
        stale.remove()
