"""``RLDataSelection-v0``: choosing the RL training subset of a partially competent policy, the setting of *UFO-RL:
Uncertainty-Focused Optimization for Efficient Reinforcement Learning Data Selection* (Zhao, Xiong, Ding, Du, Ouyang,
Sun, Guan, Zhang, Liu, Hu, Qin & Liu, NeurIPS 2025, arXiv:2505.12457; code ``zy125413/UFO_RL``;
``docs/papers/ufo-rl.md``; tags: see docs/conventions.md). Needs the torch extra.

This package: :mod:`.task`, :mod:`.model`, :mod:`.report`. The task's public names are re-exported here."""

from papergym.envs.tasks.data_selection.task import (
    RL_DEFAULTS,
    TASK_ID,
    DataSelectionEvaluator,
    DataSelectionProblem,
    DataSelectionTask,
    PolicyServer,
    PolicyView,
    check_selection,
    selection_seconds,
)

__all__ = [
    "DataSelectionEvaluator",
    "DataSelectionProblem",
    "DataSelectionTask",
    "PolicyServer",
    "PolicyView",
    "RL_DEFAULTS",
    "TASK_ID",
    "check_selection",
    "selection_seconds",
]
