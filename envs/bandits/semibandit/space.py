"""The shared part of ``MSetSemiBandit-v0``, imported by every semi-bandit agent: the action space
:class:`MSet` (and :class:`BatchedMSet`, its vector form, registered with ``gymnasium.vector.utils.batch_space``),
the observation space, the public :func:`make_problem` and the validation of actions.

Part of :mod:`papergym.envs.bandits.semibandit` (tags: see docs/conventions.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import deepcopy
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space
from numba import njit

from papergym.envs.spec import InvalidActionError, ProblemSpec
from papergym.validate import positive_int

__all__ = ["ENV_ID", "MSet", "BatchedMSet", "make_problem", "observation_space"]

ENV_ID = "MSetSemiBandit-v0"


def _check_dm(d: Any, m: Any) -> tuple[int, int]:
    d, m = positive_int(d, "d"), positive_int(m, "m")
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
    horizon = positive_int(horizon, "horizon")
    return ProblemSpec(ENV_ID, MSet(d, m), observation_space(d), horizon, {"d": d, "m": m, "loss_range": (0.0, 1.0)})


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


@njit(cache=True)
def _check_values(A, m):
    """(0, 0, 0) if every entry of A (R, d) is 0 or 1 and every row has m nonzeros; else (2, row, col) for
    the first entry outside {0, 1}, or (3, row, count) for the first row with count != m ones."""
    R, d = A.shape
    for r in range(R):
        for i in range(d):
            x = A[r, i]
            if not (x == 0 or x == 1):
                return 2, r, i
    for r in range(R):
        c = 0
        for i in range(d):
            if A[r, i] != 0:
                c += 1
        if c != m:
            return 3, r, c
    return 0, 0, 0


# ------------------------------------------------------------------------------------- actions
def _bad(rule: str, msg: str) -> InvalidActionError:
    return InvalidActionError(f"{ENV_ID}: rule {rule!r} broken: {msg}")


def _as_actions(action: Any, shape: tuple[int, ...], m: int, what: str = "action") -> np.ndarray:
    """The action(s) as a C-contiguous int8 array of ``shape`` (a view when already one), or
    :class:`InvalidActionError` naming the rule broken (shape, dtype, finite, values, size)."""
    if type(action) is np.ndarray:
        a = action
    else:
        try:
            a = np.asarray(action)
        except (ValueError, TypeError) as e:
            raise _bad("shape", f"{what} must be an array of shape {shape}; {e}") from None
    kind = a.dtype.kind
    if kind not in "biuf":
        raise _bad("dtype", f"{what} must hold 0/1 numbers (bool, integer or float dtype), got dtype {a.dtype}")
    if a.shape != shape:
        raise _bad(
            "shape",
            f"{what} must have shape {shape} (0/1 vector{'s' if len(shape) > 1 else ''} of "
            f"length d={shape[-1]}), got {a.shape}",
        )
    if kind == "f" and not np.isfinite(a).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise _bad("finite", f"{what} entries must be finite 0/1 values, got {a[bad]!r} at index {bad}")
    if kind == "b":
        a = a.view(np.int8)
    a2 = a.reshape(-1, shape[-1])
    status, r, j = _check_values(a2, m)
    if status == 2:
        idx = (r, j) if len(shape) > 1 else (j,)
        raise _bad("values", f"{what} entries must be 0 or 1, got {a2[r, j]!r} at index {idx}")
    if status == 3:
        where = f" in row {r}" if len(shape) > 1 else ""
        raise _bad("size", f"an action must choose exactly m={m} arms (m ones), got {j} ones{where}")
    if a.dtype != np.int8 or not a.flags.c_contiguous:
        a = np.ascontiguousarray(a, dtype=np.int8)
    return a


class BatchedMSet(spaces.MultiBinary):
    """``num`` stacked :class:`MSet` actions: ``(num, d)`` 0/1 arrays (``int8``) with exactly ``m`` ones per
    row. ``sample()`` draws every row uniformly; ``contains(x)`` checks shape, values and row sums.
    The action space of :class:`MSetSemiBanditVectorEnv`; ``batch_space(MSet(d, m), num)`` returns it."""

    def __init__(self, num: int, d: int, m: int, seed: int | np.random.Generator | None = None):
        d, m = _check_dm(d, m)
        self.num = positive_int(num, "num")
        self.m = m
        super().__init__((self.num, d), seed=seed)

    @property
    def d(self) -> int:
        return int(self.shape[1])

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if mask is not None or probability is not None:
            raise NotImplementedError("BatchedMSet.sample takes no mask or probability")
        out = np.zeros(self.shape, dtype=self.dtype)
        for r in range(self.num):
            out[r, self.np_random.choice(self.d, size=self.m, replace=False)] = 1
        return out

    def contains(self, x: Any) -> bool:
        if isinstance(x, Sequence):
            x = np.array(x)
        if not isinstance(x, np.ndarray) or x.shape != self.shape or x.dtype.kind not in "biuf":
            return False
        if not np.all((x == 0) | (x == 1)):
            return False
        return bool(np.all(np.count_nonzero(x, axis=1) == self.m))

    def __repr__(self) -> str:
        return f"BatchedMSet(num={self.num}, d={self.d}, m={self.m})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, BatchedMSet) and (self.num, self.d, self.m) == (other.num, other.d, other.m)

    def __hash__(self) -> int:
        return hash(("BatchedMSet", self.num, self.d, self.m))


@batch_space.register(MSet)
def _batch_space_mset(space: MSet, n: int = 1) -> BatchedMSet:
    return BatchedMSet(n, space.d, space.m, seed=deepcopy(space.np_random))
