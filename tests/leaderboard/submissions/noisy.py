"""Prints a lot on stdout and stderr, then works."""

import sys

import numpy as np


class Agent:
    def __init__(self, problem, *, seeds):
        self.t = 0

    def act(self, obs):
        self.t += 1
        for i in range(2000):
            print(f"stdout line {self.t}.{i} " + "x" * 200)
            sys.stderr.write(f"stderr line {self.t}.{i} " + "y" * 200 + "\n")
        print(f"LAST-LINE-{self.t}", flush=True)
        return np.full((len(obs), 1), 0.5)

    def update(self, actions, rewards, obs):
        pass
