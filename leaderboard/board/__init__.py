"""The leaderboard: :mod:`.configs` (board configurations, hidden test seeds), :mod:`.store`
(SQLAlchemy store), :mod:`.sandbox` with :mod:`.channel` and :mod:`._sandbox_child` (isolated
execution of submitted code), :mod:`.evaluate` (scoring a submission, refreshing references),
:mod:`.ranking` (bootstrap CIs, rank intervals, IQM) and the pages (:mod:`.html`, :mod:`.text`).
"""
