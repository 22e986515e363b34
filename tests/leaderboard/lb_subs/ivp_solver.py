"""A solver submission for NystromODE-v0: integrates the public right-hand side with scipy's solve_ivp
(RK45), calling rhs through the evaluator, and reports once."""

import numpy as np
from scipy.integrate import solve_ivp


class IVPSolver:
    def __init__(self, *, seed=None, rtol=1e-8):
        self.rtol = float(rtol)

    def solve(self, problem, budget, report):
        p, order = int(problem.dim), int(problem.order)
        ic = np.asarray(problem.ic, dtype=float)

        def f(t, z):
            tt = np.array([t])
            if order == 1:
                return problem.rhs(tt, z.reshape(1, p))[0]
            y, dy = z[:p], z[p:]
            return np.concatenate([dy, problem.rhs(tt, y.reshape(1, p), dy.reshape(1, p))[0]])

        z0 = ic.reshape(-1)
        sol = solve_ivp(
            f, (problem.t0, problem.tf), z0, t_eval=np.asarray(problem.t_query), rtol=self.rtol, atol=self.rtol * 1e-2
        )
        y = sol.y[:p].T
        report(y, iteration=1)
        return y
