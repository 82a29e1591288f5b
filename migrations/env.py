"""Alembic environment: runs migrations over the async engine for SQLite and PostgreSQL.

The database is ``-x url=…`` when given (``alembic -x url=postgresql+asyncpg://… upgrade
head``), else the config's ``sqlalchemy.url``. A migration holds the database's migration
lock (server/storage/migrate.py), so processes that start together migrate one at a time.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from server.storage.db import make_engine
from server.storage.migrate import lock_postgres, sqlite_migration_lock
from server.storage.models import Base

config = context.config
target_metadata = Base.metadata


def database_url() -> str:
    """``-x url=…`` wins over ``sqlalchemy.url``: the command line names the database."""
    given = context.get_x_argument(as_dictionary=True).get("url")
    return given or config.get_main_option("sqlalchemy.url") or ""


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        lock_postgres(connection)  # before the version is read: a second process waits here
        context.run_migrations()


async def _run_async(url: str) -> None:
    engine = make_engine(url)
    async with engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            # SQLite's batch mode copies a table and drops the old one; with foreign keys
            # enforced that drop fails once other tables' rows point at it. Outside any
            # transaction, so the pragma takes effect; this connection ends with the migration.
            await connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            await connection.commit()
        await connection.run_sync(_run)
        await connection.commit()
    await engine.dispose()


def run_offline() -> None:
    context.configure(url=database_url(), target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_offline()
else:
    url = database_url()
    with sqlite_migration_lock(url):  # SQLite: the file lock beside the database
        asyncio.run(_run_async(url))
