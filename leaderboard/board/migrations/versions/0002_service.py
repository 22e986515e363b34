"""The board as a service: job columns and splits on submissions, authors and API tokens, name
ownership, curves in the database.

* ``submissions`` gains ``split`` (``validation`` | ``test`` | ``local``; existing rows become ``test``),
  the queued job's ``code`` (the submitted file's bytes; NULL for registry references), ``code_name``,
  ``attr``, ``attempts`` (0), ``lease_owner``, ``lease_expires_at``, ``heartbeat_at``, ``started_at``,
  and an index on ``status`` (the queue is read by status).
* ``authors`` and ``api_tokens`` (only a token's SHA-256 is stored).
* ``board_names``: a name belongs to the first author that used it on a board; filled here from the
  existing submissions (the earliest one of each (benchmark_id, name)).
* ``curves`` (content-addressed parquet bytes) and ``runs.curve_sha256`` referencing it. Existing runs
  keep their ``curve_path`` files, which :meth:`papergym.leaderboard.board.store.Store.read_curve` still
  reads.
* ``papergym_schema.version`` becomes 2, so a papergym from before Alembic refuses the database
  (:class:`papergym.leaderboard.board.store.SchemaVersionError`) instead of writing to a schema it does
  not know; the revision itself is in ``alembic_version``.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for column in (
        sa.Column("split", sa.String(16), nullable=False, server_default="test"),
        sa.Column("code", sa.LargeBinary, nullable=True),
        sa.Column("code_name", sa.String(200), nullable=True),
        sa.Column("attr", sa.String(200), nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("lease_owner", sa.String(200), nullable=True),
        sa.Column("lease_expires_at", _TIME, nullable=True),
        sa.Column("heartbeat_at", _TIME, nullable=True),
        sa.Column("started_at", _TIME, nullable=True),
    ):
        op.add_column("submissions", column)
    op.create_index("ix_submissions_status", "submissions", ["status"])

    op.create_table(
        "authors",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.UniqueConstraint("name", name="authors_name"),
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id"), nullable=False, index=True),
        sa.Column("token_sha256", sa.String(64), nullable=False),
        sa.Column("prefix", sa.String(8), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("revoked_at", _TIME, nullable=True),
        sa.Column("last_used_at", _TIME, nullable=True),
        sa.UniqueConstraint("token_sha256", name="api_tokens_sha256"),
    )
    names = op.create_table(
        "board_names",
        sa.Column("benchmark_id", sa.String(200), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("benchmark_id", "name", name="board_names_pk"),
    )
    op.create_table(
        "curves",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
    )
    if sqlite:  # SQLite cannot add a foreign key constraint to a table, only a column with REFERENCES
        op.execute("ALTER TABLE runs ADD COLUMN curve_sha256 VARCHAR(64) REFERENCES curves (sha256)")
    else:
        op.add_column("runs", sa.Column("curve_sha256", sa.String(64), nullable=True))
        op.create_foreign_key("runs_curve_sha256_fkey", "runs", "curves", ["curve_sha256"], ["sha256"])
    op.create_index("ix_runs_curve_sha256", "runs", ["curve_sha256"])

    # a name belongs to the author of its earliest submission on the board
    s = sa.table(
        "submissions",
        sa.column("id"),
        sa.column("benchmark_id"),
        sa.column("name"),
        sa.column("author"),
        sa.column("created_at"),
    )
    first = s.alias("first")
    earliest = (
        sa.select(sa.func.min(first.c.id))
        .where(first.c.benchmark_id == s.c.benchmark_id, first.c.name == s.c.name)
        .scalar_subquery()
    )
    op.execute(
        names.insert().from_select(
            ["benchmark_id", "name", "author", "created_at"],
            sa.select(s.c.benchmark_id, s.c.name, s.c.author, s.c.created_at).where(s.c.id == earliest),
        )
    )

    schema = sa.table("papergym_schema", sa.column("id"), sa.column("version"))
    op.execute(schema.update().where(schema.c.id == 1).values(version=2))


def downgrade() -> None:
    raise NotImplementedError(
        "papergym does not downgrade the leaderboard store below revision 0002: regret curves now live only "
        "in the database (table curves), which revision 0001 has no place for"
    )
