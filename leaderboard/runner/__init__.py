"""The experiment runner: :mod:`.compare` (regret comparisons over env cells), :mod:`.bench` (solver
benchmarks over task cells), :mod:`.executors` (serial, joblib, Dask), :mod:`.stats` (bootstrap CIs,
IQM, rank intervals, performance profiles) and :mod:`.plots` (regret figures).

The functions users call are re-exported by :mod:`papergym.leaderboard` (``compare``, ``bench``).
"""
