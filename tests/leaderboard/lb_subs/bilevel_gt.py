"""A solver submission for DecentralizedBilevel-v0 (no papergym import, as in the sandbox): single-loop
decentralized bilevel descent with gradient tracking and fixed steps, every agent's oracles evaluated in one
vectorised call and all communication through the evaluator's ``mix``."""

import numpy as np


class GradientTracking:
    def __init__(self, *, seed=None, alpha=0.05):
        self.alpha = float(alpha)

    def solve(self, problem, budget, report):
        o, n = problem.oracle, int(problem.n)
        X = np.tile(np.asarray(problem.x0, dtype=float), (n, 1))
        Y, V = np.zeros((n, int(problem.d_y))), np.zeros((n, int(problem.d_y)))
        H = G_prev = None
        a = self.alpha
        for t in range(int(problem.rounds)):
            gy = o.grad_y_l(X, Y)
            gv = o.hvp_yy_l(X, Y, V) - o.grad_y_f(X, Y)
            gx = o.grad_x_f(X, Y) - o.jvp_xy_l(X, Y, V)
            H = gx if H is None else H + gx - G_prev
            G_prev = gx
            dx = X.shape[1]
            Z = o.mix(np.hstack([X - 0.1 * a * H, Y - a * gy, V - a * gv, H]))
            X, Y, V, H = Z[:, :dx], Z[:, dx : dx + Y.shape[1]], Z[:, dx + Y.shape[1] : dx + 2 * Y.shape[1]], Z[:, -dx:]
            if (t + 1) % 50 == 0:
                report(X, iteration=t + 1)
        return X
