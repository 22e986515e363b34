"""Properties shared by every bin-based baseline and uniform-random: batching, seeds, ranges, registry."""

import inspect

import numpy as np
import pytest
from _bin_baselines_sim import FakeOracle, batched, per_run, run_batched, run_per_run, switching, tent, uniforms

from papergym.agents.base import get_agent_info, list_agents
from papergym.envs.spec import agent_seed

NAMES = ["binning-ucb", "binning-ucb-oracle", "sw-ucb", "d-ucb", "exp3s", "rexp3", "uniform-random"]
SHIFTS = {0: (90, 200), 1: (150,), 2: ()}


def oracles_for(name, seeds):
    return [FakeOracle(SHIFTS[s % 3]) for s in seeds] if name == "binning-ucb-oracle" else None


def test_registered_with_roles_and_defaults():
    names = {a.name: a for a in list_agents("NonStatLipschitz-v0")}
    for name in NAMES:
        info = names[name]
        assert info.role == ("oracle" if name == "binning-ucb-oracle" else "baseline")
        assert info.batched_factory is not None and info.description
        params = inspect.signature(info.batched_factory).parameters
        declared = {k: v.default for k, v in params.items() if k not in ("problem", "seeds", "oracles")}
        assert info.defaults == declared, name
    assert get_agent_info("sw-ucb").defaults["L_hint"] == 10.0
    assert get_agent_info("rexp3").defaults["V_hint"] == 1.0


@pytest.mark.parametrize("name", NAMES)
def test_batched_equals_per_run_bit_for_bit(name):
    T, seeds = 300, (0, 1, 2)
    hp = {"bins": 6} if name not in ("binning-ucb-oracle", "uniform-random") else {}
    if name == "sw-ucb":
        hp["window"] = 40
    if name == "rexp3":
        hp["delta"] = 70
    U = uniforms(T, 3)
    mu = switching(150)
    acts, _, _ = run_batched(batched(name, T, seeds=seeds, oracles=oracles_for(name, seeds), **hp), mu, T, U)
    for i, s in enumerate(seeds):
        oracle = oracles_for(name, [s])[0] if name == "binning-ucb-oracle" else None
        single = run_per_run(per_run(name, T, s, oracle=oracle, **hp), mu, T, U[:, i])
        np.testing.assert_array_equal(single, acts[:, i])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("d", [1, 2])
def test_deterministic_and_actions_in_unit_cube(name, d):
    T, seeds = 200, (5, 6, 7)
    U = uniforms(T, 3)
    runs = [
        run_batched(batched(name, T, seeds=seeds, d=d, oracles=oracles_for(name, seeds)), tent(0.3), T, U)[0]
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0], runs[1])
    a = runs[0]
    assert a.shape == (T, 3, d) and a.dtype == np.float64
    assert ((a >= 0) & (a <= 1)).all()


@pytest.mark.parametrize("name", ["exp3s", "rexp3", "uniform-random"])
def test_randomised_agents_depend_on_the_seed(name):
    T = 100
    U = uniforms(T, 2)
    a = run_batched(batched(name, T, seeds=(0, 1)), tent(), T, U)[0]
    b = run_batched(batched(name, T, seeds=(0, 2)), tent(), T, U)[0]
    np.testing.assert_array_equal(a[:, 0], b[:, 0])
    assert not np.array_equal(a[:, 1], b[:, 1])


def test_uniform_random_draws_come_from_the_agent_seed():
    T, d = 500, 2
    seeds = (0, 11)
    acts, _, _ = run_batched(batched("uniform-random", T, seeds=seeds, d=d), tent(), T, uniforms(T, 2))
    for i, s in enumerate(seeds):
        expect = np.random.default_rng(agent_seed(s)).random(T * d).reshape(T, d)
        np.testing.assert_array_equal(acts[:, i], expect)


def test_uniform_random_mean():
    T = 4000
    acts, _, _ = run_batched(batched("uniform-random", T, seeds=(0, 1, 2)), tent(), T, uniforms(T, 3))
    assert abs(acts.mean() - 0.5) < 0.01
    assert abs(acts.var() - 1 / 12) < 0.005


@pytest.mark.parametrize("name", NAMES)
def test_reward_shape_checked(name):
    ag = batched(name, 300, seeds=(0, 1), oracles=oracles_for(name, (0, 1)))
    a = ag.act(np.zeros((2, 1)))
    if name == "uniform-random":
        return  # ignores rewards
    with pytest.raises(ValueError, match="rewards"):
        ag.update(a, np.zeros(3), np.zeros((2, 1)))
