"""The PostgreSQL instance lock lives in one connection's session, so a failover (the
primary gone, a standby promoted) takes it away: the instance takes it again on whatever the
URL reaches now, and if another instance took it meanwhile, the instance is told why (it then
drains: server/app.py). The failover tests show the first on a promoted standby
(tests/durability/test_failover.py); here both, a broken connection standing in for the kill."""

from __future__ import annotations

import asyncio
import time

import asyncpg
from sqlalchemy.engine import make_url

from server.storage.db import ADVISORY_KEY, DatabaseLock
from tests.conftest import fresh_pg_database
from tests.pgproxy import commit_cutting_proxy

DEADLINE_S = 15.0
CHECK_S = 0.05


async def connect(url: str) -> asyncpg.Connection:
    u = make_url(url)
    return await asyncpg.connect(
        host=u.host, port=u.port or 5432, user=u.username, database=u.database, timeout=5
    )


async def holder(url: str) -> int | None:
    """The backend holding the instances' advisory lock on that database, if any."""
    conn = await connect(url)
    try:
        sql = "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND granted"
        pid = await conn.fetchval(sql, ADVISORY_KEY)
        return None if pid is None else int(pid)
    finally:
        await conn.close()


async def cut(url: str, pid: int) -> None:
    """The lock's connection breaks, as a killed primary's do."""
    conn = await connect(url)
    try:
        assert await conn.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await conn.close()


async def until_held_by_another(url: str, first: int) -> int:
    deadline = time.monotonic() + DEADLINE_S
    while (pid := await holder(url)) in (None, first):
        assert time.monotonic() < deadline, "the lock was not taken again"
        await asyncio.sleep(CHECK_S)
    assert pid is not None
    return pid


async def retakes(url: str) -> None:
    lock = DatabaseLock(url, shared=False)
    await lock.acquire()
    lost: list[str] = []
    keeper = asyncio.create_task(lock.keep(lost.append, every_s=CHECK_S))
    try:
        first = await holder(url)
        assert first is not None
        await cut(url, first)
        again = await until_held_by_another(url, first)
        await cut(url, again)  # and once more: the keeping goes on
        await until_held_by_another(url, again)
        assert lost == [] and not keeper.done()
    finally:
        keeper.cancel()
        await lock.release()
    assert await holder(url) is None  # released at the end, as before


async def told_when_taken(url: str) -> None:
    lock = DatabaseLock(url, shared=False)
    await lock.acquire()
    lost: list[str] = []
    other = await connect(url)
    try:
        first = await holder(url)
        assert first is not None
        await cut(url, first)
        assert await other.fetchval("SELECT pg_try_advisory_lock($1)", ADVISORY_KEY)  # another instance
        await asyncio.wait_for(lock.keep(lost.append, every_s=CHECK_S), DEADLINE_S)
        assert len(lost) == 1 and "another server instance" in lost[0], lost
    finally:
        await other.close()
        await lock.release()


def test_the_lock_is_taken_again_when_its_connection_breaks() -> None:
    with fresh_pg_database() as url:
        asyncio.run(retakes(url))


def test_an_instance_is_told_when_another_took_the_lock_meanwhile() -> None:
    with fresh_pg_database() as url:
        asyncio.run(told_when_taken(url))


async def waits_out_an_outage(url: str) -> None:
    """The database away for longer than a few checks (a failover's promotion takes seconds):
    the keeping goes on trying, and takes the lock again once the database answers."""
    with commit_cutting_proxy() as proxy:
        through = url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
        lock = DatabaseLock(through, shared=False)
        await lock.acquire()
        lost: list[str] = []
        keeper = asyncio.create_task(lock.keep(lost.append, every_s=CHECK_S))
        try:
            proxy.down()
            await asyncio.sleep(CHECK_S * 20)  # several failed attempts to take it again
            assert await holder(url) is None and not keeper.done()
            proxy.up()
            deadline = time.monotonic() + DEADLINE_S
            while await holder(url) is None:
                assert time.monotonic() < deadline, "the lock was not taken again after the outage"
                await asyncio.sleep(CHECK_S)
            assert lost == [] and not keeper.done()
        finally:
            keeper.cancel()
            await lock.release()


def test_the_lock_is_taken_again_after_the_database_was_away_a_while() -> None:
    with fresh_pg_database() as url:
        asyncio.run(waits_out_an_outage(url))
