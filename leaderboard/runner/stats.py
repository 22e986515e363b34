"""Statistics used by every report: bootstrap confidence intervals, robust aggregates and leaderboard ranking.

All resampling uses a fixed seed, so tables and figures are reproducible.

Per-run helpers (used by the runner, the bench and the plots): :func:`bootstrap_ci`,
:func:`bootstrap_mean_ci_columns`, :func:`iqm`.

Leaderboard scoring (docs/leaderboard/submitting.md, "Ranking"):

* :func:`stratified_bootstrap` -- every submission of a benchmark is evaluated on the same strata (instance
  families / task instances) and the same hidden seed indices, so the bootstrap is *stratified* (seed
  indices are resampled with replacement within each stratum, never across strata; Agarwal et al. 2021,
  "Deep reinforcement learning at the edge of the statistical precipice", NeurIPS) and *paired* (one
  replicate's draw is applied to every submission, so differences between submissions are resampled
  jointly). Percentile intervals.
* :func:`point_ranks` / :func:`rank_intervals` -- competition ranks (1, 2, 2, 4) of the point estimates and
  bootstrap rank intervals: the ranks of the submissions within every paired replicate, summarised per
  submission by quantiles (Hall & Miller 2009, "Using the bootstrap to quantify the authority of an
  empirical ranking", Ann. Statist. 37(6B)).
* :func:`rank_table` -- the two together, the per-benchmark table of the board.
* :func:`normalised_scores` -- linear map to 1 = best reference, 0 = worst reference, so scores of
  different benchmarks can be pooled (IQM of normalised scores across benchmarks, Agarwal et al. 2021).
* :func:`performance_profile` / :func:`time_to_target` -- Dolan & More 2002, "Benchmarking optimization
  software with performance profiles", Math. Program. 91, for solver tasks (cost = time or work to reach
  a target accuracy, read off an anytime curve).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from papergym.validate import in_range, one_of, positive_float, positive_int

__all__ = [
    "TABLE_STAT_COLUMNS",
    "BootstrapResult",
    "bootstrap_ci",
    "bootstrap_mean_ci_columns",
    "iqm",
    "normalised_scores",
    "performance_profile",
    "point_ranks",
    "rank_intervals",
    "rank_table",
    "stratified_bootstrap",
    "time_to_target",
]

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


# ---------------------------------------------------------------------------------------------------------
# Leaderboard scoring
# ---------------------------------------------------------------------------------------------------------

_DIRECTIONS = ("min", "max")
# bound on the floats materialised at once when resampled values must be gathered (IQM / callable)
_SLAB_FLOATS = 4_000_000


@dataclass
class BootstrapResult:
    """Result of :func:`stratified_bootstrap`.

    Attributes
    ----------
    names : list of str
        Submission keys, in input order.
    estimate : ndarray, shape (n_subs,)
        The aggregate on the original data.
    low, high : ndarray, shape (n_subs,)
        Percentile-bootstrap confidence interval of ``estimate``.
    replicates : ndarray, shape (n_boot, n_subs)
        The aggregate in every (paired) bootstrap replicate; feed to :func:`rank_intervals`.
    """

    names: list[str]
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    replicates: np.ndarray


def _stack_strata(data: Mapping[str, Mapping[str, np.ndarray]]) -> tuple[list[str], list, list[np.ndarray]]:
    """Validate ``data[sub][stratum]`` and return (names, strata, [(n_subs, n_seeds_k) per stratum])."""
    if not isinstance(data, Mapping) or len(data) == 0:
        raise ValueError("data must be a non-empty mapping {submission: {stratum: per-seed values}}")
    names = list(data)
    first = names[0]
    if not isinstance(data[first], Mapping) or len(data[first]) == 0:
        raise ValueError(f"submission {first!r}: expected a non-empty mapping {{stratum: per-seed values}}")
    strata = sorted(data[first], key=str)  # sorted: the draw does not depend on dict insertion order
    want = set(strata)
    for name in names:
        sub = data[name]
        if not isinstance(sub, Mapping):
            raise TypeError(f"submission {name!r}: expected a mapping {{stratum: per-seed values}}")
        have = set(sub)
        if have != want:
            missing, extra = sorted(want - have, key=str), sorted(have - want, key=str)
            raise ValueError(
                f"submission {name!r} is not evaluated on the same strata as {first!r}: "
                f"missing {missing}, extra {extra}"
            )
    mats = []
    for st in strata:
        rows = []
        for name in names:
            v = np.asarray(data[name][st], dtype=float)
            if v.ndim != 1:
                raise ValueError(
                    f"submission {name!r}, stratum {st!r}: values must be 1-D (one per seed), got shape {v.shape}"
                )
            if v.size == 0:
                raise ValueError(f"submission {name!r}, stratum {st!r}: no values")
            if np.isnan(v).any():
                raise ValueError(
                    f"submission {name!r}, stratum {st!r}: NaN values at seed indices "
                    f"{np.flatnonzero(np.isnan(v)).tolist()} (rank only complete submissions)"
                )
            if not np.isfinite(v).all():
                raise ValueError(f"submission {name!r}, stratum {st!r}: infinite values")
            if rows and v.size != rows[0].size:
                raise ValueError(
                    f"stratum {st!r}: submission {name!r} has {v.size} seeds but {first!r} has "
                    f"{rows[0].size} (all submissions must share the seed indices)"
                )
            rows.append(v)
        mats.append(np.vstack(rows))
    return names, strata, mats


def _iqm_last_axis(x: np.ndarray) -> np.ndarray:
    """:func:`iqm` along the last axis (same trimming convention: floor(n/4) off each end)."""
    n = x.shape[-1]
    lo, hi = int(np.floor(0.25 * n)), int(np.ceil(0.75 * n))
    if hi <= lo:
        return x.mean(axis=-1)
    return np.sort(x, axis=-1)[..., lo:hi].mean(axis=-1)


def stratified_bootstrap(
    data: Mapping[str, Mapping[str, np.ndarray]],
    *,
    aggregate: str | Callable[[dict[str, np.ndarray]], float] = "mean",
    n_boot: int = 2000,
    ci: float = 0.95,
    seed: int = 0,
) -> BootstrapResult:
    """Paired, stratified percentile bootstrap of a per-submission aggregate.

    Parameters
    ----------
    data : mapping
        ``data[sub][stratum]`` = 1-D per-seed values, indexed by seed index. Every submission must have the
        same strata, and within a stratum the same number of seeds (the seed indices are shared). NaN or
        infinite values raise ``ValueError``: rank only complete submissions.
    aggregate : ``"mean"`` | ``"iqm"`` | callable
        ``"mean"``: mean over strata of the per-stratum mean over seeds (equal weight per stratum, whatever
        its number of seeds). ``"iqm"``: interquartile mean (:func:`iqm`) of all values of the submission
        pooled over strata (Agarwal et al. 2021). A callable gets ``{stratum: values}`` of one submission
        (resampled in a replicate) and returns a float; it is called ``n_boot * n_subs`` times.
    n_boot : int
        Number of bootstrap replicates.
    ci : float
        Coverage of the percentile interval, e.g. 0.95 -> the 2.5 % and 97.5 % quantiles of the replicates.
    seed : int
        Seed of the resampling; results are deterministic given it (strata are resampled in sorted order).

    Returns
    -------
    BootstrapResult

    Notes
    -----
    One replicate draws, for every stratum ``k`` with ``n_k`` seeds, ``n_k`` seed indices with replacement
    from that stratum (never from another: stratified, Agarwal et al. 2021), and applies the same indices to
    every submission (paired), so the replicates keep the dependence between submissions that the shared
    seeds induce; rank intervals from them (:func:`rank_intervals`) are far tighter than comparing marginal
    intervals. With one stratum, one submission and ``aggregate="mean"`` the draw equals that of
    :func:`bootstrap_ci` with the same seed.
    """
    names, strata, mats = _stack_strata(data)
    n_boot = positive_int(n_boot, "n_boot")
    ci = in_range(ci, "ci", 0, 1)
    if not (callable(aggregate) or aggregate in ("mean", "iqm")):
        raise ValueError(f"aggregate must be 'mean', 'iqm' or a callable, got {aggregate!r}")

    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, m.shape[1], size=(n_boot, m.shape[1])) for m in mats]
    n_subs = len(names)

    if aggregate == "mean":
        estimate = np.mean([m.mean(axis=1) for m in mats], axis=0)
        reps = np.zeros((n_boot, n_subs))
        for m, idx in zip(mats, draws):
            n_k = m.shape[1]
            # counts[b, j] = how often seed j is drawn in replicate b; stratum mean = values @ counts / n_k
            flat = (idx + n_k * np.arange(n_boot)[:, None]).ravel()
            counts = np.bincount(flat, minlength=n_boot * n_k).reshape(n_boot, n_k)
            reps += counts @ m.T / n_k
        reps /= len(mats)
    elif aggregate == "iqm":
        estimate = np.array([iqm(np.concatenate([m[s] for m in mats])) for s in range(n_subs)])
        n_total = sum(m.shape[1] for m in mats)
        step = max(1, _SLAB_FLOATS // max(1, n_subs * n_total))
        reps = np.empty((n_boot, n_subs))
        for b0 in range(0, n_boot, step):
            # (n_subs, slab, n_total): the pooled resampled values of every submission in the slab
            pooled = np.concatenate([m[:, idx[b0 : b0 + step]] for m, idx in zip(mats, draws)], axis=-1)
            reps[b0 : b0 + step] = _iqm_last_axis(pooled).T
    else:
        estimate = np.array([float(aggregate({st: m[s] for st, m in zip(strata, mats)})) for s in range(n_subs)])
        reps = np.empty((n_boot, n_subs))
        for b in range(n_boot):
            for s in range(n_subs):
                reps[b, s] = float(aggregate({st: m[s, idx[b]] for st, m, idx in zip(strata, mats, draws)}))

    alpha = (1.0 - ci) / 2.0
    low, high = np.quantile(reps, [alpha, 1.0 - alpha], axis=0)
    return BootstrapResult(names=names, estimate=estimate, low=low, high=high, replicates=reps)


def _close_matrix(x: np.ndarray, rtol: float) -> np.ndarray:
    """``out[..., i, j]``: entries i and j are equal (``==``, or both finite and within ``rtol``)."""
    a, b = x[..., :, None], x[..., None, :]
    with np.errstate(invalid="ignore"):
        near = np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b))
    return (a == b) | (np.isfinite(a) & np.isfinite(b) & near)


def _better_matrix(x: np.ndarray, direction: str, rtol: float) -> np.ndarray:
    """``out[..., i, j]`` is True when entry j is strictly better than entry i beyond the tolerance."""
    a, b = x[..., :, None], x[..., None, :]
    better = (b < a) if direction == "min" else (b > a)
    return better & ~_close_matrix(x, rtol)


def point_ranks(estimates: np.ndarray, direction: str = "min", *, rtol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Competition ranks of point estimates and a tie flag per entry.

    Parameters
    ----------
    estimates : array, shape (n,)
        One score per submission; ``inf`` is allowed (worst for ``min``), NaN is not.
    direction : ``"min"`` | ``"max"``
        Whether lower or higher scores are better.
    rtol : float
        Two estimates ``a, b`` are equal when ``a == b`` or both are finite and
        ``|a - b| <= rtol * max(|a|, |b|)`` (pairwise, not chained: ranks stay well defined).

    Returns
    -------
    ranks : ndarray of int, shape (n,)
        1 = best; rank = 1 + the number of entries strictly better (beyond the tolerance), so equal entries
        share the smallest rank and the next rank skips (1, 2, 2, 4: "competition ranking").
    tie : ndarray of bool, shape (n,)
        True where another entry is equal within the tolerance.
    """
    one_of(direction, "direction", _DIRECTIONS)
    x = np.asarray(estimates, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"estimates must be 1-D, got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError(f"estimates contain NaN at positions {np.flatnonzero(np.isnan(x)).tolist()}")
    rtol = positive_float(rtol, "rtol", allow_zero=True)
    ranks = 1 + _better_matrix(x, direction, rtol).sum(axis=1)
    close = _close_matrix(x, rtol)
    np.fill_diagonal(close, False)
    return ranks.astype(int), close.any(axis=1)


def rank_intervals(replicates: np.ndarray, direction: str = "min", ci: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap rank intervals (Hall & Miller 2009): quantiles of each submission's rank over replicates.

    Parameters
    ----------
    replicates : array, shape (n_boot, n_subs)
        Paired bootstrap replicates of the scores (:attr:`BootstrapResult.replicates`).
    direction : ``"min"`` | ``"max"``
    ci : float
        Coverage, e.g. 0.95.

    Returns
    -------
    lo, hi : ndarray of int, shape (n_subs,)
        In every replicate the submissions get competition ranks (as :func:`point_ranks`, default
        tolerance); per submission ``lo = floor(q(alpha/2))`` and ``hi = ceil(q(1 - alpha/2))`` of its ranks,
        ``alpha = 1 - ci``, ``q`` the linearly interpolated empirical quantile (numpy's default). Rounding
        outwards keeps the interval a set of integer ranks at least as wide as the quantiles.

    Notes
    -----
    The interval is not forced to contain the point rank; :func:`rank_table` widens it to do so.
    """
    one_of(direction, "direction", _DIRECTIONS)
    ci = in_range(ci, "ci", 0, 1)
    r = np.asarray(replicates, dtype=float)
    if r.ndim != 2 or r.shape[0] == 0 or r.shape[1] == 0:
        raise ValueError(f"replicates must be (n_boot, n_subs) with both > 0, got shape {r.shape}")
    if np.isnan(r).any():
        raise ValueError("replicates contain NaN")
    n_boot, n = r.shape
    ranks = np.empty((n_boot, n), dtype=np.int64)
    step = max(1, _SLAB_FLOATS // (n * n))
    for b0 in range(0, n_boot, step):
        ranks[b0 : b0 + step] = 1 + _better_matrix(r[b0 : b0 + step], direction, 1e-12).sum(axis=-1)
    alpha = (1.0 - ci) / 2.0
    qlo, qhi = np.quantile(ranks, [alpha, 1.0 - alpha], axis=0)
    # tiny guard so a quantile that is an integer up to rounding is not pushed to the next one
    return np.floor(qlo + 1e-9).astype(int), np.ceil(qhi - 1e-9).astype(int)


TABLE_STAT_COLUMNS: tuple[str, ...] = ("score", "ci_low", "ci_high", "rank", "rank_lo", "rank_hi", "tie")


def rank_table(
    data: Mapping[str, Mapping[str, np.ndarray]],
    direction: str = "min",
    *,
    n_boot: int = 2000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Score, CI, point rank, rank interval and tie flag of every submission of one benchmark.

    Parameters
    ----------
    data : mapping
        ``data[sub][stratum]`` = per-seed values of the primary metric, as :func:`stratified_bootstrap`
        (only complete submissions; oracle / reference rows are not ranked and must not be passed).
    direction : ``"min"`` | ``"max"``
    n_boot, ci, seed
        As :func:`stratified_bootstrap`.

    Returns
    -------
    DataFrame
        Index = submission key (named ``"submission"``); columns ``score`` (mean over strata of the
        per-stratum mean over seeds), ``ci_low``, ``ci_high`` (percentile stratified-bootstrap CI),
        ``rank`` (int, :func:`point_ranks`), ``rank_lo``, ``rank_hi`` (int, :func:`rank_intervals`, widened
        to contain ``rank`` where the bootstrap quantiles miss it), ``tie`` (bool). Sorted by rank, equal
        ranks in input order. An empty ``data`` gives an empty frame with these columns.
    """
    one_of(direction, "direction", _DIRECTIONS)
    if isinstance(data, Mapping) and len(data) == 0:
        out = pd.DataFrame(
            {c: pd.Series(dtype=t) for c, t in zip(TABLE_STAT_COLUMNS, (float, float, float, int, int, int, bool))}
        )
        out.index.name = "submission"
        return out
    res = stratified_bootstrap(data, aggregate="mean", n_boot=n_boot, ci=ci, seed=seed)
    rank, tie = point_ranks(res.estimate, direction)
    lo, hi = rank_intervals(res.replicates, direction, ci)
    out = pd.DataFrame(
        {
            "score": res.estimate,
            "ci_low": res.low,
            "ci_high": res.high,
            "rank": rank,
            "rank_lo": np.minimum(lo, rank),
            "rank_hi": np.maximum(hi, rank),
            "tie": tie,
        },
        index=pd.Index(res.names, name="submission"),
    )
    return out.sort_values("rank", kind="stable")


def normalised_scores(values: np.ndarray, best_ref: float, worst_ref: float, direction: str = "min") -> np.ndarray:
    """Linear normalisation: 1 = the best reference's score, 0 = the worst reference's.

    ``(values - worst_ref) / (best_ref - worst_ref)`` -- the same formula for both directions; values better
    than the best reference exceed 1, values worse than the worst go below 0 (not clipped). NaN values stay
    NaN; infinite values map to +-inf.

    Parameters
    ----------
    values : array
    best_ref, worst_ref : float
        Scores of the best and worst reference (e.g. the paper's agent and a uniform-random baseline).
        For ``direction="min"`` ``best_ref <= worst_ref`` is required, for ``"max"`` ``best_ref >= worst_ref``;
        otherwise ``ValueError`` (the references are swapped).
    direction : ``"min"`` | ``"max"``

    Returns
    -------
    ndarray of float, shape of ``values``

    Notes
    -----
    Degenerate references (``best_ref == worst_ref``): there is no scale, so the score is a step -- 1.0
    where the value is at least as good as the reference (``<=`` for min, ``>=`` for max), 0.0 where it is
    worse, NaN stays NaN.
    """
    one_of(direction, "direction", _DIRECTIONS)
    best, worst = float(best_ref), float(worst_ref)
    if not (np.isfinite(best) and np.isfinite(worst)):
        raise ValueError(f"best_ref and worst_ref must be finite, got {best_ref!r}, {worst_ref!r}")
    if (direction == "min" and best > worst) or (direction == "max" and best < worst):
        raise ValueError(
            f"best_ref={best} is worse than worst_ref={worst} for direction={direction!r} (references swapped?)"
        )
    v = np.asarray(values, dtype=float)
    if best == worst:
        good = (v <= best) if direction == "min" else (v >= best)
        return np.where(np.isnan(v), np.nan, good.astype(float))
    return (v - worst) / (best - worst)


def performance_profile(
    costs: pd.DataFrame,
    *,
    solver: str = "solver",
    problem: str = "problem",
    cost: str = "cost",
    taus: np.ndarray | None = None,
) -> pd.DataFrame:
    """Dolan--More performance profiles (Dolan & More 2002).

    For problem ``p`` and solver ``s`` the performance ratio is ``r_ps = c_ps / min_s c_ps`` and the profile
    ``rho_s(tau) = |{p : r_ps <= tau}| / n_problems``: ``rho_s(1)`` is the fraction of problems on which
    ``s`` is (one of) the best -- ties count for every tied solver -- and ``rho_s(tau)`` for large ``tau``
    is the fraction ``s`` solves at all.

    Parameters
    ----------
    costs : DataFrame
        Long format, one row per (problem, solver): the cost (time or work to reach the target, e.g. from
        :func:`time_to_target`), positive. ``inf`` or NaN = failure (never solved): ratio ``inf``. A
        (problem, solver) pair without a row is a failure too. Duplicate pairs raise ``ValueError``.
    solver, problem, cost : str
        Column names.
    taus : array, optional
        Where to evaluate ``rho``. Default: 101 points log-spaced from 1 to ``1.05 * r_max`` plus 1 and
        ``r_max`` exactly, ``r_max`` the largest finite ratio (``r_max = 1`` gives the grid 1..1.05).

    Returns
    -------
    DataFrame
        Columns ``solver, tau, fraction``; solvers in order of first appearance, ``tau`` ascending.

    Notes
    -----
    A problem no solver solved has ratio ``inf`` for every solver: it stays in the denominator, so no
    profile reaches 1 (the profile's plateau is the fraction of problems *that solver* solved).
    """
    for col in (solver, problem, cost):
        if col not in costs.columns:
            raise ValueError(f"costs has no column {col!r} (columns: {list(costs.columns)})")
    if len(costs) == 0:
        raise ValueError("costs is empty")
    dup = costs.duplicated([problem, solver])
    if dup.any():
        first = costs.loc[dup, [problem, solver]].iloc[0].tolist()
        raise ValueError(f"costs has duplicate (problem, solver) rows, e.g. {first}")
    c = pd.to_numeric(costs[cost], errors="coerce").to_numpy(dtype=float)
    bad = np.isfinite(c) & (c <= 0)
    if bad.any():
        raise ValueError(
            f"costs must be positive (or inf/NaN for a failure); got {c[bad][0]} for "
            f"{costs.loc[bad, [problem, solver]].iloc[0].tolist()}"
        )
    solvers = list(pd.unique(costs[solver]))
    problems = list(pd.unique(costs[problem]))
    mat = (
        costs.assign(**{cost: np.where(np.isfinite(c), c, np.inf)})
        .pivot(index=problem, columns=solver, values=cost)
        .reindex(index=problems, columns=solvers)
        .to_numpy(dtype=float, copy=True)
    )
    mat[np.isnan(mat)] = np.inf  # missing (problem, solver) pairs
    best = mat.min(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        ratio = np.where(np.isfinite(best), mat / best, np.inf)
    if taus is None:
        finite = ratio[np.isfinite(ratio)]
        r_max = float(finite.max()) if finite.size else 1.0
        grid = np.concatenate([np.geomspace(1.0, 1.05 * r_max, 101), [1.0, r_max]])
        taus = np.unique(grid)
    else:
        taus = np.sort(np.asarray(taus, dtype=float).ravel())
        if taus.size == 0 or np.isnan(taus).any():
            raise ValueError("taus must be a non-empty array without NaN")
    frac = (ratio[:, :, None] <= taus[None, None, :]).mean(axis=0)  # (n_solvers, n_taus)
    return pd.DataFrame(
        {
            "solver": np.repeat(np.array(solvers, dtype=object), taus.size),
            "tau": np.tile(taus, len(solvers)),
            "fraction": frac.ravel(),
        }
    )


def time_to_target(
    curve: pd.DataFrame, *, metric: str, target: float, direction: str = "min", time: str = "seconds"
) -> float:
    """First time an anytime curve reaches a target: ``metric <= target`` (min) or ``>= target`` (max).

    Parameters
    ----------
    curve : DataFrame
        One row per checkpoint, with a ``time`` column (seconds, iterations, function evaluations ...) and
        a ``metric`` column. Rows are taken in order of ``time``; NaN metrics never count as reached.
    metric, time : str
        Column names.
    target : float
    direction : ``"min"`` | ``"max"``

    Returns
    -------
    float
        The smallest time whose metric reaches the target; ``inf`` if none (including an empty curve).
    """
    one_of(direction, "direction", _DIRECTIONS)
    for col in (metric, time):
        if col not in curve.columns:
            raise ValueError(f"curve has no column {col!r} (columns: {list(curve.columns)})")
    target = float(target)
    if np.isnan(target):
        raise ValueError("target is NaN")
    t = curve[time].to_numpy(dtype=float)
    m = curve[metric].to_numpy(dtype=float)
    if np.isnan(t).any():
        raise ValueError(f"curve column {time!r} contains NaN")
    hit = (m <= target) if direction == "min" else (m >= target)
    return float(t[hit].min()) if hit.any() else float("inf")
