"""Statistics used by every report: bootstrap confidence intervals and robust aggregates.

All resampling uses a fixed seed, so tables and figures are reproducible.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bootstrap_ci", "bootstrap_mean_ci_columns", "iqm"]

DEFAULT_N_BOOT = 10_000


def bootstrap_ci(
    values: np.ndarray, *, ci: float = 0.95, n_boot: int = DEFAULT_N_BOOT, seed: int = 0, stat=np.mean
) -> tuple[float, float, float]:
    """Point estimate and percentile-bootstrap CI of ``stat`` over the runs in ``values``.

    Returns ``(estimate, low, high)``. One value gives a degenerate interval; no values give NaNs.
    """
    x = np.asarray(values, dtype=float).ravel()
    x = x[np.isfinite(x)]
    if x.size == 0:
        return (float("nan"),) * 3
    est = float(stat(x))
    if x.size == 1:
        return est, est, est
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(n_boot, x.size))
    boots = stat(x[idx], axis=1)
    alpha = (1.0 - ci) / 2.0
    lo, hi = np.quantile(boots, [alpha, 1.0 - alpha])
    return est, float(lo), float(hi)


def bootstrap_mean_ci_columns(
    matrix: np.ndarray, *, ci: float = 0.95, n_boot: int = 2_000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and percentile-bootstrap CI of every column of ``matrix`` (rows = runs).

    The same resampled run indices are used for all columns (a curve is resampled whole).
    """
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValueError(f"matrix must be (runs, points) with at least one run, got shape {m.shape}")
    mean = m.mean(axis=0)
    if m.shape[0] == 1:
        return mean, mean.copy(), mean.copy()
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, m.shape[0], size=(n_boot, m.shape[0]))
    # (n_boot, points): mean over resampled runs, computed in slabs to bound memory
    boots = np.empty((n_boot, m.shape[1]))
    step = max(1, 2_000_000 // max(1, m.shape[0] * m.shape[1]))
    for i in range(0, n_boot, step):
        boots[i : i + step] = m[idx[i : i + step]].mean(axis=1)
    alpha = (1.0 - ci) / 2.0
    lo, hi = np.quantile(boots, [alpha, 1.0 - alpha], axis=0)
    return mean, lo, hi


def iqm(values: np.ndarray) -> float:
    """Interquartile mean: the mean of the middle 50 % of the values (Agarwal et al. 2021)."""
    x = np.sort(np.asarray(values, dtype=float).ravel())
    n = x.size
    if n == 0:
        return float("nan")
    lo, hi = int(np.floor(0.25 * n)), int(np.ceil(0.75 * n))
    if hi <= lo:
        return float(x.mean())
    return float(x[lo:hi].mean())
