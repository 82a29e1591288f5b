"""Queries of the races: a race, its entries and their games, so a restart finds them again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, delete, insert, select, update

from server.storage.db import Tx
from server.storage.models import Player, Race, RaceEntry

RACES = Race.__table__
ENTRIES = RaceEntry.__table__
PLAYERS = Player.__table__


async def insert_race(tx: Tx, race_id: str, code: str, owner_id: str, now: int) -> None:
    await tx.execute(
        insert(Race).values(id=race_id, code=code, owner_id=owner_id, status="open", created_ms=now)
    )
    await insert_entry(tx, race_id, owner_id, now)


async def insert_entry(tx: Tx, race_id: str, player_id: str, now: int) -> None:
    await tx.execute(insert(RaceEntry).values(race_id=race_id, player_id=player_id, joined_ms=now))


async def delete_entry(tx: Tx, race_id: str, player_id: str) -> None:
    await tx.execute(delete(RaceEntry).where(RaceEntry.race_id == race_id, RaceEntry.player_id == player_id))


async def set_game(tx: Tx, race_id: str, player_id: str, game_id: str | None) -> None:
    await tx.execute(
        update(RaceEntry)
        .where(RaceEntry.race_id == race_id, RaceEntry.player_id == player_id)
        .values(game_id=game_id)
    )


async def set_status(tx: Tx, race_id: str, status: str, starts_ms: int | None) -> None:
    await tx.execute(update(Race).where(Race.id == race_id).values(status=status, starts_ms=starts_ms))


async def load(tx: Tx, race_id: str) -> tuple[Row[Any], Sequence[Row[Any]]] | None:
    """The race row and its entries with the racers' names, or None."""
    row = (await tx.execute(select(RACES).where(RACES.c.id == race_id))).first()
    if row is None:
        return None
    query = select(ENTRIES, PLAYERS.c.name).join(PLAYERS, PLAYERS.c.id == ENTRIES.c.player_id)
    entries = (await tx.execute(query.where(ENTRIES.c.race_id == race_id))).all()
    return row, entries


async def claim_status(tx: Tx, race_id: str, old: str, new: str) -> bool:
    """Move a race from ``old`` to ``new`` only if it is still ``old``: with several instances,
    exactly one of them launches a race, and exactly one finishes it."""
    result = await tx.execute(update(Race).where(Race.id == race_id, Race.status == old).values(status=new))
    return bool(result.rowcount)
