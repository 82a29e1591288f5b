"""The schema comes only from migrations: after ``upgrade head`` it matches the models."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from server.storage.db import make_engine, migrate
from server.storage.models import Base


def _diff(connection: Any) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, Base.metadata))


async def test_migrations_match_models(database_url: str) -> None:
    await migrate(database_url)
    await migrate(database_url)  # idempotent: a second run at start is harmless
    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(_diff) == []
            tables = await conn.run_sync(lambda c: set(inspect(c).get_table_names()))
    finally:
        await engine.dispose()
    assert set(Base.metadata.tables) <= tables
    assert "alembic_version" in tables
