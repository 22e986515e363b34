"""``DecentralizedBilevel-v0``: decentralized bilevel optimisation over a communication graph (Zhai, Yan &
Zhang, *Problem-Parameter-Free Decentralized Bilevel Optimization*, NeurIPS 2025, arXiv:2510.24288;
``docs/papers/adasdbo.md``).

This package: :mod:`.task`, :mod:`.report`. The task's public names are re-exported here."""

from papergym.envs.tasks.decentralized_bilevel.task import (
    BilevelEvaluator,
    BilevelOracle,
    BilevelOracleView,
    DecentralizedBilevelProblem,
    DecentralizedBilevelTask,
    DigitsInstance,
    SynInstance,
    make_graph,
    metropolis_hastings,
    parse_scale,
    spectral_gap,
)

__all__ = [
    "BilevelEvaluator",
    "BilevelOracle",
    "BilevelOracleView",
    "DecentralizedBilevelProblem",
    "DecentralizedBilevelTask",
    "DigitsInstance",
    "SynInstance",
    "make_graph",
    "metropolis_hastings",
    "parse_scale",
    "spectral_gap",
]
