"""Group commit on PostgreSQL: a whole batch is one statement, one round trip, one transaction.

Through SQLAlchemy a batch was a checkout (with its ping), BEGIN, one
statement per table, the fencing check and COMMIT: six round trips and the
ORM's per-row work on the event loop, for every batch. Here each table's rows
travel as one JSON text (``json_to_recordset``, typed by the table's own
columns) in a single prepared statement on a connection the writer keeps for
itself; PostgreSQL runs a lone statement as its own transaction, so the new
games, the actions and the games' new values commit together or not at all.
JSON rather than column arrays: the driver checks every element of an array
parameter on the event loop, while one text is encoded by orjson at once.

With several instances the same statement checks each game's fencing token
(:mod:`server.storage.leases`): the ``fence`` part locks the games' lease rows
in id order and keeps the games whose token is still the one their writer
took; a fenced write of any other game is left out of the statement, and the
statement answers which games passed. A token that changed while the
statement waited for its row lock is read as it is after that change
(PostgreSQL re-reads a locked row in READ COMMITTED), so an instance that
lost a game never commits for it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import orjson
from sqlalchemy import Table
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage.models import GAME_STATE_COLUMNS, ActionRow, GameRow

Rows = list[dict[str, Any]]
_GAME_TABLE: Table = GameRow.__table__  # type: ignore[assignment]
_ACTION_TABLE: Table = ActionRow.__table__  # type: ignore[assignment]
_CHANGED = ("id", *GAME_STATE_COLUMNS)  # what an action's write sets, and which game
_GAME_NAMES = tuple(c.name for c in _GAME_TABLE.columns)
_ACTION_NAMES = tuple(c.name for c in _ACTION_TABLE.columns)


def _type(table: Table, column: str) -> str:
    return str(table.c[column].type.compile(dialect=postgresql.dialect()))  # type: ignore[no-untyped-call]


class _Params:
    """Numbers the statement's array parameters in the order they are declared."""

    def __init__(self) -> None:
        self.count = 0

    def records(self, table: Table, columns: tuple[str, ...], alias: str) -> str:
        """``json_to_recordset($n::json) AS alias(column type, ...)`` for these columns of the table."""
        self.count += 1
        typed = ", ".join(f"{column} {_type(table, column)}" for column in columns)
        return f"json_to_recordset(${self.count}::json) AS {alias}({typed})"

    def one(self, cast: str) -> str:
        self.count += 1
        return f"${self.count}::{cast}"


def _statement() -> str:
    p = _Params()
    new_games = p.records(_GAME_TABLE, _GAME_NAMES, "n")
    actions = p.records(_ACTION_TABLE, _ACTION_NAMES, "a")
    changes = p.records(_GAME_TABLE, _CHANGED, "v")
    fenced_ids, fence_tokens = p.one("varchar[]"), p.one("bigint[]")
    passed = "(SELECT game_id FROM fence)"
    sets = ", ".join(f"{c} = v.{c}" for c in GAME_STATE_COLUMNS)
    return f"""
WITH fence AS (
  SELECT l.game_id FROM game_leases AS l
  JOIN unnest({fenced_ids}, {fence_tokens}) AS f(game_id, token)
    ON l.game_id = f.game_id AND l.token = f.token
  ORDER BY l.game_id FOR UPDATE OF l
), new_games AS (
  INSERT INTO games ({", ".join(_GAME_NAMES)}) SELECT {", ".join(_GAME_NAMES)} FROM {new_games}
), new_actions AS (
  INSERT INTO actions ({", ".join(_ACTION_NAMES)}) SELECT {", ".join(_ACTION_NAMES)} FROM {actions}
  WHERE NOT a.game_id = ANY({fenced_ids}) OR a.game_id IN {passed}
), changed AS (
  UPDATE games SET {sets} FROM {changes}
  WHERE games.id = v.id AND (NOT v.id = ANY({fenced_ids}) OR v.id IN {passed})
)
SELECT game_id FROM fence
"""


STATEMENT = _statement()


def _records(rows: Rows, names: tuple[str, ...]) -> str:
    """The rows as one JSON text, each with exactly these columns (a missing one is a KeyError,
    never a NULL written)."""
    return orjson.dumps([{name: row[name] for name in names} for row in rows]).decode()


def arguments(new_games: Rows, actions: Rows, games: Rows, fences: dict[str, int]) -> list[Any]:
    """The statement's parameters in the order it declares them."""
    return [
        _records(new_games, _GAME_NAMES),
        _records(actions, _ACTION_NAMES),
        _records(games, _CHANGED),
        list(fences),
        list(fences.values()),
    ]


class PgBatches:
    """Writes whole batches on a PostgreSQL connection of its own (opened again after a failure)."""

    def __init__(self, connect: dict[str, Any]) -> None:
        self._connect = connect
        self._conn: asyncpg.Connection | None = None
        self._opening = asyncio.Lock()

    @classmethod
    def for_engine(cls, engine: AsyncEngine) -> PgBatches | None:
        """The direct path for a PostgreSQL engine on asyncpg; None for anything else."""
        if engine.dialect.name != "postgresql" or engine.dialect.driver != "asyncpg":
            return None
        _, kwargs = engine.dialect.create_connect_args(engine.url)
        return cls(dict(kwargs))

    async def write(self, new_games: Rows, actions: Rows, games: Rows, fences: dict[str, int]) -> set[str]:
        """Commit the batch; the games among ``fences`` whose token still held (their writes are in)."""
        conn = await self._connection()
        try:
            rows = await conn.fetch(STATEMENT, *arguments(new_games, actions, games, fences))
        except BaseException:
            await self._drop()  # its fate is read back through the engine; the next batch reconnects
            raise
        return {row[0] for row in rows}

    async def probe(self) -> None:
        conn = await self._connection()
        try:
            await conn.execute("SELECT 1")
        except BaseException:
            await self._drop()
            raise

    async def close(self) -> None:
        await self._drop()

    async def _connection(self) -> asyncpg.Connection:
        async with self._opening:
            if self._conn is None or self._conn.is_closed():
                self._conn = await asyncpg.connect(**self._connect)
            return self._conn

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            conn.terminate()
