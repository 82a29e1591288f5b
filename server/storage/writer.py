"""Group commit: many games' actions share one transaction and one fsync.

When a commit fails, the writer reads back what the database holds before it
answers anyone (:meth:`GroupWriter._recover`): a COMMIT whose answer was lost
on the way back is a success, however it looked; a database that is locked
or away fails the whole batch at once with :class:`StorageUnavailable`
(bounded by the lock wait, never one full wait per write); any other failure
is retried write by write, to find the one write at fault. A batch whose fate
cannot be read back fails with :class:`StorageInDoubt`, so the caller forgets
what it holds in memory and reads it again from storage.

Callers hand a :class:`Write` to :meth:`GroupWriter.submit` and await it; the
single writer task drains whatever has queued up meanwhile, writes it all in
one transaction, commits, and only then wakes the callers. So each action is
durable before it is acknowledged, yet the commit count grows with load far
slower than the action count. Nothing waits to fill a batch: a batch is what
arrived while the previous commit was on disk.

The usual batch (actions, game rows, new games) goes the direct way of its
database (:func:`direct_batches`: ``sqlite_batches``, ``pg_batches``).
Batches that carry ``extras`` (a finished game's leaderboard entry and the
like) go through SQLAlchemy, since the extras are written with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import bindparam, insert, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.metrics import COMMIT_BATCH, COMMIT_SECONDS
from server.storage.faults import OUTAGE, StorageInDoubt, StorageUnavailable, brief, is_unavailable
from server.storage.models import GAME_STATE_COLUMNS, ActionRow, GameRow
from server.storage.pg_batches import PgBatches, Rows
from server.storage.sqlite_batches import SqliteBatches

log = logging.getLogger(__name__)

Extra = Callable[[AsyncConnection], Awaitable[None]]

_INSERT_ACTION = insert(ActionRow)
_INSERT_GAME = insert(GameRow)
_UPDATE_GAME = (
    update(GameRow)
    .where(GameRow.id == bindparam("b_id"))
    .values({name: bindparam(f"b_{name}") for name in GAME_STATE_COLUMNS})
)


@dataclass
class Write:
    """One unit to make durable: a new game row, or an action row and the game row's new values."""

    action: dict[str, Any] | None
    game: dict[str, Any] | None
    extras: list[Extra] = field(default_factory=list)
    new_game: dict[str, Any] | None = None
    done: asyncio.Future[None] | None = None
    fence: int | None = None  # with several instances: the game's token its owner took (storage.leases)


class Batches(Protocol):
    """A direct way to commit a plain batch (no ``extras``) on a connection of the writer's own."""

    async def write(self, new_games: Rows, actions: Rows, games: Rows, fences: dict[str, int]) -> set[str]:
        """Commit the rows in one transaction; returns the games of ``fences`` whose token held."""

    async def probe(self) -> None:
        """A write lock (or a round trip) taken and given back: raises while the database is away."""

    async def close(self) -> None: ...


def direct_batches(engine: AsyncEngine) -> Batches | None:
    """The direct path for this engine: SQLite in a thread, PostgreSQL in one statement."""
    return SqliteBatches.for_engine(engine) or PgBatches.for_engine(engine)


class WriterClosed(RuntimeError):
    """The writer has stopped; nothing more can be made durable."""


