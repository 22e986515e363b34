"""A solver submission for PowerLawRandomFeatures-v0 (no papergym import, as in the sandbox): plain one-pass
SGD with step 0.5 / trace, gradients from the evaluator's oracle, reports at the public checkpoints."""

import numpy as np


class PLRFSGD:
    def __init__(self, *, seed=None, c2=0.5):
        self.c2 = float(c2)

    def solve(self, problem, budget, report):
        theta = np.array(problem.theta0, dtype=float)
        step = self.c2 / float(problem.trace)
        marks = set(int(c) for c in problem.checkpoints)
        for t in range(int(problem.steps)):
            theta = theta - step * np.asarray(problem.oracle.grad(theta))
            if t + 1 in marks:
                report(theta, iteration=t + 1)
        return theta
