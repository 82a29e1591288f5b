"""accounts, sessions, statistics kept as games finish, and the history index

Revision ID: 0007_accounts
Revises: 0005
Create Date: 2026-12-01 12:30:00.000000

The games finished before this migration are folded into the statistics with
the same functions the finish hook uses (server.features.profiles.model), so
nobody's record starts from zero.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from engine.vocabulary import Result
from server.features.profiles.model import DAILY_RESULTS, fold_daily, fold_finish

revision = "0007_accounts"
down_revision = "0006_competition_integrity"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column(
            "player_id",
            sa.String(length=16),
            sa.ForeignKey("players.id", name="fk_accounts_player_id_players"),
            nullable=False,
        ),
        sa.Column("username", sa.String(length=32), nullable=False),
        sa.Column("username_fold", sa.String(length=128), nullable=False),
        sa.Column("username_skeleton", sa.String(length=128), nullable=False),
        sa.Column("password_hash", sa.String(length=256), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.Column("password_changed_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("player_id", name="pk_accounts"),
    )
    op.create_index("uq_accounts_username_fold", "accounts", ["username_fold"], unique=True)
    op.create_index("uq_accounts_username_skeleton", "accounts", ["username_skeleton"], unique=True)
    op.create_table(
        "player_sessions",
        sa.Column("id", sa.String(length=16), nullable=False),
        sa.Column(
            "player_id",
            sa.String(length=16),
            sa.ForeignKey("players.id", name="fk_player_sessions_player_id_players"),
            nullable=False,
        ),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=64), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_player_sessions"),
        sa.UniqueConstraint("token_hash", name="uq_player_sessions_token_hash"),
    )
    op.create_index("ix_player_sessions_player_id", "player_sessions", ["player_id"])
    op.create_table(
        "player_stats",
        sa.Column(
            "player_id",
            sa.String(length=16),
            sa.ForeignKey("players.id", name="fk_player_stats_player_id_players"),
            nullable=False,
        ),
        sa.Column("family", sa.String(length=8), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("won", sa.Integer(), nullable=False),
        sa.Column("current_streak", sa.Integer(), nullable=False),
        sa.Column("best_streak", sa.Integer(), nullable=False),
        sa.Column("best_moves", sa.Integer(), nullable=True),
        sa.Column("won_moves", sa.BigInteger(), nullable=False),
        sa.Column("best_time_ms", sa.BigInteger(), nullable=True),
        sa.Column("won_time_ms", sa.BigInteger(), nullable=False),
        sa.Column("last_finished_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("player_id", "family", name="pk_player_stats"),
    )
    op.create_table(
        "player_daily_stats",
        sa.Column(
            "player_id",
            sa.String(length=16),
            sa.ForeignKey("players.id", name="fk_player_daily_stats_player_id_players"),
            nullable=False,
        ),
        sa.Column("days_played", sa.Integer(), nullable=False),
        sa.Column("last_day", sa.String(length=10), nullable=False),
        sa.Column("current_streak", sa.Integer(), nullable=False),
        sa.Column("best_streak", sa.Integer(), nullable=False),
        sa.Column("best_rank", sa.Integer(), nullable=True),
        sa.Column("ranked", sa.Integer(), nullable=False),
        sa.Column("percentiles", sa.String(length=1024), nullable=False),
        sa.PrimaryKeyConstraint("player_id", name="pk_player_daily_stats"),
    )
    op.create_table(
        "player_dailies",
        sa.Column(
            "player_id",
            sa.String(length=16),
            sa.ForeignKey("players.id", name="fk_player_dailies_player_id_players"),
            nullable=False,
        ),
        sa.Column("code", sa.String(length=24), nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("game_id", sa.String(length=16), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=True),
        sa.Column("entries", sa.Integer(), nullable=True),
        sa.Column("percentile", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("player_id", "code", name="pk_player_dailies"),
    )
    op.create_index("ix_player_dailies_day", "player_dailies", ["player_id", "day"])
    op.create_index(
        "ix_player_dailies_unranked",
        "player_dailies",
        ["player_id", "day"],
        sqlite_where=sa.text("rank IS NULL"),
        postgresql_where=sa.text("rank IS NULL"),
    )
    op.create_index("ix_games_player_created", "games", ["player_id", "created_ms", "id"])
    backfill()


def backfill() -> None:
    """Fold every game finished so far, oldest first, into the new statistics."""
    bind = op.get_bind()
    rows = bind.execute(
        sa.text(
            "SELECT id, player_id, code, result, moves, elapsed_ms, finished_ms, daily_day, ranked "
            "FROM games WHERE result IS NOT NULL ORDER BY finished_ms, id"
        )
    ).all()
    stats: dict[tuple[str, str], dict[str, object]] = {}
    daily: dict[str, dict[str, object]] = {}
    seen_days: set[tuple[str, str]] = set()
    dailies = []
    for row in rows:
        key = (row.player_id, row.code.rsplit("-", 1)[0])
        at = row.finished_ms or 0
        stats[key] = fold_finish(stats.get(key), row.result == Result.WON, row.moves, row.elapsed_ms, at)
        if row.daily_day is not None and row.ranked and row.result in DAILY_RESULTS:
            day_key = (row.player_id, row.daily_day)
            folded = fold_daily(daily.get(row.player_id), row.daily_day, day_key not in seen_days)
            seen_days.add(day_key)
            if folded is not None:
                daily[row.player_id] = folded
            dailies.append(
                {"player_id": row.player_id, "code": row.code, "day": row.daily_day, "game_id": row.id}
            )
    meta = sa.MetaData()
    player_stats = sa.Table("player_stats", meta, autoload_with=bind)
    daily_stats = sa.Table("player_daily_stats", meta, autoload_with=bind)
    player_dailies = sa.Table("player_dailies", meta, autoload_with=bind)
    if stats:
        bind.execute(
            player_stats.insert(), [{"player_id": p, "family": f, **v} for (p, f), v in stats.items()]
        )
    if daily:
        bind.execute(daily_stats.insert(), [{"player_id": p, **v} for p, v in daily.items()])
    if dailies:
        bind.execute(player_dailies.insert(), dailies)


def downgrade() -> None:
    op.drop_index("ix_games_player_created", table_name="games")
    op.drop_index("ix_player_dailies_unranked", table_name="player_dailies")
    op.drop_index("ix_player_dailies_day", table_name="player_dailies")
    op.drop_table("player_dailies")
    op.drop_table("player_daily_stats")
    op.drop_table("player_stats")
    op.drop_index("ix_player_sessions_player_id", table_name="player_sessions")
    op.drop_table("player_sessions")
    op.drop_index("uq_accounts_username_skeleton", table_name="accounts")
    op.drop_index("uq_accounts_username_fold", table_name="accounts")
    op.drop_table("accounts")
