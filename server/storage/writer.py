"""Group commit: many games' actions share one transaction and one fsync.

Callers hand a :class:`Write` to :meth:`GroupWriter.submit` and await it; the
single writer task drains whatever has queued up meanwhile, writes it all in
one transaction, commits, and only then wakes the callers. So each action is
durable before it is acknowledged, yet the commit count grows with load far
slower than the action count.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, insert, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.storage.models import ActionRow, GameRow

log = logging.getLogger(__name__)

Extra = Callable[[AsyncConnection], Awaitable[None]]

_INSERT_ACTION = insert(ActionRow)
_INSERT_GAME = insert(GameRow)
_GAME_COLUMNS = (
    "status",
    "result",
    "score",
    "moves",
    "seq",
    "progress",
    "undos",
    "elapsed_ms",
    "fingerprint",
    "last_action_ms",
    "finished_ms",
)
_UPDATE_GAME = (
    update(GameRow)
    .where(GameRow.id == bindparam("b_id"))
    .values({name: bindparam(f"b_{name}") for name in _GAME_COLUMNS})
)


@dataclass
class Write:
    """One unit to make durable: a new game row, or an action row and the game row's new values."""

    action: dict[str, Any] | None
    game: dict[str, Any] | None
    extras: list[Extra] = field(default_factory=list)
    new_game: dict[str, Any] | None = None
    done: asyncio.Future[None] | None = None


class WriterClosed(RuntimeError):
    """The writer has stopped; nothing more can be made durable."""


class GroupWriter:
    """The one task that commits game writes in batches."""

    def __init__(self, engine: AsyncEngine, max_batch: int = 1000, linger_s: float = 0.002) -> None:
        self._engine = engine
        self._queue: asyncio.Queue[Write | None] = asyncio.Queue()
        self._max_batch = max_batch
        self._linger_s = linger_s
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.commits = 0
        self.writes = 0

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="group-writer")

    async def submit(self, write: Write) -> None:
        """Queue a write and wait until it is committed (raises if the commit failed)."""
        if self._closed:
            raise WriterClosed("the server is shutting down")
        write.done = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(write)
        await write.done

    async def close(self) -> None:
        """Flush everything queued, then stop."""
        if self._task is None:
            return
        self._closed = True
        self._queue.put_nowait(None)
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _run(self) -> None:
        stopping = False
        while not stopping:
            first = await self._queue.get()
            if first is None:
                break
            batch = [first]
            if self._linger_s and self._queue.empty():
                await asyncio.sleep(self._linger_s)
            while len(batch) < self._max_batch and not self._queue.empty():
                item = self._queue.get_nowait()
                if item is None:
                    stopping = True
                    break
                batch.append(item)
            await self._commit(batch)

    async def _commit(self, batch: list[Write]) -> None:
        try:
            async with self._engine.begin() as conn:
                await self._write(conn, batch)
        except Exception as exc:
            if len(batch) > 1:  # find the culprit: one bad write must not fail the others
                log.warning("group commit of %d writes failed (%s); committing one by one", len(batch), exc)
                for write in batch:
                    await self._commit([write])
                return
            log.exception("commit failed; the write is not acknowledged")
            _settle(batch, exc)
            return
        self.commits += 1
        self.writes += len(batch)
        _settle(batch, None)

    @staticmethod
    async def _write(conn: AsyncConnection, batch: list[Write]) -> None:
        new_games = [w.new_game for w in batch if w.new_game is not None]
        if new_games:
            await conn.execute(_INSERT_GAME, new_games)
        actions = [w.action for w in batch if w.action is not None]
        if actions:
            await conn.execute(_INSERT_ACTION, actions)
        latest: dict[str, dict[str, Any]] = {}
        for write in batch:  # only each game's last state in the batch matters
            if write.game is not None:
                latest[write.game["id"]] = write.game
        if latest:
            params = [{f"b_{k}": v for k, v in g.items()} for g in latest.values()]
            await conn.execute(_UPDATE_GAME, params)
        for write in batch:
            for extra in write.extras:
                await extra(conn)


def _settle(batch: list[Write], error: Exception | None) -> None:
    """Wake every waiter of a batch: all committed, or all told why not."""
    for write in batch:
        if write.done is None or write.done.done():
            continue
        if error is None:
            write.done.set_result(None)
        else:
            write.done.set_exception(error)
