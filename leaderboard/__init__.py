"""Experiments and the leaderboard, in two subpackages.

* :mod:`papergym.leaderboard.runner` -- the experiment runner: :func:`compare` (regret comparisons on
  envs), :func:`bench` (solver benchmarks on tasks), cells and their cache, executors (serial, joblib,
  Dask), statistics and figures.
* :mod:`papergym.leaderboard.board` -- the leaderboard: the store (SQLAlchemy: SQLite or PostgreSQL),
  board configurations and hidden test seeds, the sandbox and its message channel, evaluation of
  submissions, ranking with bootstrap CIs and rank intervals, and the HTML / terminal pages.

:mod:`papergym.leaderboard.cli` is the ``papergym`` command over both.
"""

from papergym.leaderboard.runner.bench import BenchResult, bench
from papergym.leaderboard.runner.compare import Cell, CompareResult, cell_key, compare, default_cache_dir

__all__ = ["BenchResult", "Cell", "CompareResult", "bench", "cell_key", "compare", "default_cache_dir"]
