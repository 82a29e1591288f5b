"""Shared fixtures: databases (SQLite and PostgreSQL) and real running servers.

The server suite runs once per backend. PostgreSQL is required when
``SOLITAIRE_REQUIRE_POSTGRES=1`` (CI sets it): a missing database then fails
the run instead of skipping half the suite.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from server.config import Settings
from tests.contract import pytest_sessionfinish  # noqa: F401  (checks every received message)
from tests.support import (
    ONE_ADDRESS,
    OPEN_CLIENTS,
    PG_ADMIN_URL,
    UNSCREENED,
    ErrorRecords,
    ManualClock,
    logged_errors,
    running_server,
)

BACKENDS = ["sqlite", "postgres"]


async def _pg_admin(sql: str, *args: object) -> list[tuple[object, ...]]:
    """One administrative statement on the test server; the rows it returns."""
    import asyncpg

    url = make_url(PG_ADMIN_URL)
    conn = await asyncpg.connect(
        host=url.host, port=url.port or 5432, user=url.username, database=url.database, timeout=5
    )
    try:
        return [tuple(row) for row in await conn.fetch(sql, *args)]
    finally:
        await conn.close()


def pg_database_url(name: str) -> str:
    return make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)


def create_pg_database() -> str:
    """A fresh, empty PostgreSQL database; fails or skips when the server is missing."""
    name = f"solitaire_t_{secrets.token_hex(4)}"
    try:
        asyncio.run(_pg_admin(f'CREATE DATABASE "{name}"'))
    except Exception as exc:
        if os.environ.get("SOLITAIRE_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required but unreachable at {PG_ADMIN_URL}: {exc}")
        pytest.skip(f"PostgreSQL unreachable at {PG_ADMIN_URL} (set SOLITAIRE_REQUIRE_POSTGRES=1 to fail)")
    return name


@contextmanager
def fresh_pg_database() -> Iterator[str]:
    """A fresh, empty PostgreSQL database's URL for the block; dropped after it."""
    name = create_pg_database()
    try:
        yield pg_database_url(name)
    finally:
        drop_pg_database(name)


def drop_pg_database(name: str) -> None:
    asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def pg_databases(prefix: str) -> list[str]:
    """The test server's databases whose names begin with ``prefix``."""
    rows = asyncio.run(_pg_admin("SELECT datname FROM pg_database WHERE starts_with(datname, $1)", prefix))
    return sorted(str(row[0]) for row in rows)


@pytest.fixture
async def _close_test_clients() -> AsyncIterator[None]:
    """Close the test clients a test left open, on its own event loop before that loop closes
    (left to the garbage collector, each would be an unclosed-transport ResourceWarning)."""
    yield
    clients = list(OPEN_CLIENTS)
    OPEN_CLIENTS.clear()
    await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)


@pytest.fixture(autouse=True)
def _async_tests_close_their_clients(request: pytest.FixtureRequest) -> None:
    if inspect.iscoroutinefunction(request.function):
        request.getfixturevalue("_close_test_clients")


@pytest.fixture
def server_errors() -> Iterator[ErrorRecords]:
    """What the servers log at ERROR during the test; the test fails if anything was."""
    with logged_errors() as errors:
        yield errors
    assert not errors.records, errors.lines()


@pytest.fixture(scope="module", params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An empty database of each backend, shared by one test module."""
    if request.param == "sqlite":
        path: Path = tmp_path_factory.mktemp("db") / "solitaire.db"
        yield f"sqlite+aiosqlite:///{path}"
        return
    with fresh_pg_database() as url:
        yield url


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[str]:
    """A real server (uvicorn, real database) on a free local port: its base URL."""
    settings = Settings(
        database_url=database_url, secret="test-secret", limits=ONE_ADDRESS, screening=UNSCREENED
    )
    with running_server(settings) as base:
        yield base


@dataclass(frozen=True)
class ClockedServer:
    """A real server whose clock the test moves by hand (``clock.advance(ms)``)."""

    url: str
    clock: ManualClock


@pytest.fixture(scope="module")
def clocked_server(database_url: str) -> Iterator[ClockedServer]:
    """Like ``server``, on an injected clock: countdowns and rate limits pass without sleeping."""
    clock = ManualClock()
    settings = Settings(
        database_url=database_url, secret="test-secret", limits=ONE_ADDRESS, screening=UNSCREENED
    )
    with running_server(settings, clock) as base:
        yield ClockedServer(base, clock)
