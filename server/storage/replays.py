"""Queries for verifying a game: its stored row, its action log and its leaderboard entry."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, select

from server.storage.db import Tx
from server.storage.models import ActionRow, GameRow, LeaderboardEntry

GAMES = GameRow.__table__
ACTIONS = ActionRow.__table__
ENTRIES = LeaderboardEntry.__table__


async def stored_game(tx: Tx, game_id: str) -> tuple[Row[Any], Sequence[Row[Any]], Row[Any] | None] | None:
    """(game row, actions in order, leaderboard entry of this game) or None for an unknown id."""
    row = (await tx.execute(select(GAMES).where(GAMES.c.id == game_id))).first()
    if row is None:
        return None
    log_q = select(ACTIONS).where(ACTIONS.c.game_id == game_id).order_by(ACTIONS.c.seq)
    actions = (await tx.execute(log_q)).all()
    entry_q = select(ENTRIES).where(
        ENTRIES.c.code == row.code, ENTRIES.c.player_id == row.player_id, ENTRIES.c.game_id == game_id
    )
    entry = (await tx.execute(entry_q)).first()
    return row, actions, entry
