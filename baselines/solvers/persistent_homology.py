"""Baselines of ``PointCloudPH-v0`` (``docs/papers/flood.md``). Every solver runs on each cloud of the problem
(:func:`~papergym.envs.tasks.persistent_homology.solve_clouds`: one cloud, or the ``classify`` cloud set) and
returns diagrams in **radius** units with ``meta = {"n_simplices", "n_landmarks"}`` (averaged over clouds).

* ``alpha`` — gudhi's Alpha complex, ``AlphaComplex(points).create_simplex_tree(output_squared_values=False)``,
  and its persistence (Edelsbrunner & Mücke 1994), on all points, or (``landmarks = m``) on ``m`` exact-FPS
  landmarks only: the ablation of the flooding step.
* ``rips`` — gudhi's Vietoris–Rips complex ``RipsComplex(points=S, max_edge_length=ℓ)`` up to dimension
  ``max_dim + 1`` on ``landmarks`` FPS points ``S`` (defaults 500, ℓ = 0.5 [design]); filtration values
  are edge **lengths** (diameters), so the diagrams are halved to radius units. Below ``ℓ`` voids wider than
  about ``ℓ`` never fill (infinite bars, which the evaluator counts against the run).
* ``sparse-rips`` — the same with gudhi's sparse Rips (Sheehy 2013, ``sparse = ε``); defaults 3,000
  landmarks, ε = 1.0, ℓ = 0.45 [design]. The sparsification is (1 + ε)-interleaved with Rips.
* ``flooder`` — the authors' package (``pip install 'papergym[flooder]'``: flooder 1.0.1 with ``triton``,
  which its import needs even on CPU), run side by side as a **reference**, not ranked:
  ``flooder.flood_complex(points=…, landmarks=m, points_per_edge=p, use_triton=False,
  return_simplex_tree=True, start_idx=…)`` on CPU tensors (keyword arguments only: names and order changed
  across releases), then gudhi persistence. Defaults: the same ``m`` and ``p`` as ``flood`` (1,000 or 300 on
  ``classify``; 8 points per edge; flooder's own default is 30), ``dtype = float32`` (its usual input).
  Its landmarks come from bucket FPS (``fpsample``), so its diagrams differ slightly from ``flood``'s. If the
  package is missing the solve fails with an ``ImportError`` saying how to install it (status ``error``).
  The package is called, never patched.

The FPS start index is 0 for ``seed=None`` and ``default_rng(seed).integers(N)`` otherwise, as in ``flood``.
gudhi, torch and flooder are imported lazily.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from papergym.agents.base import register_solver
from papergym.validate import one_of, positive_float, positive_int

TASK = "PointCloudPH-v0"


def _intervals(st: Any, max_dim: int, scale: float = 1.0) -> list[np.ndarray]:
    st.compute_persistence(persistence_dim_max=True)
    return [
        scale * np.asarray(st.persistence_intervals_in_dimension(k), dtype=np.float64).reshape(-1, 2)
        for k in range(max_dim + 1)
    ]


def _subsample(pts: np.ndarray, m: int | None, seed: Any) -> np.ndarray:
    if m is None or m >= len(pts):
        return pts
    from papergym.agents.solvers.flood import farthest_point_sampling

    return pts[farthest_point_sampling(pts, m, seed=seed)]


class Alpha:
    """Alpha persistence (module docstring)."""

    def __init__(self, *, seed: Any = None, landmarks: int | None = None):
        self.seed = seed
        self.landmarks = None if landmarks is None else positive_int(landmarks, "landmarks")

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict:
        import gudhi

        from papergym.envs.tasks.persistent_homology import solve_clouds

        def one(points: np.ndarray):
            pts = _subsample(points, self.landmarks, self.seed)
            st = gudhi.AlphaComplex(points=pts).create_simplex_tree(output_squared_values=False)
            return _intervals(st, int(problem.max_dim)), {
                "n_simplices": int(st.num_simplices()),
                "n_landmarks": int(len(pts)),
            }

        sol = solve_clouds(problem, budget, one)
        report(sol, iteration=1, work=sol["meta"].get("n_simplices"))
        return sol


class Rips:
    """Vietoris–Rips or sparse Rips persistence on FPS landmarks, halved to radius units (module docstring)."""

    def __init__(
        self, *, seed: Any = None, landmarks: int = 500, max_edge_length: float = 0.5, sparse: float | None = None
    ):
        self.seed = seed
        self.landmarks = positive_int(landmarks, "landmarks")
        self.max_edge_length = positive_float(max_edge_length, "max_edge_length")
        self.sparse = None if sparse is None else positive_float(sparse, "sparse")

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict:
        import gudhi

        from papergym.envs.tasks.persistent_homology import solve_clouds

        max_dim = int(problem.max_dim)

        def one(points: np.ndarray):
            pts = _subsample(points, self.landmarks, self.seed)
            rc = gudhi.RipsComplex(points=pts, max_edge_length=self.max_edge_length, sparse=self.sparse)
            st = rc.create_simplex_tree(max_dimension=max_dim + 1)
            return _intervals(st, max_dim, 0.5), {"n_simplices": int(st.num_simplices()), "n_landmarks": int(len(pts))}

        sol = solve_clouds(problem, budget, one)
        report(sol, iteration=1, work=sol["meta"].get("n_simplices"))
        return sol


class Flooder:
    """The authors' ``flooder`` package on CPU (module docstring)."""

    def __init__(
        self, *, seed: Any = None, n_landmarks: int | None = None, points_per_edge: int = 8, dtype: str = "float32"
    ):
        self.seed = seed
        self.n_landmarks = None if n_landmarks is None else positive_int(n_landmarks, "n_landmarks")
        self.points_per_edge = positive_int(points_per_edge, "points_per_edge", 2)
        self.dtype = one_of(dtype, "dtype", ("float32", "float64"))

    def solve(self, problem: Any, budget: Any, report: Callable[..., None]) -> dict:
        try:
            import flooder
            import torch
        except ImportError as exc:
            raise ImportError(
                f"the flooder reference needs the authors' package: pip install 'papergym[flooder]' ({exc})"
            ) from exc
        from papergym.envs.tasks.persistent_homology import solve_clouds

        dtype = getattr(torch, self.dtype)
        n_lm = self.n_landmarks or (300 if getattr(problem, "family", "") == "classify" else 1000)
        max_dim = int(problem.max_dim)

        def one(points: np.ndarray):
            n = len(points)
            start = 0 if self.seed is None else int(np.random.default_rng(self.seed).integers(n))
            st = flooder.flood_complex(
                points=torch.tensor(points, dtype=dtype),
                landmarks=min(n_lm, n),
                points_per_edge=self.points_per_edge,
                use_triton=False,
                return_simplex_tree=True,
                start_idx=start,
            )
            return _intervals(st, max_dim), {"n_simplices": int(st.num_simplices()), "n_landmarks": min(n_lm, n)}

        sol = solve_clouds(problem, budget, one)
        report(sol, iteration=1, work=sol["meta"].get("n_simplices"))
        return sol


