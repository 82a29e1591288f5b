"""Once per cluster: the day-end sweep runs on the leader only, on a real PostgreSQL and Redis.

Another instance holds the leader key in Redis, so this one must not sweep when midnight
passes; once the key is gone this one is elected and sweeps.
"""

from __future__ import annotations

import asyncio
import secrets

import pytest
from redis.asyncio import Redis

from server.config import Settings
from server.rules.days import DAY_MS, day_start_ms
from tests.server.test_daily import start_daily, wait_result
from tests.support import ONE_ADDRESS, ManualClock, ahttp, running_server

pytestmark = pytest.mark.timeout(120)
START_MS = day_start_ms("2031-05-20") + 10 * 3_600_000


async def test_the_day_end_sweep_runs_on_the_leader_only(pg_url: str, redis_url: str) -> None:
    prefix = f"t{secrets.token_hex(4)}"
    redis = Redis.from_url(redis_url)
    await redis.set(f"{prefix}:leader", "another-instance", px=60_000)  # someone else leads
    clock = ManualClock(START_MS)
    settings = Settings(
        database_url=pg_url,
        secret="test-secret",
        limits=ONE_ADDRESS,
        redis_url=redis_url,
        redis_prefix=prefix,
        migrate_on_start=False,
    )
    try:
        with running_server(settings, clock=clock) as base:
            _, game = await start_daily(base, "SH1-C4")
            game_id = game["game"]["id"]
            clock.advance(DAY_MS)  # midnight passes
            await asyncio.sleep(1.5)  # three sweeper ticks: a leader would have swept by now
            status, body = await ahttp("GET", f"{base}/api/games/{game_id}")
            assert status == 200 and body["game"]["result"] is None  # not the leader: no sweep
            await redis.delete(f"{prefix}:leader")  # the other instance is gone
            swept = await wait_result(base, game_id, "expired")
            assert swept["game"]["result"] == "expired"  # elected, then swept
    finally:
        await redis.delete(f"{prefix}:leader")
        await redis.aclose()
