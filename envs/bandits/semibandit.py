"""m-set semi-bandit (``MSetSemiBandit-v0``): the action space and the public problem.

Shared part (imported by every semi-bandit agent)
-------------------------------------------------
* :class:`MSet` -- the action space: a :class:`gymnasium.spaces.MultiBinary` subclass of the 0/1
  vectors of length ``d`` with exactly ``m`` ones. ``sample()`` draws a uniform ``m``-subset (so
  ``check_env`` and random rollouts only play legal actions); ``contains()`` checks the shape, the
  0/1 values and ``sum == m``.
* :func:`make_problem` -- the public :class:`~papergym.envs.spec.ProblemSpec` (``d``, ``m``, the loss
  range ``[0, 1]``, the horizon ``n``), the same for every seed and instance family.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from papergym.envs.spec import ProblemSpec

__all__ = ["ENV_ID", "MSet", "make_problem", "observation_space"]

ENV_ID = "MSetSemiBandit-v0"


def _check_dm(d: Any, m: Any) -> tuple[int, int]:
    for name, v in (("d", d), ("m", m)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if m > d:
        raise ValueError(f"m must be at most d (choose m of d arms), got d={d}, m={m}")
    return int(d), int(m)


class MSet(spaces.MultiBinary):
    """The ``m``-subsets of ``d`` arms as 0/1 vectors of length ``d`` with exactly ``m`` ones (``int8``).

    ``sample()`` is uniform over the ``C(d, m)`` subsets (a random permutation's first ``m`` arms);
    ``sample(mask)`` is not supported. ``contains(x)``: shape ``(d,)``, entries in ``{0, 1}``, ``m`` ones.
    """

    def __init__(self, d: int, m: int, seed: int | np.random.Generator | None = None):
        d, m = _check_dm(d, m)
        self.m = m
        super().__init__(d, seed=seed)

    @property
    def d(self) -> int:
        return int(self.n)

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if mask is not None or probability is not None:
            raise NotImplementedError("MSet.sample takes no mask or probability")
        out = np.zeros(self.d, dtype=self.dtype)
        out[self.np_random.choice(self.d, size=self.m, replace=False)] = 1
        return out

    def contains(self, x: Any) -> bool:
        if isinstance(x, Sequence):
            x = np.array(x)
        if not isinstance(x, np.ndarray) or x.shape != (self.d,):
            return False
        if x.dtype.kind not in "biuf":
            return False
        if not np.all((x == 0) | (x == 1)):
            return False
        return int(np.count_nonzero(x)) == self.m

    def __repr__(self) -> str:
        return f"MSet(d={self.d}, m={self.m})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, MSet) and self.d == other.d and self.m == other.m

    def __hash__(self) -> int:
        return hash(("MSet", self.d, self.m))


def observation_space(d: int) -> spaces.Dict:
    """``Dict(losses=Box(0, 1, (d,)), observed=MultiBinary(d))``: the chosen arms' losses (0 at the arms
    not chosen, which are not observed) and the mask of the observed arms."""
    return spaces.Dict({"losses": spaces.Box(0.0, 1.0, (d,), np.float64), "observed": spaces.MultiBinary(d)})


def make_problem(d: int = 10, m: int = 3, horizon: int = 10_000) -> ProblemSpec:
    """The public problem: ``ProblemSpec(ENV_ID, MSet(d, m), observation_space(d), horizon,
    {"d": d, "m": m, "loss_range": (0.0, 1.0)})``."""
    d, m = _check_dm(d, m)
    if isinstance(horizon, (bool, np.bool_)) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
    return ProblemSpec(ENV_ID, MSet(d, m), observation_space(d), int(horizon),
                       {"d": d, "m": m, "loss_range": (0.0, 1.0)})
