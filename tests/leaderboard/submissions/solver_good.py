"""A solver that uses the problem's callables (RPC to the parent), reports, and returns."""

import numpy as np


class Solver:
    def __init__(self, seed=None, steps=2):
        self.rng = np.random.default_rng(seed)
        self.steps = steps

    def solve(self, problem, budget, report):
        t = problem.t_query
        y = np.zeros((t.size, problem.dim))
        for i in range(self.steps):
            y = y + problem.rhs(t, y)  # RPC
            report({"y": y}, iteration=i + 1, work=float(i + 1))
        fy, fdy = problem.jac(t, y)
        coeffs = problem.linear_form.coeffs(t)
        try:
            problem.rhs("bad")
            bad = "no error"
        except ValueError as exc:
            bad = str(exc)
        return {
            "y": y,
            "meta": {
                "fy_shape": list(fy.shape),
                "fdy": fdy,
                "coeffs": coeffs.shape,
                "bad": bad,
                "budget": [budget.max_seconds, budget.max_iterations],
                "noise": self.rng.random(),
            },
        }
