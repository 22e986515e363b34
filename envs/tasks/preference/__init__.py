"""``PreferenceHallucination-v0``: object hallucination of a toy image captioner and its repair by preference
optimisation, the setting of *Mitigating Hallucination Through Theory-Consistent Symmetric Multimodal Preference
Optimization* (Liu, Song, Li, Wei, Zheng, Yin & Nie, NeurIPS 2025, arXiv:2506.11712; official code
``Liuwq-bit/SymMPO``; ``docs/papers/symmpo.md``; tags: see docs/conventions.md).

This package: :mod:`.task`, :mod:`.report`. The task's public names are re-exported here."""

from papergym.envs.tasks.preference.task import (
    MAX_LEN,
    PAD,
    SIZES,
    WEIGHT_KEYS,
    PreferenceEvaluator,
    PreferenceProblem,
    PreferenceTask,
    World,
    absent_partners,
    build_world,
    caption_metrics,
    captions,
    check_weights,
    load_reference,
    nearest_jaccard,
    np_greedy_decode,
    np_sequence_logprob,
    object_embeddings,
    rejected_captions,
    sample_scenes,
    scene_features,
    train_reference,
    weight_shapes,
)

__all__ = [
    "MAX_LEN",
    "PAD",
    "PreferenceEvaluator",
    "PreferenceProblem",
    "PreferenceTask",
    "SIZES",
    "WEIGHT_KEYS",
    "World",
    "absent_partners",
    "build_world",
    "caption_metrics",
    "captions",
    "check_weights",
    "load_reference",
    "nearest_jaccard",
    "np_greedy_decode",
    "np_sequence_logprob",
    "object_embeddings",
    "rejected_captions",
    "sample_scenes",
    "scene_features",
    "train_reference",
    "weight_shapes",
]
