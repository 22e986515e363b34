"""Run, score and report: :func:`compare` (regret comparisons on envs), :func:`bench` (solver
benchmarks on tasks), statistics and figures; the leaderboard: :mod:`.store` (SQLAlchemy: SQLite or PostgreSQL), :mod:`.sandbox`
(submitted code in bubblewrap + rlimits behind a message channel), :mod:`.evaluate` (hidden test seeds,
``submit``, ``refresh``), :mod:`.board` (ranking with bootstrap CIs and rank intervals) and
:mod:`.report` (static HTML site, terminal table).
"""

from papergym.leaderboard.bench import BenchResult, bench
from papergym.leaderboard.runner import Cell, CompareResult, cell_key, compare, default_cache_dir

__all__ = ["BenchResult", "Cell", "CompareResult", "bench", "cell_key", "compare", "default_cache_dir"]
