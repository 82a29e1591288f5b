"""Which revision a database is at, and the lock migrations take.

Only ``solitaire-server migrate`` (and ``serve``'s migrate on start) changes the
schema. Several processes may start at once on one empty database: each
migration holds a lock on that database (PostgreSQL: a transaction-level
advisory lock; SQLite: a file lock beside the file), so the first one migrates
and the others then find the schema current. Every other command checks the
revision first and refuses another one, saying what to run.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

MIGRATION_KEY = 0x5EA4A7E3  # the advisory lock key migrations hold (the instances' is ...E2)
MIGRATE_HINT = "run `solitaire-server migrate`"


class SchemaMismatch(RuntimeError):
    """The database is not at the revision this server's code needs."""


def _script() -> Any:
    from alembic.script import ScriptDirectory

    from server.storage.db import alembic_config

    return ScriptDirectory.from_config(alembic_config("sqlite://"))


def head_revision() -> str:
    """The newest migration of this release."""
    return str(_script().get_current_head())


def known_revision(revision: str) -> bool:
    """Whether this release has that migration (a newer release's is unknown here)."""
    try:
        return _script().get_revision(revision) is not None
    except Exception:  # alembic's ResolutionError and CommandError: not one of ours
        return False


def _current(connection: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    revision = MigrationContext.configure(connection).get_current_revision()
    return None if revision is None else str(revision)


async def database_revision(url: str) -> str | None:
    """The revision the database is at; None for a database without the schema."""
    engine = create_async_engine(url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(_current)
    finally:
        await engine.dispose()


def mismatch(current: str | None, head: str, allow_newer: bool = False) -> str | None:
    """What is wrong with a database at ``current`` for code needing ``head`` (None: nothing)."""
    if current == head:
        return None
    if current is None:
        return f"database has no schema yet, this server needs revision {head}: {MIGRATE_HINT}"
    if not known_revision(current):
        if allow_newer:  # a newer release migrated it; migrations are additive (docs/operations.md)
            return None
        return (
            f"database is at revision {current}, newer than this server's {head}: "
            "run the release that migrated it"
        )
    return f"database is at revision {current}, this server needs {head}: {MIGRATE_HINT}"


async def require_current(url: str, allow_newer: bool = False) -> None:
    """Raise :class:`SchemaMismatch` unless the database is at this release's revision."""
    problem = mismatch(await database_revision(url), head_revision(), allow_newer)
    if problem is not None:
        raise SchemaMismatch(problem)


def lock_path(url: str) -> Path | None:
    """The file a SQLite database's migrations lock, beside it; None for PostgreSQL or memory."""
    url_parts = make_url(url)
    if url_parts.get_backend_name() != "sqlite":
        return None
    database = url_parts.database
    if not database or database == ":memory:":
        return None
    return Path(f"{Path(database).resolve()}.migrate-lock")


@contextlib.contextmanager
def sqlite_migration_lock(url: str) -> Iterator[None]:
    """Hold the SQLite file's migration lock (waiting for it) while the block runs."""
    path = lock_path(url)
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released when the descriptor closes
        yield
    finally:
        os.close(fd)


def lock_postgres(connection: Connection) -> None:
    """In the migration's transaction: wait for any other migration of this database to end."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_KEY})
