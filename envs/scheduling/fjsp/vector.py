"""Native vector versions of ``FJSP-v0`` and ``FJSPImprove-v0``: ``num_envs`` independent runs stepped
together (what the leaderboard's evaluator and batched agents use).

``reset(seed=[s_0, .., s_{n-1}])`` (an int ``s`` -> ``s, s+1, ..``; ``None`` -> seeds drawn from
``self.np_random``); row ``i`` is bit-identical to the single env reset with seed ``s_i``. Observations are
the single env's ``Dict`` with a leading run axis; ``.problem`` is the public problem, the same for every
run (each run's instance is in its observations); ``.oracle`` is batched over the runs, ``.oracles`` the
per-run oracles. No autoreset (``AutoresetMode.DISABLED``). ``FJSP-v0`` runs of a family whose instances
have different operation counts (SD1) end at different steps: a finished run keeps its last observation,
reward 0 and ``terminated = True``, and ignores its actions (they are not validated).

The runs are stepped in a Python loop over the single envs (each step's state is structural: job queues,
machine orders, the neighbourhood of a solution); the numerics inside are numpy/numba.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from papergym.envs.scheduling.fjsp.construct import FJSPEnv
from papergym.envs.scheduling.fjsp.improve import FJSPImproveEnv
from papergym.envs.spec import InvalidActionError, vector_run_seeds

__all__ = ["FJSPVectorEnv", "FJSPImproveVectorEnv", "BatchedFJSPOracle"]


class BatchedFJSPOracle:
    """The per-run oracles of a vector env, batched: ``regret(actions, t)`` is an ``(n,)`` array (0 for a
    finished run)."""

    def __init__(self, venv: "_FJSPVector"):
        self._venv = venv

    @property
    def oracles(self) -> list[Any]:
        return [e.oracle for e in self._venv.envs]

    def regret(self, actions: Any, t: int) -> np.ndarray:
        """Per-run regret of round ``t`` (before or after the step, like the single oracle); 0 for a run
        that had ended before round ``t``."""
        a = np.asarray(actions)
        return np.array([0.0 if end < t else e.oracle.regret(a[i], t)
                         for i, (e, end) in enumerate(zip(self._venv.envs, self._venv.ended_at))])

    def mean_reward(self, actions: Any, t: int) -> np.ndarray:
        a = np.asarray(actions)
        return np.array([0.0 if done else e.oracle.mean_reward(a[i], t)
                         for i, (e, done) in enumerate(zip(self._venv.envs, self._venv.done))])

    def optimal_value(self, t: int) -> np.ndarray:
        return np.array([e.oracle.optimal_value(t) for e in self._venv.envs])


class _FJSPVector(VectorEnv):
    SINGLE: type = FJSPEnv
    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED, "state_dependent_actions": True}

    def __init__(self, num_envs: int = 1, **kwargs: Any):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        if kwargs.get("render_mode") is not None:
            raise ValueError("the vector env has no render modes")
        kwargs.pop("render_mode", None)
        self.num_envs = int(num_envs)
        self.envs = [self.SINGLE(**kwargs) for _ in range(self.num_envs)]
        e0 = self.envs[0]
        self.problem = e0.problem
        self.single_action_space = e0.problem.action_space
        self.single_observation_space = e0.observation_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.done = np.zeros(self.num_envs, dtype=bool)
        self.ended_at = np.full(self.num_envs, np.iinfo(np.int64).max)  # round at which each run ended
        self._last: list[dict] | None = None
        self._oracle = BatchedFJSPOracle(self)
        self.seeds: list[int] | None = None

    @property
    def oracle(self) -> BatchedFJSPOracle:
        return self._oracle

    @property
    def oracles(self) -> list[Any]:
        return self._oracle.oracles

    @property
    def t(self) -> int:
        return max(e.t for e in self.envs)

    @staticmethod
    def _stack(obs: list[dict]) -> dict[str, np.ndarray]:
        return {k: np.stack([o[k] for o in obs]) for k in obs[0]}

    def reset(self, *, seed: Any = None, options: dict | None = None):
        seeds = vector_run_seeds(self, seed)
        self.seeds = seeds
        self._last = [e.reset(seed=s, options=options)[0] for e, s in zip(self.envs, seeds)]
        self.problem = self.envs[0].problem
        self.done[:] = False
        self.ended_at[:] = np.iinfo(np.int64).max
        return self._stack(self._last), {}

    def freeze(self, rows: Any) -> None:
        """Set runs aside (the evaluator's ended runs): they keep their last observation, get reward 0 and
        ``terminated = True``, and their actions are no longer validated."""
        rows = np.asarray(rows, dtype=bool) & ~self.done
        self.ended_at[rows] = self.t
        self.done |= rows

    def validate_row(self, i: int, action: Any) -> int:
        """Run ``i``'s action checked against run ``i``'s state (:class:`InvalidActionError` otherwise)."""
        if not self.done[i]:
            self.envs[i].validate_action(action)
        return int(action)

    def validate_action(self, actions: Any) -> np.ndarray:
        """The actions as an ``(n,)`` int array; :class:`InvalidActionError` naming the first illegal row
        (finished runs are not checked)."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise InvalidActionError(f"actions must have shape ({self.num_envs},), got {a.shape}")
        for i, e in enumerate(self.envs):
            if not self.done[i]:
                try:
                    e.validate_action(a[i])
                except InvalidActionError as exc:
                    raise InvalidActionError(f"run {i}: {exc}") from None
        return a.astype(np.int64)

    def step(self, actions: Any):
        a = self.validate_action(actions)
        n = self.num_envs
        rew = np.zeros(n)
        term = np.zeros(n, dtype=bool)
        trunc = np.zeros(n, dtype=bool)
        for i, e in enumerate(self.envs):
            if self.done[i]:
                term[i] = True
                continue
            o, r, te, tr, _ = e.step(int(a[i]))
            self._last[i], rew[i], term[i], trunc[i] = o, r, te, tr
            if te or tr:
                self.done[i] = True
                self.ended_at[i] = e.t
        return self._stack(self._last), rew, term, trunc, {}

    def close(self, **kwargs: Any) -> None:
        for e in self.envs:
            e.close()


class FJSPVectorEnv(_FJSPVector):
    """``num_envs`` runs of :class:`~papergym.envs.scheduling.fjsp.construct.FJSPEnv` (module docstring)."""

    SINGLE = FJSPEnv


class FJSPImproveVectorEnv(_FJSPVector):
    """``num_envs`` runs of :class:`~papergym.envs.scheduling.fjsp.improve.FJSPImproveEnv` (module docstring)."""

    SINGLE = FJSPImproveEnv
