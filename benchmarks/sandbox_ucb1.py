"""A submission file for ``bench_sandbox.py``: UCB1 on a fixed grid of K arms of [0, 1]^d, batched
over seeds with numpy (``make_agent(problem, seeds=[...], K=32)``). Deterministic (argmax ties go to
the lowest arm), so the seeds only matter through the env."""

import numpy as np


class UCB1Grid:
    def __init__(self, problem, *, seeds, K=32):
        self.n = len(seeds)
        self.K = int(K)
        d = int(problem.action_space.shape[0])
        self.arms = np.repeat(((np.arange(self.K) + 0.5) / self.K)[:, None], d, axis=1)
        self.counts = np.zeros((self.n, self.K))
        self.sums = np.zeros((self.n, self.K))
        self.t = 0
        self.idx = np.zeros(self.n, dtype=np.int64)
        self.rows = np.arange(self.n)

    def act(self, observations):
        self.t += 1
        if self.t <= self.K:
            self.idx[:] = self.t - 1
        else:
            ucb = self.sums / self.counts + np.sqrt(2.0 * np.log(self.t) / self.counts)
            self.idx = ucb.argmax(axis=1)
        return self.arms[self.idx]

    def update(self, actions, rewards, observations):
        self.counts[self.rows, self.idx] += 1.0
        self.sums[self.rows, self.idx] += rewards


make_agent = UCB1Grid
