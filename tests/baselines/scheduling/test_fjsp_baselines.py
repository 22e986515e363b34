"""FJSP baselines: every registered agent runs on every env it is registered for; rules follow their
definitions; searches use the env's neighbourhood; compare prints makespans and gaps per instance."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import papergym.envs  # noqa: F401
from papergym.agents.base import list_agents, make_agent, play_episode
from papergym.envs.scheduling.fjsp.graph import evaluate, validate_schedule
from papergym.envs.scheduling.fjsp.rules import RuleTables, choose_pair
from papergym.envs.scheduling.fjsp.sets import reference
from papergym.envs.spec import agent_seed
from papergym.envs.wrappers import RegretRecorder

SMALL = {"family": "sd2", "n_jobs": 6, "n_machines": 4}


def play(env_id, agent, seed=0, hp=None, **kw):
    env = RegretRecorder(gym.make(env_id, **kw))
    obs, _ = env.reset(seed=seed)
    base = env.unwrapped
    info = [a for a in list_agents(env_id) if a.name == agent][0]
    pol = make_agent(
        agent, base.problem, seed=agent_seed(seed), oracle=base.oracle if info.role == "oracle" else None, **(hp or {})
    )
    play_episode(pol, env, obs)
    return env, base, pol


@pytest.mark.parametrize("env_id", ["FJSP-v0", "FJSPImprove-v0"])
def test_every_registered_agent_runs_and_respects_the_lower_bound(env_id):
    names = [a.name for a in list_agents(env_id)]
    assert "cpsat" in names
    if env_id == "FJSP-v0":
        assert {"fifo", "mor", "spt", "mwkr", "lwkr", "random-dispatch"} <= set(names)
    else:  # the start is the env's init; no rule-named agent that would refuse another init
        assert {"initial-solution", "gd-search", "bi-search", "fi-search", "random-p-search"} <= set(names)
        assert "mwkr" not in names
    for name in names:
        kw = dict(SMALL, horizon=15) if env_id == "FJSPImprove-v0" else dict(SMALL)
        hp = {"time_limit": 1.0} if name == "cpsat" else None
        env, base, pol = play(env_id, name, hp=hp, **kw)
        c = base.makespan
        assert c >= base.oracle.lower_bound
        assert env.cumulative_regret == pytest.approx(c - base.oracle.lower_bound) or name == "cpsat"


def test_dispatch_rules_choose_by_their_definition():
    env = gym.make("FJSP-v0", instance="brandimarte/mk01").unwrapped
    obs, _ = env.reset(seed=0)
    tb = RuleTables(obs["proc"], obs["op_job"])
    rng = np.random.default_rng(0)
    # at t = 0 all jobs are ready at 0 and all machines idle: every legal pair starts at 0
    a = choose_pair("mwkr", obs, tb, rng)
    j, k = divmod(a, env.M)
    work = [tb.rem_work[env.instance.job_start[jj]] for jj in range(env.instance.n_jobs)]
    assert work[j] == max(work)
    o = env.instance.job_start[j]
    elig = np.flatnonzero(env.instance.proc[o] > 0)
    assert env.instance.proc[o, k] == env.instance.proc[o, elig].min()  # EET ties -> shortest p
    a = choose_pair("spt", obs, tb, rng)
    j, k = divmod(a, env.M)
    firsts = env.instance.job_start[:-1]
    assert env.instance.proc[firsts[j], k] == env.instance.min_proc[firsts].min()
    a = choose_pair("mor", obs, tb, rng)
    assert env.instance.job_ops[a // env.M] == env.instance.job_ops.max()
    # restrict_to_earliest: after some steps, the chosen pair always has the minimal start time
    for _ in range(20):
        a = choose_pair("fifo", obs, tb, rng)
        legal = np.flatnonzero(obs["action_mask"])
        starts = np.maximum(obs["job_ready"][legal // env.M], obs["machine_ready"][legal % env.M])
        j, k = divmod(a, env.M)
        assert max(obs["job_ready"][j], obs["machine_ready"][k]) == starts.min()
        obs, *_ = env.step(a)


def test_rules_are_deterministic_under_a_seed_and_valid():
    for rule in ["fifo", "mor", "spt", "mwkr", "lwkr", "random-dispatch"]:
        _, b1, _ = play("FJSP-v0", rule, seed=3, instances="brandimarte")
        _, b2, _ = play("FJSP-v0", rule, seed=3, instances="brandimarte")
        assert b1.makespan == b2.makespan
        m, s = b1.schedule()
        validate_schedule(b1.instance, m, s, makespan=b1.makespan)


def test_searches_improve_on_the_initial_solution_and_use_the_budget():
    out = {}
    for name in ["initial-solution", "gd-search", "bi-search", "fi-search", "random-p-search"]:
        env, base, pol = play("FJSPImprove-v0", name, seed=0, instance="brandimarte/mk01", horizon=60)
        out[name] = base.makespan
        assert base.t == 60
        if name != "initial-solution":
            assert pol.diagnostics()["evaluated_moves"] > 0
        ev = evaluate(base.instance, base.incumbent)
        validate_schedule(base.instance, base.incumbent.assign, ev.heads, makespan=base.makespan)
    assert out["initial-solution"] == 49  # the env's default init: MWKR on mk01 (EET machine rule)
    for name in ["gd-search", "bi-search", "fi-search", "random-p-search"]:
        assert reference("brandimarte/mk01").ub <= out[name] < out["initial-solution"]


def test_hold_agent_needs_the_same_init():
    from papergym.baselines.scheduling.dispatching import HoldInitialAgent

    env = gym.make("FJSPImprove-v0", init="spt").unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match="init='mwkr'"):
        HoldInitialAgent(env.problem, seed=0, rule="mwkr")


def test_compare_prints_makespan_and_gap_per_instance(tmp_path):
    from papergym.leaderboard.runner.compare import compare

    res = compare(
        "FJSPImprove-v0",
        agents=["initial-solution", "bi-search"],
        seeds=range(3),
        horizon=20,
        env_kwargs={"instances": "brandimarte", "init": "mwkr"},
        backend="serial",
        out=tmp_path,
    )
    runs = res.runs
    assert set(runs.instance) == {"brandimarte/mk01", "brandimarte/mk02", "brandimarte/mk03"}
    mk01 = runs[(runs.instance == "brandimarte/mk01") & (runs.agent == "initial-solution")].iloc[0]
    assert mk01.makespan == 49 and mk01.reference == 40 and mk01.gap == pytest.approx(9 / 40)
    assert (runs.makespan >= runs.lower_bound).all()
    text = res.format_table()
    assert "brandimarte/mk01" in text and "+22.5%" in text and "mean gap" in text
    res2 = compare(
        "FJSP-v0", agents=["spt"], seeds=range(2), env_kwargs={"instances": "sd2-10x5"}, backend="serial", out=tmp_path
    )
    assert (res2.runs.makespan > 0).all() and "sd2-10x5/001" in res2.format_table()


def test_cli_compare_with_instances(tmp_path, capsys):
    from papergym.leaderboard.cli import main

    rc = main(
        [
            "compare",
            "FJSPImprove-v0",
            "--instances",
            "brandimarte",
            "--agents",
            "initial-solution,gd-search",
            "--horizon",
            "10",
            "--seeds",
            "2",
            "--backend",
            "serial",
            "--out",
            str(tmp_path / "o"),
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "brandimarte/mk02" in out and "mean gap" in out
    assert "init=sampled-dispatch" in out  # the protocol's default start, on any instance set
    rc = main(
        [
            "compare",
            "FJSPImprove-v0",
            "--instance",
            "brandimarte/mk01",
            "--init",
            "mwkr",
            "--agents",
            "initial-solution",
            "--horizon",
            "5",
            "--seeds",
            "1",
            "--backend",
            "serial",
            "--out",
            str(tmp_path / "m"),
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "init=mwkr" in out and " 49 " in out  # --init overrides it (MWKR on mk01: 49)
    rc = main(["compare", "FJSP-v0", "--instances", "nope", "--agents", "mwkr", "--out", str(tmp_path / "p")])
    assert rc == 2 and "unknown instance set" in capsys.readouterr().err


def _gd_walk(tenure, steps=400):
    """gd-search from the sampled-dispatch start of SD2 10x5 test instance 003: visited solutions and incumbents."""
    from papergym.baselines.scheduling.local_search import LocalSearchAgent

    env = gym.make("FJSPImprove-v0", instances="sd2-10x5", init="sampled-dispatch", horizon=steps).unwrapped
    obs, _ = env.reset(seed=2)
    pol = LocalSearchAgent(env.problem, seed=1000, strategy="gd", tabu_tenure=tenure)
    keys, inc = [env.solution.key()], [env.makespan]
    for _ in range(steps):
        obs, *_ = env.step(pol.act(obs))
        keys.append(env.solution.key())
        inc.append(env.makespan)
    return keys, inc, pol


def test_gd_search_is_trapped_by_its_one_move_tabu_and_a_longer_tenure_frees_it():
    """L2S's GD (tabu = the reverse of the last move) never steps straight back, but from this start it
    returns within a few moves and wanders among a handful of solutions for the rest of the 400 steps (the
    case behind "gd-search stops improving"); tabu_tenure = 30 forbids the last 30 solutions and keeps
    improving after step 100."""
    keys, inc, pol = _gd_walk(1)
    assert all(keys[t] != keys[t - 2] for t in range(2, len(keys)))  # the tabu: no immediate reversal
    d = pol.diagnostics()
    assert pol.first_revisit is not None and pol.first_revisit <= 10
    assert d["distinct_solutions"] == len(set(keys[:-1])) <= 30 and d["revisits"] >= 350
    assert inc[-1] == inc[100]  # nothing found after step 100
    keys30, inc30, pol30 = _gd_walk(30)
    assert all(keys30[t] not in keys30[max(0, t - 30) : t] for t in range(1, len(keys30)))
    assert pol30.diagnostics()["distinct_solutions"] > 200
    assert inc30[-1] < inc30[100] and inc30[-1] < inc[-1]
