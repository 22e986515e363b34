"""Never returns from act (from the second round on)."""

import numpy as np


class Agent:
    def __init__(self, problem, *, seeds):
        self.t = 0

    def act(self, obs):
        self.t += 1
        while self.t > 1:
            pass
        return np.zeros((len(obs), 1))

    def update(self, actions, rewards, obs):
        pass
