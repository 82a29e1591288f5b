"""Queries of a player's home: the running statistics, daily ranks once a day ended, history.

The statistics rows change only inside the transaction that finishes a game
(:func:`record_finish`, a finish hook), each locked for that change
(``SELECT … FOR UPDATE`` on PostgreSQL, where several instances may finish
games of one player at once; SQLite has one writer anyway).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, Table, and_, func, or_, select, update

from server.features.profiles.model import (
    HELD,
    UNRANKED,
    HistoryFilter,
    add_percentile,
    fold_daily,
    fold_finish,
    percentile,
)
from server.storage.db import Tx
from server.storage.dialect import upsert
from server.storage.leaderboards import board_size, position
from server.storage.models import (
    GameRow,
    LeaderboardEntry,
    Player,
    PlayerDaily,
    PlayerDailyStats,
    PlayerStats,
)
from wire import Standing

STATS: Table = PlayerStats.__table__  # type: ignore[assignment]
DAILY_STATS: Table = PlayerDailyStats.__table__  # type: ignore[assignment]
DAILIES: Table = PlayerDaily.__table__  # type: ignore[assignment]
GAMES: Table = GameRow.__table__  # type: ignore[assignment]
ENTRIES: Table = LeaderboardEntry.__table__  # type: ignore[assignment]
FIX_AT_ONCE = 100  # daily ranks fixed by one read of the statistics (about 0.3 s at most)
Fold = Callable[[dict[str, Any] | None], dict[str, Any] | None]


async def _fold(tx: Tx, table: Table, key: dict[str, Any], fold: Fold) -> None:
    """Change one statistics row by ``fold`` (given None when there is no row yet), locked."""
    where = and_(*(table.c[name] == value for name, value in key.items()))
    locked = select(table).where(where).with_for_update()
    row = (await tx.execute(locked)).first()
    if row is None:
        values = fold(None)
        if values is None:
            return
        inserted = await tx.execute(upsert(tx, table).values(**key, **values).on_conflict_do_nothing())
        if inserted.rowcount == 1:
            return
        row = (await tx.execute(locked)).one()  # another instance inserted it meanwhile
    current = {name: value for name, value in row._mapping.items() if name not in key}
    values = fold(current)
    if values is not None:
        await tx.execute(update(table).where(where).values(**values))


async def record_finish(
    tx: Tx,
    player_id: str,
    family: str,
    won: bool,
    moves: int,
    elapsed_ms: int,
    at_ms: int,
) -> None:
    """One more finished game on a variant's totals."""
    key = {"player_id": player_id, "family": family}
    await _fold(tx, STATS, key, lambda row: fold_finish(row, won, moves, elapsed_ms, at_ms))


async def record_daily(tx: Tx, player_id: str, day: str, code: str, game_id: str, held: bool = False) -> bool:
    """A finished ranked daily attempt: its row (rank fixed later), and the day on the totals.

    ``held``: the attempt's figures wait for the day's end to join the variant's
    totals (:func:`fix_ranks`), listed by then. Returns whether the row is new
    (one ranked attempt per code: False when it was already counted).
    """
    seen = select(func.count()).where(DAILIES.c.player_id == player_id, DAILIES.c.day == day)
    new_day = int((await tx.execute(seen)).scalar_one()) == 0
    row: dict[str, Any] = {"player_id": player_id, "code": code, "day": day, "game_id": game_id}
    if held:
        row["entries"] = HELD
    inserted = await tx.execute(upsert(tx, DAILIES).values(**row).on_conflict_do_nothing())
    if inserted.rowcount != 1:
        return False  # already counted (one ranked attempt per code)
    await _fold(tx, DAILY_STATS, {"player_id": player_id}, lambda r: fold_daily(r, day, new_day))
    return True


@dataclass(frozen=True, slots=True)
class Home:
    """What one statistics read needs, in two round trips: the name, the daily totals, whether
    a daily of an ended day still waits for its rank, and the variants' totals."""

    name: str
    daily: Row[Any] | None
    pending: bool
    variants: dict[str, Row[Any]]


async def home(tx: Tx, player_id: str, today: str) -> Home | None:
    """The player's statistics rows, or None for an unknown player."""
    pending = (
        select(DAILIES.c.code)
        .where(DAILIES.c.player_id == player_id, DAILIES.c.day < today, DAILIES.c.rank.is_(None))
        .limit(1)
        .exists()
    )
    players = Player.__table__
    daily_columns = [c for c in DAILY_STATS.c if c.name != "player_id"]
    query = (
        select(players.c.name, pending.label("pending"), *daily_columns)
        .select_from(players.outerjoin(DAILY_STATS, DAILY_STATS.c.player_id == players.c.id))
        .where(players.c.id == player_id)
    )
    row = (await tx.execute(query)).first()
    if row is None:
        return None
    rows = (await tx.execute(select(STATS).where(STATS.c.player_id == player_id))).all()
    daily = row if row.days_played is not None else None
    return Home(row.name, daily, bool(row.pending), {r.family: r for r in rows})


