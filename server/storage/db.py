"""Database set-up, the unit of work, and migrations.

Everything above storage opens a transaction one way: ``Database.transaction()``
for writes (one transaction, committed at the end of the block, rolled back on
an exception) and ``Database.read()`` for reads; each yields a :data:`Tx` to
pass to the query functions of ``server/storage/<feature>.py``. No layer above
names the engine, a session or a statement.

SQLite runs in WAL mode with ``synchronous=FULL``: an acknowledged action
survives a process kill and a power cut. Group commit (``writer``) is what
keeps that affordable.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, ClassVar

from sqlalchemy import Row, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry, NullPool

log = logging.getLogger(__name__)
LOCK_WAIT_S = 4.0  # longest wait for a SQLite lock: then the write is refused as `unavailable`
MIGRATIONS_DIR = Path(__file__).resolve().parent.parent.parent / "migrations"


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


POOL_SIZE, MAX_OVERFLOW = 10, 10  # PostgreSQL connections kept, and opened past them at a peak


def make_engine(url: str, pool_size: int = POOL_SIZE, max_overflow: int = MAX_OVERFLOW) -> AsyncEngine:
    """An async engine; SQLite gets its data folder created and its pragmas set, PostgreSQL a pool
    of ``pool_size`` connections and up to ``max_overflow`` more (``--db-pool-size``…)."""
    if is_sqlite(url):
        database = make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, connect_args={"timeout": LOCK_WAIT_S})
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(url, pool_size=pool_size, max_overflow=max_overflow, pool_pre_ping=True)


SQLITE_PRAGMAS = (
    "journal_mode=WAL",
    "synchronous=FULL",
    "foreign_keys=ON",
    f"busy_timeout={int(LOCK_WAIT_S * 1000)}",
)


def _sqlite_pragmas(dbapi_conn: Any, _record: ConnectionPoolEntry) -> None:
    cursor = dbapi_conn.cursor()
    for pragma in SQLITE_PRAGMAS:
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


Tx = AsyncConnection  # what a unit of work yields: the argument of every query function
Record = Row[Any]  # a row a query function returns: its columns by name


class Database:
    """The one way to open a unit of work on the database, and the engine under it.

    ``transaction()`` is ``engine.begin()``: every statement in the block commits
    together, or none does. ``read()`` is ``engine.connect()``: a connection whose
    open transaction is rolled back when the block ends. The engine (and with it
    the dialect's behaviour: SQLite's pragmas and lock wait, PostgreSQL's pool) is
    :func:`make_engine`'s; only storage reaches it, as :attr:`engine`.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str, pool_size: int = POOL_SIZE, max_overflow: int = MAX_OVERFLOW) -> Database:
        return cls(make_engine(url, pool_size, max_overflow))

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        async with self.engine.begin() as conn:
            yield conn

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[Tx]:
        async with self.engine.connect() as conn:
            yield conn

    async def ping(self) -> None:
        """A round trip to the database; raises whatever the driver raises when it is away."""
        async with self.read() as tx:
            await tx.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        await self.engine.dispose()


def alembic_config(url: str) -> Any:
    """An Alembic config pointing at this project's migrations and the given database."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def migrate_sync(url: str) -> None:
    """Upgrade the database to the newest migration (blocking; runs its own event loop)."""
    from alembic import command

    if is_sqlite(url):
        database = make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
    command.upgrade(alembic_config(url), "head")


async def migrate(url: str) -> None:
    """Run migrations from async code, in a thread so Alembic can run its own loop."""
    await asyncio.to_thread(migrate_sync, url)


async def schema_revision(url: str) -> str | None:
    """The migration the database is at (``alembic_version``); None before the first one."""
    engine = make_engine(url)  # SQLite: its folder made, as the migration will
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(_revision_of)
    finally:
        await engine.dispose()


def _revision_of(conn: Any) -> str | None:
    from alembic.runtime.migration import MigrationContext

    heads = MigrationContext.configure(conn).get_current_heads()
    return ",".join(heads) if heads else None


async def migrate_logged(url: str) -> tuple[str | None, str | None]:
    """:func:`migrate`, logging the revision before and after (Alembic's own lines are off)."""
    before = await schema_revision(url)
    await migrate(url)
    after = await schema_revision(url)
    if before != after:
        log.info("database migrated from %s to %s", before or "an empty schema", after)
    else:
        log.info("database schema at %s: no migration to run", after)
    return before, after


def backup_sqlite(url: str, target: str) -> int:
    """Copy a SQLite database with its online backup API: a consistent copy while the server
    writes (each step waits out a commit, never the other way round). Returns the pages copied."""
    database = make_url(url).database
    if not database or database == ":memory:" or not Path(database).is_file():
        raise FileNotFoundError(f"no SQLite database at {database!r}")
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    copied = 0

    def progress(status: int, remaining: int, total: int) -> None:
        nonlocal copied
        copied = total

    source = sqlite3.connect(database, timeout=LOCK_WAIT_S)
    try:
        destination = sqlite3.connect(target)
        try:
            source.backup(destination, pages=1024, progress=progress)
        finally:
            destination.close()
    finally:
        source.close()
    return copied


class InstanceLocked(RuntimeError):
    """Another server process already serves this SQLite file."""


class InstanceLock:
    """One server process per SQLite file: an exclusive ``flock`` on ``<file>.lock``.

    SQLite would let a second process write the same file, but two servers
    would each trust their own memory of the same games. Several instances
    need PostgreSQL. Apps inside one process (tests run several) share the
    lock: it is counted per process.
    """

    _held: ClassVar[dict[str, tuple[int, int]]] = {}  # lock path -> (fd, users)
    _guard: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, url: str) -> None:
        database = make_url(url).database if is_sqlite(url) else None
        self.path = f"{Path(database).resolve()}.lock" if database and database != ":memory:" else None

    def acquire(self) -> None:
        if self.path is None:
            return
        with self._guard:
            fd, users = self._held.get(self.path, (-1, 0))
            if users == 0:
                fd = self._lock_file(self.path)
            self._held[self.path] = (fd, users + 1)

    @staticmethod
    def _lock_file(path: str) -> int:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            database = path.removesuffix(".lock")
            raise InstanceLocked(
                f"another server process is using {database}: one process per SQLite file "
                "(several instances need PostgreSQL)"
            ) from None
        return fd

    def release(self) -> None:
        if self.path is None:
            return
        with self._guard:
            fd, users = self._held.get(self.path, (-1, 0))
            if users <= 1:
                self._held.pop(self.path, None)
                if fd >= 0:
                    os.close(fd)  # closing the descriptor gives the lock back
            else:
                self._held[self.path] = (fd, users - 1)


LOCK_CHECK_S = 2.0  # how often the connection holding the advisory lock is looked at
ADVISORY_KEY = 0x5EA4A7E2  # the key of the instances' advisory lock on a PostgreSQL database


class DatabaseLock:
    """On PostgreSQL: one instance without Redis, any number with it, never both kinds at once.

    An instance alone holds an exclusive advisory lock for as long as it
    runs; instances with Redis each hold it shared. So a second instance
    without Redis refuses to start, saying why, and so does one that would
    join a cluster with a different set-up. Apps inside one process (the
    tests run several) share what the first one took, as :class:`InstanceLock`.
    """

    _held: ClassVar[dict[str, int]] = {}  # URL -> apps of this process using it

    def __init__(self, url: str, shared: bool) -> None:
        self.url = url if not is_sqlite(url) else ""
        self.shared = shared
        self._conn: AsyncConnection | None = None
        self._engine: AsyncEngine | None = None
        self._owner = False  # this one took the lock (the process's other apps share it)

    async def acquire(self) -> None:
        if not self.url:
            return
        users = self._held.get(self.url, 0)
        if users == 0:
            await self._lock()
        self._held[self.url] = users + 1

    async def _lock(self) -> None:
        engine = create_async_engine(self.url, poolclass=NullPool)
        conn = await engine.connect()
        function = "pg_try_advisory_lock_shared" if self.shared else "pg_try_advisory_lock"
        got = (await conn.execute(text(f"SELECT {function}(:key)"), {"key": ADVISORY_KEY})).scalar_one()
        await conn.commit()
        if not got:
            await conn.close()
            await engine.dispose()
            raise InstanceLocked(
                "another server instance is using this database without Redis: one instance per "
                "database, or every instance with --redis-url (see docs/operations.md)"
                if self.shared
                else "another server instance is using this database: without Redis one instance "
                "serves a database; several instances all need --redis-url (see docs/operations.md)"
            )
        self._conn, self._engine, self._owner = conn, engine, True

    async def keep(self, lost: Callable[[str], None], every_s: float = LOCK_CHECK_S) -> None:
        """Hold the lock through a database failover, until cancelled.

        The lock lives in one connection's session: when the primary dies, so do
        the connection and the lock, and the promoted standby has none. So the
        connection is looked at every ``every_s``; once it is gone the lock is taken
        again on whatever the URL reaches now (a multi-host URL: the new primary).
        If another instance took it meanwhile, ``lost`` is told why and the
        keeping ends: two instances would otherwise both own every game. While
        the database is away the attempts go on, however many fail (a promotion
        takes seconds).
        """
        while self._owner:  # until released (or cancelled), however often taking it fails
            await asyncio.sleep(every_s)
            if await self._alive():
                continue
            await self._drop()
            try:
                await self._lock()
            except InstanceLocked as exc:
                lost(str(exc))
                return
            except Exception as exc:  # the database is still away (mid-failover): try again
                log.warning("the database lock cannot be taken again yet: %s", exc)
                continue
            log.warning("the database connection holding this instance's lock broke; the lock is held again")

    async def _alive(self) -> bool:
        if self._conn is None:
            return False
        try:
            await asyncio.wait_for(self._conn.execute(text("SELECT 1")), LOCK_CHECK_S)
            await self._conn.commit()
            return True
        except Exception:  # any failure: the connection, and with it the lock, is gone
            return False

    async def _drop(self) -> None:
        conn, engine = self._conn, self._engine
        self._conn = self._engine = None
        if conn is not None:
            with contextlib.suppress(Exception):  # broken already: its lock went with it
                await conn.close()
        if engine is not None:
            await engine.dispose()

    async def release(self) -> None:
        if not self.url:
            return
        users = self._held.get(self.url, 0)
        if users > 1:
            self._held[self.url] = users - 1
            return
        self._held.pop(self.url, None)
        self._owner = False
        await self._drop()
