"""Allocates 20 GB at the first act."""

import numpy as np


class Agent:
    def __init__(self, problem, *, seeds):
        pass

    def act(self, obs):
        big = np.ones(20 * 10**9 // 8)
        return big[: len(obs)].reshape(-1, 1)

    def update(self, actions, rewards, obs):
        pass
