"""leaderboard rank counts: entries per sort_key prefix, three levels

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 12:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

COUNT_LEVELS = ((0, 56), (1, 36), (2, 16))  # server.features.leaderboards.model.LEVELS


def upgrade() -> None:
    # Bucket counts over sort_key prefixes: a rank is then a sum of a few rows
    # plus a short count, not a count over every better entry (see leaderboard.py).
    op.create_table(
        "leaderboard_counts",
        sa.Column("code", sa.String(length=24), nullable=False),
        sa.Column("level", sa.Integer(), nullable=False),
        sa.Column("bucket", sa.BigInteger(), nullable=False),
        sa.Column("entries", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("code", "level", "bucket", name=op.f("pk_leaderboard_counts")),
    )
    for level, shift in COUNT_LEVELS:  # boards that already exist get their counts
        op.execute(
            "INSERT INTO leaderboard_counts (code, level, bucket, entries) "
            f"SELECT code, {level}, sort_key >> {shift}, count(*) FROM leaderboard_entries "
            f"GROUP BY code, sort_key >> {shift}"
        )


def downgrade() -> None:
    op.drop_table("leaderboard_counts")
