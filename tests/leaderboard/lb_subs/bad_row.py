"""A batched submission whose run with the largest agent seed plays outside [0, 1] at round 5
(invalid_action for that run only); the others play a fixed point."""

import numpy as np


def make_batched(problem, *, seeds):
    class Batched:
        n_envs = len(seeds)

        def __init__(self):
            self.t = 0
            self.d = int(problem.d)

        def act(self, observations):
            self.t += 1
            a = np.full((self.n_envs, self.d), 0.5)
            if self.t == 5:
                a[int(np.argmax(seeds))] = 7.0
            return a

        def update(self, actions, rewards, observations):
            pass

    return Batched()
