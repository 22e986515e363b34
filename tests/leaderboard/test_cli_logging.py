"""The ``papergym`` command's logging (-v, -vv, -q), version, progress lines off a terminal, ``bench --solvers
FILE.py:ATTR`` on the default backend, and failures (exit 1, ``--allow-failures`` exit 0)."""

from __future__ import annotations

import importlib.metadata
import logging

import pytest

import papergym
from papergym.leaderboard.cli import main
from papergym.leaderboard.runner.progress import RunProgress, format_duration

ENV = "NonStatLipschitz-v0"
TASK = "LowRankRecovery-v0"
INSTANCE = "sensing/kappa=1/r=3/s0"


def _compare(tmp_path, *flags, run_flags=()):
    return main(
        [
            *flags,
            "compare",
            ENV,
            "--agents",
            "uniform-random",
            "--seeds",
            "2",
            "--horizon",
            "200",
            "--backend",
            "serial",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-cache",
            "--out",
            str(tmp_path / "out"),
            *run_flags,
        ]
    )


def test_version_attribute_matches_the_distribution_and_the_command(capsys):
    assert papergym.__version__ == importlib.metadata.version("papergym")
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"papergym {papergym.__version__}"


def test_progress_lines_off_a_terminal_and_the_total_wall_time(tmp_path, capsys):
    # per-run Gymnasium loops: slow enough for a few 10 ms ticks
    assert _compare(tmp_path, run_flags=("--progress-every", "0.01", "--mode", "per-run", "--horizon", "2000")) == 0
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.startswith(f"compare {ENV}: ")]
    assert lines, err
    assert all(" runs done (" in ln and " failed), " in ln and " elapsed" in ln for ln in lines)
    assert not any("3/2 runs" in ln for ln in lines)
    assert "\x1b" not in err and "\r" not in err  # no bar: stderr is not a terminal here
    assert "wall in all" in out.splitlines()[-1]


def test_quiet_flag_silences_progress_and_info(tmp_path, capsys):
    assert _compare(tmp_path, "-q", run_flags=("--progress-every", "0.01")) == 0
    out, err = capsys.readouterr()
    assert "runs done" not in err and "to compute" not in err
    assert "uniform-random" in out  # results still print


def test_verbose_flag_shows_info_lines(tmp_path, capsys):
    assert _compare(tmp_path, "-v", run_flags=("--progress-every", "0")) == 0
    err = capsys.readouterr().err
    assert f"compare {ENV}: 2 of 2 runs to compute" in err
    assert "runs done" not in err  # --progress-every 0: no progress lines
    assert _compare(tmp_path, run_flags=("--progress-every", "0")) == 0
    assert "to compute" not in capsys.readouterr().err  # INFO is hidden by default
    # the command's handler is gone after main(): a library does not keep the CLI's logging configuration
    assert not logging.getLogger("papergym").handlers


def test_bad_flags_exit_2(tmp_path, capsys):
    assert _compare(tmp_path, run_flags=("--progress-every", "-1")) == 2
    assert "--progress-every" in capsys.readouterr().err
    assert _compare(tmp_path, "-q", "-v") == 2
    assert "-q and -v" in capsys.readouterr().err


def test_run_progress_eta_and_durations():
    assert format_duration(4.3) == "4s" and format_duration(75.2) == "1m15s" and format_duration(3725) == "1h02m05s"
    p = RunProgress(120, "compare X", enabled=False)
    p.update(37, failed=2)
    line = p.line()
    assert line.startswith("compare X: 37/120 runs done (2 failed), ") and "left" in line
    p.close()
    with pytest.raises(ValueError, match="seconds"):
        RunProgress(1, "x", every=-1)


SOLVER_FILE = '''\
from papergym.agents.solvers.radagrad import RiemannianLowRank


class Mine(RiemannianLowRank):
    """Riemannian gradient descent (identity metric), defined outside papergym's packages"""


def make(*, seed=None, **hp):
    return Mine(seed=seed, metric="identity", **hp)


class Broken:
    def __init__(self, *, seed=None):
        pass

    def solve(self, problem, budget, report):
        raise RuntimeError("broken on purpose")
'''


def test_bench_solvers_from_a_file_on_the_default_backend_and_failures(tmp_path, capsys):
    (tmp_path / "mysolver.py").write_text(SOLVER_FILE)
    base = ["bench", TASK, "--instances", INSTANCE, "--cache-dir", str(tmp_path / "c"), "--out", str(tmp_path / "o")]
    # default backend (joblib worker processes): the file's classes reach the workers by value; a mixed list
    rc = main(
        [*base, "--solvers", f"rgd,{tmp_path / 'mysolver.py'}:make,{tmp_path / 'mysolver.py'}:Broken", "--n-jobs", "2"]
    )
    out, err = capsys.readouterr()
    assert rc == 1, err
    rows = {ln.split()[0]: ln.split() for ln in out.splitlines() if ln.startswith(("rgd ", "file-mysolver"))}
    assert rows["file-mysolver-make"][1:3] == rows["rgd"][1:3]  # same method, same score
    assert "1 solve(s) failed" in err and "file-mysolver-broken: 1 failed" in err and "broken on purpose" in err
    # --allow-failures: reported, exit 0 (the ok cells come from the cache)
    rc = main([*base, "--solvers", f"rgd,{tmp_path / 'mysolver.py'}:Broken", "--backend", "serial", "--allow-failures"])
    err = capsys.readouterr().err
    assert rc == 0 and "broken on purpose" in err and "--allow-failures" in err
    for bad, msg in (
        (f"{tmp_path / 'none.py'}:X", "no such file"),
        (f"{tmp_path / 'mysolver.py'}:Nope", "no callable"),
    ):
        assert main([*base, "--solvers", bad]) == 2
        assert msg in capsys.readouterr().err
