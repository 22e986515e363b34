"""Native vector envs that step ``num_envs`` independent single envs in a Python loop.

For envs whose step is structural or already vectorised inside (FJSP's schedules, the entropic games'
exact oracles), a loop over single envs is the honest vector version: it gives the runner's batched agents
and the leaderboard's evaluator what they need — ``reset(seed=[s_0, .., s_{n-1}])`` (an int ``s`` ->
``s, s+1, ..``; ``None`` -> seeds drawn from ``self.np_random``) with row ``i`` bit-identical to the single
env reset with seed ``s_i``; observations with a leading run axis (``Dict`` observations key by key); the
public ``.problem`` (that of run 0: the same for every run where the instance is in the observations or
the public problem does not depend on the seed); the batched ``.oracle`` and the per-run ``.oracles``; no
autoreset (``AutoresetMode.DISABLED``). A run that ends early — or that the evaluator sets aside with
:meth:`LoopVectorEnv.freeze` — keeps its last observation, gets reward 0 and ``terminated = True``, and its
actions are no longer validated.

Subclasses set ``SINGLE`` (the single env class) and may override :meth:`LoopVectorEnv.cast_row` (how one
run's action is passed to its env).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from papergym.envs.spec import InvalidActionError, vector_run_seeds
from papergym.validate import positive_int

__all__ = ["LoopVectorEnv", "BatchedLoopOracle"]


class BatchedLoopOracle:
    """The per-run oracles of a loop vector env, batched: ``regret(actions, t)`` is an ``(n,)`` array (0 for
    a run that had ended before round ``t``)."""

    def __init__(self, venv: LoopVectorEnv):
        self._venv = venv

    @property
    def oracles(self) -> list[Any]:
        return [e.oracle for e in self._venv.envs]

    def regret(self, actions: Any, t: int) -> np.ndarray:
        """Per-run regret of round ``t`` (before or after the step, like the single oracle)."""
        a = np.asarray(actions)
        return np.array(
            [
                0.0 if end < t else e.oracle.regret(a[i], t)
                for i, (e, end) in enumerate(zip(self._venv.envs, self._venv.ended_at))
            ]
        )

    def mean_reward(self, actions: Any, t: int) -> np.ndarray:
        a = np.asarray(actions)
        return np.array(
            [
                0.0 if done else e.oracle.mean_reward(a[i], t)
                for i, (e, done) in enumerate(zip(self._venv.envs, self._venv.done))
            ]
        )

    def optimal_value(self, t: int) -> np.ndarray:
        return np.array([e.oracle.optimal_value(t) for e in self._venv.envs])


class LoopVectorEnv(VectorEnv):
    """``num_envs`` runs of ``SINGLE`` (module docstring)."""

    SINGLE: type = object
    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def __init__(self, num_envs: int = 1, **kwargs: Any):
        num_envs = positive_int(num_envs, "num_envs")
        if kwargs.get("render_mode") is not None:
            raise ValueError("the vector env has no render modes")
        kwargs.pop("render_mode", None)
        self.num_envs = num_envs
        self.envs = [self.SINGLE(**kwargs) for _ in range(self.num_envs)]
        e0 = self.envs[0]
        self.problem = e0.problem
        self.single_action_space = e0.problem.action_space
        self.single_observation_space = e0.observation_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.done = np.zeros(self.num_envs, dtype=bool)
        self.ended_at = np.full(self.num_envs, np.iinfo(np.int64).max)  # round at which each run ended
        self._last: list[Any] | None = None
        self._oracle = BatchedLoopOracle(self)
        self.seeds: list[int] | None = None

    @property
    def oracle(self) -> BatchedLoopOracle:
        return self._oracle

    @property
    def oracles(self) -> list[Any]:
        return self._oracle.oracles

    @property
    def t(self) -> int:
        return max(e.t for e in self.envs)

    @staticmethod
    def _stack(obs: list[Any]) -> Any:
        if isinstance(obs[0], dict):
            return {k: np.stack([o[k] for o in obs]) for k in obs[0]}
        return np.stack(obs)

    def cast_row(self, action: Any) -> Any:
        """One run's action as its env's ``step`` takes it (default: unchanged)."""
        return action

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

    def validate_row(self, i: int, action: Any) -> Any:
        """Run ``i``'s action checked against run ``i``'s state (:class:`InvalidActionError` otherwise)."""
        if not self.done[i]:
            self.envs[i].validate_action(action)
        return self.cast_row(action)

    def validate_action(self, actions: Any) -> np.ndarray:
        """The actions as one array with a leading run axis; :class:`InvalidActionError` naming the first
        illegal row (finished runs are not checked)."""
        try:
            a = np.asarray(actions)
        except (TypeError, ValueError) as exc:
            raise InvalidActionError(f"actions cannot be read as an array: {exc}") from None
        shape = (self.num_envs,) + tuple(self.single_action_space.shape or ())
        if a.shape != shape:
            raise InvalidActionError(f"actions must have shape {shape}, got {a.shape}")
        for i, e in enumerate(self.envs):
            if not self.done[i]:
                try:
                    e.validate_action(a[i])
                except InvalidActionError as exc:
                    raise InvalidActionError(f"run {i}: {exc}") from None
        return a

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
            o, r, te, tr, _ = e.step(self.cast_row(a[i]))
            self._last[i], rew[i], term[i], trunc[i] = o, r, te, tr
            if te or tr:
                self.done[i] = True
                self.ended_at[i] = e.t
        return self._stack(self._last), rew, term, trunc, {}

    def close(self, **kwargs: Any) -> None:
        for e in self.envs:
            e.close()
