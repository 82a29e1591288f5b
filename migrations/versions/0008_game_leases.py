"""game leases: the fencing token of each game's current owner, for several instances

Revision ID: 0008_game_leases
Revises: 0005
Create Date: 2026-12-01 12:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_game_leases"
down_revision = "0007_accounts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "game_leases",
        sa.Column("game_id", sa.String(length=16), nullable=False),
        sa.Column("token", sa.BigInteger(), nullable=False),
        sa.Column("holder", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_game_leases_game_id_games"),
        sa.PrimaryKeyConstraint("game_id", name="pk_game_leases"),
    )


def downgrade() -> None:
    op.drop_table("game_leases")
