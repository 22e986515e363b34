"""A solver submission for RLDataSelection-v0 (no papergym import): UFO-RL's single teacher-forced pass through the
evaluator's counting policy, the k problems whose geometric-mean gold-token probability is closest to the pool mean.
With ``full_pool=True`` it tries to submit the whole pool (10x the RL data), which the evaluator must refuse."""

import numpy as np


class UFOSinglePass:
    def __init__(self, *, seed=None, full_pool=False):
        self.full_pool = bool(full_pool)

    def solve(self, problem, budget, report):
        prompts, answers = list(problem.prompts), list(problem.answers)
        if self.full_pool:
            return np.arange(len(prompts))
        lp = np.asarray(problem.policy.logprobs(prompts, answers), dtype=float)
        L = np.array([len(a) for a in answers])  # the gold digits only (row: digits, then EOS)
        m = np.arange(lp.shape[1])[None, :] < L[:, None]
        s = np.exp(np.where(m, np.nan_to_num(lp), 0.0).sum(1) / L)
        score = 1.0 - (s - s.mean()) ** 2
        return np.argsort(-score, kind="stable")[: int(problem.k)]


class FullPool(UFOSinglePass):
    def __init__(self, *, seed=None):
        super().__init__(seed=seed, full_pool=True)
