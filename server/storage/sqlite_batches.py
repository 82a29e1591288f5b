"""Group commit on SQLite: a whole batch in one transaction, on a connection and thread of its own.

The usual batch (actions, game rows, new games) is written here in one hop:
through SQLAlchemy's async driver every statement, the begin and the commit
were each a round trip between threads, and the per-row parameter handling
ran on the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import Table
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage.db import LOCK_WAIT_S, SQLITE_PRAGMAS
from server.storage.models import GAME_STATE_COLUMNS, ActionRow, GameRow
from server.storage.pg_batches import Rows

MAX_PARAMETERS = 900  # per statement: under SQLite's oldest default limit (999)
Params = list[object]


class Statement:
    """One multi-row statement's shape: its SQL for ``n`` rows, and each row's values in order."""

    def __init__(self, columns: tuple[str, ...], sql_for: Callable[[int], str]) -> None:
        self.columns = columns
        self.rows_at_once = MAX_PARAMETERS // len(columns)
        self._sql_for = functools.lru_cache(maxsize=64)(sql_for)

    def chunks(self, rows: Rows) -> Iterator[tuple[str, Params]]:
        """(SQL, parameters) for ``rows``, as few statements as the parameter limit allows."""
        for start in range(0, len(rows), self.rows_at_once):
            chunk = rows[start : start + self.rows_at_once]
            params = [row[name] for row in chunk for name in self.columns]
            yield self._sql_for(len(chunk)), params


def _placeholders(columns: tuple[str, ...], rows: int) -> str:
    one = "(" + ", ".join("?" * len(columns)) + ")"
    return ", ".join([one] * rows)


def _insert(table: Table) -> Statement:
    columns = tuple(column.name for column in table.columns)
    names = ", ".join(columns)
    return Statement(
        columns, lambda n: f"INSERT INTO {table.name} ({names}) VALUES {_placeholders(columns, n)}"
    )


def _update_games() -> Statement:
    columns = ("id", *GAME_STATE_COLUMNS)
    names = ", ".join(columns)
    sets = ", ".join(f"{name} = v.{name}" for name in GAME_STATE_COLUMNS)
    return Statement(
        columns,
        lambda n: (
            f"WITH v({names}) AS (VALUES {_placeholders(columns, n)}) "
            f"UPDATE games SET {sets} FROM v WHERE games.id = v.id"
        ),
    )


# Multi-row statements, not executemany: the sqlite3 module releases the GIL for every row's
# step and must take it back each time from the busy event loop, a wait of up to the switch
# interval per row, which every acknowledgement of the batch then waited for.
_SQLITE_INSERT_GAME = _insert(GameRow.__table__)  # type: ignore[arg-type]
_SQLITE_INSERT_ACTION = _insert(ActionRow.__table__)  # type: ignore[arg-type]
_SQLITE_UPDATE_GAME = _update_games()


class SqliteBatches:
    """Writes a whole batch in one transaction on its own SQLite connection and thread."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-writer")
        self._conn: sqlite3.Connection | None = None

    @classmethod
    def for_engine(cls, engine: AsyncEngine) -> SqliteBatches | None:
        """The direct path for a file-backed SQLite engine; None for anything else."""
        url = make_url(str(engine.url))
        if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
            return None
        return cls(str(url.database))

    async def write(self, new_games: Rows, actions: Rows, games: Rows, fences: dict[str, int]) -> set[str]:
        if fences:
            raise ValueError("SQLite serves one instance: its writes are never fenced")
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._thread, self._write_sync, new_games, actions, games)
        return set()

    def _write_sync(self, new_games: Rows, actions: Rows, games: Rows) -> None:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement, rows in (
                (_SQLITE_INSERT_GAME, new_games),
                (_SQLITE_INSERT_ACTION, actions),
                (_SQLITE_UPDATE_GAME, games),
            ):
                for sql, params in statement.chunks(rows):
                    conn.execute(sql, params)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLite may have rolled back already (an I/O error at COMMIT)
                conn.execute("ROLLBACK")
            raise

    async def probe(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._thread, self._probe_sync)

    def _probe_sync(self) -> None:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:  # opened in the writer thread, which alone uses it
            conn = sqlite3.connect(self._path, timeout=LOCK_WAIT_S, isolation_level=None)
            for pragma in SQLITE_PRAGMAS:
                conn.execute(f"PRAGMA {pragma}")
            self._conn = conn
        return self._conn

    async def close(self) -> None:
        def close_sync() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        await asyncio.get_running_loop().run_in_executor(self._thread, close_sync)
        self._thread.shutdown(wait=True)