def _alpha(*, seed=None, **hp):
    return Alpha(seed=seed, **hp)


def _rips(*, seed=None, **hp):
    return Rips(seed=seed, **hp)


def _sparse_rips(*, seed=None, landmarks=3000, max_edge_length=0.45, sparse=1.0):
    return Rips(seed=seed, landmarks=landmarks, max_edge_length=max_edge_length, sparse=sparse)


def _flooder(*, seed=None, **hp):
    return Flooder(seed=seed, **hp)


register_solver(
    "alpha",
    _alpha,
    tasks=[TASK],
    role="baseline",
    description="gudhi Alpha complex persistence in radius units (all points, or FPS landmarks)",
    defaults={"landmarks": None},
    requires=("gudhi",),
)
register_solver(
    "rips",
    _rips,
    tasks=[TASK],
    role="baseline",
    description="gudhi Vietoris-Rips persistence on FPS landmarks (diameters halved to radii)",
    defaults={"landmarks": 500, "max_edge_length": 0.5},
    requires=("gudhi",),
)
register_solver(
    "sparse-rips",
    _sparse_rips,
    tasks=[TASK],
    role="baseline",
    description="gudhi sparse Rips (Sheehy 2013) persistence on FPS landmarks, radius units",
    requires=("gudhi",),
)
register_solver(
    "flooder",
    _flooder,
    tasks=[TASK],
    role="reference",
    description="the authors' flooder 1.0.1 package (CPU path), run side by side, not ranked",
    defaults={"n_landmarks": None, "points_per_edge": 8, "dtype": "float32"},
    requires=("gudhi", "torch", "flooder"),
)
