"""The papergym command: clear errors (exit 2, nothing written) and an end-to-end comparison."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from papergym.leaderboard.cli import main

ENV = "NonStatLipschitz-v0"


def _exit_code(argv):
    """main()'s return value, or the status of the SystemExit argparse raises."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize(
    "argv,expect",
    [
        (["compare", "NoSuch-v0"], ["unknown environment", "NonStatLipschitz-v0"]),
        (["compare", ENV, "--agents", "mdbe,ucb"], ["--agents", "'ucb'", "binning-ucb", "zooming"]),
        (["compare", ENV, "--instance", "three-peaks"], ["three-peaks", "two-peak-cyclic", "piecewise-tents"]),
        (["compare", ENV, "--seeds", "abc"], ["--seeds"]),
        (["compare", ENV, "--seeds", "0"], ["--seeds"]),
        (["compare", ENV, "--horizon", "0"], ["--horizon"]),
        (["compare", ENV, "--horizon", "ten"], ["--horizon"]),
        (["compare", ENV, "--backend", "spark"], ["--backend", "serial", "joblib", "dask"]),
        (["compare", ENV, "--phasez", "3"], ["phasez"]),
        (["compare", ENV, "--noise", "laplace"], ["noise", "bernoulli", "gaussian"]),
        (["compare", ENV, "--hp", "mdbe.c00=1"], ["c00", "c0"]),
        (["compare", ENV, "--hp", "c0=1"], ["--hp"]),
        (["compare", ENV, "--hp", "mdbe.c0=-1"], ["'mdbe'", "c0"]),  # a bad value: refused before any run
        (["compare", ENV, "--m", "3"], ["m"]),  # not an abbreviation of --mode: an unknown env argument
        (["compare", ENV, "--scheduler", "tcp://x:1"], ["--backend dask"]),
        (["frobnicate"], ["invalid choice", "compare"]),
        (["compare", "FJSP-v0", "--path", "/nonexistent/instance.fjs"], ["No such file", "instance.fjs"]),
    ],
)
def test_bad_values_exit_2_naming_them_and_write_nothing(argv, expect, tmp_path, capsys):
    out = tmp_path / "out"
    cache = tmp_path / "cache"
    if argv[0] == "compare":
        argv = [*argv, "--out", str(out), "--cache-dir", str(cache)]
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    for e in expect:
        assert e in err, (e, err)
    assert not out.exists() and not cache.exists()


