"""``PowerLawRandomFeatures-v0``: one-pass SGD-type training on power-law random features (PLRF), the
setting of *Dimension-adapted Momentum Outscales SGD* (Paquette, Ferbach, Paquette, Gidel, Everett,
NeurIPS 2025, arXiv 2505.16098).

This package: :mod:`.task`, :mod:`.report`. The task's public names are re-exported here."""

from papergym.envs.tasks.power_law_features.task import (
    DEFAULT_PAIRS,
    GradientOracle,
    PLRFEvaluator,
    PLRFModel,
    PLRFProblem,
    PLRFTask,
    checkpoints,
    population_trace,
    slope_window,
)

__all__ = [
    "DEFAULT_PAIRS",
    "GradientOracle",
    "PLRFEvaluator",
    "PLRFModel",
    "PLRFProblem",
    "PLRFTask",
    "checkpoints",
    "population_trace",
    "slope_window",
]
