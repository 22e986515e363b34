"""``SimpleBilevel-v0``: stationary points of nonconvex simple bilevel problems (Cao, Jiang, Yazdandoost Hamedani
& Mokhtari, *On the Complexity of Finding Stationary Points in Nonconvex Simple Bilevel Optimization*, NeurIPS 2025,
arXiv:2507.23155; ``docs/papers/dbgd.md``; tags: see docs/conventions.md).

This package: :mod:`.task`, :mod:`.report`. The task's public names are re-exported here."""

from papergym.envs.tasks.simple_bilevel.task import (
    FAMILIES,
    WORK_COSTS,
    SimpleBilevelEvaluator,
    SimpleBilevelOracle,
    SimpleBilevelOracleView,
    SimpleBilevelProblem,
    SimpleBilevelTask,
    make_instance,
    stationarity,
)

__all__ = [
    "FAMILIES",
    "SimpleBilevelEvaluator",
    "SimpleBilevelOracle",
    "SimpleBilevelOracleView",
    "SimpleBilevelProblem",
    "SimpleBilevelTask",
    "WORK_COSTS",
    "make_instance",
    "stationarity",
]
