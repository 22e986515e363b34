"""Schema version 1: the store's tables as papergym wrote them before it used Alembic.

A database created by that code (a ``papergym_schema`` table holding ``version = 1`` and no
``alembic_version``) is stamped with this revision by
:func:`papergym.leaderboard.board.store.migrate` and upgraded from here. The table definitions are
frozen copies: later schema changes go in later revisions.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    schema = op.create_table(
        "papergym_schema",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.CheckConstraint("id = 1", name="papergym_schema_one_row"),
    )
    op.create_table(
        "benchmarks",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("benchmark_id", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("version", sa.String(200), nullable=False),
        sa.Column("spec_json", sa.Text, nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.UniqueConstraint("benchmark_id", "version", name="benchmarks_id_version"),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("benchmark_version", sa.Integer, sa.ForeignKey("benchmarks.id"), nullable=False),
        sa.Column("benchmark_id", sa.String(200), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("entry", sa.Text, nullable=False),
        sa.Column("code_sha256", sa.String(64), nullable=False),
        sa.Column("hyperparameters_json", sa.Text, nullable=False),
        sa.Column("package_versions_json", sa.Text, nullable=False),
        sa.Column("sandbox", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("stderr_tail", sa.Text, nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("finished_at", _TIME, nullable=True),
        sa.Column("wall_seconds", sa.Float, nullable=True),
        sa.Column("cpu_seconds", sa.Float, nullable=True),
    )
    # the index names SQLAlchemy's create_all gave the v1 code's ``index=True`` columns
    op.create_index("ix_submissions_benchmark_version", "submissions", ["benchmark_version"])
    op.create_index("ix_submissions_benchmark_id", "submissions", ["benchmark_id"])
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("submission_id", sa.Integer, sa.ForeignKey("submissions.id"), nullable=False),
        sa.Column("split", sa.String(8), nullable=False),
        sa.Column("stratum", sa.String(200), nullable=False),
        sa.Column("seed_index", sa.Integer, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("metrics_json", sa.Text, nullable=False),
        sa.Column("wall_seconds", sa.Float, nullable=True),
        sa.Column("cpu_seconds", sa.Float, nullable=True),
        sa.Column("curve_path", sa.Text, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.UniqueConstraint("submission_id", "split", "stratum", "seed_index", name="runs_key"),
    )
    op.bulk_insert(schema, [{"id": 1, "version": 1}])


def downgrade() -> None:
    for table in ("runs", "submissions", "benchmarks", "papergym_schema"):
        op.drop_table(table)
