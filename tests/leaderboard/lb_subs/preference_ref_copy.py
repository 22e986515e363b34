"""A PreferenceHallucination-v0 submission (numpy only, no papergym import): returns the public reference weights
unchanged, as a plain dict of arrays. The board must score it exactly like the registered ``sft`` baseline (the
nested ``ref_weights`` dict reaches the sandbox as a namespace)."""

import numpy as np

KEYS = ("embed", "init_w", "init_b", "w_ih", "w_hh", "b_ih", "b_hh", "out_w", "out_b")


class CopyReference:
    def __init__(self, *, seed=None):
        pass

    def solve(self, problem, budget, report):
        ref = problem.ref_weights
        d = ref if isinstance(ref, dict) else vars(ref)
        sol = {k: np.asarray(d[k], dtype=np.float32) for k in KEYS}
        report(sol, iteration=0, work=0)
        return sol
