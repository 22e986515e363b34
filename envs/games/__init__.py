"""Entropic games of the Best Response flow paper (Lascu & Majka, *Non-convex entropic mean-field optimization via
Best Response flow*, NeurIPS 2025, arXiv:2505.22760; ``docs/papers/best-response-games.md``).

Gymnasium ids: ``EntropicMeanField-v0`` (:mod:`.mean_field`), ``EntropicMatrixGame-v0`` (:mod:`.matrix_game`),
``EntropicMarkovGame-v0`` (:mod:`.markov_game`). PettingZoo parallel environments, named as PettingZoo's own
(``games`` extra)::

    from papergym.envs.games import entropic_matrix_game_v0, entropic_markov_game_v0
    env = entropic_matrix_game_v0.parallel_env(instance="random")
"""

from __future__ import annotations

from papergym.envs.games import entropic_markov_game_v0, entropic_matrix_game_v0

__all__ = ["entropic_matrix_game_v0", "entropic_markov_game_v0"]
