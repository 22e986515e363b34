"""restart-oracle: binning + UCB restarted at every change point of the oracle (exactly there, with the
per-phase bin count), on fake change points and on the real NonStatLipschitz-v0 env."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import papergym.envs  # noqa: F401  (registers the env)
from papergym.agents.base import get_agent_info, make_agent, make_batched_agent
from papergym.baselines.bandits.bins import binning_bins
from papergym.envs.bandits.lipschitz import NonStatLipschitzVectorEnv, make_problem
from papergym.envs.spec import agent_seed
from papergym.envs.wrappers import RegretRecorder

ENV = "NonStatLipschitz-v0"


class ChangeOracle:
    """Exposes the change points (what restart-oracle reads) and the same rounds as significant shifts (what
    binning-ucb-oracle reads)."""

    def __init__(self, cps):
        self.cps = tuple(cps)

    def change_points(self):
        return self.cps

    def significant_shifts(self):
        return self.cps


def _play(agent, rewards):
    acts = []
    for y in rewards:
        a = agent.act(None)
        acts.append(a.copy())
        agent.update(a, y, None)
    return np.array(acts)


@pytest.mark.parametrize("d", [1, 2])
def test_restarts_exactly_at_the_change_points_with_per_phase_bins(d):
    T = 400
    cps = [(5, 6, 30, 31, 32, 150), (), (2, 399, 400)]
    problem = make_problem(d=d, horizon=T)
    rng = np.random.default_rng(71)
    rewards = rng.integers(0, 2, size=(T, 3)).astype(float)
    oracles = [ChangeOracle(c) for c in cps]
    seeds = [agent_seed(s) for s in range(3)]
    ro = make_batched_agent("restart-oracle", problem, seeds=seeds, oracles=oracles)
    ref = make_batched_agent("binning-ucb-oracle", problem, seeds=seeds, oracles=oracles)
    acts = _play(ro, rewards)
    # binning-ucb-oracle restarted at the same rounds: the same algorithm, so bit-identical actions
    np.testing.assert_array_equal(acts, _play(ref, rewards))
    assert ro.diagnostics()["restarts"] == [len(c) for c in cps]
    assert [tuple(c) for c in ro.change_points] == [tuple(c) for c in cps]
    # independently: at every phase start the fresh phase plays its first bin, midpoint 0.5 / K_i per axis
    for r, c in enumerate(cps):
        bounds = (1, *c, T + 1)
        for a, b in zip(bounds[:-1], bounds[1:]):
            K = binning_bins(b - a, d)
            np.testing.assert_array_equal(acts[a - 1, r], np.full(d, 0.5 / K))
            if b - a > K**d:  # round robin over the K_i^d cells first, every cell once
                played = {tuple(x) for x in acts[a - 1 : a - 1 + K**d, r]}
                assert len(played) == K**d


def test_benign_changes_every_round_is_a_restart():
    """mu_t changes every round: one-round phases, K_i = 1, the midpoint 0.5 every round: regret 0.25 T."""
    T, seeds = 3000, [7, 8]
    venv = NonStatLipschitzVectorEnv(num_envs=2, instance="benign-changes", horizon=T)
    obs, _ = venv.reset(seed=seeds)
    agent = make_batched_agent(
        "restart-oracle", venv.problem, seeds=[agent_seed(s) for s in seeds], oracles=venv.oracles
    )
    assert [tuple(c) for c in agent.change_points] == [o.change_points() for o in venv.oracles]
    regret = np.zeros(2)
    for t in range(1, T + 1):
        a = agent.act(obs)
        assert np.all(a == 0.5)
        regret += venv.oracle.regret(a, t)
        obs, r, _, _, _ = venv.step(a)
        agent.update(a, r, obs)
    assert agent.diagnostics()["restarts"] == [T - 1, T - 1]
    np.testing.assert_allclose(regret, 0.25 * T, rtol=1e-12)


def test_no_change_is_plain_binning_ucb():
    T, seeds = 2000, [3, 4]
    kw = dict(instance="benign-changes", horizon=T, static=True)
    out = {}
    for name in ("restart-oracle", "binning-ucb"):
        venv = NonStatLipschitzVectorEnv(num_envs=2, **kw)
        obs, _ = venv.reset(seed=seeds)
        agent = make_batched_agent(
            name,
            venv.problem,
            seeds=[agent_seed(s) for s in seeds],
            oracles=venv.oracles if name == "restart-oracle" else None,
        )
        acts = []
        for _ in range(T):
            a = agent.act(obs)
            acts.append(a)
            obs, r, _, _, _ = venv.step(a)
            agent.update(a, r, obs)
        out[name] = np.array(acts)
    np.testing.assert_array_equal(out["restart-oracle"], out["binning-ucb"])


def test_vector_env_equals_per_run_env_and_role():
    info = get_agent_info("restart-oracle", ENV)
    assert info.role == "oracle" and info.batched_factory is not None
    T, seeds = 700, [0, 5]
    kw = {"instance": "piecewise-tents", "horizon": T, "phases": 4}
    venv = gym.make_vec(ENV, num_envs=2, vectorization_mode="vector_entry_point", **kw)
    obs, _ = venv.reset(seed=seeds)
    base = venv.unwrapped
    agent = make_batched_agent(
        "restart-oracle", base.problem, seeds=[agent_seed(s) for s in seeds], oracles=base.oracles
    )
    acts, regret = [], np.zeros(2)
    for t in range(1, T + 1):
        a = agent.act(obs)
        regret += base.oracle.regret(a, t)
        acts.append(a)
        obs, r, _, _, _ = venv.step(a)
        agent.update(a, r, obs)
    for i, s in enumerate(seeds):
        env = RegretRecorder(gym.make(ENV, **kw))
        o, _ = env.reset(seed=s)
        with pytest.raises(ValueError, match="oracle"):
            make_agent("restart-oracle", env.unwrapped.problem, seed=agent_seed(s))
        ag = make_agent("restart-oracle", env.unwrapped.problem, seed=agent_seed(s), oracle=env.unwrapped.oracle)
        assert ag.change_points == env.unwrapped.oracle.change_points() == (176, 351, 526)
        for t in range(T):
            a = ag.act(o)
            np.testing.assert_array_equal(a, acts[t][i])
            o, r, _, _, _ = env.step(a)
            ag.update(a, r, o)
        assert env.cumulative_regret == pytest.approx(regret[i], rel=1e-12)
        assert ag.diagnostics() == {"restarts": 3}


def test_bad_arguments():
    problem = make_problem(horizon=100)
    with pytest.raises(ValueError, match="one oracle per run"):
        make_batched_agent("restart-oracle", problem, seeds=[0, 1], oracles=[ChangeOracle(())])
    with pytest.raises(ValueError, match="strictly increasing"):
        make_batched_agent("restart-oracle", problem, seeds=[0], oracles=[ChangeOracle((5, 5))])
    with pytest.raises(ValueError, match="strictly increasing"):
        make_batched_agent("restart-oracle", problem, seeds=[0], oracles=[ChangeOracle((1, 5))])
    with pytest.raises(ValueError, match="strictly increasing"):
        make_batched_agent("restart-oracle", problem, seeds=[0], oracles=[ChangeOracle((101,))])
    with pytest.raises(ValueError, match="c must be"):
        make_batched_agent("restart-oracle", problem, seeds=[0], oracles=[ChangeOracle(())], c=-1.0)
