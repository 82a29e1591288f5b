"""results log: the leaves, the perfect subtrees' hashes, the head row and the signed tree heads

Revision ID: 0010_results_log
Revises: 0009_screening_evidence
Create Date: 2026-12-02 08:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_results_log"
down_revision = "0009_screening_evidence"
branch_labels = None
depends_on = None


def upgrade() -> None:
    head = op.create_table(
        "log_head",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_log_head")),
    )
    op.bulk_insert(head, [{"id": 1, "size": 0}])
    op.create_table(
        "log_leaves",
        sa.Column("idx", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(length=12), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("game_id", sa.String(length=16), nullable=True),
        sa.Column("leaf", sa.Text(), nullable=False),
        sa.Column("appended_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("idx", name=op.f("pk_log_leaves")),
        sa.UniqueConstraint("game_id", name=op.f("uq_log_leaves_game_id")),
    )
    op.create_table(
        "log_nodes",
        sa.Column("level", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("idx", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("hash", sa.LargeBinary(length=32), nullable=False),
        sa.PrimaryKeyConstraint("level", "idx", name=op.f("pk_log_nodes")),
    )
    op.create_table(
        "log_tree_heads",
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("tree_size", sa.BigInteger(), nullable=False),
        sa.Column("root_hash", sa.String(length=64), nullable=False),
        sa.Column("timestamp_ms", sa.BigInteger(), nullable=False),
        sa.Column("signature", sa.String(length=128), nullable=False),
        sa.PrimaryKeyConstraint("day", name=op.f("pk_log_tree_heads")),
    )


def downgrade() -> None:
    op.drop_table("log_tree_heads")
    op.drop_table("log_nodes")
    op.drop_table("log_leaves")
    op.drop_table("log_head")
