"""Alembic's environment script for the leaderboard store.

:func:`papergym.leaderboard.board.store.migrate` opens the write transaction (``BEGIN IMMEDIATE`` on
SQLite, a transaction-level advisory lock on PostgreSQL) and passes its connection as
``config.attributes["connection"]``; the migrations run inside that transaction, so concurrent openers
serialise and a failed revision leaves the database as it was. There is no offline (``--sql``) mode.
"""

from alembic import context

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError(
        "the leaderboard store's migrations run from papergym.leaderboard.board.store.migrate(engine) "
        "(or Store(...)), which passes an open connection; there is no alembic.ini / offline mode"
    )

context.configure(connection=connection, target_metadata=None)
with context.begin_transaction():
    context.run_migrations()
