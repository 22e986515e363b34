"""No worker process outlives a ``kill -9``-ed ``papergym compare`` (loky pool, dask LocalCluster)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from papergym_tests import require

ENV = "NonStatLipschitz-v0"
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> list[str] | None:
    """Fields of ``/proc/<pid>/stat`` after the command name (state, ppid, ...), or None when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return text[text.rindex(")") + 2 :].split()


def _descendants(root: int) -> set[int]:
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and (st := _stat(int(d.name))) is not None:
            kids.setdefault(int(st[1]), []).append(int(d.name))
    out, todo = set(), [root]
    while todo:
        for k in kids.get(todo.pop(), []):
            if k not in out:
                out.add(k)
                todo.append(k)
    return out


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _cpu_seconds(pid: int) -> float:
    st = _stat(pid)
    return 0.0 if st is None else int(st[11]) / TICK  # utime


def _gone(pid: int) -> bool:
    st = _stat(pid)
    return st is None or st[0] == "Z"  # a zombie: reparented, not yet reaped


def _kill_and_check(tmp_path, backend: str, is_worker) -> None:
    """Start a busy 2-worker comparison, wait for its workers, ``kill -9`` it, check nothing is left."""
    cmd = [
        sys.executable,
        "-m",
        "papergym.leaderboard.cli",
        "compare",
        ENV,
        "--agents",
        "uniform-random,binning-ucb",
        "--seeds",
        "2",
        "--horizon",
        "100000000",
        "--backend",
        backend,
        "--n-jobs",
        "2",
        "--quiet",
        "--out",
        str(tmp_path / "out"),
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    descendants: dict[int, list[str]] = {}
    try:
        deadline = time.monotonic() + 240
        busy: list[int] = []
        while time.monotonic() < deadline and proc.poll() is None:
            for pid in _descendants(proc.pid):
                descendants.setdefault(pid, _cmdline(pid))
            # workers running a job, not just starting
            workers = [pid for pid, argv in descendants.items() if is_worker(argv) and _cpu_seconds(pid) > 0.5]
            if len(workers) >= 2:
                busy = workers
                break
            time.sleep(0.5)
        assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
        assert len(busy) >= 2, f"workers never got busy: {list(descendants.values())}"
        for pid in _descendants(proc.pid):
            descendants.setdefault(pid, _cmdline(pid))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not all(_gone(pid) for pid in descendants):
            time.sleep(0.2)
        left = {pid: argv for pid, argv in descendants.items() if not _gone(pid)}
        assert not left, f"processes outlived the killed comparison: {left}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid, argv in descendants.items():  # never leave a stray worker behind, even when the test fails
            if not _gone(pid) and _cmdline(pid) == argv:  # still that process, not a reused pid
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from /proc")
def test_loky_workers_die_with_a_killed_compare(tmp_path):
    _kill_and_check(
        tmp_path, "joblib", lambda argv: any("loky" in a for a in argv) and "resource_tracker" not in " ".join(argv)
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from /proc")
def test_dask_local_cluster_workers_die_with_a_killed_compare(tmp_path):
    require("distributed", "dask")
    _kill_and_check(
        tmp_path,
        "dask",
        lambda argv: (
            any("multiprocessing" in a or "spawn_main" in a for a in argv) and "resource_tracker" not in " ".join(argv)
        ),
    )
