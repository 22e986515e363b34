"""Every script in ``benchmarks/`` runs end to end in its ``--smoke`` mode (docs/benchmarks.md).

The scripts are found by glob, so a new script without ``--smoke`` fails here. Each runs as
``python benchmarks/X.py --smoke`` in a fresh process with a timeout and must exit 0 and print its table
(non-empty stdout). Its temporary files, the cell cache (``PAPERGYM_CACHE``) and the XDG folders point into
this test's temporary folder, and the shipped files the tools can rewrite (weights, reference tables) must be
byte-identical afterwards: ``--smoke`` never overwrites them.

The scripts of the selected tests are started together when the first of them runs, two at a time (most of
them spend part of their time waiting: subprocesses, the sandbox, a local service), the longest first; each
test then waits for its own script. Scripts whose optional dependency is missing are not started, and their
test skips (fails under ``CI=true``, :func:`papergym_tests.require`).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from papergym_tests import IN_CI, require

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_"))
TIMEOUT = 240  # seconds per script (the slowest takes about 40 s on a quiet 2-core machine)

#: optional modules a script needs, with the extra that installs them
NEEDS: dict[str, list[tuple[str, str]]] = {
    "bench_bilevel.py": [("networkx", "bilevel")],
    "bench_fjsp.py": [("ortools", "fjsp")],
    "bench_learning_dynamics.py": [("torch", "torch")],
    "bench_learning_systems.py": [("torch", "torch")],
    "bench_mistar.py": [("torch", "torch")],
    "bench_ph.py": [("gudhi", "tda")],
    "bench_sandbox.py": [("httpx", "board"), ("uvicorn", "board"), ("fastapi", "board")],
    "fjsp_references.py": [("ortools", "fjsp")],
    "mistar_card.py": [("torch", "torch")],
    "train_arith_policy.py": [("torch", "torch")],
    "train_continual_backbone.py": [("torch", "torch")],
    "train_preference_ref.py": [("torch", "torch")],
}

#: seconds of a smoke run on a quiet 2-core machine; those of 8 s or more are marked slow
SECONDS: dict[str, float] = {
    "bench_sandbox.py": 40,
    "bench_learning_dynamics.py": 30,
    "bench_learning_systems.py": 20,
    "bench_mdbe_adaptivity.py": 14,
    "mistar_card.py": 20,
    "train_continual_backbone.py": 14,
    "bench_ph.py": 11,
    "bench_fjsp.py": 10,
    "train_preference_ref.py": 10,
    "train_arith_policy.py": 9,
    "bench_bilevel.py": 9,
    "bench_optimizers.py": 9,
    "bench_ode.py": 8,
    "bench_fjsp_start.py": 8,
    "bench_mistar.py": 7,
}

#: shipped files a tool rewrites without --smoke; a smoke run must leave them as they are
SHIPPED = {
    "calibrate_mdbe.py": ["agents/bandits/mdbe_calibration_table.py"],
    "fjsp_references.py": ["envs/scheduling/fjsp/data/references.json"],
    "mistar_card.py": ["agents/scheduling/mistar/weights/sd2-10x5.card.json"],
    "train_arith_policy.py": ["envs/tasks/data_selection/weights/arith_policy.npz"],
    "train_continual_backbone.py": ["envs/tasks/continual_domains/weights/continual_backbone.npz"],
    "train_preference_ref.py": [
        "envs/tasks/preference/weights/preference_ref.npz",
        "envs/tasks/preference/weights/preference_ref_o24.npz",
    ],
}


def _bubblewrap() -> tuple[bool, str]:
    from papergym.leaderboard.board.sandbox import bwrap_available

    return bwrap_available()


def _available(script: str) -> bool:
    import importlib.util

    if any(importlib.util.find_spec(m) is None for m, _ in NEEDS.get(script, [])):
        return False
    return script != "bench_sandbox.py" or _bubblewrap()[0]


def _digest(rel: str) -> str | None:
    p = ROOT / rel
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None


def _run(script: str, tmp: Path) -> subprocess.CompletedProcess | str:
    work = tmp / script.removesuffix(".py")
    for sub in ("tmp", "cache", "xdg-cache", "xdg-data", "xdg-config"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "TMPDIR": str(work / "tmp"),
        "PAPERGYM_CACHE": str(work / "cache"),
        "XDG_CACHE_HOME": str(work / "xdg-cache"),
        "XDG_DATA_HOME": str(work / "xdg-data"),
        "XDG_CONFIG_HOME": str(work / "xdg-config"),
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1",
        "PYTHONUNBUFFERED": "1",
    }
    try:
        return subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / script), "--smoke"],
            check=False,
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return f"timed out after {TIMEOUT} s; stdout so far:\n{out[-3000:]}"


class _Runs:
    """The smoke runs of the selected tests' scripts, two at a time, longest first."""

    def __init__(self, scripts: list[str], tmp: Path):
        self.tmp = tmp
        self.before = {rel: _digest(rel) for rels in SHIPPED.values() for rel in rels}
        self.pool = ThreadPoolExecutor(max_workers=2)
        order = sorted((s for s in scripts if _available(s)), key=lambda s: -SECONDS.get(s, 1.0))
        self.futures: dict[str, Future] = {s: self.pool.submit(_run, s, tmp) for s in order}

    def result(self, script: str) -> subprocess.CompletedProcess | str:
        if script not in self.futures:
            self.futures[script] = self.pool.submit(_run, script, self.tmp)
        return self.futures[script].result()


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory):
    mine = [
        item.callspec.params["script"]
        for item in request.session.items
        if item.module is sys.modules[__name__] and hasattr(item, "callspec") and "script" in item.callspec.params
    ]
    r = _Runs(mine, tmp_path_factory.mktemp("bench-smoke"))
    yield r
    r.pool.shutdown(wait=True, cancel_futures=True)


def test_scripts_found():
    assert len(SCRIPTS) >= 20, SCRIPTS
    assert {"bench_bandits.py", "bench_optimizers.py", "train_arith_policy.py"} <= set(SCRIPTS)
    for name in (*NEEDS, *SECONDS, *SHIPPED):
        assert name in SCRIPTS, f"{name} is listed here but not in benchmarks/"


@pytest.mark.parametrize(
    "script", [pytest.param(s, marks=[pytest.mark.slow] if SECONDS.get(s, 0) >= 8 else []) for s in SCRIPTS]
)
def test_smoke(script, runs):
    for module, extra in NEEDS.get(script, []):
        require(module, extra)
    if script == "bench_sandbox.py":
        ok, why = _bubblewrap()
        if not ok:
            if IN_CI:
                pytest.fail(f"bubblewrap must work in CI: {why}")
            pytest.skip(f"bubblewrap unavailable: {why}")
    r = runs.result(script)
    assert not isinstance(r, str), f"{script} --smoke {r}"
    assert r.returncode == 0, f"{script} --smoke exited {r.returncode}:\n{r.stderr[-4000:]}"
    assert r.stdout.strip(), f"{script} --smoke printed nothing:\n{r.stderr[-2000:]}"
    for rel in SHIPPED.get(script, []):
        assert _digest(rel) == runs.before[rel], f"{script} --smoke rewrote the shipped {rel}"
