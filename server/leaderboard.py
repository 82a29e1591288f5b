"""Leaderboards keyed on game codes: the ranking key, counting results, reads and live pushes.

Order (issue 4, rules' Decisions): wins first; winners by fewer moves, then
less time; everyone else by progress (more first), then fewer moves, then less
time. Never by the displayed score, which Seahaven lets a player farm. The
whole order is folded into one ascending BIGINT, ``sort_key``, so the top of a
board is an index range and a rank is an index-only count.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server import http_api
from server.games import FINAL_RESULTS, LiveGame, parse_code_or_error
from server.protocol import ProtocolError
from server.storage.models import LeaderboardCount, LeaderboardEntry, Player
from server.ws import Connection, handler

if TYPE_CHECKING:
    from server.app import Services

# sort_key layout, most significant first (63 bits, always positive):
# 1 bit "not won" | 6 bits 63 - progress | 20 bits moves | 36 bits elapsed ms.
MOVES_CAP = (1 << 20) - 1  # a million moves: beyond it moves tie
TIME_CAP = (1 << 36) - 1  # about 795 days of play time: beyond it time ties
DEFAULT_LIMIT, MAX_LIMIT = 50, 100
DEFAULT_RADIUS, MAX_RADIUS = 5, 25

T = LeaderboardEntry.__table__
C = LeaderboardCount.__table__
P = Player.__table__
LEVELS = ((0, 56), (1, 36), (2, 16))  # (level, shift): won+progress; + moves; + time in 65.5 s steps
# Columns a better attempt replaces (everything but the key columns).
_UPDATABLE = [c.name for c in T.columns if c.name not in ("code", "player_id")]


def sort_key(won: bool, progress: int, moves: int, elapsed_ms: int) -> int:
    """The one ascending number the whole ranking order is folded into."""
    lost = 0 if won else 1
    progress_part = 63 - max(0, min(progress, 63))
    moves_part = max(0, min(moves, MOVES_CAP))
    time_part = max(0, min(elapsed_ms, TIME_CAP))
    return (lost << 62) | (progress_part << 56) | (moves_part << 36) | time_part


def counts(live: LiveGame) -> bool:
    """Whether a finished game enters its code's leaderboard (a daily: only the ranked attempt)."""
    return live.ranked and live.result in FINAL_RESULTS


def entry_values(live: LiveGame) -> dict[str, Any]:
    """The leaderboard row a finished game would make."""
    g = live.game
    won = live.result == "won"
    return {
        "code": str(g.code),
        "player_id": live.owner_id,
        "game_id": live.id,
        "won": won,
        "progress": g.progress,
        "moves": g.moves,
        "elapsed_ms": live.elapsed_ms,
        "score": g.score,
        "undos": live.undos,
        "result": live.result or "",
        "finished_ms": live.finished_ms or 0,
        "sort_key": sort_key(won, g.progress, g.moves, live.elapsed_ms),
    }


async def record(conn: AsyncConnection, values: dict[str, Any]) -> bool:
    """Enter a finished game, or replace the player's entry only if this one ranks strictly better.

    Keeps ``leaderboard_counts`` in step in the same transaction. The player's
    row is read FOR UPDATE (PostgreSQL), so two instances finishing games of
    one player at once cannot both count. Returns whether the board changed;
    an equal result keeps the earlier entry.
    """
    code, player_id, new = values["code"], values["player_id"], values["sort_key"]
    mine = (T.c.code == code) & (T.c.player_id == player_id)
    for _ in range(3):  # at most: absent, inserted meanwhile by another instance, present
        old = (await conn.execute(select(T.c.sort_key).where(mine).with_for_update())).scalar()
        if old is None:
            dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
            insert = dialect.insert(T).values(**values).on_conflict_do_nothing().returning(T.c.game_id)
            if (await conn.execute(insert)).first() is None:
                continue  # another transaction inserted it first: compare with theirs
            await adjust(conn, code, {new: 1})
            return True
        if old <= new:
            return False
        await conn.execute(update(LeaderboardEntry).where(mine).values({k: values[k] for k in _UPDATABLE}))
        await adjust(conn, code, {old: -1, new: 1})
        return True
    return False