class GroupWriter:
    """The one task that commits game writes in batches."""

    def __init__(self, engine: AsyncEngine, max_batch: int = 1000, linger_s: float = 0.0) -> None:
        self._engine = engine
        self._direct = direct_batches(engine)
        self._queue: asyncio.Queue[Write | None] = asyncio.Queue()
        self._max_batch = max_batch
        self._linger_s = linger_s
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._healthy = True
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
        if self._direct is not None:
            await self._direct.close()

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

    @property
    def healthy(self) -> bool:
        """False from a commit the database refused as unavailable until the next one succeeds."""
        return self._healthy

    async def probe(self) -> bool:
        """Whether the database takes a write now (a write lock taken and given back); heals ``healthy``."""
        try:
            if self._direct is not None:
                await self._direct.probe()
            else:
                async with self._engine.begin() as conn:
                    await conn.execute(select(1))
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            return False
        self._healthy = True
        return True

    async def _commit(self, batch: list[Write]) -> None:
        started = time.perf_counter()
        try:
            await self._write_batch(batch)
        except Exception as exc:
            await self._recover(batch, exc)
            return
        COMMIT_SECONDS.observe(time.perf_counter() - started)
        COMMIT_BATCH.observe(len(batch))
        self._succeeded(batch)

    def _direct_for(self, batch: list[Write]) -> Batches | None:
        """The direct path, for a batch without extras (those are written with SQLAlchemy)."""
        return None if any(w.extras for w in batch) else self._direct

    async def _write_batch(self, batch: list[Write]) -> None:
        if (direct := self._direct_for(batch)) is not None:
            await direct.write(*batch_rows(batch), {})
        else:
            async with self._engine.begin() as conn:
                await self._write(conn, batch)

    def _succeeded(self, batch: list[Write]) -> None:
        self._healthy = True
        OUTAGE.answered()
        self.commits += 1
        self.writes += len(batch)
        settle(batch, None)

    async def _recover(self, batch: list[Write], exc: Exception) -> None:
        """After a failed commit: adopt what the database holds, then answer every writer."""
        try:
            stored = await self._stored(batch)
        except Exception as read_exc:
            self._healthy = False
            OUTAGE.failed(log, f"commit (and its read-back: {brief(read_exc)})", exc)
            settle(batch, StorageInDoubt("the database did not answer; the write may or may not be stored"))
            return
        if stored:  # the COMMIT ran; only its answer was lost
            log.warning("commit answer lost (%s); the database holds all %d writes", brief(exc), len(batch))
            self._succeeded(batch)
            return
        if is_unavailable(exc):
            self._healthy = False
            OUTAGE.failed(log, f"commit of {len(batch)} writes", exc)
            error = StorageUnavailable("the database cannot be written now; nothing was stored")
            settle([*batch, *self._take_queued()], error)  # those who queued meanwhile wait no longer
            return
        if len(batch) > 1:  # find the culprit: one bad write must not fail the others
            log.warning("group commit of %d writes failed (%s); committing one by one", len(batch), exc)
            for write in batch:
                await self._commit([write])
            return
        log.error("commit failed; the write is not acknowledged: %s", brief(exc))
        settle(batch, exc)

    def _take_queued(self) -> list[Write]:
        """Everything queued now (the shutdown marker stays queued)."""
        taken: list[Write] = []
        stopping = False
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if item is None:
                stopping = True
            else:
                taken.append(item)
        if stopping:
            self._queue.put_nowait(None)
        return taken

    async def _stored(self, batch: list[Write]) -> bool:
        """Whether the database holds every write of the batch, exactly as written."""
        actions = [w.action for w in batch if w.action is not None]
        new_games = [w.new_game["id"] for w in batch if w.new_game is not None]
        acted = {a["game_id"] for a in actions}
        updates = [w.game for w in batch if w.game is not None and w.game["id"] not in acted]
        async with self._engine.connect() as conn:
            if actions:
                keys = [(a["game_id"], a["seq"]) for a in actions]
                key = tuple_(ActionRow.game_id, ActionRow.seq)
                rows = select(ActionRow.game_id, ActionRow.seq, ActionRow.action).where(key.in_(keys))
                found = {(r.game_id, r.seq): r.action for r in await conn.execute(rows)}
                if any(found.get((a["game_id"], a["seq"])) != a["action"] for a in actions):
                    return False
            if new_games:
                ids = select(GameRow.id).where(GameRow.id.in_(new_games))
                if len(set((await conn.execute(ids)).scalars())) != len(set(new_games)):
                    return False
            return await _rows_match(conn, updates) if updates else bool(actions or new_games)

    @staticmethod
    async def _write(conn: AsyncConnection, batch: list[Write]) -> None:
        new_games, actions, latest = batch_rows(batch)
        if new_games:
            await conn.execute(_INSERT_GAME, new_games)
        if actions:
            await conn.execute(_INSERT_ACTION, actions)
        if latest:
            params = [{f"b_{k}": v for k, v in g.items()} for g in latest]
            await conn.execute(_UPDATE_GAME, params)
        for write in batch:
            for extra in write.extras:
                await extra(conn)


async def _rows_match(conn: AsyncConnection, games: list[dict[str, Any]]) -> bool:
    """Whether every game row holds the values a batch wrote (the batch's last one per game).

    Read as plain columns on a Core connection: a Core ``select`` of the mapped
    class yields its first column, not an object.
    """
    if not games:
        return False
    columns = [getattr(GameRow, name) for name in GAME_STATE_COLUMNS]
    query = select(GameRow.id, *columns).where(GameRow.id.in_([values["id"] for values in games]))
    stored = {row[0]: tuple(row[1:]) for row in await conn.execute(query)}
    return all(
        stored.get(values["id"]) == tuple(values[name] for name in GAME_STATE_COLUMNS) for values in games
    )


def batch_rows(batch: list[Write]) -> tuple[Rows, Rows, Rows]:
    """A batch's new game rows, action rows, and each game's last row values (only the last
    state of a game in the batch matters), for either way of writing it."""
    new_games = [w.new_game for w in batch if w.new_game is not None]
    actions = [w.action for w in batch if w.action is not None]
    latest: dict[str, dict[str, Any]] = {}
    for write in batch:
        if write.game is not None:
            latest[write.game["id"]] = write.game
    return new_games, actions, list(latest.values())


def settle(batch: list[Write], error: Exception | None) -> None:
    """Wake every waiter of a batch: all committed, or all told why not."""
    for write in batch:
        if write.done is None or write.done.done():
            continue
        if error is None:
            write.done.set_result(None)
        else:
            write.done.set_exception(error)
