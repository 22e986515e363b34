"""``FeatureStaircase-v0``: predict the loss staircase of gradient descent from small initialisation without
simulating it — the setting of *Alternating Gradient Flows: A Theory of Feature Learning in Two-layer Neural
Networks* (Kunin, Marchetti, Chen, Karkada, Simon, DeWeese, Ganguli, Miolane, NeurIPS 2025, arXiv:2506.06489;
``docs/papers/agf.md``; tags: see docs/conventions.md).

This package: :mod:`.task`, :mod:`.modular`, :mod:`.report`. The task's public names are re-exported here."""

from papergym.envs.tasks.staircase.task import (
    FLAT_TOL,
    FLOOR,
    MIN_DROP,
    MIN_PLATEAU,
    SETTINGS,
    TASK_ID,
    WINDOW,
    StaircaseEvaluator,
    StaircaseProblem,
    StaircaseTask,
    compute_ground_truth,
    diagonal_instance,
    extract_staircase,
    flow_diagonal,
    gd_diagonal,
    gd_diagonal_losses,
    gd_linear,
    ground_truth,
    linear_init,
    linear_instance,
    linear_modes,
    linear_stats,
    merge_steps,
    parse_steps,
    score_staircase,
)

__all__ = [
    "FLAT_TOL",
    "FLOOR",
    "MIN_DROP",
    "MIN_PLATEAU",
    "SETTINGS",
    "StaircaseEvaluator",
    "StaircaseProblem",
    "StaircaseTask",
    "TASK_ID",
    "WINDOW",
    "compute_ground_truth",
    "diagonal_instance",
    "extract_staircase",
    "flow_diagonal",
    "gd_diagonal",
    "gd_diagonal_losses",
    "gd_linear",
    "ground_truth",
    "linear_init",
    "linear_instance",
    "linear_modes",
    "linear_stats",
    "merge_steps",
    "parse_steps",
    "score_staircase",
]
