"""Queries of the leaderboards: recording results, bucket counts, pages and a player's window.

``leaderboard_counts`` keeps, per board (a code's people's board, or its
bots' board: :func:`board_key`), how many listed entries fall in each bucket
of the sort key at three levels (``LEVELS``), in the same transaction as the
entry, so a rank is three small sums and one short index range. Entries that
are not listed (flagged and not yet cleared, confirmed, removed, a banned
player's) are kept but neither shown by default nor counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    Row,
    Select,
    delete,
    func,
    insert,
    literal,
    literal_column,
    select,
    tuple_,
    union_all,
    update,
)

from server.features.leaderboards.model import (
    LEVELS,
    Window,
    bucket_deltas,
    decode_cursor,
    encode_cursor,
    entry_json,
    ranks,
)
from server.storage.db import Tx
from server.storage.dialect import upsert
from server.storage.models import LeaderboardCount, LeaderboardEntry, Player
from wire import LISTED_STANDINGS, PlayerKind, Standing

T = LeaderboardEntry.__table__
C = LeaderboardCount.__table__
P = Player.__table__
# Columns a better attempt replaces (everything but the key columns).
_UPDATABLE = [c.name for c in T.columns if c.name not in ("code", "player_id", "kind")]


def board_key(code: str, kind: str) -> str:
    """The key of a board's bucket counts: the code for people's, ``bot:CODE`` for bots'."""
    return code if kind == PlayerKind.HUMAN else f"bot:{code}"


async def record(tx: Tx, values: dict[str, Any]) -> bool:
    """Enter a finished game, or replace the player's entry only if this one ranks strictly better.

    Keeps ``leaderboard_counts`` in step in the same transaction (listed entries
    only). The player's row is read FOR UPDATE (PostgreSQL), so two instances
    finishing games of one player at once cannot both count. Returns whether
    the board changed; an equal result keeps the earlier entry.
    """
    code, player_id, new = values["code"], values["player_id"], values["sort_key"]
    board = board_key(code, values["kind"])
    mine = (T.c.code == code) & (T.c.player_id == player_id)
    for _ in range(3):  # at most: absent, inserted meanwhile by another instance, present
        old = (await tx.execute(select(T.c.sort_key, T.c.listed).where(mine).with_for_update())).first()
        if old is None:
            statement = upsert(tx, T).values(**values).on_conflict_do_nothing().returning(T.c.game_id)
            if (await tx.execute(statement)).first() is None:
                continue  # another transaction inserted it first: compare with theirs
            if values["listed"]:
                await adjust(tx, board, {new: 1})
            return True
        if old.sort_key <= new:
            return False
        await tx.execute(update(LeaderboardEntry).where(mine).values({k: values[k] for k in _UPDATABLE}))
        changes: dict[int, int] = {}
        if old.listed:
            changes[old.sort_key] = -1
        if values["listed"]:
            changes[new] = changes.get(new, 0) + 1
        await adjust(tx, board, changes)
        return True
    return False


async def set_standing(
    tx: Tx, code: str, player_id: str, standing: Standing, banned: bool = False
) -> dict[str, Any] | None:
    """Give an entry a review standing; listed again only if the standing is and no ban hides it.

    Returns the entry's row as it was (None if absent); the counts follow in
    the same transaction.
    """
    mine = (T.c.code == code) & (T.c.player_id == player_id)
    row = (await tx.execute(select(T).where(mine).with_for_update())).first()
    if row is None:
        return None
    listed = standing in LISTED_STANDINGS and not banned
    await tx.execute(update(LeaderboardEntry).where(mine).values(standing=standing, listed=listed))
    if listed != bool(row.listed):
        await adjust(tx, board_key(code, row.kind), {row.sort_key: 1 if listed else -1})
    return dict(row._mapping)


async def hide_player(tx: Tx, player_id: str) -> int:
    """Take every listed entry of a (banned) player out of the default views; returns how many."""
    rows = (await tx.execute(select(T).where(T.c.player_id == player_id, T.c.listed))).all()
    for row in rows:
        mine = (T.c.code == row.code) & (T.c.player_id == player_id)
        await tx.execute(update(LeaderboardEntry).where(mine).values(listed=False))
        await adjust(tx, board_key(row.code, row.kind), {row.sort_key: -1})
    return len(rows)


