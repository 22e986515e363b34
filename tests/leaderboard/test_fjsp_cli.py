"""``papergym fjsp show | list | convert`` (leaderboard/fjsp_cli.py)."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from papergym.envs.scheduling.fjsp import sets as fjsp_sets
from papergym.envs.scheduling.fjsp.instance import Instance
from papergym.envs.scheduling.fjsp.parser import read_fjs, read_instance, write_fjs
from papergym.envs.scheduling.fjsp.sets import Reference, load_instance
from papergym.leaderboard import fjsp_cli
from papergym.leaderboard.cli import CLIError


def run(argv, capsys):
    """``papergym fjsp ARGV``: (exit status, stdout, stderr)."""
    code = fjsp_cli.main(list(map(str, argv)))
    out, err = capsys.readouterr()
    return code, out, err


def test_parser_and_run_fjsp_directly():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command")
    fjsp_cli.add_fjsp_parser(sub)
    args = p.parse_args(["fjsp", "show", "mk01", "--solver", "spt", "--seed", "3"])
    assert args.command == "fjsp" and args.fjsp_command == "show" and args.instance == "mk01"
    assert args.solver == "spt" and args.seed == 3 and args.time_limit == 10.0 and args.workers == 2
    with pytest.raises(CLIError, match="unknown instance"):
        fjsp_cli.run_fjsp(p.parse_args(["fjsp", "show", "no-such-instance"]))


def test_show_rule_with_gantt(tmp_path, capsys):
    code, out, err = run(["show", "mk01", "--solver", "mwkr", "--gantt", tmp_path / "tmp" / "x.png"], capsys)
    assert code == 0, err
    assert "instance    brandimarte/mk01" in out
    assert "10 jobs x 6 machines, 55 operations" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("makespan"))
    makespan = int(line.split()[1])
    assert makespan >= 40
    assert "gap" in out and "seconds" in out
    assert (tmp_path / "tmp" / "x.png").stat().st_size > 0 and (tmp_path / "tmp" / "x.svg").stat().st_size > 0
    assert str(tmp_path / "tmp" / "x.png") in out and "ERROR" not in out + err


def test_show_cpsat(capsys, needs):
    needs("ortools.sat.python.cp_model")
    code, out, err = run(["show", "brandimarte/mk01", "--time-limit", "20", "--workers", "2"], capsys)
    assert code == 0, err
    assert "makespan    40" in out and "status      optimal, CP-SAT bound 40" in out
    assert "+0.00 % vs UB 40" in out and "OR-Tools" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["show", "no-such-instance"], "unknown instance 'no-such-instance'"),
        (["show", "brandimarte/mk99"], "has no member 'mk99'"),
        (["show", "nosuchset/x"], "unknown instance set"),
        (["show", "mk01", "--solver", "simplex"], "unknown solver 'simplex'"),
        (["show", "missing/file.fjs"], "does not exist"),
    ],
)
def test_bad_input_exits_2(argv, message, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2
    assert message in err and err.startswith("papergym: error:")


def test_unreadable_file_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.fjs"
    bad.write_text("2 2\n1 1 1 x\n1 1 2 3\n")
    code, _, err = run(["show", bad, "--solver", "fifo"], capsys)
    assert code == 2 and "cannot read" in err and "line 2" in err and err.count(str(bad)) == 1
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    code, _, err = run(["convert", binary, tmp_path / "out.fjs"], capsys)
    assert code == 2 and "cannot read" in err


def test_ambiguous_member(monkeypatch, capsys):
    def fake(name):
        inst = Instance(np.array([1]), np.array([[1, 2]]), name=f"{name}/la01")
        return [inst]

    monkeypatch.setattr(fjsp_sets, "load_set", fake)
    code, _, err = run(["show", "la01", "--solver", "fifo"], capsys)
    assert code == 2 and "ambiguous" in err
    for s in ("hurink-edata/la01", "hurink-rdata/la01", "hurink-vdata/la01"):
        assert s in err


def test_real_la01_is_ambiguous_between_the_shipped_hurink_sets(capsys):
    for s in ("hurink-edata", "hurink-rdata", "hurink-vdata"):
        assert len(fjsp_sets.load_set(s)) == 40
    code, _, err = run(["show", "la01", "--solver", "fifo"], capsys)
    assert code == 2 and "ambiguous" in err


def test_makespan_below_a_proven_bound_is_an_error(monkeypatch, capsys):
    fake = Reference(lb=1000, ub=1000, optimal=True, source="test", alt={})
    monkeypatch.setattr(fjsp_sets, "reference", lambda name: fake)
    code, out, err = run(["show", "mk01", "--solver", "mwkr"], capsys)
    assert code == 1
    assert "ERROR: makespan" in err and "below the reference LB (test) 1000" in err


def test_file_without_reference(tmp_path, capsys):
    path = tmp_path / "mine.fjs"
    write_fjs(load_instance("brandimarte/mk01"), path)
    code, out, _ = run(["show", path, "--solver", "spt"], capsys)
    assert code == 0
    assert "reference   none" in out and "n/a (no reference)" in out


def test_convert_round_trips(tmp_path, capsys):
    orig = load_instance("brandimarte/mk03")
    code, out, err = run(["convert", "brandimarte/mk03", tmp_path / "a" / "mk03.fjs"], capsys)
    assert code == 0, err
    assert read_fjs(tmp_path / "a" / "mk03.fjs") == orig
    # a 0-based SchedulingLab-style .txt (two-token header)
    lines = [f"{orig.n_jobs} {orig.n_machines}"]
    for j in range(orig.n_jobs):
        toks = [str(int(orig.job_ops[j]))]
        for o in orig.ops_of(j):
            ks = np.flatnonzero(orig.proc[o] > 0)
            toks.append(str(len(ks)))
            for k in ks:
                toks += [str(int(k)), str(int(orig.proc[o, k]))]
        lines.append(" ".join(toks))
    txt = tmp_path / "mk03.txt"
    txt.write_text("\n".join(lines) + "\n")
    code, _, err = run(["convert", txt, tmp_path / "from_txt.fjs"], capsys)
    assert code == 0, err
    assert read_fjs(tmp_path / "from_txt.fjs") == orig == read_instance(txt)
    # the same text named .fjs needs --zero-based
    zero = tmp_path / "zero.fjs"
    zero.write_text(txt.read_text())
    code, _, _ = run(["convert", zero, tmp_path / "z.fjs", "--zero-based"], capsys)
    assert code == 0 and read_fjs(tmp_path / "z.fjs") == orig
    # SchedulingLab .json
    js = tmp_path / "mk03.json"
    js.write_text(
        json.dumps(
            {
                "machines": orig.n_machines,
                "jobs": [
                    [
                        [
                            {"machine": int(k), "processing": int(orig.proc[o, k])}
                            for k in np.flatnonzero(orig.proc[o] > 0)
                        ]
                        for o in orig.ops_of(j)
                    ]
                    for j in range(orig.n_jobs)
                ],
            }
        )
    )
    code, _, err = run(["convert", js, tmp_path / "from_json.fjs"], capsys)
    assert code == 0, err
    assert read_fjs(tmp_path / "from_json.fjs") == orig
    code, _, err = run(["convert", "mk03", tmp_path], capsys)
    assert code == 2 and "is a folder" in err


def test_list(capsys):
    code, out, _ = run(["list"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["set", "instances"]
    bm = next(ln for ln in lines if ln.startswith("brandimarte "))
    assert " 10 " in bm and "mk01..mk10" in bm
    assert any(ln.startswith("sd2-10x5 ") and " 100 " in ln for ln in lines)


def test_wired_into_papergym_main(capsys):
    from papergym.leaderboard import cli

    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert "fjsp" in sub.choices
    assert cli.main(["fjsp", "show", "mk01", "--solver", "mwkr"]) == 0
    assert "makespan" in capsys.readouterr().out
    assert cli.main(["fjsp", "show", "no-such-instance"]) == 2
    assert "unknown instance" in capsys.readouterr().err
