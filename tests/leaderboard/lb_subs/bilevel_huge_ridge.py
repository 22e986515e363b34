"""A gaming attempt on DecentralizedBilevel-v0: no oracle call, no communication, every agent returns an
enormous ridge weight. The hypergradient is ~0 there (y* = 0: nothing depends on x any more), so a board
ranked by |grad Phi|^2 would put this first; the board ranks by the upper-level loss instead."""

import numpy as np


class HugeRidge:
    def __init__(self, *, seed=None):
        pass

    def solve(self, problem, budget, report):
        return np.full((int(problem.n), int(problem.d_x)), 1e6)
