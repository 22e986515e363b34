"""Well-behaved per-run agent (the per-seed twin of good_batched)."""

import numpy as np


class Agent:
    def __init__(self, problem, *, seed, eps=0.2, K=8):
        self.rng = np.random.default_rng(seed)
        self.K, self.eps = K, eps
        self.d = problem.action_space.shape[0]
        self.sums = np.zeros(K)
        self.cnt = np.ones(K)
        self.idx = 0

    def act(self, obs):
        u = self.rng.random()
        rnd = self.rng.integers(self.K)
        self.idx = int(rnd if u < self.eps else (self.sums / self.cnt).argmax())
        return np.full(self.d, (self.idx + 0.5) / self.K)

    def update(self, action, reward, obs):
        self.sums[self.idx] += reward
        self.cnt[self.idx] += 1


def make_agent(problem, *, seed, **hp):
    return Agent(problem, seed=seed, **hp)
