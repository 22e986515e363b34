"""Shared bin / grid numerics of the bin-based baselines of ``NonStatLipschitz-v0``.

Every bin-based baseline (``binning-ucb``, ``binning-ucb-oracle``, ``sw-ucb``, ``d-ucb``, ``exp3s``,
``rexp3``) discretises the arm space ``[0, 1]^d`` into a regular grid of ``K`` equal bins per axis
(``K^d`` cells) and plays the **midpoint** of the chosen cell [design for the exp3 family and the
sliding-window UCBs; [code] ``BinningUCB`` plays bin centres].

Conventions (``docs/papers/nonstat-lipschitz.md``; tags: see docs/conventions.md):

* Cells are numbered in row-major order: the cell with per-axis indices ``(i_0, ..., i_{d-1})`` has
  flat index ``sum_m i_m K^{d-1-m}``; for ``d = 1`` the flat index is the bin index.
* Bin ``i`` on an axis covers ``[i/K, (i+1)/K)``, the last bin is closed on the right
  (``bin_index(1.0) = K - 1``), as in [code] ``BinningUCB.get_bin_index``; its midpoint is
  ``(i + 0.5)/K``.
* Bin-count formulas (integer-exact: the float root is corrected so that e.g. ``27^{1/3}`` gives 3):

  - ``binning_bins(T, d)`` = ``max(1, floor((T / log max(T, 2))^{1/(d+2)}))`` per axis:
    ``K = floor((T/log T)^{1/3})`` for ``d = 1`` [code]; the exponent ``1/(d+2)`` for ``d > 1`` and
    ``log max(T, 2)`` (so that ``T = 1`` is defined) are [design].
  - the same formula with a phase length ``l`` gives the oracle's ``K_i`` ([code]).
  - ``sliding_bins(T, d)`` = ``ceil(T^{1/(d+2)})`` per axis (``K = ceil(T^{1/3})`` for
    ``sw-ucb`` / ``d-ucb``, reused by ``exp3s`` / ``rexp3`` [design]; exponent for ``d > 1`` [design]).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

__all__ = [
    "ENV_ID",
    "bin_index",
    "binning_bins",
    "cell_midpoints",
    "int_root_ceil",
    "int_root_floor",
    "inverse_cdf",
    "midpoints",
    "n_runs",
    "problem_dims",
    "sliding_bins",
]

ENV_ID = "NonStatLipschitz-v0"


def int_root_floor(x: float, p: int) -> int:
    """``floor(x^{1/p})`` for ``x >= 0``, exact at perfect powers (``int_root_floor(27, 3) == 3``)."""
    if x < 0 or p < 1:
        raise ValueError(f"int_root_floor needs x >= 0 and p >= 1, got x={x!r}, p={p!r}")
    k = int(math.floor(x ** (1.0 / p)))
    while (k + 1) ** p <= x:
        k += 1
    while k > 0 and k**p > x:
        k -= 1
    return k


def int_root_ceil(x: float, p: int) -> int:
    """``ceil(x^{1/p})`` for ``x >= 0``, exact at perfect powers (``int_root_ceil(32768, 3) == 32``)."""
    if x < 0 or p < 1:
        raise ValueError(f"int_root_ceil needs x >= 0 and p >= 1, got x={x!r}, p={p!r}")
    k = int(math.ceil(x ** (1.0 / p)))
    while k > 0 and (k - 1) ** p >= x:
        k -= 1
    while k**p < x:
        k += 1
    return k


def binning_bins(T: int, d: int = 1) -> int:
    """Bins per axis of ``binning-ucb``: ``max(1, floor((T / log max(T, 2))^{1/(d+2)}))``.

    With ``T`` a phase length ``l_i`` this is the oracle's ``K_i``.
    """
    if T < 1:
        raise ValueError(f"horizon / phase length must be >= 1, got {T!r}")
    return max(1, int_root_floor(T / math.log(max(T, 2)), d + 2))


def sliding_bins(T: int, d: int = 1) -> int:
    """Bins per axis of ``sw-ucb``, ``d-ucb``, ``exp3s``, ``rexp3``: ``ceil(T^{1/(d+2)})`` (>= 1)."""
    if T < 1:
        raise ValueError(f"horizon must be >= 1, got {T!r}")
    return max(1, int_root_ceil(T, d + 2))


def bin_index(x: Any, K: int) -> np.ndarray:
    """Flat (row-major) cell index of points ``x`` of shape ``(..., d)`` on the ``K``-per-axis grid."""
    x = np.asarray(x, dtype=float)
    if x.ndim == 0:
        x = x.reshape(1)
    per_axis = np.minimum(np.floor(x * K).astype(np.int64), K - 1)
    per_axis = np.maximum(per_axis, 0)
    flat = np.zeros(per_axis.shape[:-1], dtype=np.int64)
    for m in range(per_axis.shape[-1]):
        flat = flat * K + per_axis[..., m]
    return flat


def cell_midpoints(flat: Any, K: Any, d: int) -> np.ndarray:
    """Midpoints of the cells with flat indices ``flat`` (shape ``(n,)``); ``K`` scalar or ``(n,)``.

    Returns ``(n, d)``: axis ``m`` of cell ``j`` has index ``(j // K^{d-1-m}) % K`` and midpoint
    ``(index + 0.5) / K``.
    """
    flat = np.asarray(flat, dtype=np.int64)
    K = np.asarray(K, dtype=np.int64)
    out = np.empty(flat.shape + (d,))
    rest = flat.copy()
    for m in range(d - 1, -1, -1):
        idx = rest % K
        rest = rest // K
        out[..., m] = (idx + 0.5) / K
    return out


def midpoints(K: int, d: int = 1) -> np.ndarray:
    """Midpoints of all ``K^d`` cells, shape ``(K^d, d)``; row ``j`` is the cell of flat index ``j``."""
    return cell_midpoints(np.arange(K**d), K, d)


@njit(cache=True, nogil=True)
def inverse_cdf(p: np.ndarray, u: np.ndarray, out: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """Row-wise inverse-CDF draw: ``out[i]`` = first ``k`` with ``p[i, 0] + ... + p[i, k] > u[i]``.

    ``p`` is ``(n, K)`` (rows summing to 1 up to rounding), ``u`` ``(n,)`` in ``[0, 1)``; if rounding
    leaves ``u[i] >= sum_k p[i, k]`` the last index ``K - 1`` is returned. The running sum is taken
    left to right in every row, so a row's result does not depend on the other rows (batching). numba:
    numpy's row-wise ``cumsum`` costs ~10x more at ``(100, 32)``.
    """
    n, K = p.shape
    for i in range(n):
        acc = 0.0
        k = K - 1
        for j in range(K):
            acc += p[i, j]
            if acc > u[i]:
                k = j
                break
        out[i] = k
    return out


def ucb_pull(
    counts: np.ndarray, sums: np.ndarray, ucb: np.ndarray, flat: np.ndarray, rewards: np.ndarray, c: float, lg: Any
) -> None:
    """Record one pull per run (``flat``: the pulled bin's index in the flattened ``(runs, bins)`` arrays) and
    refresh that bin's index ``I_k = mean_k + c sqrt(lg / n_k)``, in place (``lg``: the log term, a scalar or
    one value per run). Shared by the phase-restarting binning-UCB agents."""
    counts = counts.reshape(-1)
    sums = sums.reshape(-1)
    cnt = counts[flat] + 1.0
    s = sums[flat] + rewards
    counts[flat] = cnt
    sums[flat] = s
    ucb.reshape(-1)[flat] = s / cnt + c * np.sqrt(lg / cnt)


def problem_dims(problem: Any) -> tuple[int, int]:
    """``(T, d)`` of a :class:`~papergym.envs.spec.ProblemSpec` of ``NonStatLipschitz-v0``."""
    T = int(problem.horizon)
    if T < 1:
        raise ValueError(f"problem.horizon must be >= 1, got {problem.horizon!r}")
    params = getattr(problem, "params", {}) or {}
    d = params.get("d", None)
    if d is None:
        d = int(np.prod(problem.action_space.shape))
    d = int(d)
    if d < 1:
        raise ValueError(f"problem.params['d'] must be >= 1, got {d!r}")
    return T, d


def n_runs(seeds: Sequence[Any]) -> int:
    """Number of runs of a batched agent (``len(seeds)``, at least 1)."""
    n = len(seeds)
    if n < 1:
        raise ValueError("seeds must hold at least one seed (one per run)")
    return n
