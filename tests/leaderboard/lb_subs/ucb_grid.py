"""A well-behaved submission: UCB1 on a fixed grid of K arms of [0, 1]^d (numpy, one agent per seed).

Self-contained (papergym is not importable in the sandbox): only numpy and the ProblemSpec look-alike.
"""

import numpy as np


class GridUCB:
    def __init__(self, problem, *, seed=None, k=16, c=1.0):
        self.d = int(problem.d)
        self.grid = (np.arange(k) + 0.5) / k
        self.k, self.c = k, float(c)
        self.n = np.zeros(k)
        self.s = np.zeros(k)
        self.t = 0
        self.rng = np.random.default_rng(seed)
        self.last = 0

    def act(self, observation):
        self.t += 1
        if self.t <= self.k:
            i = self.t - 1
        else:
            ucb = self.s / self.n + self.c * np.sqrt(2.0 * np.log(self.t) / self.n)
            best = np.flatnonzero(ucb == ucb.max())
            i = int(self.rng.choice(best))
        self.last = i
        return np.full(self.d, self.grid[i])

    def update(self, action, reward, observation):
        self.n[self.last] += 1
        self.s[self.last] += reward


def make_agent(problem, *, seed=None, k=16, c=1.0):
    return GridUCB(problem, seed=seed, k=k, c=c)
