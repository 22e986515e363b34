"""The plumbing shared by the bandit envs (``NonStatLipschitz-v0``, ``NoiseFreeGPBandit-v0``,
``MSetSemiBandit-v0``): :class:`BanditEnv` for the single env and :class:`BanditVectorEnv` for the vector
env that steps ``num_envs`` seeds together in numpy.

Both implement Gymnasium's ``reset`` / ``step`` contract the same way for every bandit:

* no render modes (``render_mode`` must be None), no autoreset (``AutoresetMode.DISABLED``);
* ``reset(seed=..., options=None)``: options are refused; the single env checks the seed, reseeds
  ``self.np_random`` and draws the run seed from it when none is given; the vector env takes its run seeds
  from :func:`~papergym.envs.spec.vector_run_seeds`. The first observation is the env's zero observation,
  ``info = {"t": 0}`` (vector: ``{"t": (n,) zeros, "_t": (n,) True}``);
* ``step`` raises :class:`gymnasium.error.ResetNeeded` before ``reset`` and after the horizon; it is never
  terminated, truncated at ``t = horizon``, and ``info = {"t": t}`` (vector: ``(n,)`` ints and the mask);
* ``.oracle`` raises :class:`~gymnasium.error.ResetNeeded` until ``reset`` has built it.

A subclass sets ``_ENV_ID`` (and ``_HORIZON_SYMBOL``, the letter its docs use for the horizon), calls
``_setup`` from ``__init__`` and implements the hooks ``_start`` (build the runs of ``reset``) and
``_advance`` (play one validated round); it keeps its own ``validate_action`` and the properties whose
meaning differs (``t`` where the round counter does not live in ``self._runs``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv

from papergym.envs.spec import ProblemSpec, check_seed, draw_run_seeds, vector_run_seeds

__all__ = ["BanditEnv", "BanditVectorEnv"]


def check_render_mode(env_id: str, render_mode: str | None) -> None:
    """Refuse any ``render_mode`` but None (the bandit envs have no render modes)."""
    if render_mode is not None:
        raise ValueError(f"render_mode must be None ({env_id} has no render modes), got {render_mode!r}")


def check_no_options(env_id: str, options: dict[str, Any] | None) -> None:
    """Refuse ``reset`` options (the bandit envs take none)."""
    if options:
        raise ValueError(f"{env_id}: reset takes no options, got {sorted(options)}")


class _Steps:
    """Round bookkeeping common to the single and the vector bandit env."""

    #: the registered id, used in error messages
    _ENV_ID: str = ""
    #: the horizon's symbol in the env's documentation (``T`` or ``n``), used in error messages
    _HORIZON_SYMBOL: str = "T"
    #: how the oracle error tells the user to reset (``env.reset()`` for single envs)
    _RESET_CALL: str = "reset()"

    horizon: int
    _runs: Any = None
    _oracle: Any = None

    def _store(self, cfg: Any, problem: ProblemSpec) -> None:
        """Store the config and the public problem, the horizon and ``d`` read from the config; no run
        until ``reset``."""
        self.cfg = cfg
        self.problem = problem
        self.horizon = cfg.horizon
        self.d = cfg.d
        self._runs = None
        self._oracle = None

    @property
    def t(self) -> int:
        """Rounds played since the last ``reset`` (0 before round 1)."""
        return 0 if self._runs is None else self._runs.t

    @property
    def oracle(self) -> Any:
        """The oracle built by the last ``reset`` (:class:`~gymnasium.error.ResetNeeded` before it)."""
        if self._oracle is None:
            raise ResetNeeded(f"{self._ENV_ID}: the oracle is built by reset(); call {self._RESET_CALL} first")
        return self._oracle

    def _check_step(self) -> None:
        """Raise :class:`~gymnasium.error.ResetNeeded` before ``reset`` or once the horizon is reached."""
        if self._oracle is None:
            raise ResetNeeded(f"{self._ENV_ID}: call reset() before step()")
        if self.t >= self.horizon:
            raise ResetNeeded(
                f"{self._ENV_ID}: the episode is over (t = {self._HORIZON_SYMBOL} = {self.horizon}); call reset()"
            )

    def render(self) -> None:
        """No render modes: always None."""
        return None


class BanditEnv(_Steps, gym.Env):
    """One run of a bandit env (module docstring): seeding, ``reset``, the step guard and ``info``.

    Hooks: ``_start(run_seed)`` builds ``self._oracle`` (and whatever state ``_advance`` needs) for one
    run; ``_advance(action)`` validates ``action``, plays one round and returns ``(observation, reward)``
    with ``self.t`` advanced; ``_zero_obs()`` is the observation after ``reset``.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}
    _RESET_CALL = "env.reset()"

    def _setup(self, cfg: Any, problem: ProblemSpec) -> None:
        """:meth:`_store` the config and public problem; the spaces are the problem's."""
        self._store(cfg, problem)
        self.action_space = problem.action_space
        self.observation_space = problem.observation_space
        self.run_seed: int | None = None

    def _start(self, run_seed: int) -> None:
        """Build the run of ``run_seed`` (sets ``self._oracle``)."""
        raise NotImplementedError

    def _advance(self, action: Any) -> tuple[Any, float]:
        """Validate ``action`` and play one round: ``(observation, reward)``."""
        raise NotImplementedError

    def _zero_obs(self) -> Any:
        """The observation returned by ``reset``: ``zeros(1)`` (the reward just received)."""
        return np.zeros(1)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start a run: ``seed`` (checked) is the run seed; None draws it from ``self.np_random``."""
        check_no_options(self._ENV_ID, options)
        if seed is not None:
            seed = check_seed(seed)
        super().reset(seed=seed)
        run_seed = seed if seed is not None else draw_run_seeds(self.np_random, 1)[0]
        self._start(run_seed)
        self.run_seed = run_seed
        return self._zero_obs(), {"t": 0}

    def step(self, action: Any):
        """Play one round: ``(obs, reward, False, t >= horizon, {"t": t})``; :class:`ResetNeeded` before
        ``reset`` or after the horizon, :class:`~papergym.envs.InvalidActionError` for an invalid action."""
        self._check_step()
        obs, reward = self._advance(action)
        t = self.t
        return obs, reward, False, t >= self.horizon, {"t": t}


class BanditVectorEnv(_Steps, VectorEnv):
    """``num_envs`` runs of a bandit env stepped together (module docstring).

    Hooks: ``_start(seeds)`` builds ``self._oracle`` (the batched oracle) and the runs' state;
    ``_advance(actions)`` validates ``actions``, plays one round of every run and returns
    ``(observations, rewards (n,))`` with ``self.t`` advanced; ``_zero_obs()`` is the batched observation
    after ``reset``.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def _setup(
        self, num_envs: int, cfg: Any, problem: ProblemSpec, action_space: spaces.Space, observation_space: spaces.Space
    ) -> None:
        """Store ``num_envs`` (already checked), the config, the public problem of one run, the single and
        batched spaces (:meth:`_store`); no runs until ``reset``."""
        self.num_envs = num_envs
        self._store(cfg, problem)
        self.single_action_space = problem.action_space
        self.single_observation_space = problem.observation_space
        self.action_space = action_space
        self.observation_space = observation_space
        self.seeds: list[int] | None = None
        self._mask = np.ones(num_envs, dtype=bool)

    @property
    def oracles(self) -> list[Any]:
        """The per-run oracles of the last ``reset``."""
        return self.oracle.oracles

    def _seed_list(self, seed: Any) -> list[int]:
        return vector_run_seeds(self, seed)

    def _start(self, seeds: list[int]) -> None:
        """Build the runs of ``seeds`` (sets ``self._oracle``)."""
        raise NotImplementedError

    def _advance(self, actions: Any) -> tuple[Any, np.ndarray]:
        """Validate ``actions`` and play one round of every run: ``(observations, rewards)``."""
        raise NotImplementedError

    def _zero_obs(self) -> Any:
        """The observations returned by ``reset``: ``zeros((n, 1))``."""
        return np.zeros((self.num_envs, 1))

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        """Start ``num_envs`` runs: a list of seeds, an int ``s`` (``s, s+1, ..``) or None (drawn)."""
        check_no_options(self._ENV_ID, options)
        seeds = self._seed_list(seed)
        self._start(seeds)
        self.seeds = seeds
        n = self.num_envs
        return self._zero_obs(), {"t": np.zeros(n, np.int64), "_t": self._mask.copy()}

    def step(self, actions: Any):
        """Play one round of every run: observations, rewards ``(n,)``, terminations (all False),
        truncations (all ``t >= horizon``) and ``info = {"t": (n,) ints, "_t": mask}``."""
        self._check_step()
        obs, rewards = self._advance(actions)
        t = self.t
        n = self.num_envs
        return (
            obs,
            rewards,
            np.zeros(n, dtype=bool),
            np.full(n, t >= self.horizon),
            {"t": np.full(n, t, np.int64), "_t": self._mask.copy()},
        )
