"""Baselines of ``PointCloudPH-v0`` (spec ``topology.md`` §6): ``alpha`` — gudhi's Alpha complex in radius units
(``AlphaComplex(points).create_simplex_tree(output_squared_values=False)``) and its persistence, on all points
or (hyperparameter ``landmarks = m``) on ``m`` exact-FPS landmarks only (the ablation of the flooding step).
gudhi is imported lazily, inside :meth:`Alpha.solve`. ``rips``, ``sparse-rips`` and ``flooder`` are not
implemented yet."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from papergym.agents.base import register_solver

TASK = "PointCloudPH-v0"


class Alpha:
    """Alpha persistence; returns ``{"diagrams": [D_0, …, D_max_dim], "meta": {"n_simplices", "n_landmarks"}}``."""

    def __init__(self, *, seed: Any = None, landmarks: int | None = None):
        if landmarks is not None and (isinstance(landmarks, bool) or not isinstance(landmarks, (int, np.integer))
                                      or landmarks < 1):
            raise ValueError(f"landmarks must be None or an integer >= 1, got {landmarks!r}")
        self.seed = seed
        self.landmarks = None if landmarks is None else int(landmarks)

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict:
        import gudhi

        pts = np.asarray(problem.points, dtype=np.float64)
        if self.landmarks is not None and self.landmarks < len(pts):
            from papergym.agents.solvers.flood import farthest_point_sampling

            pts = pts[farthest_point_sampling(pts, self.landmarks, seed=self.seed)]
        st = gudhi.AlphaComplex(points=pts).create_simplex_tree(output_squared_values=False)
        st.compute_persistence(persistence_dim_max=True)
        dgms = [np.asarray(st.persistence_intervals_in_dimension(k), dtype=np.float64).reshape(-1, 2)
                for k in range(int(problem.max_dim) + 1)]
        sol = {"diagrams": dgms, "meta": {"n_simplices": int(st.num_simplices()), "n_landmarks": int(len(pts))}}
        report(sol, iteration=1, work=st.num_simplices())
        return sol


def _alpha(*, seed=None, **hp):
    return Alpha(seed=seed, **hp)


register_solver("alpha", _alpha, tasks=[TASK], role="baseline",
                description="gudhi Alpha complex persistence in radius units (all points, or FPS landmarks)",
                defaults={"landmarks": None}, requires=("gudhi",))
