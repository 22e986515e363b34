"""``DeepRegression-v0``: training deep fully connected networks to (near) zero loss, the setting of *Block
Coordinate Descent for Neural Networks Provably Finds Global Minima* (Akiyama, NeurIPS 2025, arXiv
2510.22667).

This package: :mod:`.task`. The task's public names are re-exported here."""

from papergym.envs.tasks.deep_regression.task import (
    ACTIVATIONS,
    DeepEvaluator,
    DeepProblem,
    DeepTask,
    activation,
    forward,
    lifted_objective,
    network_loss,
)

__all__ = [
    "ACTIVATIONS",
    "DeepEvaluator",
    "DeepProblem",
    "DeepTask",
    "activation",
    "forward",
    "lifted_objective",
    "network_loss",
]
