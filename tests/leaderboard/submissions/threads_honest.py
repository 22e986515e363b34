"""An honest agent that computes its action with 4 worker threads at every act (a thread that cannot
start fails the submission)."""

import threading

import numpy as np


class Agent:
    def __init__(self, problem, *, seeds, workers=4):
        self.workers = int(workers)

    def act(self, obs):
        out = [0.0] * self.workers

        def work(i):
            out[i] = float(np.sum(np.arange(1000.0) * (i + 1)))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(self.workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return np.full((len(obs), 1), sum(out) / 1e7)

    def update(self, actions, rewards, obs):
        pass
