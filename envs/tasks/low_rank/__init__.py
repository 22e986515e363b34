"""``LowRankRecovery-v0``: ill-conditioned low-rank matrix recovery, the proxy of *Finding Low-Rank Matrix
Weights in DNNs via Riemannian Optimization: RAdaGrad and RAdamW* (NeurIPS 2025, OpenReview ``tiGFiCrmKm``).

This package: :mod:`.task`. The task's public names are re-exported here."""

from papergym.envs.tasks.low_rank.task import (
    FAMILIES,
    LowRankEvaluator,
    LowRankInstance,
    LowRankOracle,
    LowRankProblem,
    LowRankTask,
    matrix_of,
    top_singular_value,
)

__all__ = [
    "FAMILIES",
    "LowRankEvaluator",
    "LowRankInstance",
    "LowRankOracle",
    "LowRankProblem",
    "LowRankTask",
    "matrix_of",
    "top_singular_value",
]
