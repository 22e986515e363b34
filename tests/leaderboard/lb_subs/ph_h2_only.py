"""A PointCloudPH-v0 submission (no papergym import) that games a weak validity check: it computes the exact
Alpha H2 diagram but returns empty H0 and H1 diagrams. The board must score it as invalid (PAR-2)."""

import gudhi
import numpy as np


class H2Only:
    def __init__(self, *, seed=None):
        pass

    def solve(self, problem, budget, report):
        st = gudhi.AlphaComplex(points=np.asarray(problem.points)).create_simplex_tree(output_squared_values=False)
        st.compute_persistence(persistence_dim_max=True)
        empty = np.zeros((0, 2))
        dg = [empty] * int(problem.max_dim) + [np.asarray(st.persistence_intervals_in_dimension(problem.max_dim))]
        return {"diagrams": dg, "meta": {"n_simplices": 1, "n_landmarks": 1}}
