"""Returns NaN, wrong-shape or out-of-space actions (hyperparameter ``mode``)."""

import numpy as np


class Agent:
    def __init__(self, problem, *, seeds, mode="nan"):
        self.n, self.mode = len(seeds), mode

    def act(self, obs):
        if self.mode == "nan":
            return np.full((self.n, 1), np.nan)
        if self.mode == "shape":
            return np.zeros((self.n, 3, 2))
        if self.mode == "outside":
            return np.full((self.n, 1), 5.0)
        return "not an action"

    def update(self, actions, rewards, obs):
        pass
