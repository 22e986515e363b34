"""Native vector versions of the entropic games (what the leaderboard's evaluator uses): ``num_envs``
independent runs stepped in a loop (:class:`~papergym.envs.loop_vector.LoopVectorEnv`); each run's exact
oracle is already vectorised over the grid / actions / states inside."""

from __future__ import annotations

from papergym.envs.games.markov_game import EntropicMarkovGameEnv
from papergym.envs.games.matrix_game import EntropicMatrixGameEnv
from papergym.envs.games.mean_field import EntropicMeanFieldEnv
from papergym.envs.loop_vector import LoopVectorEnv

__all__ = ["EntropicMeanFieldVectorEnv", "EntropicMatrixGameVectorEnv", "EntropicMarkovGameVectorEnv"]


class EntropicMeanFieldVectorEnv(LoopVectorEnv):
    """``num_envs`` runs of :class:`~papergym.envs.games.mean_field.EntropicMeanFieldEnv`."""

    SINGLE = EntropicMeanFieldEnv


class EntropicMatrixGameVectorEnv(LoopVectorEnv):
    """``num_envs`` runs of :class:`~papergym.envs.games.matrix_game.EntropicMatrixGameEnv`."""

    SINGLE = EntropicMatrixGameEnv


class EntropicMarkovGameVectorEnv(LoopVectorEnv):
    """``num_envs`` runs of :class:`~papergym.envs.games.markov_game.EntropicMarkovGameEnv`."""

    SINGLE = EntropicMarkovGameEnv
