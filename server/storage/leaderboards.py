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
    text,
    tuple_,
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
    shard_of,
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
                await adjust(tx, board, {new: 1}, shard_of(player_id))
            return True
        if old.sort_key <= new:
            return False
        await tx.execute(update(LeaderboardEntry).where(mine).values({k: values[k] for k in _UPDATABLE}))
        changes: dict[int, int] = {}
        if old.listed:
            changes[old.sort_key] = -1
        if values["listed"]:
            changes[new] = changes.get(new, 0) + 1
        await adjust(tx, board, changes, shard_of(player_id))
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
        await adjust(tx, board_key(code, row.kind), {row.sort_key: 1 if listed else -1}, shard_of(player_id))
    return dict(row._mapping)


async def hide_player(tx: Tx, player_id: str) -> int:
    """Take every listed entry of a (banned) player out of the default views; returns how many."""
    rows = (await tx.execute(select(T).where(T.c.player_id == player_id, T.c.listed))).all()
    for row in rows:
        mine = (T.c.code == row.code) & (T.c.player_id == player_id)
        await tx.execute(update(LeaderboardEntry).where(mine).values(listed=False))
        await adjust(tx, board_key(row.code, row.kind), {row.sort_key: -1}, shard_of(player_id))
    return len(rows)


async def adjust(tx: Tx, code: str, changes: dict[int, int], shard: int = 0) -> None:
    """Move counts between buckets, always in the same order (no lock-order deadlocks); the
    top level's in ``shard`` (:func:`shard_of`)."""
    for level, bucket, part, delta in bucket_deltas(changes, shard):
        stmt = upsert(tx, C).values(code=code, level=level, bucket=bucket, shard=part, entries=delta)
        stmt = stmt.on_conflict_do_update(
            index_elements=["code", "level", "bucket", "shard"],
            set_={"entries": C.c.entries + stmt.excluded.entries},
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


def _better_sql(key: str, board: str, code: str, kind: str) -> str:
    """SQL for the number of listed entries ranked strictly better than the key ``key`` (an SQL
    expression): one bucket sum per level of ``LEVELS`` and one count inside the smallest bucket.

    Each sum is a range of the counts' primary key bounded by the data's spread
    (the distinct progress values; the distinct move counts at one progress; the
    65.5 s steps at one move count), never by the board's size.
    """
    sums, previous = [], None
    for level, shift in LEVELS:
        high = f"(({key}) >> {shift})"
        where = f"code = {board} AND level = {level} AND bucket < {high}"
        if previous is not None:
            where += f" AND bucket >= ((({key}) >> {previous}) << {previous - shift})"
        sums.append(f"(SELECT coalesce(sum(entries), 0) FROM leaderboard_counts WHERE {where})")
        previous = shift
    last = LEVELS[-1][1]
    inside = (
        f"(SELECT count(*) FROM leaderboard_entries WHERE code = {code} AND kind = {kind} AND listed = :yes"
        f" AND sort_key >= ((({key}) >> {last}) << {last}) AND sort_key < ({key}))"
    )
    return " + ".join([*sums, inside])


def _ties_sql(key: str, player: str, code: str, kind: str) -> str:
    """SQL for the entries with the same key listed before ``player`` (a short index range)."""
    return (
        f"(SELECT count(*) FROM leaderboard_entries WHERE code = {code} AND kind = {kind} AND listed = :yes"
        f" AND sort_key = ({key}) AND player_id < ({player}))"
    )


_KEY = "CAST(:key AS BIGINT)"  # typed: PostgreSQL has many >> operators
_POSITION = text(
    f"SELECT {_ties_sql(_KEY, ':player', ':code', ':kind')} AS ties,"
    f" {_better_sql(_KEY, ':board', ':code', ':kind')} AS better"
)


def _params(code: str, kind: str, **more: Any) -> dict[str, Any]:
    return {"code": code, "kind": kind, "board": board_key(code, kind), "yes": True, **more}


async def position(
    tx: Tx, code: str, key: int, player_id: str, kind: str = PlayerKind.HUMAN
) -> tuple[int, int]:
    """(entries listed before this one, entries ranked strictly better): one round trip."""
    row = (await tx.execute(_POSITION, _params(code, kind, key=key, player=player_id))).one()
    better = int(row.better)
    return better + int(row.ties), better


async def board_size(tx: Tx, code: str, kind: str = PlayerKind.HUMAN) -> int:
    """How many entries a board lists: a sum over its top-level buckets (a few dozen rows)."""
    query = select(func.coalesce(func.sum(C.c.entries), 0)).where(
        C.c.code == board_key(code, kind), C.c.level == LEVELS[0][0]
    )
    return int((await tx.execute(query)).scalar_one())


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


_COLUMNS = (
    "code, player_id, game_id, won, progress, moves, elapsed_ms, score, undos, result, finished_ms,"
    " sort_key, standing"
)
_LISTED = "code = :code AND kind = :kind AND listed = :yes"
# A player's entry, its neighbours and every count their ranks need, in one statement: the
# ranks of a window follow from the position of its first entry and the number of entries
# strictly better than that first one (``ranks``).
_AROUND = text(
    f"""
WITH me AS (
  SELECT {_COLUMNS} FROM leaderboard_entries WHERE {_LISTED} AND player_id = :player
),
above AS (
  SELECT {_COLUMNS} FROM leaderboard_entries
  WHERE {_LISTED} AND (sort_key, player_id) < ((SELECT sort_key FROM me), (SELECT player_id FROM me))
  ORDER BY sort_key DESC, player_id DESC LIMIT :radius
),
below AS (
  SELECT {_COLUMNS} FROM leaderboard_entries
  WHERE {_LISTED} AND (sort_key, player_id) > ((SELECT sort_key FROM me), (SELECT player_id FROM me))
  ORDER BY sort_key, player_id LIMIT :radius
),
shown AS (
  SELECT 'a' AS part, {_COLUMNS} FROM above
  UNION ALL SELECT 'm', {_COLUMNS} FROM me
  UNION ALL SELECT 'b', {_COLUMNS} FROM below
),
head AS (SELECT sort_key, player_id FROM shown ORDER BY sort_key, player_id LIMIT 1),
counts AS (
  SELECT {_ties_sql("SELECT sort_key FROM head", "SELECT player_id FROM head", ":code", ":kind")} AS ties,
    {_better_sql("SELECT sort_key FROM head", ":board", ":code", ":kind")} AS better
)
SELECT shown.*, players.name, counts.ties, counts.better
FROM shown JOIN players ON players.id = shown.player_id CROSS JOIN counts
ORDER BY shown.sort_key, shown.player_id
"""
)


async def around(
    tx: Tx, code: str, player_id: str, radius: int, kind: str = PlayerKind.HUMAN
) -> Window | None:
    """A player's listed entry with up to ``radius`` entries either side, all ranked; None if absent.

    One round trip, one statement prepared once per connection (:data:`_AROUND`).
    """
    params = _params(code, kind, player=player_id, radius=radius)
    window = list((await tx.execute(_AROUND, params)).all())
    mine = [i for i, row in enumerate(window) if row.part == "m"]
    if not mine:
        return None
    first = window[0]
    better = int(first.better)
    entries = _ranked(window, better + int(first.ties), better)
    return Window(entries, me=entries[mine[0]])