async def fix_ranks(tx: Tx, player_id: str, today: str, at_most: int = FIX_AT_ONCE) -> int:
    """Fix the rank and percentile of the finished dailies of days that have ended, once,
    oldest first and at most ``at_most`` in one read (the next read goes on).

    A day's board no longer changes after the day (attempts still open are
    expired at midnight), so a rank fixed then is final. Ranks and percentiles
    are those of the default board: among the listed entries of the attempt's
    own board (people's, or bots'), never counting flagged, removed or banned
    ones. A flagged attempt waits for its review; one that is not listed for
    good (confirmed, removed, its player banned) is fixed as :data:`UNRANKED`
    and counts in no rank, percentile or total. A held win joins its variant's
    totals here, once listed. Returns how many were fixed.
    """
    pending = (
        select(DAILIES)
        .where(DAILIES.c.player_id == player_id, DAILIES.c.day < today, DAILIES.c.rank.is_(None))
        .order_by(DAILIES.c.day)
        .limit(at_most)
    )
    banned = (
        await tx.execute(select(Player.__table__.c.banned_ms).where(Player.__table__.c.id == player_id))
    ).scalar_one_or_none() is not None
    fixed = 0
    for row in (await tx.execute(pending)).all():
        entry_q = select(ENTRIES).where(ENTRIES.c.code == row.code, ENTRIES.c.player_id == player_id)
        entry = (await tx.execute(entry_q)).first()
        if entry is not None and entry.standing == Standing.FLAGGED and not banned:
            continue  # under review: neither ranked nor counted until an operator decides
        if entry is None or not entry.listed:
            if await _settle(tx, player_id, row.code, UNRANKED, None, None):
                fixed += 1
            continue
        _, better = await position(tx, row.code, entry.sort_key, player_id, entry.kind)
        entries = await board_size(tx, row.code, entry.kind)  # the listed entries, from the counts
        rank = better + 1
        share = percentile(rank, entries)
        if not await _settle(tx, player_id, row.code, rank, entries, share):
            continue  # another reader fixed it first
        if row.entries == HELD:
            await _fold_held_win(tx, player_id, row.game_id)

        def take(
            totals: dict[str, Any] | None, rank: int = rank, share: int = share
        ) -> dict[str, Any] | None:
            if totals is None:
                return None
            best = totals["best_rank"]
            return {
                **totals,
                "best_rank": rank if best is None else min(best, rank),
                "ranked": totals["ranked"] + 1,
                "percentiles": add_percentile(totals["percentiles"], share),
            }

        await _fold(tx, DAILY_STATS, {"player_id": player_id}, take)
        fixed += 1
    return fixed


async def _settle(
    tx: Tx, player_id: str, code: str, rank: int, entries: int | None, share: int | None
) -> bool:
    """Write a daily's final rank, unless another reader did first; whether this one did."""
    done = await tx.execute(
        update(DAILIES)
        .where(DAILIES.c.player_id == player_id, DAILIES.c.code == code, DAILIES.c.rank.is_(None))
        .values(rank=rank, entries=entries, percentile=share)
    )
    return bool(done.rowcount == 1)


async def _fold_held_win(tx: Tx, player_id: str, game_id: str) -> None:
    """A ranked daily's win, held since its finish, joins its variant's totals."""
    game = (await tx.execute(select(GAMES).where(GAMES.c.id == game_id))).first()
    if game is not None and game.finished_ms is not None:
        family = game.code.rsplit("-", 1)[0]
        await record_finish(tx, player_id, family, True, game.moves, game.elapsed_ms, game.finished_ms)


async def history(
    tx: Tx,
    player_id: str,
    narrow: HistoryFilter,
    *,
    finished_only: bool,
    sealed_from_day: str | None,
    after: tuple[int, str] | None,
    limit: int,
) -> Sequence[Row[Any]]:
    """A page of a player's games, newest first, after the keyset ``after`` (created_ms, id).

    ``sealed_from_day``: daily attempts of that day or later are left out (another viewer's page).
    """
    g = GAMES.c
    query = select(GAMES).where(g.player_id == player_id)
    if narrow.game is not None:
        query = query.where(g.code.like(f"{narrow.game}%"))
    if narrow.variant is not None:
        query = query.where(g.code.like(f"{narrow.variant}-%"))
    if narrow.result == "open":
        query = query.where(g.result.is_(None))
    elif narrow.result is not None:
        query = query.where(g.result == narrow.result)
    if narrow.daily:
        query = query.where(g.daily_day.is_not(None))
    if finished_only:
        query = query.where(g.result.is_not(None))
    if sealed_from_day is not None:
        query = query.where(or_(g.daily_day.is_(None), g.daily_day < sealed_from_day))
    if after is not None:
        created, game_id = after
        query = query.where(or_(g.created_ms < created, and_(g.created_ms == created, g.id < game_id)))
    query = query.order_by(g.created_ms.desc(), g.id.desc()).limit(limit)
    return (await tx.execute(query)).all()


async def player_name(tx: Tx, player_id: str) -> str | None:
    players = Player.__table__
    return (await tx.execute(select(players.c.name).where(players.c.id == player_id))).scalar_one_or_none()
