"""``LipschitzApprox-v0``: certified 1-Lipschitz function approximation and robust classification, the setting of
*Approximation theory for 1-Lipschitz ResNets* (Murari, Furuya & Schönlieb, NeurIPS 2025, arXiv 2505.12003; code
``davidemurari/1LipschitzResNets``).

This package: :mod:`.task`, :mod:`.report`. The task's public names are re-exported here."""

from papergym.envs.tasks.lipschitz_approx.task import (
    ACTIVATIONS,
    LAYER_TYPES,
    TASK_ID,
    LipschitzEvaluator,
    LipschitzProblem,
    LipschitzTask,
    Network,
    certified_bound,
    empirical_lipschitz,
    mixed_norm_bound,
    parse_network,
    target_function,
)

__all__ = [
    "ACTIVATIONS",
    "LAYER_TYPES",
    "LipschitzEvaluator",
    "LipschitzProblem",
    "LipschitzTask",
    "Network",
    "TASK_ID",
    "certified_bound",
    "empirical_lipschitz",
    "mixed_norm_bound",
    "parse_network",
    "target_function",
]
