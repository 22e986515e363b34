"""Evaluation-side wrappers."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ["RegretRecorder"]


class RegretRecorder(gym.Wrapper):
    """Records the per-round and cumulative regret of every action, computed by the env's oracle.

    The regret of the action played at round ``t`` is ``env.unwrapped.oracle.regret(action, t)``,
    computed from means before the env steps (so it never depends on the realised reward). Nothing
    is added to the observation or to ``info``; read the record from the wrapper:

    ``regrets``
        list of per-round regrets since the last ``reset``;
    ``cumulative_regret``
        their running sum.

    An action rejected by the env (:class:`~papergym.envs.InvalidActionError`) records nothing.
    """

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.regrets: list[float] = []
        self.cumulative_regret = 0.0

    def reset(self, **kwargs: Any):
        self.regrets = []
        self.cumulative_regret = 0.0
        return self.env.reset(**kwargs)

    def step(self, action: Any):
        base = self.env.unwrapped
        t = int(base.t) + 1  # round being played (1-based)
        # validate first: an invalid action must raise from the env, with nothing recorded
        if hasattr(base, "validate_action"):
            base.validate_action(action)
        r = float(base.oracle.regret(action, t))
        out = self.env.step(action)
        self.regrets.append(r)
        self.cumulative_regret += r
        return out

    @property
    def regret_curve(self) -> np.ndarray:
        """Cumulative regret after each round, shape ``(t,)``."""
        return np.cumsum(self.regrets)
