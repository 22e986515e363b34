"""Contracts shared by every papergym environment.

* :class:`ProblemSpec` -- the *public* description of a problem: what an agent may know.
* :class:`Oracle` / :class:`BatchedOracle` -- the *privileged*, evaluation-side view (means, optimum,
  regret). Agents never receive it, except agents registered with role ``"oracle"``, which are
  reference lines and never ranked.
* :class:`InvalidActionError` -- raised by ``step`` for an illegal action; the env state is unchanged.
* Seeding helpers -- one integer seed per run is split with :class:`numpy.random.SeedSequence` into
  independent streams: ``instance`` (child 0), ``noise`` (child 1) and ``agent`` (child 2).
* :class:`UniformStream` -- buffered per-seed uniform draws, so that a batched implementation
  (many seeds stepped together in numpy) consumes exactly the same numbers as one run per seed.

Rounds are numbered ``t = 1 .. T`` as in the papers. After ``reset`` the env is before round 1;
``oracle.regret(action, t)`` scores the action played at round ``t``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

from papergym.validate import positive_int

__all__ = [
    "ProblemSpec",
    "Oracle",
    "BatchedOracle",
    "InvalidActionError",
    "RunSeeds",
    "run_seeds",
    "instance_seed",
    "noise_seed",
    "agent_seed",
    "UniformStream",
    "NormalStream",
    "check_seed",
    "draw_run_seeds",
    "vector_run_seeds",
]


class InvalidActionError(ValueError):
    """An action that breaks a rule of the environment.

    The message names the rule broken (shape, NaN, bounds, ...). The environment state is left
    unchanged, so the caller may catch the error and act again.
    """


@dataclass(frozen=True)
class ProblemSpec:
    """Public description of a problem instance: everything an agent is allowed to know.

    Parameters
    ----------
    env_id:
        Registered id, e.g. ``"NonStatLipschitz-v0"``.
    action_space, observation_space:
        Gymnasium spaces of one (unbatched) run.
    horizon:
        Number of rounds ``T`` (the papers' agents may assume it known).
    params:
        Constants the paper assumes known (for the Lipschitz bandit: ``d``, ``lipschitz``,
        ``norm``, ``noise``, ``sigma``). Never the instance family or its hidden parameters.
        Entries are also readable as attributes: ``problem.d``.
    """

    env_id: str
    action_space: gym.Space
    observation_space: gym.Space
    horizon: int
    params: Mapping[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails
        params = self.__dict__.get("params", {})
        if name in params:
            return params[name]
        raise AttributeError(f"ProblemSpec has no field or parameter {name!r}; parameters: {sorted(params)}")

    def public_dict(self) -> dict[str, Any]:
        """A JSON-serialisable summary (used in cell keys and sent to sandboxed agents)."""
        return {
            "env_id": self.env_id,
            "horizon": int(self.horizon),
            **{k: _jsonable(v) for k, v in self.params.items()},
        }


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


@runtime_checkable
class Oracle(Protocol):
    """Privileged, evaluation-side view of one run's instance (``env.unwrapped.oracle``).

    Regret is always computed from means, never from realised rewards, and is ``>= 0``.
    Environments add their own quantities (change points, significant shifts, ...).
    """

    def mean_reward(self, action: Any, t: int) -> float:
        """Expected reward of ``action`` at round ``t`` (1-based)."""

    def optimal_value(self, t: int) -> float:
        """Best expected reward at round ``t``."""

    def regret(self, action: Any, t: int) -> float:
        """``optimal_value(t) - mean_reward(action, t)``."""


@runtime_checkable
class BatchedOracle(Protocol):
    """Oracle of a native vector env: the same methods with a leading batch axis (one row per run)."""

    def mean_reward(self, actions: np.ndarray, t: int) -> np.ndarray: ...

    def optimal_value(self, t: int) -> np.ndarray: ...

    def regret(self, actions: np.ndarray, t: int) -> np.ndarray: ...


# --------------------------------------------------------------------------------------------- seeds
class RunSeeds(NamedTuple):
    """The three independent streams of one run, children of ``SeedSequence(seed)``."""

    instance: np.random.SeedSequence
    noise: np.random.SeedSequence
    agent: np.random.SeedSequence


def check_seed(seed: int, name: str = "seed") -> int:
    """A run seed as ``int``: an integer ``>= 0`` (``bool`` refused), else ``ValueError`` naming ``name``."""
    return positive_int(seed, name, 0)


def draw_run_seeds(rng: np.random.Generator, n: int) -> list[int]:
    """``n`` run seeds drawn from ``rng`` (what ``reset()`` without a seed uses)."""
    return [int(s) for s in rng.integers(0, 2**63 - 1, size=n, dtype=np.int64)]


def vector_run_seeds(venv: Any, seed: Any) -> list[int]:
    """The run seeds of a native vector env's ``reset(seed=...)``: a list of ``num_envs`` seeds as
    given; an int ``s`` -> ``s, s+1, ...`` (and ``venv``'s own generator reseeded with ``s``); ``None``
    -> seeds drawn from ``venv.np_random``."""
    n = venv.num_envs
    if seed is None:
        return draw_run_seeds(venv.np_random, n)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        s = check_seed(seed)
        venv._np_random, venv._np_random_seed = gym.utils.seeding.np_random(s)
        return [s + i for i in range(n)]
    seeds = list(seed)
    if len(seeds) != n:
        raise ValueError(f"seed must be an int or a list of num_envs={n} ints, got {len(seeds)} seeds")
    return [check_seed(s) for s in seeds]


def run_seeds(seed: int) -> RunSeeds:
    """Split one run seed into ``instance``, ``noise`` and ``agent`` streams.

    Equivalent to ``np.random.SeedSequence(seed).spawn(3)``; a fresh parent is built on every call,
    so the result does not depend on how often it was called before.
    """
    s = check_seed(seed)
    return RunSeeds(*(np.random.SeedSequence(s, spawn_key=(i,)) for i in range(3)))


def instance_seed(seed: int) -> np.random.SeedSequence:
    """Stream for the instance's randomness (phases, centres, hidden sets)."""
    return run_seeds(seed).instance


def noise_seed(seed: int) -> np.random.SeedSequence:
    """Stream for the reward noise."""
    return run_seeds(seed).noise


def agent_seed(seed: int) -> np.random.SeedSequence:
    """Stream the runner gives to the agent of run ``seed``."""
    return run_seeds(seed).agent


class UniformStream:
    """Buffered ``U[0, 1)`` draws from one :class:`numpy.random.Generator` per run.

    ``take(k)`` returns an ``(n_runs, k)`` array: for every run, the next ``k`` numbers of *its own*
    generator, exactly as ``k`` successive ``rng.random()`` calls would give them. Whether runs are
    stepped one by one or together, each run sees the same numbers, which is what makes batched and
    per-seed executions bit-identical.

    Parameters
    ----------
    seeds:
        One seed (anything :func:`numpy.random.default_rng` accepts) per run.
    chunk:
        Numbers drawn per refill and run.
    """

    _draw = "random"

    def __init__(self, seeds: Sequence[Any], chunk: int = 4096):
        self.rngs = [np.random.default_rng(s) for s in seeds]
        self.n = len(self.rngs)
        self.chunk = int(chunk)
        self._buf = np.empty((self.n, 0))
        self._pos = 0

    def _refill(self, need: int) -> None:
        size = max(self.chunk, need)
        rest = self._buf[:, self._pos :]
        new = np.empty((self.n, size))
        for i, rng in enumerate(self.rngs):
            new[i] = getattr(rng, self._draw)(size)
        self._buf = np.concatenate([rest, new], axis=1) if rest.shape[1] else new
        self._pos = 0

    def take(self, k: int = 1) -> np.ndarray:
        """Next ``k`` draws of every run, shape ``(n_runs, k)`` (a view; copy it to keep it)."""
        if self._pos + k > self._buf.shape[1]:
            self._refill(k)
        out = self._buf[:, self._pos : self._pos + k]
        self._pos += k
        return out

    def take1(self) -> np.ndarray:
        """Next draw of every run, shape ``(n_runs,)``."""
        if self._pos >= self._buf.shape[1]:
            self._refill(1)
        out = self._buf[:, self._pos]
        self._pos += 1
        return out


class NormalStream(UniformStream):
    """As :class:`UniformStream`, with standard normal draws (``rng.standard_normal``)."""

    _draw = "standard_normal"