async def adjust(tx: Tx, code: str, changes: dict[int, int]) -> None:
    """Move counts between buckets, always in the same order (no lock-order deadlocks)."""
    for level, bucket, delta in bucket_deltas(changes):
        stmt = upsert(tx, C).values(code=code, level=level, bucket=bucket, entries=delta)
        stmt = stmt.on_conflict_do_update(
            index_elements=["code", "level", "bucket"], set_={"entries": C.c.entries + stmt.excluded.entries}
        )
        await tx.execute(stmt)


async def rebuild_counts(tx: Tx) -> None:
    """Recount every bucket from the entries (after a bulk load; migration 0003 does the same)."""
    await tx.execute(delete(LeaderboardCount))
    for kind in PlayerKind:
        key = T.c.code if kind == PlayerKind.HUMAN else literal("bot:") + T.c.code
        for level, shift in LEVELS:
            bucket = T.c.sort_key.op(">>")(literal_column(str(shift)))  # inline: grouped on
            rows = (
                select(key, literal_column(str(level)), bucket, func.count())
                .where(T.c.kind == kind, T.c.listed)
                .group_by(key, bucket)
            )
            columns = ["code", "level", "bucket", "entries"]
            await tx.execute(insert(LeaderboardCount).from_select(columns, rows))


def _entries() -> Select[Any]:
    return select(T, P.c.name).join(P, P.c.id == T.c.player_id)


def _on_board(code: str, kind: str) -> Any:
    """The listed entries of one board: the default view, the one the counts count."""
    return (T.c.code == code) & (T.c.kind == kind) & T.c.listed


def better_parts(code: str, key: int, kind: str = PlayerKind.HUMAN) -> list[Any]:
    """Scalar subqueries whose sum counts the entries ranked strictly better than ``key``.

    Three bucket sums (a few hundred rows at most) and one count of the
    entries inside the key's own smallest bucket (65.5 s of play time).
    """
    b0, b1, b2 = (key >> shift for _, shift in LEVELS)
    counted = board_key(code, kind)

    def total(level: int, low: int | None, high: int) -> Any:
        where = [C.c.code == counted, C.c.level == level, C.c.bucket < high]
        if low is not None:
            where.append(C.c.bucket >= low)
        return select(func.coalesce(func.sum(C.c.entries), 0)).where(*where).scalar_subquery()

    inside = select(func.count()).where(_on_board(code, kind), T.c.sort_key >= b2 << 16, T.c.sort_key < key)
    return [total(0, None, b0), total(1, b0 << 20, b1), total(2, b1 << 20, b2), inside.scalar_subquery()]


def ties_part(code: str, key: int, player_id: str, kind: str = PlayerKind.HUMAN) -> Any:
    """Entries with the same key listed before this one (a short index range)."""
    query = select(func.count()).where(_on_board(code, kind), T.c.sort_key == key, T.c.player_id < player_id)
    return query.scalar_subquery()


async def position(
    tx: Tx, code: str, key: int, player_id: str, kind: str = PlayerKind.HUMAN
) -> tuple[int, int]:
    """(entries listed before this one, entries ranked strictly better): one round trip."""
    query = select(ties_part(code, key, player_id, kind), *better_parts(code, key, kind))
    parts = (await tx.execute(query)).one()
    better = sum(int(part) for part in parts[1:])
    return better + int(parts[0]), better


async def top(
    tx: Tx, code: str, limit: int, cursor: str | None = None, kind: str = PlayerKind.HUMAN
) -> Window:
    """A page of the board in ranking order, after ``cursor`` (keyset paging: stable)."""
    query = _entries().where(_on_board(code, kind))
    if cursor is not None:
        key, player_id = decode_cursor(cursor)
        query = query.where(tuple_(T.c.sort_key, T.c.player_id) > tuple_(key, player_id))
    query = query.order_by(T.c.sort_key, T.c.player_id).limit(limit + 1)
    rows = list((await tx.execute(query)).all())
    more, rows = len(rows) > limit, rows[:limit]
    if not rows:
        return Window([])
    offset, less = 0, 0
    if cursor is not None:
        offset, less = await position(tx, code, rows[0].sort_key, rows[0].player_id, kind)
    entries = _ranked(rows, offset, less)
    return Window(entries, encode_cursor(rows[-1]) if more else None)


