"""screening evidence: every think-time figure of a ranked result, as operators read it

Revision ID: 0009_screening_evidence
Revises: 0008_game_leases
Create Date: 2026-12-02 08:15:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_screening_evidence"
down_revision = "0008_game_leases"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("result_signals") as batch:
        batch.add_column(sa.Column("evidence", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("result_signals") as batch:
        batch.drop_column("evidence")
