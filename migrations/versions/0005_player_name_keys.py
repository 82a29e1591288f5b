"""player names: normalized, and unique by case-folded and lookalike keys

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from server.errors import ProtocolError
from server.rules.names import clean_name, guest_name, name_keys

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("players", sa.Column("name_fold", sa.String(length=128), nullable=True))
    op.add_column("players", sa.Column("name_skeleton", sa.String(length=128), nullable=True))
    # Every existing name takes the rule (server.rules.names) before the keys become
    # unique: a name the rule refuses, or one that clashes with an older player's, becomes the
    # player's guest name, unique by id. The oldest holder of a name keeps it.
    players = sa.table(
        "players",
        sa.column("id", sa.String),
        sa.column("name", sa.String),
        sa.column("name_fold", sa.String),
        sa.column("name_skeleton", sa.String),
    )
    bind = op.get_bind()
    rows = bind.execute(sa.text("SELECT id, name FROM players ORDER BY created_ms, id")).all()
    folds: set[str] = set()
    skeletons: set[str] = set()
    updates = []
    for player_id, old_name in rows:
        try:
            name = clean_name(old_name, allow_reserved=True)  # earlier guests keep Guest-xxxx
        except ProtocolError:
            name = guest_name(player_id)
        fold, skeleton = name_keys(name)
        suffix = 1
        while fold in folds or skeleton in skeletons:
            name = guest_name(player_id) + ("" if suffix == 1 else f"-{suffix}")
            fold, skeleton = name_keys(name)
            suffix += 1
        folds.add(fold)
        skeletons.add(skeleton)
        updates.append({"pid": player_id, "new_name": name, "fold": fold, "skeleton": skeleton})
    if updates:
        bind.execute(
            players.update()
            .where(players.c.id == sa.bindparam("pid"))
            .values(
                name=sa.bindparam("new_name"),
                name_fold=sa.bindparam("fold"),
                name_skeleton=sa.bindparam("skeleton"),
            ),
            updates,
        )
    op.create_index("uq_players_name_fold", "players", ["name_fold"], unique=True)
    op.create_index("uq_players_name_skeleton", "players", ["name_skeleton"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_players_name_skeleton", table_name="players")
    op.drop_index("uq_players_name_fold", table_name="players")
    with op.batch_alter_table("players") as batch:
        batch.drop_column("name_skeleton")
        batch.drop_column("name_fold")
