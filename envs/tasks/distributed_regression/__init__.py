"""``DistributedRegression-v0``: local SGD under second-order heterogeneity (Patel, Zindari, Stich, Wang,
*Revisiting Consensus Error: A Fine-grained Analysis of Local SGD under Second-order Data Heterogeneity*,
NeurIPS 2025, OpenReview ``u1QFeoxnhW``).

This package: :mod:`.task`, :mod:`.report`. The task's public names are re-exported here."""

from papergym.envs.tasks.distributed_regression.task import (
    DistributedEvaluator,
    DistributedInstance,
    DistributedProblem,
    DistributedTask,
    FederatedOracle,
    ProtocolError,
)

__all__ = [
    "DistributedEvaluator",
    "DistributedInstance",
    "DistributedProblem",
    "DistributedTask",
    "FederatedOracle",
    "ProtocolError",
]
