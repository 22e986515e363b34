"""Alembic migrations of the leaderboard store (:mod:`papergym.leaderboard.board.store`).

They are run by :func:`papergym.leaderboard.board.store.migrate` (and so by every ``Store(...)``), which
builds the Alembic configuration in code and passes its open connection to ``env.py``; no
``alembic.ini`` is involved. A new revision is a file under ``versions/`` (``script.py.mako`` is the
template) with ``revision``, ``down_revision`` and ``upgrade()``; update
:data:`papergym.leaderboard.board.store.SCHEMA_VERSION` and the store's table definitions with it. Never
edit a released revision.
"""