def bucket_deltas(changes: dict[int, int]) -> list[tuple[int, int, int]]:
    """(level, bucket, delta) for every bucket an entry leaves or joins, sorted, zeros dropped."""
    deltas: dict[tuple[int, int], int] = {}
    for key, delta in changes.items():
        for level, shift in LEVELS:
            deltas[(level, key >> shift)] = deltas.get((level, key >> shift), 0) + delta
    return sorted((level, bucket, d) for (level, bucket), d in deltas.items() if d)


async def adjust(conn: AsyncConnection, code: str, changes: dict[int, int]) -> None:
    """Move counts between buckets, always in the same order (no lock-order deadlocks)."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    for level, bucket, delta in bucket_deltas(changes):
        stmt = dialect.insert(C).values(code=code, level=level, bucket=bucket, entries=delta)
        stmt = stmt.on_conflict_do_update(
            index_elements=["code", "level", "bucket"], set_={"entries": C.c.entries + stmt.excluded.entries}
        )
        await conn.execute(stmt)


async def rebuild_counts(conn: AsyncConnection) -> None:
    """Recount every bucket from the entries (after a bulk load; migration 0003 does the same)."""
    await conn.execute(delete(LeaderboardCount))
    for level, shift in LEVELS:
        bucket = T.c.sort_key.op(">>")(literal_column(str(shift)))  # inline: grouped on
        rows = select(T.c.code, literal_column(str(level)), bucket, func.count()).group_by(T.c.code, bucket)
        await conn.execute(insert(LeaderboardCount).from_select(["code", "level", "bucket", "entries"], rows))


# -- reads ---------------------------------------------------------------------------


@dataclass
class Window:
    """Consecutive entries in ranking order, each with its rank."""

    entries: list[dict[str, Any]]
    next_cursor: str | None = None
    me: dict[str, Any] | None = None


def _entries() -> Select[Any]:
    return select(T, P.c.name).join(P, P.c.id == T.c.player_id)


def entry_json(row: Row[Any], rank: int) -> dict[str, Any]:
    """One entry as the API shows it."""
    return {
        "rank": rank,
        "player": {"id": row.player_id, "name": row.name},
        "result": row.result,
        "won": bool(row.won),
        "progress": row.progress,
        "score": row.score,
        "moves": row.moves,
        "elapsed_ms": row.elapsed_ms,
        "undos": row.undos,
        "finished_at": row.finished_ms,
        "game_id": row.game_id,
    }


def ranks(keys: Sequence[int], offset: int, less_than_first: int) -> list[int]:
    """Competition ranks ("1224") for a window starting at 0-based position ``offset``.

    Entries tied with the first share its rank (1 + entries strictly better);
    any later key's rank is the position of its first occurrence, since every
    entry before that occurrence ranks strictly better.
    """
    out: list[int] = []
    first_at: dict[int, int] = {}
    for i, key in enumerate(keys):
        if key == keys[0]:
            out.append(less_than_first + 1)
        else:
            out.append(offset + first_at.setdefault(key, i) + 1)
    return out


def better_parts(code: str, key: int) -> list[Any]:
    """Scalar subqueries whose sum counts the entries ranked strictly better than ``key``.

    Three bucket sums (a few hundred rows at most) and one count of the
    entries inside the key's own smallest bucket (65.5 s of play time).
    """
    b0, b1, b2 = (key >> shift for _, shift in LEVELS)

    def total(level: int, low: int | None, high: int) -> Any:
        where = [C.c.code == code, C.c.level == level, C.c.bucket < high]
        if low is not None:
            where.append(C.c.bucket >= low)
        return select(func.coalesce(func.sum(C.c.entries), 0)).where(*where).scalar_subquery()

    inside = select(func.count()).where(T.c.code == code, T.c.sort_key >= b2 << 16, T.c.sort_key < key)
    return [total(0, None, b0), total(1, b0 << 20, b1), total(2, b1 << 20, b2), inside.scalar_subquery()]


def ties_part(code: str, key: int, player_id: str) -> Any:
    """Entries with the same key listed before this one (a short index range)."""
    query = select(func.count()).where(T.c.code == code, T.c.sort_key == key, T.c.player_id < player_id)
    return query.scalar_subquery()


async def count_better(conn: AsyncConnection, code: str, key: int) -> int:
    return sum(int(part) for part in (await conn.execute(select(*better_parts(code, key)))).one())


async def position(conn: AsyncConnection, code: str, key: int, player_id: str) -> tuple[int, int]:
    """(entries listed before this one, entries ranked strictly better): one round trip."""
    parts = (await conn.execute(select(ties_part(code, key, player_id), *better_parts(code, key)))).one()
    better = sum(int(part) for part in parts[1:])
    return better + int(parts[0]), better


def encode_cursor(row: Row[Any]) -> str:
    return f"{row.sort_key}.{row.player_id}"


def decode_cursor(text: str) -> tuple[int, str]:
    """A cursor back into (sort_key, player_id); anything else is ``bad_message``."""
    key, _, player_id = text.partition(".")
    if not key.isdigit() or not player_id or len(text) > 64:
        raise ProtocolError("bad_message", "cursor is not one this server gave", field="cursor")
    return int(key), player_id


async def top(conn: AsyncConnection, code: str, limit: int, cursor: str | None = None) -> Window:
    """A page of the board in ranking order, after ``cursor`` (keyset paging: stable)."""
    query = _entries().where(T.c.code == code)
    if cursor is not None:
        key, player_id = decode_cursor(cursor)
        query = query.where(tuple_(T.c.sort_key, T.c.player_id) > tuple_(key, player_id))
    query = query.order_by(T.c.sort_key, T.c.player_id).limit(limit + 1)
    rows = list((await conn.execute(query)).all())
    more, rows = len(rows) > limit, rows[:limit]
    if not rows:
        return Window([])
    offset, less = 0, 0
    if cursor is not None:
        offset, less = await position(conn, code, rows[0].sort_key, rows[0].player_id)
    entries = _ranked(rows, offset, less)
    return Window(entries, encode_cursor(rows[-1]) if more else None)


def _ranked(rows: Sequence[Row[Any]], offset: int, less: int) -> list[dict[str, Any]]:
    numbers = ranks([r.sort_key for r in rows], offset, less)
    return [entry_json(r, n) for r, n in zip(rows, numbers, strict=True)]


def _branch(kind: str, query: Select[Any]) -> Select[Any]:
    inner = query.subquery()
    return select(literal_column(f"'{kind}'").label("part"), *inner.c)


async def around(conn: AsyncConnection, code: str, player_id: str, radius: int) -> Window | None:
    """A player's entry with up to ``radius`` entries either side, all ranked; None if absent.

    Two round trips: the window (one UNION ALL keyed on the player's own row),
    then every count the ranks need.
    """
    board = _entries().where(T.c.code == code)
    key = select(T.c.sort_key).where(T.c.code == code, T.c.player_id == player_id).scalar_subquery()
    mine, here = tuple_(T.c.sort_key, T.c.player_id), tuple_(key, literal(player_id))
    above = board.where(mine < here).order_by(T.c.sort_key.desc(), T.c.player_id.desc()).limit(radius)
    below = board.where(mine > here).order_by(T.c.sort_key, T.c.player_id).limit(radius)
    me_q = board.where(T.c.player_id == player_id)
    rows = (await conn.execute(union_all(_branch("m", me_q), _branch("a", above), _branch("b", below)))).all()
    me = next((r for r in rows if r.part == "m"), None)
    if me is None:
        return None
    up = sorted((r for r in rows if r.part == "a"), key=lambda r: (r.sort_key, r.player_id))
    down = sorted((r for r in rows if r.part == "b"), key=lambda r: (r.sort_key, r.player_id))
    window = [*up, me, *down]
    first = window[0]
    counts = select(ties_part(code, me.sort_key, player_id), *better_parts(code, me.sort_key))
    counts = counts.add_columns(*better_parts(code, first.sort_key))
    parts = [int(p) for p in (await conn.execute(counts)).one()]
    better_me, better_first = sum(parts[1:5]), sum(parts[5:9])
    start = better_me + parts[0] - len(up)
    entries = _ranked(window, start, better_first)
    return Window(entries, me=entries[len(up)])


# -- live updates --------------------------------------------------------------------


def topic(code: str) -> str:
    return f"leaderboard:{code}"


@dataclass
class Leaderboards:
    """Counts finished games (a finish hook) and pushes changes to subscribers."""

    services: Services
    _changed: dict[str, str] = field(default_factory=dict)  # game id -> code, set in the commit
    _locks: dict[str, tuple[asyncio.Lock, list[int]]] = field(default_factory=dict)  # lock, users
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def on_finish(self, live: LiveGame, conn: AsyncConnection) -> None:
        """Finish hook: runs inside the transaction that ends the game, so no result is lost."""
        if counts(live) and await record(conn, entry_values(live)):
            self._changed[live.id] = str(live.game.code)

    def on_change(self, live: LiveGame) -> None:
        """Listener: after the commit, push the changed entry to the code's subscribers."""
        code = self._changed.pop(live.id, None)
        if code is None or not self.services.hub.subscriber_count(topic(code)):
            return
        task = asyncio.get_running_loop().create_task(self._push(code, live.owner_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _push(self, code: str, player_id: str) -> None:
        lock, users = self._locks.setdefault(code, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:  # one code's updates go out in the order results landed
                async with self.services.engine.connect() as conn:
                    window = await around(conn, code, player_id, 0)
                if window is not None and window.me is not None:
                    message = {"type": "leaderboard_update", "code": code, "entry": window.me}
                    self.services.hub.publish(topic(code), message)
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[code]

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()


def leaderboards(services: Services) -> Leaderboards:
    board: Leaderboards = services.extras["leaderboards"]
    return board


# -- HTTP ----------------------------------------------------------------------------


def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise ProtocolError("bad_message", f"{name} must be a whole number from {low} to {high}", field=name)
    return int(raw)


@http_api.endpoint
async def get_leaderboard(request: Request) -> Response:
    """Top entries of one code's board, ``limit`` at a time, continued with ``cursor``."""
    code = str(parse_code_or_error(request.path_params["code"]))
    limit = int_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    cursor = request.query_params.get("cursor") or None
    async with http_api.services_of(request).engine.connect() as conn:
        window = await top(conn, code, limit, cursor)
    return JSONResponse({"code": code, "entries": window.entries, "next_cursor": window.next_cursor})


@http_api.endpoint
async def get_player_rank(request: Request) -> Response:
    """A player's own entry and rank with ``radius`` entries either side."""
    code = str(parse_code_or_error(request.path_params["code"]))
    player_id = request.path_params["player_id"]
    radius = int_param(request, "radius", DEFAULT_RADIUS, 0, MAX_RADIUS)
    async with http_api.services_of(request).engine.connect() as conn:
        window = await around(conn, code, player_id, radius)
    if window is None or window.me is None:
        raise ProtocolError("not_found", "this player has no entry on this code's leaderboard")
    body = {"code": code, "rank": window.me["rank"], "entry": window.me, "entries": window.entries}
    return JSONResponse(body)


http_api.EXTRA_ROUTES.extend(
    [
        Route("/api/leaderboards/{code}", get_leaderboard),
        Route("/api/leaderboards/{code}/players/{player_id}", get_player_rank),
    ]
)


# -- WebSocket -------------------------------------------------------------------------


@handler("subscribe_leaderboard")
async def _subscribe(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    code = str(parse_code_or_error(fields["code"]))
    limit = fields.get("limit", DEFAULT_LIMIT)
    if not 1 <= limit <= MAX_LIMIT:
        raise ProtocolError("bad_message", f"limit must be 1 to {MAX_LIMIT}", field="limit")
    conn.subscribe(topic(code))  # before the read, so no update falls between the two
    async with conn.services.engine.connect() as db:
        window = await top(db, code, limit)
    return {"type": "leaderboard", "code": code, "entries": window.entries, "next_cursor": window.next_cursor}


@handler("unsubscribe_leaderboard")
async def _unsubscribe(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    code = str(parse_code_or_error(fields["code"]))
    conn.unsubscribe(topic(code))
    return {"type": "leaderboard_unsubscribed", "code": code}
