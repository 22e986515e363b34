"""``PointCloudPH-v0``: persistent homology of large point clouds, the task of *The Flood Complex: Large-Scale
Persistent Homology on Millions of Points* (Graf et al., NeurIPS 2025, arXiv:2509.22432;
``docs/papers/flood.md``; tags: see docs/conventions.md).

This package: :mod:`.task`, :mod:`.clouds` (the point clouds), :mod:`.classify`, :mod:`.report`. The task's public
names are re-exported here."""

from papergym.envs.tasks.persistent_homology.task import (
    FAMILIES,
    SHAPES,
    PHClassifyEvaluator,
    PHClassifyProblem,
    PHEvaluator,
    PHProblem,
    PHTask,
    alpha_reference,
    annulus,
    bottleneck,
    check_diagrams,
    clouds_of,
    figure_eight,
    generate,
    noisy_torus,
    solve_clouds,
    swiss_cheese,
    wasserstein1,
)

__all__ = [
    "FAMILIES",
    "PHClassifyEvaluator",
    "PHClassifyProblem",
    "PHEvaluator",
    "PHProblem",
    "PHTask",
    "SHAPES",
    "alpha_reference",
    "annulus",
    "bottleneck",
    "check_diagrams",
    "clouds_of",
    "figure_eight",
    "generate",
    "noisy_torus",
    "solve_clouds",
    "swiss_cheese",
    "wasserstein1",
]
