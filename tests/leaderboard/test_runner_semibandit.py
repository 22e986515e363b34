"""The runner on MSetSemiBandit-v0: static (best-fixed-set) regret where it differs from the per-round
regret, the regret ratios, the log-x panel, and the ``papergym compare`` command."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

from papergym.agents.base import make_agent
from papergym.envs.spec import agent_seed
from papergym.leaderboard import compare
from papergym.leaderboard.cli import main

ENV = "MSetSemiBandit-v0"


def _reference(agent, seed, **kw):
    """One run by hand: per-round dynamic regret and static increments from the oracle."""
    env = gym.make(ENV, **kw)
    obs, _ = env.reset(seed=seed)
    oracle = env.unwrapped.oracle
    ag = make_agent(agent, env.unwrapped.problem, seed=agent_seed(seed))
    dyn, stat = [], []
    for t in range(1, env.unwrapped.problem.horizon + 1):
        a = ag.act(obs)
        dyn.append(oracle.regret(a, t))
        stat.append(oracle.static_regret_increment(a, t))
        obs, r, _, _, _ = env.step(a)
        ag.update(a, r, obs)
    return np.array(dyn), np.array(stat)


@pytest.mark.parametrize("mode", ["batched", "per-run"])
def test_static_regret_on_a_switching_adversary(tmp_path, mode):
    kw = {"instance": "oblivious-switching", "horizon": 400, "d": 6, "m": 2, "gap": 0.4}
    res = compare(
        ENV,
        agents=["combucb", "uniform-random"],
        seeds=[0, 3],
        env_kwargs=kw,
        backend="serial",
        out=tmp_path,
        mode=mode,
    )
    assert not res.errors and "static_regret" in res.curves.columns
    for agent in ("combucb", "uniform-random"):
        for seed in (0, 3):
            dyn, stat = _reference(agent, seed, **kw)
            cur = res.curves[(res.curves.agent == agent) & (res.curves.seed == seed)]
            t = cur.t.to_numpy()
            np.testing.assert_allclose(cur.cum_regret.to_numpy(), np.cumsum(dyn)[t - 1], rtol=0, atol=1e-9)
            np.testing.assert_allclose(cur.static_regret.to_numpy(), np.cumsum(stat)[t - 1], rtol=0, atol=1e-9)
            run = res.runs[(res.runs.agent == agent) & (res.runs.seed == seed)].iloc[0]
            # the ratios are computed from the paper's (static) regret
            assert run.regret_per_ln_n == pytest.approx(stat.sum() / math.log(400))
            assert run.regret_per_sqrt_nmd == pytest.approx(stat.sum() / math.sqrt(400 * 2 * 6))
    # against each round's best set the regret can only be larger
    assert (res.runs.final_regret >= res.runs.static_regret - 1e-9).all()
    assert "static regret" in res.format_table()


def test_families_without_switches_have_one_regret_and_two_panels(tmp_path):
    res = compare(
        ENV,
        agents=["ftpl-frechet", "combucb"],
        seeds=[1, 2],
        horizon=300,
        backend="serial",
        env_kwargs={"instance": "stochastically-constrained-adversarial"},
        out=tmp_path,
    )
    assert "static_regret" not in res.curves.columns
    table = res.format_table()
    for col in ("R/ln n", "R/sqrt(nmd)", "GR draws/round", "ms/step"):
        assert col in table
    assert res.summary.set_index("agent").loc["ftpl-frechet", "gr_draws_per_round"] >= 1.0
    fig = res.plot(tmp_path / "fig")
    assert len(fig.axes) == 2 and fig.axes[0].get_xscale() == "linear" and fig.axes[1].get_xscale() == "log"


def test_the_issue_command(tmp_path, capsys):
    out = tmp_path / "res"
    code = main(
        [
            "compare",
            ENV,
            "--instance",
            "stochastically-constrained-adversarial",
            "--d",
            "10",
            "--m",
            "3",
            "--horizon",
            "500",
            "--seeds",
            "3",
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
    assert "d=10" in text and "m=3" in text and "stochastically-constrained-adversarial" in text
    for word in (
        "ftpl-frechet",
        "ftrl-hybrid",
        "combucb",
        "comb-ts",
        "logbarrier-osmd",
        "shannon-osmd",
        "uniform-random",
        "R/ln n",
        "R/sqrt(nmd)",
        "GR draws/round",
    ):
        assert word in text
    for f in ("summary.csv", "table.txt", "runs.parquet", "curves.parquet", "regret.png", "regret.svg"):
        assert (out / f).exists()


@pytest.mark.parametrize(
    "argv,expect",
    [
        (["--m", "11"], ["m", "d"]),
        (["--m", "0"], ["m"]),
        (["--instance", "adversarial"], ["instance", "stochastic", "oblivious-switching"]),
        (["--gap", "2"], ["gap"]),
        (["--hp", "ftpl-frechet.alpha=-1"], ["alpha"]),
    ],
)
def test_bad_semibandit_values_exit_2(argv, expect, tmp_path, capsys):
    out, cache = tmp_path / "o", tmp_path / "c"
    assert main(["compare", ENV, *argv, "--out", str(out), "--cache-dir", str(cache)]) == 2
    err = capsys.readouterr().err
    for e in expect:
        assert e in err, (e, err)
    assert not out.exists() and not cache.exists()
