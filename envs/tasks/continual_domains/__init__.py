"""``ContinualDomains-v0``: multi-domain continual learning driven by the evaluator, the setting of *Learning Expandable
and Adaptable Representations for Continual Learning* (LEAR; Yu, Liu, Ye, Bors, Hu et al., NeurIPS 2025, OpenReview
``uXKgVqYTJ2``; official code ``yrluestc/NeurIPS2025-LEAR``).

This package: :mod:`.task`, :mod:`.report`. The task's public names are re-exported here."""

from papergym.envs.tasks.continual_domains.task import (
    DIGIT_DOMAINS,
    HETERO_DOMAINS,
    WEIGHTS_PATH,
    Backbone,
    ContinualEvaluator,
    ContinualProblem,
    ContinualStream,
    ContinualTask,
    Domain,
    Stream,
    StreamError,
    accuracy_metrics,
    backbone_features,
    load_backbone,
    make_domains,
    source_split,
    train_backbone,
)

__all__ = [
    "Backbone",
    "ContinualEvaluator",
    "ContinualProblem",
    "ContinualStream",
    "ContinualTask",
    "DIGIT_DOMAINS",
    "Domain",
    "HETERO_DOMAINS",
    "Stream",
    "StreamError",
    "WEIGHTS_PATH",
    "accuracy_metrics",
    "backbone_features",
    "load_backbone",
    "make_domains",
    "source_split",
    "train_backbone",
]
