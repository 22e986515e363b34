"""What a leaderboard shows: :class:`BenchmarkBoard` (one env or task) and :class:`Board` (all of them).

These are plain data (pandas DataFrames with the documented columns), assembled from the store by
:func:`build_board` and rendered by :mod:`papergym.leaderboard.report.html` (static site) and
:mod:`papergym.leaderboard.report.text` (terminal table).

``BenchmarkBoard.table`` -- one row per shown submission (the latest finished submission of each
(name, author) on the benchmark's current version), ranked rows first by rank, then unranked rows
(reference lines: roles ``oracle`` / ``reference``; incomplete or failed submissions; stale versions):

========================  =====================================================================
column                    meaning
========================  =====================================================================
submission_id             int, the store's id
name, author              str
role                      ``submission`` | ``paper`` | ``baseline`` | ``oracle`` | ``reference``
ranked                    bool: has a rank (all runs ok, role not oracle/reference)
rank                      float: point rank (1 = best; ties share the smallest rank); NaN if unranked
rank_lo, rank_hi          float: 95 % rank interval from the bootstrap replicates; NaN if unranked
tie                       bool: the point estimate equals another ranked row's
score                     float: the primary metric's aggregate (mean over strata of the per-stratum
                          mean over seeds)
ci_low, ci_high           float: 95 % stratified-bootstrap CI of ``score``
n_runs                    int, and one column per run status: ``n_ok``, ``n_error``, ``n_timeout``,
                          ``n_oom``, ``n_invalid_action``
status                    str: the submission's status (``ok``, ``error``, ``timeout``, ``oom``,
                          ``invalid_action``, ``partial`` (some runs failed), ``running``, ``stale``)
message                   str: a short reason shown for failed submissions ('' otherwise)
code_sha256               str: full SHA-256 of the submitted source
date                      str: ISO-8601 UTC time the submission finished
========================  =====================================================================

``BenchmarkBoard.curves`` (envs; ``None`` for tasks) -- long format: ``submission_id, name, role, t,
mean, ci_low, ci_high`` (mean cumulative regret over every test run and its 95 % bootstrap band).
``BenchmarkBoard.profiles`` (tasks; ``None`` for envs) -- Dolan--More performance profiles:
``name, role, tau, fraction``.

``Board.overall`` -- across benchmarks: ``name, author, n_benchmarks, benchmarks, iqm, ci_low,
ci_high`` (IQM of the normalised scores of every run on every benchmark the (name, author) is ranked
on, with a stratified-bootstrap CI).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

__all__ = ["BenchmarkBoard", "Board", "TABLE_COLUMNS", "CURVE_COLUMNS", "PROFILE_COLUMNS", "OVERALL_COLUMNS",
           "RUN_STATUSES"]

RUN_STATUSES: tuple[str, ...] = ("ok", "error", "timeout", "oom", "invalid_action")

TABLE_COLUMNS: tuple[str, ...] = (
    "submission_id", "name", "author", "role", "ranked", "rank", "rank_lo", "rank_hi", "tie", "score",
    "ci_low", "ci_high", "n_runs", *(f"n_{s}" for s in RUN_STATUSES), "status", "message", "code_sha256",
    "date",
)
CURVE_COLUMNS: tuple[str, ...] = ("submission_id", "name", "role", "t", "mean", "ci_low", "ci_high")
PROFILE_COLUMNS: tuple[str, ...] = ("name", "role", "tau", "fraction")
OVERALL_COLUMNS: tuple[str, ...] = ("name", "author", "n_benchmarks", "benchmarks", "iqm", "ci_low", "ci_high")


@dataclass
class BenchmarkBoard:
    """The board of one env or task (module docstring for the columns)."""

    benchmark_id: str
    kind: str  # "env" | "task"
    version: str
    metric: str  # e.g. "final cumulative regret R_T"
    direction: str  # "min" | "max"
    description: str
    strata: list[str]
    n_seeds: int  # test seeds per stratum
    table: pd.DataFrame
    curves: pd.DataFrame | None = None
    curve_ylabel: str = "cumulative regret"
    profiles: pd.DataFrame | None = None
    profile_xlabel: str = "tau (time to target / best time to target)"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Board:
    """Every benchmark's board and the cross-benchmark table."""

    benchmarks: list[BenchmarkBoard]
    overall: pd.DataFrame
    generated: str  # ISO-8601 UTC
