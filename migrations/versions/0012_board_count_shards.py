"""leaderboard counts: the top level split into shards, so concurrent results do not queue on it

Revision ID: 0012_board_count_shards
Revises: 0010_results_log
Create Date: 2026-12-02 15:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_board_count_shards"
down_revision = "0011_admin_tokens"
branch_labels = None
depends_on = None


def _table(name: str, key: list[str]) -> None:
    op.create_table(
        name,
        sa.Column("code", sa.String(length=24), nullable=False),
        sa.Column("level", sa.Integer(), nullable=False),
        sa.Column("bucket", sa.BigInteger(), nullable=False),
        *([sa.Column("shard", sa.Integer(), server_default="0", nullable=False)] if "shard" in key else []),
        sa.Column("entries", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint(*key, name=f"pk_{name}"),
    )


def _swap(key: list[str]) -> None:
    """Copy the counts into a table with this primary key (the old shards summed), then rename."""
    _table("leaderboard_counts_next", key)
    columns = "code, level, bucket" + (", shard" if "shard" in key else "")
    select = "code, level, bucket" + (", 0" if "shard" in key else "")
    op.execute(
        f"INSERT INTO leaderboard_counts_next ({columns}, entries) "
        f"SELECT {select}, sum(entries) FROM leaderboard_counts GROUP BY code, level, bucket"
    )
    op.drop_table("leaderboard_counts")
    op.rename_table("leaderboard_counts_next", "leaderboard_counts")
    if op.get_bind().dialect.name == "postgresql":  # the key's index keeps the name it was made with
        op.execute("ALTER INDEX pk_leaderboard_counts_next RENAME TO pk_leaderboard_counts")


def upgrade() -> None:
    # A result adds to one bucket per level in its transaction and holds those rows until its
    # commit: the top level's few buckets (won; each progress) were the rows every concurrent
    # result queued on. Spread over shards, a rank sums a few more rows instead.
    _swap(["code", "level", "bucket", "shard"])


def downgrade() -> None:
    _swap(["code", "level", "bucket"])
