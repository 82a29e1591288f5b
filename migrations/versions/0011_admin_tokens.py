"""admin tokens: an expiry and a revocation time

Revision ID: 0011_admin_tokens
Revises: 0010_results_log
Create Date: 2026-12-02 14:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_admin_tokens"
down_revision = "0010_results_log"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("admin_tokens") as batch:
        batch.add_column(sa.Column("expires_ms", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("revoked_ms", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("admin_tokens") as batch:
        batch.drop_column("revoked_ms")
        batch.drop_column("expires_ms")
