"""Exits the process at the third act."""

import os

import numpy as np


class Agent:
    def __init__(self, problem, *, seeds):
        self.t = 0

    def act(self, obs):
        self.t += 1
        if self.t == 3:
            os._exit(7)
        return np.zeros((len(obs), 1))

    def update(self, actions, rewards, obs):
        pass
