"""live games list: open games by last activity

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29 18:45:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_games_live",
        "games",
        ["last_action_ms"],
        sqlite_where=sa.text("result IS NULL"),
        postgresql_where=sa.text("result IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_games_live", table_name="games")
