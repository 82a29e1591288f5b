"""competition integrity: sealed dailies' salts, the stored secret, bots, review of results,
operators and their audit log

Revision ID: 0006_competition_integrity
Revises: 0005
Create Date: 2026-12-01 12:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_competition_integrity"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("players", sa.Column("kind", sa.String(length=8), server_default="human", nullable=False))
    op.add_column("players", sa.Column("banned_ms", sa.BigInteger(), nullable=True))
    op.add_column("daily_challenges", sa.Column("salt", sa.String(length=32), nullable=True))
    op.add_column(
        "leaderboard_entries", sa.Column("kind", sa.String(length=8), server_default="human", nullable=False)
    )
    op.add_column(
        "leaderboard_entries",
        sa.Column("standing", sa.String(length=12), server_default="ok", nullable=False),
    )
    op.add_column(
        "leaderboard_entries",
        sa.Column("listed", sa.Boolean(), server_default=sa.text("true"), nullable=False),
    )
    op.drop_index("ix_leaderboard_code_sort", table_name="leaderboard_entries")
    op.create_index(
        "ix_leaderboard_board", "leaderboard_entries", ["code", "kind", "listed", "sort_key", "player_id"]
    )
    op.create_table(
        "server_secrets",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("value", sa.String(length=128), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_server_secrets")),
    )
    op.create_table(
        "result_signals",
        sa.Column("game_id", sa.String(length=16), nullable=False),
        sa.Column("code", sa.String(length=24), nullable=False),
        sa.Column("player_id", sa.String(length=16), nullable=False),
        sa.Column("finished_ms", sa.BigInteger(), nullable=False),
        sa.Column("actions", sa.Integer(), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("median_gap_ms", sa.Integer(), nullable=False),
        sa.Column("min_gap_ms", sa.Integer(), nullable=False),
        sa.Column("gap_spread_ms", sa.Integer(), nullable=False),
        sa.Column("undos", sa.Integer(), nullable=False),
        sa.Column("reasons", sa.String(length=128), nullable=False),
        sa.Column("solver_length", sa.Integer(), nullable=True),
        sa.Column("extra_moves", sa.Integer(), nullable=True),
        sa.Column("solver_line", sa.Boolean(), nullable=True),
        sa.Column("analysed_ms", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_result_signals_game_id_games")),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_result_signals")),
    )
    op.create_index(op.f("ix_result_signals_player_id"), "result_signals", ["player_id"])
    op.create_table(
        "admin_tokens",
        sa.Column("id", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_admin_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_admin_tokens_token_hash")),
    )
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
        sa.Column("admin_id", sa.String(length=16), nullable=False),
        sa.Column("admin_name", sa.String(length=32), nullable=False),
        sa.Column("action", sa.String(length=24), nullable=False),
        sa.Column("target", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=False),
        sa.Column("details", sa.String(length=500), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    op.create_index(op.f("ix_audit_log_at_ms"), "audit_log", ["at_ms"])


def downgrade() -> None:
    op.drop_index(op.f("ix_audit_log_at_ms"), table_name="audit_log")
    op.drop_table("audit_log")
    op.drop_table("admin_tokens")
    op.drop_index(op.f("ix_result_signals_player_id"), table_name="result_signals")
    op.drop_table("result_signals")
    op.drop_table("server_secrets")
    op.drop_index("ix_leaderboard_board", table_name="leaderboard_entries")
    op.create_index("ix_leaderboard_code_sort", "leaderboard_entries", ["code", "sort_key", "player_id"])
    with op.batch_alter_table("leaderboard_entries") as batch:
        batch.drop_column("listed")
        batch.drop_column("standing")
        batch.drop_column("kind")
    with op.batch_alter_table("daily_challenges") as batch:
        batch.drop_column("salt")
    with op.batch_alter_table("players") as batch:
        batch.drop_column("banned_ms")
        batch.drop_column("kind")
