"""The regret-comparison runner: determinism across backends and modes, caching, resume, failures."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from papergym.agents.base import list_agents, register_agent
from papergym.leaderboard.runner import compare as runner
from papergym.leaderboard.runner.compare import Cell, cell_key, checkpoints, compare

ENV = "NonStatLipschitz-v0"
ALL_AGENTS = [a.name for a in list_agents(ENV)]


def _curves(res):
    return res.curves.sort_values(["agent", "seed", "t"]).reset_index(drop=True)


class _Failing:
    def __init__(self, problem, *, seed=None):
        self.n = 0

    def act(self, obs):
        self.n += 1
        if self.n > 5:
            raise RuntimeError("agent exploded at round 6")
        return np.array([0.5])

    def update(self, action, reward, obs):
        pass


class _Illegal(_Failing):
    def act(self, obs):
        return np.array([1.5])


@pytest.fixture
def broken_agents():
    """Two misbehaving agents, registered for one test only."""
    from papergym.agents import base

    register_agent("test-failing", _Failing, envs=[ENV], role="baseline")
    register_agent("test-illegal", _Illegal, envs=[ENV], role="baseline")
    yield
    base._REGISTRY.pop("test-failing")
    base._REGISTRY.pop("test-illegal")


def test_checkpoints_log_and_linear_and_end_at_T():
    ck = checkpoints(1000)
    assert ck[0] == 1 and ck[-1] == 1000 and np.all(np.diff(ck) > 0)
    assert {10, 100, 500, 990} <= set(ck.tolist())


def test_cell_key_is_canonical_and_order_independent():
    a = Cell(ENV, "h", {"instance": "x", "horizon": 5}, "mdbe", "c", {"c0": 0.4, "start_grid": "all"}, 3)
    b = Cell(ENV, "h", {"horizon": 5, "instance": "x"}, "mdbe", "c", {"start_grid": "all", "c0": 0.4}, 3)
    assert cell_key(a) == cell_key(b)
    assert cell_key(a) == cell_key(
        Cell(
            ENV,
            "h",
            {"horizon": np.int64(5), "instance": "x"},
            "mdbe",
            "c",
            {"c0": np.float64(0.4), "start_grid": "all"},
            3,
        )
    )
    for other in (
        Cell(ENV, "h", {"instance": "x", "horizon": 5}, "mdbe", "c", {"c0": 0.4, "start_grid": "all"}, 4),
        Cell(ENV, "h", {"instance": "x", "horizon": 6}, "mdbe", "c", {"c0": 0.4, "start_grid": "all"}, 3),
        Cell(ENV, "h", {"instance": "x", "horizon": 5}, "mdbe", "c2", {"c0": 0.4, "start_grid": "all"}, 3),
        Cell(ENV, "h", {"instance": "x", "horizon": 5}, "mdbe", "c", {"c0": 0.41, "start_grid": "all"}, 3),
    ):
        assert cell_key(other) != cell_key(a)


def test_defaults_fill_the_key(tmp_path):
    # the same env spelled with and without its default kwargs is the same cell
    r1 = compare(ENV, ["uniform-random"], [0], horizon=64, backend="serial", out=tmp_path)
    r2 = compare(
        ENV,
        ["uniform-random"],
        [0],
        horizon=64,
        env_kwargs={"instance": "two-peak-cyclic"},
        backend="serial",
        out=tmp_path,
    )
    assert r1.runs.key.tolist() == r2.runs.key.tolist()


def test_every_agent_runs_batched_and_per_run_with_identical_results(tmp_path):
    kw = dict(horizon=300, seeds=[0, 1], backend="serial", cache=False)
    b = compare(ENV, ALL_AGENTS, mode="batched", out=tmp_path / "b", **kw)
    p = compare(ENV, ALL_AGENTS, mode="per-run", out=tmp_path / "p", **kw)
    assert (b.runs.status == "ok").all(), b.errors
    assert (p.runs.status == "ok").all(), p.errors
    pd.testing.assert_frame_equal(_curves(b), _curves(p), check_exact=True)
    # regret is non-negative: cumulative curves never decrease
    for _, g in b.curves.groupby(["agent", "seed"]):
        assert np.all(np.diff(g.cum_regret.to_numpy()) >= 0) and g.cum_regret.iloc[0] >= 0


def test_batching_does_not_change_a_run(tmp_path):
    one = compare(
        ENV,
        ["mdbe", "exp3s"],
        [0, 1, 2, 3],
        horizon=400,
        backend="serial",
        batch_size=1,
        out=tmp_path / "a",
        cache=False,
    )
    four = compare(
        ENV,
        ["mdbe", "exp3s"],
        [0, 1, 2, 3],
        horizon=400,
        backend="serial",
        batch_size=4,
        out=tmp_path / "b",
        cache=False,
    )
    pd.testing.assert_frame_equal(_curves(one), _curves(four), check_exact=True)


def test_backends_agree_bit_for_bit(tmp_path, needs):
    needs("distributed")
    kw = dict(
        agents=["mdbe", "binning-ucb", "uniform-random"],
        seeds=[0, 1, 2],
        horizon=500,
        env_kwargs={"instance": "piecewise-tents"},
        cache=False,
        n_jobs=2,
    )
    res = {b: compare(ENV, backend=b, out=tmp_path / b, **kw) for b in ("serial", "joblib", "dask")}
    for b in ("joblib", "dask"):
        pd.testing.assert_frame_equal(_curves(res["serial"]), _curves(res[b]), check_exact=True)
        assert res[b].runs.key.tolist() == res["serial"].runs.key.tolist()


def test_cache_and_resume_after_interruption(tmp_path, monkeypatch):
    calls = []
    real = runner.run_cells

    def counting(env_id, kwargs, agent, hp, seeds, mode):
        calls.append((agent, tuple(seeds)))
        if len(calls) == 2 and interrupt:
            raise KeyboardInterrupt  # the user pressed Ctrl-C during the second job
        return real(env_id, kwargs, agent, hp, seeds, mode)

    monkeypatch.setattr(runner, "run_cells", counting)
    kw = dict(
        agents=["binning-ucb", "uniform-random"],
        seeds=[0, 1, 2],
        horizon=200,
        backend="serial",
        out=tmp_path,
        batch_size=3,
    )
    interrupt = True
    with pytest.raises(KeyboardInterrupt):
        compare(ENV, **kw)
    files = sorted(tmp_path.rglob("*.parquet"))
    assert len(files) == 3 and not list(tmp_path.rglob(".tmp-*"))  # the first job's cells, no partial file
    interrupt = False
    calls.clear()
    res = compare(ENV, **kw)
    assert calls == [("uniform-random", (0, 1, 2))]  # only the missing cells ran
    calls.clear()
    again = compare(ENV, **kw)
    assert calls == []  # everything cached
    pd.testing.assert_frame_equal(_curves(res), _curves(again), check_exact=True)
    fresh = compare(ENV, **{**kw, "out": tmp_path / "fresh"})
    pd.testing.assert_frame_equal(_curves(res), _curves(fresh), check_exact=True)
    # a corrupt cell file is recomputed, not trusted
    files[0].write_bytes(b"not parquet")
    calls.clear()
    compare(ENV, **kw)
    assert len(calls) == 1


def test_failed_cells_are_recorded_never_cached(tmp_path, broken_agents):
    res = compare(
        ENV, ["test-failing", "test-illegal", "uniform-random"], [0, 1], horizon=50, backend="serial", out=tmp_path
    )
    st = res.runs.set_index(["agent", "seed"]).status
    assert st["test-failing"].tolist() == ["error", "error"]
    assert st["test-illegal"].tolist() == ["invalid_action", "invalid_action"]
    assert st["uniform-random"].tolist() == ["ok", "ok"]
    errs = list(tmp_path.rglob("*.error.json"))
    assert len(errs) == 4
    rec = json.loads(errs[0].read_text())
    assert rec["status"] in ("error", "invalid_action") and "Traceback" in rec["traceback"]
    assert not list((tmp_path / ENV / "test-failing").glob("*.parquet"))
    row = res.summary.set_index("agent").loc["test-failing"]
    assert row.n_failed == 2 and row.n_ok == 0
    assert any("exploded" in e["error"] for e in res.errors)


def test_summary_table_and_figure(tmp_path):
    res = compare(
        ENV,
        ["binning-ucb", "binning-ucb-oracle", "uniform-random"],
        range(4),
        horizon=400,
        backend="serial",
        out=tmp_path / "cells",
    )
    s = res.summary
    assert list(s.agent)[-1] == "binning-ucb-oracle"  # oracle reference listed last
    for _, r in s.iterrows():
        finals = res.runs[res.runs.agent == r.agent].final_regret
        assert r.final_regret == pytest.approx(finals.mean())
        assert r.ci_low <= r.final_regret <= r.ci_high
        assert r.n_ok == 4 and r.sec_per_1k_steps > 0
    # uniform play on two-peak-cyclic: mean gap of a uniform arm is known in closed form per round
    table = res.format_table()
    assert "binning-ucb-oracle (oracle)" in table and "95% CI" in table
    folder = res.save(tmp_path / "report")
    for name in ("summary.csv", "runs.parquet", "curves.parquet", "regret.png", "regret.svg", "table.txt"):
        assert (folder / name).stat().st_size > 0
    assert (folder / "regret.svg").read_text().lstrip().startswith("<?xml")
    back = pd.read_parquet(folder / "curves.parquet")
    assert len(back) == len(res.curves)
    # every run row names its env and arguments; the table says what was run
    runs = pd.read_parquet(folder / "runs.parquet")
    assert set(runs.env_id) == {ENV} and runs.env_kwargs.nunique() == 1 and "horizon" in runs.env_kwargs[0]
    head = (folder / "table.txt").read_text().splitlines()[0]
    assert head.startswith(f"# {ENV} ") and "4 seeds (0..3)" in head


def test_bad_arguments_name_the_problem(tmp_path):
    with pytest.raises(KeyError, match="valid environments"):
        compare("NoSuchEnv-v0", ["mdbe"], [0], out=tmp_path)
    with pytest.raises(KeyError, match="valid agents"):
        compare(ENV, ["nope"], [0], out=tmp_path)
    with pytest.raises(ValueError, match="backend"):
        compare(ENV, ["mdbe"], [0], backend="spark", out=tmp_path)
    with pytest.raises(ValueError, match="horizon"):
        compare(ENV, ["mdbe"], [0], horizon=0, out=tmp_path)
    with pytest.raises(ValueError, match="unknown hyperparameter"):
        compare(ENV, ["mdbe"], [0], horizon=10, hyperparameters={"mdbe": {"c00": 1}}, out=tmp_path)
    with pytest.raises(ValueError, match="instance"):
        compare(ENV, ["mdbe"], [0], env_kwargs={"instance": "nope"}, out=tmp_path)
    assert not any(tmp_path.iterdir())  # nothing written


def test_instance_metrics_scores_and_detections(tmp_path, monkeypatch):
    import gymnasium as gym

    kw = {"instance": "piecewise-tents", "phases": 4}
    res = compare(
        ENV,
        ["binning-ucb-oracle", "mdbe", "uniform-random"],
        [0, 1],
        horizon=3000,
        env_kwargs=kw,
        backend="serial",
        out=tmp_path,
    )
    env = gym.make(ENV, horizon=3000, **kw)
    env.reset(seed=1)
    shifts = env.unwrapped.oracle.significant_shifts()
    assert len(shifts) == 3
    runs = res.runs.set_index(["agent", "seed"])
    assert runs.loc[("uniform-random", 1), "L_tilde"] == 3
    r = runs.loc[("uniform-random", 1)]
    assert r.normalized_regret == pytest.approx(r.final_regret / (4 ** (1 / 3) * 3000 ** (2 / 3)))
    # the oracle baseline restarts exactly at the shifts: every shift detected at once, no false alarm
    o = res.summary.set_index("agent").loc["binning-ucb-oracle"]
    assert (o.detections, o.false_alarms, o.mean_delay) == (3.0, 0.0, 0.0)
    # agents without restart times get no detection scores
    assert np.isnan(res.summary.set_index("agent").loc["uniform-random", "detections"])
    # instance facts are cached per seed, like runs
    calls = []
    real = runner.run_instance_cells
    monkeypatch.setattr(runner, "run_instance_cells", lambda *a: calls.append(a) or real(*a))
    again = compare(ENV, ["uniform-random"], [0, 1, 2], horizon=3000, env_kwargs=kw, backend="serial", out=tmp_path)
    assert [c[2] for c in calls] == [[2]]
    assert again.runs.L_tilde.tolist() == [3.0, 3.0, 3.0]
