"""Action rules of ``NoiseFreeGPBandit-v0``, shared by the envs and the oracles.

Environment of S. Iwazaki, *Gaussian Process Upper Confidence Bound Achieves Nearly-Optimal Regret in
Noise-Free Gaussian Process Bandits* (arXiv 2502.19006, NeurIPS 2025); see docs/papers/noise-free-gp.md.

* Discrete mode: a Python int, a NumPy integer, or an integer array of shape ``()`` or ``(1,)``
  (:func:`as_index`); bools, floats (even integral), NaN, other shapes and indices outside ``[0, N)`` are
  rejected (rules ``dtype``, ``finite``, ``shape``, ``range``).
* Continuous mode: float or integer arrays of shape ``(d,)`` with every coordinate in ``[0, 1]``
  (:func:`as_points`; rules ``dtype``, ``shape``, ``finite``, ``bounds``).
* The vector env takes ``(n,)`` integer arrays (``MultiDiscrete`` space; :func:`as_indices`) or ``(n, d)``
  points.

A broken rule raises :class:`~papergym.envs.InvalidActionError` naming it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.envs.bandits.gp.config import ENV_ID
from papergym.envs.spec import InvalidActionError


def _bad(rule: str, msg: str) -> InvalidActionError:
    return InvalidActionError(f"{ENV_ID}: rule '{rule}' broken: {msg}")


def as_index(action: Any, N: int) -> int:
    """A candidate index in ``[0, N)`` from a Python int, a NumPy integer, or an integer array of shape
    ``()`` or ``(1,)``; anything else raises :class:`InvalidActionError` (rules dtype, finite, shape, range)."""
    if type(action) is int or isinstance(action, np.integer):
        i = int(action)
    else:
        if isinstance(action, (bool, np.bool_)):
            raise _bad("dtype", f"a candidate index must be an integer, not a bool; got {action!r}")
        try:
            arr = np.asarray(action)
        except (TypeError, ValueError) as e:
            raise _bad("shape", f"a candidate index must be an integer scalar; {e}") from None
        kind = arr.dtype.kind
        if kind == "b":
            raise _bad("dtype", f"a candidate index must be an integer, not a bool; got {action!r}")
        if kind == "f" and not np.all(np.isfinite(arr)):
            raise _bad("finite", f"a candidate index must be a finite integer; got {action!r}")
        if kind not in "iu":
            raise _bad(
                "dtype",
                f"a candidate index must be an integer (int, NumPy integer, or an integer array of "
                f"shape () or (1,)); got {type(action).__name__} {action!r} (dtype {arr.dtype})",
            )
        if arr.shape not in ((), (1,)):
            raise _bad("shape", f"a candidate index must be a scalar (shape () or (1,)), got shape {arr.shape}")
        i = int(arr.reshape(-1)[0])
    if not 0 <= i < N:
        raise _bad("range", f"a candidate index must lie in [0, {N}), got {i}")
    return i


def as_indices(actions: Any, shape: tuple[int, ...], N: int) -> np.ndarray:
    """``(n,)`` (or ``shape``) candidate indices in ``[0, N)`` from an integer array, or
    :class:`InvalidActionError` (rules dtype, finite, shape, range)."""
    try:
        arr = np.asarray(actions)
    except (TypeError, ValueError) as e:
        raise _bad("shape", f"actions must be an integer array of shape {shape}; {e}") from None
    kind = arr.dtype.kind
    if kind == "f" and not np.all(np.isfinite(arr)):
        raise _bad("finite", "candidate indices must be finite integers (no NaN or inf)")
    if kind not in "iu":
        raise _bad("dtype", f"candidate indices must have an integer dtype (not bool or float), got dtype {arr.dtype}")
    if arr.shape != shape:
        raise _bad("shape", f"actions must have shape {shape}, got {arr.shape}")
    if arr.size and not (arr.min() >= 0 and arr.max() < N):
        bad = arr[(arr < 0) | (arr >= N)].ravel()[0]
        raise _bad("range", f"candidate indices must lie in [0, {N}), got {int(bad)}")
    return arr.astype(np.intp, copy=False)


def as_points(action: Any, shape: tuple[int, ...], what: str = "action") -> np.ndarray:
    """Float64 C-contiguous array of ``shape`` with every coordinate in ``[0, 1]``, or
    :class:`InvalidActionError` (rules dtype, shape, finite, bounds)."""
    if type(action) is np.ndarray:
        a = action
    else:
        try:
            a = np.asarray(action)
        except (TypeError, ValueError) as e:
            raise _bad("shape", f"{what} must be an array of shape {shape}; {e}") from None
    if a.dtype.kind not in "fiu":
        raise _bad("dtype", f"{what} must hold real numbers (float or integer dtype), got dtype {a.dtype}")
    if a.shape != shape:
        raise _bad("shape", f"{what} must have shape {shape}, got {a.shape}")
    if a.dtype != np.float64 or not a.flags.c_contiguous:
        a = np.ascontiguousarray(a, dtype=np.float64)
    if not (np.all(a >= 0.0) and np.all(a <= 1.0)):
        if not np.all(np.isfinite(a)):
            bad = np.argwhere(~np.isfinite(a))[0]
            raise _bad(
                "finite",
                f"every coordinate must be finite (no NaN or inf); got {a[tuple(bad)]!r} "
                f"at index {tuple(int(i) for i in bad)}",
            )
        bad = np.argwhere((a < 0.0) | (a > 1.0))[0]
        raise _bad(
            "bounds",
            f"every coordinate must lie in [0, 1]; got {a[tuple(bad)]!r} at index {tuple(int(i) for i in bad)}",
        )
    return a


def check_round(t: Any, T: int) -> int:
    """A 1-based round ``t`` in ``1..T`` as an int, else ``ValueError``."""
    if type(t) is int and 1 <= t <= T:
        return t
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, np.integer)) or not 1 <= t <= T:
        raise ValueError(f"t must be an integer round in 1..{T}, got {t!r}")
    return int(t)
