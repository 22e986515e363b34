"""A solver submission for SimpleBilevel-v0 (no papergym import): gradient descent on f + rho*g with a fixed
rho and step 1/(L_f + rho L_g), gradients from the evaluator's counting oracle, stopping at the budget."""

import numpy as np


class FixedPenalty:
    def __init__(self, *, seed=None, rho=100.0):
        self.rho = float(rho)

    def solve(self, problem, budget, report):
        o = problem.oracle
        x = np.array(problem.x0, dtype=float)
        eta = 1.0 / (float(problem.L_f) + self.rho * float(problem.L_g))
        k = 0
        while o.work_used() + 1 <= float(problem.max_work) and k < 2000:
            gf, gg = o.grads(x)
            x = x - eta * (np.asarray(gf) + self.rho * np.asarray(gg))
            k += 1
            if k % 200 == 0:
                report(x, iteration=k)
        return x
