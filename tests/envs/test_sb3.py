"""Stable-Baselines3 on a papergym bandit env, the way an RL user would plug it in."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import papergym.envs  # noqa: F401
from papergym_tests import require


def test_dqn_learns_on_nonstat_lipschitz_through_gymnasiums_discretize_action():
    sb3 = require("stable_baselines3", "test")
    require("torch", "torch")
    from gymnasium.wrappers import DiscretizeAction

    env = DiscretizeAction(gym.make("NonStatLipschitz-v0", horizon=5_000), bins=8)
    assert isinstance(env.action_space, gym.spaces.Discrete) and env.action_space.n == 8
    model = sb3.DQN(
        "MlpPolicy",
        env,
        learning_starts=200,
        buffer_size=5_000,
        train_freq=4,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [16]},
    )
    model.learn(total_timesteps=2_000)
    obs, _ = env.reset(seed=1)
    rewards = []
    for _ in range(50):
        action, _ = model.predict(obs, deterministic=True)
        obs, reward, terminated, truncated, _ = env.step(action)
        rewards.append(reward)
        assert env.unwrapped.action_space.contains(
            np.asarray(env.action(action), dtype=env.unwrapped.action_space.dtype)
        )
        if terminated or truncated:
            break
    assert np.isfinite(rewards).all() and len(rewards) == 50
