"""Declared observation bounds are true bounds: every observation of a random run lies in the space."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import papergym.envs  # noqa: F401  (registers the ids)


@pytest.mark.parametrize(
    "env_id, kwargs, bounded",
    [
        ("NonStatLipschitz-v0", {"horizon": 300}, True),
        ("NonStatLipschitz-v0", {"horizon": 300, "d": 2, "instance": "two-peak-cyclic"}, True),
        ("NonStatLipschitz-v0", {"horizon": 300, "noise": "gaussian"}, False),
        ("NoiseFreeGPBandit-v0", {"horizon": 300, "B": 2.5}, True),
        ("NoiseFreeGPBandit-v0", {"horizon": 300, "action_mode": "continuous", "kernel": "matern-1.5"}, True),
    ],
)
def test_observations_stay_in_the_declared_space(env_id, kwargs, bounded):
    env = gym.make(env_id, **kwargs)
    space = env.observation_space
    assert bool(np.all(np.isfinite(space.high))) is bounded
    env.action_space.seed(3)
    obs, _ = env.reset(seed=3)
    assert space.contains(obs)
    extremes = []
    for _ in range(300):
        obs, _, term, trunc, _ = env.step(env.action_space.sample())
        assert space.contains(obs), (obs, space)
        extremes.append(float(np.abs(obs).max()))
        if term or trunc:
            break
    if bounded and env_id.startswith("NoiseFree"):
        # the bound is B itself (widened by round-off only), not a loose constant
        assert space.high[0] == pytest.approx(kwargs.get("B", 1.0), rel=1e-8)
        assert max(extremes) <= kwargs.get("B", 1.0)


@pytest.mark.parametrize(
    "env_id, kwargs",
    [
        ("NonStatLipschitz-v0", {"horizon": 200}),
        ("NoiseFreeGPBandit-v0", {"horizon": 200, "B": 0.5}),
    ],
)
def test_vector_envs_declare_the_same_bounds(env_id, kwargs):
    venv = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", **kwargs)
    single = venv.single_observation_space
    assert np.all(venv.observation_space.high == single.high[0]) and np.all(venv.observation_space.low == single.low[0])
    obs, _ = venv.reset(seed=[1, 2, 3])
    for _ in range(50):
        obs, *_ = venv.step(venv.action_space.sample())
        assert venv.observation_space.contains(obs)
    venv.close()


def test_float32_actions_are_accepted():
    env = gym.make("NonStatLipschitz-v0", horizon=10)
    env.reset(seed=0)
    obs, r, *_ = env.step(np.array([0.25], np.float32))
    assert obs.dtype == np.float64 and r in (0.0, 1.0)
