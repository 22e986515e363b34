"""Bin-based baselines on the real NonStatLipschitz-v0 env: native vector env vs per-run Gymnasium loop."""

import gymnasium as gym
import numpy as np
import pytest

import papergym.envs  # noqa: F401  (registers the env)
from papergym.agents.base import make_agent, make_batched_agent
from papergym.envs.spec import agent_seed
from papergym.envs.wrappers import RegretRecorder

NAMES = ["binning-ucb", "binning-ucb-oracle", "sw-ucb", "d-ucb", "exp3s", "rexp3", "uniform-random"]
ENV = "NonStatLipschitz-v0"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("instance, d", [("piecewise-tents", 1), ("two-peak-cyclic", 1), ("piecewise-tents", 2)])
def test_vector_env_equals_per_run_env(name, instance, d):
    T, seeds = 600, [0, 1, 2]
    kw = {"instance": instance, "horizon": T, "d": d}
    venv = gym.make_vec(ENV, num_envs=3, vectorization_mode="vector_entry_point", **kw)
    obs, _ = venv.reset(seed=seeds)
    base = venv.unwrapped if hasattr(venv, "unwrapped") else venv
    oracles = base.oracles if name == "binning-ucb-oracle" else None
    agent = make_batched_agent(name, base.problem, seeds=[agent_seed(s) for s in seeds], oracles=oracles)
    regret = np.zeros(3)
    acts = []
    for t in range(1, T + 1):
        a = agent.act(obs)
        assert base.action_space.contains(a)
        regret += base.oracle.regret(a, t)
        acts.append(a)
        obs, r, _, trunc, _ = venv.step(a)
        agent.update(a, r, obs)
    assert trunc.all()
    for i, s in enumerate(seeds):
        env = RegretRecorder(gym.make(ENV, **kw))
        o, _ = env.reset(seed=s)
        oracle = env.unwrapped.oracle if name == "binning-ucb-oracle" else None
        ag = make_agent(name, env.unwrapped.problem, seed=agent_seed(s), oracle=oracle)
        for t in range(T):
            a = ag.act(o)
            np.testing.assert_array_equal(a, acts[t][i])
            o, r, _, _, _ = env.step(a)
            ag.update(a, r, o)
        assert env.cumulative_regret == pytest.approx(regret[i], rel=1e-12)


def test_oracle_version_restarts_at_the_envs_significant_shifts():
    T = 4000
    venv = gym.make_vec(ENV, num_envs=2, vectorization_mode="vector_entry_point", instance="piecewise-tents", horizon=T)
    venv.reset(seed=[0, 1])
    base = venv.unwrapped if hasattr(venv, "unwrapped") else venv
    agent = make_batched_agent(
        "binning-ucb-oracle", base.problem, seeds=[agent_seed(0), agent_seed(1)], oracles=base.oracles
    )
    assert [tuple(x) for x in agent.shifts] == [o.significant_shifts() for o in base.oracles]
    assert all(len(s) >= 1 for s in agent.shifts)  # piecewise-tents: L~ ~ P - 1 = 4
