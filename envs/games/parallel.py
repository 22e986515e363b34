"""PettingZoo ``ParallelEnv`` view of the two-player entropic games
(``docs/papers/best-response-games.md``).

Agents ``"min"`` and ``"max"`` move simultaneously; each observes its own first variation (payoff vector /
``q`` table) at the new profile and receives ``−F^σ`` (min) or ``+F^σ`` (max). Truncation after ``horizon``
steps. ``env.oracle`` is the game's :class:`~papergym.envs.games.twoplayer.GameOracle` (``equilibrium_gap``,
exploitabilities, ``episode_metrics()``). Needs the ``games`` extra (``pip install 'papergym[games]'``).

Observation spaces: each player's part of the Gymnasium env's (``role="both"``) bounded ``Box``. ``state()`` is
the joint profile ``(μ_k, ν_k)`` side by side on the last axis, in ``state_space = Box(0, 1)`` of that shape
(every entry a probability). ``render_mode`` (``None``, ``"ansi"``, ``"rgb_array"``) and ``render()`` are the
Gymnasium env's (:mod:`papergym.envs.games.render`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils.env import ParallelEnv

from papergym.envs.games.render import RENDER_FPS, RENDER_MODES
from papergym.envs.spec import InvalidActionError

__all__ = ["EntropicParallelEnv"]

AGENTS = ("min", "max")


class EntropicParallelEnv(ParallelEnv):
    """Two learners playing one entropic game: the Gymnasium env with ``role="both"`` underneath."""

    metadata = {
        "render_modes": RENDER_MODES,
        "render_fps": RENDER_FPS,
        "name": "entropic_game_v0",
        "is_parallelizable": True,
    }

    def __init__(self, env_cls: type, kwargs: dict[str, Any]):
        kwargs = dict(kwargs)
        for k in ("role", "opponent", "opponent_kwargs"):
            if k in kwargs:
                raise ValueError(f"{k!r} does not apply to the PettingZoo env (both players are agents)")
        self._env = env_cls(role="both", **kwargs)
        self.metadata = {**self.metadata, "name": env_cls.ENV_ID}
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        game_shape = self._env.action_space.shape
        import gymnasium as gym

        self._n_min = self._env._blocks[0]["stop"]
        shapes = {"min": game_shape[:-1] + (self._n_min,), "max": game_shape[:-1] + (game_shape[-1] - self._n_min,)}
        self.action_spaces = {a: gym.spaces.Box(0.0, 1.0, shapes[a], np.float64) for a in AGENTS}
        box = self._env.observation_space
        lows, highs = self._split(box.low), self._split(box.high)
        self.observation_spaces = {a: gym.spaces.Box(lows[a], highs[a], shapes[a], np.float64) for a in AGENTS}
        self.state_space = gym.spaces.Box(0.0, 1.0, game_shape, np.float64)

    @property
    def render_mode(self) -> str | None:
        return self._env.render_mode

    def render(self):
        """The Gymnasium env's frame (text for ``"ansi"``, ``uint8`` image for ``"rgb_array"``) of the joint profile
        and the ``NI`` gap curve so far; ``RuntimeError`` before ``reset``."""
        return self._env.render()

    def observation_space(self, agent: str):
        return self.observation_spaces[agent]

    def action_space(self, agent: str):
        return self.action_spaces[agent]

    @property
    def oracle(self):
        return self._env.oracle

    @property
    def problem(self):
        """The public ``ProblemSpec`` of the joint game (``role="both"``)."""
        return self._env.problem

    def problem_for(self, agent: str):
        """The public ``ProblemSpec`` of one player (what a learner for that role is built from)."""
        if agent not in AGENTS:
            raise ValueError(f"agent must be 'min' or 'max', got {agent!r}")
        return self._env._problem(self._env.game, agent)

    def _split(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        return {"min": obs[..., : self._n_min].copy(), "max": obs[..., self._n_min :].copy()}

    def reset(self, seed: int | None = None, options: dict | None = None):
        obs, _ = self._env.reset(seed=seed, options=options)
        self.agents = list(AGENTS)
        return self._split(obs), {a: {} for a in AGENTS}

    def step(self, actions: dict[str, Any]):
        if not self.agents:
            raise RuntimeError("the episode is over: call reset()")
        missing = [a for a in AGENTS if a not in actions]
        if missing:
            raise InvalidActionError(f"actions missing for agent(s) {missing}; expected both 'min' and 'max'")
        extra = sorted(set(actions) - set(AGENTS))
        if extra:
            raise InvalidActionError(f"unknown agent(s) {extra}; the agents are 'min' and 'max'")
        parts = []
        for a in AGENTS:
            try:
                x = np.asarray(actions[a], dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise InvalidActionError(f"action of {a!r} must be an array of weights: {exc}") from None
            if x.shape != self.action_spaces[a].shape:
                raise InvalidActionError(
                    f"action of {a!r} must have shape {self.action_spaces[a].shape}, got {x.shape}"
                )
            parts.append(x)
        obs, r, term, trunc, _ = self._env.step(np.concatenate(parts, axis=-1))
        rewards = {"min": float(r), "max": -float(r)}
        terms = {a: bool(term) for a in AGENTS}
        truncs = {a: bool(trunc) for a in AGENTS}
        out = self._split(obs)
        if term or trunc:
            self.agents = []
        return out, rewards, terms, truncs, {a: {} for a in AGENTS}

    def state(self) -> np.ndarray:
        """The joint profile ``(μ_k, ν_k)`` on the last axis."""
        return np.concatenate([self._env._mu, self._env._nu], axis=-1)

    def close(self) -> None:
        self._env.close()
