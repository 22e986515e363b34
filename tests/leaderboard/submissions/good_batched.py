"""Well-behaved batched agent: epsilon-greedy over a grid, randomness from the seeds."""

import numpy as np


class Agent:
    def __init__(self, problem, *, seeds, eps=0.2, K=8):
        self.rngs = [np.random.default_rng(s) for s in seeds]
        self.n, self.K, self.eps = len(seeds), K, eps
        self.d = problem.action_space.shape[0]
        self.sums = np.zeros((self.n, K))
        self.cnt = np.ones((self.n, K))
        self.idx = np.zeros(self.n, dtype=int)

    def act(self, obs):
        u = np.array([r.random() for r in self.rngs])
        rnd = np.array([r.integers(self.K) for r in self.rngs])
        greedy = (self.sums / self.cnt).argmax(1)
        self.idx = np.where(u < self.eps, rnd, greedy)
        return np.repeat(((self.idx + 0.5) / self.K)[:, None], self.d, axis=1)

    def update(self, actions, rewards, obs):
        r = np.arange(self.n)
        self.sums[r, self.idx] += rewards
        self.cnt[r, self.idx] += 1
