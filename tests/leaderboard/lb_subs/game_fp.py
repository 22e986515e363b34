"""A submitted entropic-game learner (no papergym import, as in the sandbox): fictitious play written from
the public problem alone — the player blocks give each block's columns, sign, temperature, reference
measure and initial strategy."""

import numpy as np


class Agent:
    def __init__(self, problem, seed=None):
        self.blocks = problem.params["blocks"]
        self.x = np.zeros(problem.action_space.shape)
        for b in self.blocks:
            self.x[..., b["start"] : b["stop"]] = np.asarray(b["initial"], dtype=float)
        self.k = 0

    def act(self, obs):
        g = np.asarray(obs, dtype=float)
        br = np.empty_like(self.x)
        for b in self.blocks:
            s = slice(b["start"], b["stop"])
            z = np.log(np.asarray(b["reference"], dtype=float)) + b["sign"] * g[..., s] / b["temperature"]
            z = np.exp(z - z.max(axis=-1, keepdims=True))
            br[..., s] = z / z.sum(axis=-1, keepdims=True)
        h = 1.0 / (self.k + 1)
        self.x = (1 - h) * self.x + h * br
        self.k += 1
        return self.x.copy()

    def update(self, action, reward, obs):
        pass


def make_agent(problem, seed=None):
    return Agent(problem, seed)
