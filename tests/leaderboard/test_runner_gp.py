"""The runner on NoiseFreeGPBandit-v0: simple-regret curves, R(T/2) and flatness, agent diagnostics as
columns, resolved env defaults, the two-panel figure; and the ``papergym compare`` command."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from papergym.agents.base import list_agents, make_agent
from papergym.envs.spec import agent_seed
from papergym.envs.wrappers import RegretRecorder
from papergym.leaderboard import compare
from papergym.leaderboard.cli import main

ENV = "NoiseFreeGPBandit-v0"


def _reference_run(agent, seed, **kw):
    """One run written out by hand: per-round regrets from the oracle through RegretRecorder."""
    env = RegretRecorder(gym.make(ENV, **kw))
    obs, _ = env.reset(seed=seed)
    ag = make_agent(agent, env.unwrapped.problem, seed=agent_seed(seed))
    for _ in range(env.unwrapped.problem.horizon):
        a = ag.act(obs)
        obs, r, term, trunc, _ = env.step(a)
        ag.update(a, r, obs)
    return np.asarray(env.regrets), ag.diagnostics()


def test_simple_regret_flatness_and_diagnostics(tmp_path):
    kw = {"d": 1, "horizon": 40, "kernel": "matern-2.5"}
    res = compare(
        ENV, agents=["gp-ucb", "mvr", "uniform-random"], seeds=[0, 1, 2], env_kwargs=kw, backend="serial", out=tmp_path
    )
    assert res.env_kwargs["lengthscale"] == 0.1 and res.env_kwargs["n_candidates"] == 1000  # resolved defaults
    assert res.has_simple_regret
    for agent in ("gp-ucb", "uniform-random"):
        for seed in (0, 2):
            regrets, diag = _reference_run(agent, seed, **kw)
            cur = res.curves[(res.curves.agent == agent) & (res.curves.seed == seed)]
            t = cur.t.to_numpy()
            np.testing.assert_array_equal(cur.cum_regret.to_numpy(), np.cumsum(regrets)[t - 1])
            np.testing.assert_array_equal(cur.simple_regret.to_numpy(), np.minimum.accumulate(regrets)[t - 1])
            run = res.runs[(res.runs.agent == agent) & (res.runs.seed == seed)].iloc[0]
            R, Rh = regrets.sum(), regrets[:20].sum()
            assert run.final_regret == pytest.approx(R) and run.regret_half == pytest.approx(Rh)
            assert run.flatness == pytest.approx((R - Rh) / R)
            assert run.simple_regret == regrets.min()
            assert run.sum_sigma == pytest.approx(diag["sum_sigma"])
    s = res.summary.set_index("agent")
    assert s.loc["gp-ucb", "final_regret"] < s.loc["uniform-random", "final_regret"]
    assert {"simple_regret", "simple_ci_low", "simple_ci_high", "sum_sigma", "flatness"} <= set(s.columns)
    table = res.format_table()
    for col in ("simple regret", "flatness", "R(T/2)", "sum sigma(x_t)", "ms/step"):
        assert col in table
    assert "restarts" not in table  # no GP agent restarts: the column is left out
    fig = res.plot(tmp_path / "fig")
    assert len(fig.axes) == 2 and fig.axes[1].get_yscale() == "symlog"
    assert (tmp_path / "fig.png").exists() and (tmp_path / "fig.svg").exists()


def test_every_gp_agent_runs_through_the_runner(tmp_path):
    names = [a.name for a in list_agents(ENV)]
    assert {"gp-ucb", "gp-ucb-srinivas", "pe-mvr", "reds", "mvr", "gp-ei", "gp-ts", "uniform-random"} <= set(names)
    for mode in ("discrete", "continuous"):
        res = compare(
            ENV,
            seeds=[5],
            env_kwargs={"d": 2, "horizon": 12, "action_mode": mode},
            backend="serial",
            out=tmp_path / mode,
        )
        assert not res.errors and (res.runs.status == "ok").all()
        assert (res.runs.final_regret >= 0).all() and (res.runs.simple_regret >= 0).all()


def test_lipschitz_table_has_no_simple_regret(tmp_path):
    res = compare(
        "NonStatLipschitz-v0", agents=["uniform-random"], seeds=[0], horizon=50, backend="serial", out=tmp_path
    )
    assert not res.has_simple_regret and "simple regret" not in res.format_table()
    assert len(res.plot().axes) == 1


def test_the_issue_command(tmp_path, capsys):
    out = tmp_path / "res"
    code = main(
        [
            "compare",
            ENV,
            "--kernel",
            "se",
            "--dim",
            "2",
            "--lengthscale",
            "0.2",
            "--seeds",
            "3",
            "--horizon",
            "30",
            "--agents",
            "gp-ucb,pe-mvr,gp-ei",
            "--backend",
            "serial",
            "--out",
            str(out),
            "--cache-dir",
            str(tmp_path / "c"),
            "--quiet",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "d=2" in text and "kernel=se" in text and "lengthscale=0.2" in text
    for word in ("simple regret", "sum sigma(x_t)", "flatness", "gp-ucb", "pe-mvr", "gp-ei"):
        assert word in text
    for f in ("summary.csv", "table.txt", "runs.parquet", "curves.parquet", "regret.png", "regret.svg"):
        assert (out / f).exists()


@pytest.mark.parametrize(
    "argv,expect",
    [
        (["--kernel", "rbf"], ["kernel", "se", "matern-1.5"]),
        (["--dim", "2", "--d", "2"], ["--dim", "alias"]),
        (["--lengthscale", "-1"], ["lengthscale"]),
        (["--action-mode", "grid"], ["action_mode", "discrete", "continuous"]),
        (["--hp", "gp-ucb.beta=2"], ["beta", "beta_sqrt"]),
    ],
)
def test_bad_gp_values_exit_2(argv, expect, tmp_path, capsys):
    out, cache = tmp_path / "o", tmp_path / "c"
    assert main(["compare", ENV, *argv, "--out", str(out), "--cache-dir", str(cache)]) == 2
    err = capsys.readouterr().err
    for e in expect:
        assert e in err, (e, err)
    assert not out.exists() and not cache.exists()
