"""Queries of the daily challenges: stored codes, attempts, and the day-end sweep."""

from __future__ import annotations

from sqlalchemy import select

from server.storage.db import Tx
from server.storage.dialect import upsert
from server.storage.models import DailyChallenge, GameRow

DAILY = DailyChallenge.__table__
GAMES = GameRow.__table__


async def code_used(tx: Tx, code: str) -> bool:
    """Whether a code was an earlier day's, or somebody has played it."""
    used = await tx.execute(select(DAILY.c.day).where(DAILY.c.code == code).limit(1))
    if used.first() is not None:
        return True
    played = await tx.execute(select(GAMES.c.id).where(GAMES.c.code == code).limit(1))
    return played.first() is not None


async def stored_code(tx: Tx, day: str, family: str) -> tuple[str, str | None] | None:
    """(code, salt) of a day's challenge, if it was chosen."""
    query = select(DAILY.c.code, DAILY.c.salt).where(DAILY.c.day == day, DAILY.c.family == family)
    row = (await tx.execute(query)).first()
    return None if row is None else (str(row.code), row.salt)


async def insert_if_absent(
    tx: Tx,
    day: str,
    family: str,
    code: str,
    now: int,
    solution_length: int | None,
    salt: str,
) -> None:
    """INSERT … ON CONFLICT DO NOTHING on both backends: the first writer wins, nobody fails."""
    values = {"day": day, "family": family, "code": code, "created_ms": now, "salt": salt}
    values["solution_length"] = solution_length
    await tx.execute(upsert(tx, DAILY).values(**values).on_conflict_do_nothing())


async def codes_of_day(tx: Tx, day: str) -> dict[str, tuple[str, str | None]]:
    """family -> (code, salt) of a day's stored challenges (days before 0006 have no salt)."""
    query = select(DAILY.c.family, DAILY.c.code, DAILY.c.salt).where(DAILY.c.day == day)
    return {row.family: (row.code, row.salt) for row in await tx.execute(query)}


async def solution_lengths(tx: Tx, day: str) -> dict[str, int | None]:
    query = select(DAILY.c.family, DAILY.c.solution_length).where(DAILY.c.day == day)
    return {row.family: row.solution_length for row in await tx.execute(query)}


async def day_of_code(tx: Tx, code: str) -> tuple[str, str] | None:
    """(day, family) of the day a code was the daily challenge, or None."""
    row = (await tx.execute(select(DAILY).where(DAILY.c.code == code))).first()
    return None if row is None else (str(row.day), str(row.family))


async def open_games_in(tx: Tx, player_id: str, code: str, statuses: tuple[str, ...]) -> list[str]:
    """The player's unfinished games on a code whose status is one of ``statuses``."""
    query = select(GAMES.c.id).where(
        GAMES.c.player_id == player_id,
        GAMES.c.code == code,
        GAMES.c.result.is_(None),
        GAMES.c.status.in_(statuses),
    )
    return list((await tx.execute(query)).scalars())


async def has_ranked(tx: Tx, player_id: str, code: str) -> bool:
    query = select(GAMES.c.id).where(
        GAMES.c.player_id == player_id,
        GAMES.c.code == code,
        GAMES.c.daily_day.is_not(None),
        GAMES.c.ranked.is_(True),
    )
    return (await tx.execute(query.limit(1))).first() is not None


async def open_ranked_before(tx: Tx, day: str) -> list[str]:
    """Ranked daily attempts of days before ``day`` that are still open."""
    query = select(GAMES.c.id).where(
        GAMES.c.daily_day.is_not(None),
        GAMES.c.ranked.is_(True),
        GAMES.c.result.is_(None),
        GAMES.c.daily_day < day,
    )
    return list((await tx.execute(query)).scalars())
