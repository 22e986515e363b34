"""papergym environments. ``import papergym.envs`` registers every environment with Gymnasium.

``gym.make("papergym.envs:NonStatLipschitz-v0")`` also works without a prior import.
"""

from __future__ import annotations

import gymnasium as gym

from papergym.envs.spec import (
    BatchedOracle,
    InvalidActionError,
    NormalStream,
    Oracle,
    ProblemSpec,
    RunSeeds,
    UniformStream,
    agent_seed,
    instance_seed,
    noise_seed,
    run_seeds,
)

__all__ = [
    "BatchedOracle",
    "InvalidActionError",
    "NormalStream",
    "Oracle",
    "ProblemSpec",
    "RunSeeds",
    "UniformStream",
    "agent_seed",
    "instance_seed",
    "noise_seed",
    "run_seeds",
    "list_envs",
    "UnknownEnvError",
]

# id -> (entry point, vector entry point or None, domain)
_ENVS: dict[str, tuple[str, str | None]] = {
    "NonStatLipschitz-v0": (
        "papergym.envs.bandits.lipschitz:NonStatLipschitzEnv",
        "papergym.envs.bandits.lipschitz:NonStatLipschitzVectorEnv",
    ),
    "NoiseFreeGPBandit-v0": (
        "papergym.envs.bandits.gp:NoiseFreeGPBanditEnv",
        "papergym.envs.bandits.gp:NoiseFreeGPBanditVectorEnv",
    ),
    "MSetSemiBandit-v0": (
        "papergym.envs.bandits.semibandit:MSetSemiBanditEnv",
        "papergym.envs.bandits.semibandit:MSetSemiBanditVectorEnv",
    ),
    "FJSP-v0": (
        "papergym.envs.scheduling.fjsp.construct:FJSPEnv",
        "papergym.envs.scheduling.fjsp.vector:FJSPVectorEnv",
    ),
    "FJSPImprove-v0": (
        "papergym.envs.scheduling.fjsp.improve:FJSPImproveEnv",
        "papergym.envs.scheduling.fjsp.vector:FJSPImproveVectorEnv",
    ),
    "EntropicMeanField-v0": (
        "papergym.envs.games.mean_field:EntropicMeanFieldEnv",
        "papergym.envs.games.vector:EntropicMeanFieldVectorEnv",
    ),
    "EntropicMatrixGame-v0": (
        "papergym.envs.games.matrix_game:EntropicMatrixGameEnv",
        "papergym.envs.games.vector:EntropicMatrixGameVectorEnv",
    ),
    "EntropicMarkovGame-v0": (
        "papergym.envs.games.markov_game:EntropicMarkovGameEnv",
        "papergym.envs.games.vector:EntropicMarkovGameVectorEnv",
    ),
}


class UnknownEnvError(KeyError):
    """An environment id that papergym does not register."""

    def __str__(self) -> str:
        return str(self.args[0])


def _register_all() -> None:
    for env_id, (entry, vec_entry) in _ENVS.items():
        if env_id in gym.registry:
            continue
        # The env truncates itself at its `horizon` kwarg (one id serves every horizon), so no
        # TimeLimit wrapper is added here; `max_episode_steps` would pin one horizon.
        gym.register(
            id=env_id,
            entry_point=entry,
            vector_entry_point=vec_entry,
            disable_env_checker=True,
        )


def list_envs() -> list[str]:
    """Ids of every papergym environment."""
    return sorted(_ENVS)


def check_env_id(env_id: str) -> str:
    """Return the plain id (``papergym.envs:`` prefix removed) or raise :class:`UnknownEnvError`."""
    base = env_id.split(":")[-1]
    if base not in _ENVS:
        raise UnknownEnvError(f"unknown environment {env_id!r}; valid environments: {', '.join(list_envs())}")
    return base


_register_all()