def test_compare_end_to_end(tmp_path, capsys):
    out = tmp_path / "res"
    code = main(
        [
            "compare",
            ENV,
            "--horizon",
            "300",
            "--seeds",
            "3",
            "--agents",
            "mdbe,binning-ucb,binning-ucb-oracle",
            "--backend",
            "serial",
            "--out",
            str(out),
            "--cache-dir",
            str(tmp_path / "c"),
            "--quiet",
            "--instance",
            "piecewise-tents",
            "--phases",
            "3",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "mdbe" in text and "binning-ucb-oracle (oracle)" in text and str(out) in text
    assert "phases=3" in text and "instance=piecewise-tents" in text
    s = pd.read_csv(out / "summary.csv")
    assert set(s.agent) == {"mdbe", "binning-ucb", "binning-ucb-oracle"}
    assert (s.n_ok == 3).all()
    for f in ("regret.png", "regret.svg", "runs.parquet", "curves.parquet", "table.txt"):
        assert (out / f).exists()


def test_console_script_list_and_compare(tmp_path):
    exe = shutil.which("papergym")
    cmd = [exe] if exe else [sys.executable, "-m", "papergym.leaderboard.cli"]
    env = {**os.environ, "PAPERGYM_CACHE": str(tmp_path / "c")}
    r = subprocess.run([*cmd, "list"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0
    assert "NonStatLipschitz-v0" in r.stdout and "mdbe" in r.stdout and "oracle" in r.stdout
    r = subprocess.run(
        [
            *cmd,
            "compare",
            ENV,
            "--horizon",
            "100",
            "--seeds",
            "2",
            "--agents",
            "uniform-random",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "o" / "regret.png").exists()
    r = subprocess.run([*cmd, "compare", "Nope-v0"], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert r.returncode == 2 and "valid environments" in r.stderr and r.stdout == ""
    assert not (tmp_path / "papergym-out").exists()


def test_version_flag_prints_the_installed_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"papergym {version('papergym')}"


def test_an_output_folder_that_cannot_be_created_exits_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    argv = [
        "compare",
        ENV,
        "--agents",
        "uniform-random",
        "--seeds",
        "1",
        "--horizon",
        "50",
        "--out",
        str(blocker / "out"),
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    assert _exit_code(argv) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert not (tmp_path / "cache").exists()


def _readme_agent_block() -> str:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "getting-started.md").read_text()
    sec = text[text.index("## Writing an agent") :]
    start = sec.index("```python") + len("```python")
    return sec[start : sec.index("```", start)]


def test_readme_agent_recipe_runs_verbatim_on_the_default_backend(tmp_path):
    """The README's block, pasted into a script and run as is: the user's agent runs in joblib workers."""
    (tmp_path / "mine.py").write_text(_readme_agent_block())
    env = {**os.environ, "PAPERGYM_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "mine.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if line.startswith(("grid-ucb", "binning-ucb"))}
    assert rows["grid-ucb"].split()[-1] == "8/8" and rows["binning-ucb"].split()[-1] == "8/8"
    assert "failed" not in proc.stderr
    runs = pd.read_parquet(tmp_path / "results" / "mine" / "runs.parquet")
    grid = runs[runs.agent == "grid-ucb"]
    assert len(grid) == 8 and (grid.status == "ok").all() and np.isfinite(grid.final_regret).all()


def test_agents_from_files_run_and_a_failing_agent_exits_1(tmp_path, capsys):
    block = _readme_agent_block()
    (tmp_path / "good.py").write_text(
        "import numpy as np\n\n" + block[block.index("class GridUCB") : block.index('register_agent("grid-ucb"')]
    )
    (tmp_path / "bad.py").write_text(
        "class Broken:\n    def __init__(self, problem, *, seed=None):\n        pass\n"
        "    def act(self, observation):\n        raise RuntimeError('broken on purpose')\n"
        "    def update(self, action, reward, observation):\n        pass\n"
    )
    base = ["compare", ENV, "--seeds", "3", "--horizon", "500", "--n-jobs", "2", "--cache-dir", str(tmp_path / "c")]
    assert main([*base, "--agents", f"{tmp_path / 'good.py'}:GridUCB", "--out", str(tmp_path / "o1")]) == 0
    assert "file-good-griducb" in capsys.readouterr().out
    assert main([*base, "--agents", f"{tmp_path / 'bad.py'}:Broken,uniform-random", "--out", str(tmp_path / "o2")]) == 1
    assert "broken on purpose" in capsys.readouterr().err
    for bad, msg in (
        (f"{tmp_path / 'none.py'}:X", "no such file"),
        (f"{tmp_path / 'good.py'}:Nope", "no callable"),
        (f"{tmp_path / 'good.txt'}:X", "FILE.py:ATTR"),
    ):
        assert _exit_code([*base, "--agents", bad, "--out", str(tmp_path / "o3")]) == 2
        assert msg in capsys.readouterr().err


def test_ctrl_c_ends_with_one_line_saying_how_to_resume(monkeypatch, capsys):
    import papergym.leaderboard.commands.compare as cli_compare

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_compare, "cmd_compare", interrupted)
    assert main(["compare", ENV]) == 130
    err = capsys.readouterr().err.strip()
    assert err == "papergym: interrupted; finished runs are cached: run the same command again to resume"


def test_a_typo_in_file_attr_is_refused_before_anything_is_evaluated(tmp_path, capsys):
    from papergym.leaderboard.board.sandbox import top_level_names

    sub = tmp_path / "agent.py"
    sub.write_text("import numpy as np\n\nclass MyAgent:\n    pass\n\nif True:\n    make = MyAgent\n")
    db = tmp_path / "b.db"
    argv = ["submit", f"{sub}:MyAgnet", "--to", ENV, "--db", f"sqlite:///{db}"]
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert "no top-level name 'MyAgnet'" in err and "MyAgent" in err and "nothing was evaluated" in err
    assert not db.exists()
    assert top_level_names(sub.read_bytes()) == {"np", "MyAgent", "make"}
    assert top_level_names(b"from x import *\n") is None  # not knowable statically: the child decides
    assert top_level_names(b"globals()['a'] = 1\n") is None
