"""Run, score and report: :func:`compare` (regret comparisons on envs), :func:`bench` (solver
benchmarks on tasks), statistics and figures.

The leaderboard store, submissions and the HTML page come in a later issue.
"""

from papergym.leaderboard.bench import BenchResult, bench
from papergym.leaderboard.runner import Cell, CompareResult, cell_key, compare, default_cache_dir

__all__ = ["BenchResult", "Cell", "CompareResult", "bench", "cell_key", "compare", "default_cache_dir"]
