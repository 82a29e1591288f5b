"""competition: one ranked daily attempt per player, open dailies by day

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 09:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

RANKED_DAILY = "daily_day IS NOT NULL AND ranked"
OPEN_DAILY = "daily_day IS NOT NULL AND ranked AND result IS NULL"


def upgrade() -> None:
    # The database, not a lock in one process, decides which daily attempt is
    # the ranked one, so two tabs or two server instances cannot both get it.
    op.create_index(
        "uq_games_daily_ranked",
        "games",
        ["player_id", "code"],
        unique=True,
        sqlite_where=sa.text(RANKED_DAILY),
        postgresql_where=sa.text(RANKED_DAILY),
    )
    # The day-end sweep reads only the open ranked daily attempts, not the whole games table.
    op.create_index(
        "ix_games_open_daily",
        "games",
        ["daily_day"],
        sqlite_where=sa.text(OPEN_DAILY),
        postgresql_where=sa.text(OPEN_DAILY),
    )


def downgrade() -> None:
    op.drop_index("ix_games_open_daily", table_name="games")
    op.drop_index("uq_games_daily_ranked", table_name="games")