async def with_flagged(
    tx: Tx, code: str, limit: int, cursor: str | None = None, kind: str = PlayerKind.HUMAN
) -> Window:
    """The board with its flagged entries too, each marked by its ``standing``.

    Ranks count every entry shown in this view; they are plain counts, not the
    bucket sums of :func:`top`: flagged entries are few and the view is for
    reviewing, not the hot path.
    """
    banned = select(P.c.id).where(P.c.banned_ms.is_not(None))
    flagged = (T.c.standing == Standing.FLAGGED) & T.c.player_id.not_in(banned)  # a ban hides it too
    shown = (T.c.code == code) & (T.c.kind == kind) & (T.c.listed | flagged)
    query = _entries().where(shown)
    if cursor is not None:
        key, player_id = decode_cursor(cursor)
        query = query.where(tuple_(T.c.sort_key, T.c.player_id) > tuple_(key, player_id))
    rows = list((await tx.execute(query.order_by(T.c.sort_key, T.c.player_id).limit(limit + 1))).all())
    more, rows = len(rows) > limit, rows[:limit]
    if not rows:
        return Window([])
    first = rows[0]
    ahead = tuple_(T.c.sort_key, T.c.player_id) < tuple_(first.sort_key, first.player_id)
    offset = int((await tx.execute(select(func.count()).where(shown, ahead))).scalar_one())
    better = select(func.count()).where(shown, T.c.sort_key < first.sort_key)
    less = int((await tx.execute(better)).scalar_one())
    return Window(_ranked(rows, offset, less), encode_cursor(rows[-1]) if more else None)


def _ranked(rows: Sequence[Row[Any]], offset: int, less: int) -> list[dict[str, Any]]:
    numbers = ranks([r.sort_key for r in rows], offset, less)
    return [entry_json(r, n) for r, n in zip(rows, numbers, strict=True)]


def _branch(kind: str, query: Select[Any]) -> Select[Any]:
    inner = query.subquery()
    return select(literal_column(f"'{kind}'").label("part"), *inner.c)


async def around(
    tx: Tx, code: str, player_id: str, radius: int, kind: str = PlayerKind.HUMAN
) -> Window | None:
    """A player's listed entry with up to ``radius`` entries either side, all ranked; None if absent.

    Two round trips: the window (one UNION ALL keyed on the player's own row),
    then every count the ranks need.
    """
    board = _entries().where(_on_board(code, kind))
    key = select(T.c.sort_key).where(_on_board(code, kind), T.c.player_id == player_id).scalar_subquery()
    mine, here = tuple_(T.c.sort_key, T.c.player_id), tuple_(key, literal(player_id))
    above = board.where(mine < here).order_by(T.c.sort_key.desc(), T.c.player_id.desc()).limit(radius)
    below = board.where(mine > here).order_by(T.c.sort_key, T.c.player_id).limit(radius)
    me_q = board.where(T.c.player_id == player_id)
    rows = (await tx.execute(union_all(_branch("m", me_q), _branch("a", above), _branch("b", below)))).all()
    me = next((r for r in rows if r.part == "m"), None)
    if me is None:
        return None
    up = sorted((r for r in rows if r.part == "a"), key=lambda r: (r.sort_key, r.player_id))
    down = sorted((r for r in rows if r.part == "b"), key=lambda r: (r.sort_key, r.player_id))
    window = [*up, me, *down]
    first = window[0]
    counts = select(ties_part(code, me.sort_key, player_id, kind), *better_parts(code, me.sort_key, kind))
    counts = counts.add_columns(*better_parts(code, first.sort_key, kind))
    parts = [int(p) for p in (await tx.execute(counts)).one()]
    better_me, better_first = sum(parts[1:5]), sum(parts[5:9])
    start = better_me + parts[0] - len(up)
    entries = _ranked(window, start, better_first)
    return Window(entries, me=entries[len(up)])
