"""Fixtures of the cluster tests: a fresh PostgreSQL database, Redis, and a fleet on them.

Redis is required when ``SOLITAIRE_REQUIRE_REDIS=1`` (CI sets it, and starts
Redis if it is not running): the tests then fail instead of skipping. Each
fleet uses a key and channel prefix of its own, so tests sharing one Redis
never see each other's messages.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.cluster.fleet import SHARED_REDIS, Fleet, migrate, redis_answers
from tests.conftest import create_pg_database, drop_pg_database, pg_database_url


@pytest.fixture
def redis_url() -> str:
    if not redis_answers():
        if os.environ.get("SOLITAIRE_REQUIRE_REDIS") == "1":
            pytest.fail(f"Redis is required but does not answer at {SHARED_REDIS}")
        pytest.skip(f"Redis does not answer at {SHARED_REDIS} (set SOLITAIRE_REQUIRE_REDIS=1 to fail)")
    return SHARED_REDIS


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database, migrated once (the instances do not migrate on start)."""
    name = create_pg_database()
    try:
        url = pg_database_url(name)
        migrate(url)
        yield url
    finally:
        drop_pg_database(name)


@pytest.fixture
def fleet(pg_url: str, redis_url: str) -> Iterator[Fleet]:
    fleet = Fleet(pg_url, redis_url)
    try:
        yield fleet
    finally:
        fleet.close()
