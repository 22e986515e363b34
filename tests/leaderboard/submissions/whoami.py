"""Its action is ``[uid, gid]`` of the process it runs as."""

import os

import numpy as np


class Agent:
    def __init__(self, problem, *, seeds):
        pass

    def act(self, obs):
        return np.tile(np.array([[float(os.getuid()), float(os.getgid())]]), (len(obs), 1))

    def update(self, actions, rewards, obs):
        pass
