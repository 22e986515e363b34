"""PettingZoo-style module of ``EntropicMatrixGame-v0``: ``parallel_env(**kwargs)`` (agents ``"min"``, ``"max"``)
and ``env(**kwargs)`` (its AEC version via PettingZoo's ``parallel_to_aec``). kwargs as
:class:`~papergym.envs.games.matrix_game.EntropicMatrixGameEnv` without ``role``/``opponent``."""

from __future__ import annotations

from typing import Any

from papergym.envs.games.matrix_game import parallel_env

__all__ = ["parallel_env", "env"]


def env(**kwargs: Any):
    from pettingzoo.utils.conversions import parallel_to_aec

    return parallel_to_aec(parallel_env(**kwargs))
