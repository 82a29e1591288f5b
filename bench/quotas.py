"""Quotas: what one check costs, counted by one instance and by the fleet in Redis.

Each check is timed on its own, ``--checks`` times: a ``new_game`` token
(``Rate.require``) and an open connection taken and released
(``Slots.acquire`` + ``release``), first with the counts in memory (one
instance, or Redis away), then through :class:`server.cluster.quotas.RedisQuotas`
on the Redis at ``--redis-url`` (one Lua script, one round trip each; the
release is a background ``ZREM``, counted in the time until it is done),
beside a plain ``PING``, the floor of any round trip.
These checks run once per new game, race, player created and WebSocket
opened, never per action.

The last line printed is one JSON object (see docs/performance.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import time
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis

from server.clock import wall_clock_ms
from server.cluster.quotas import RedisQuotas
from server.core.quotas import Rate, SharedQuotas, Slots


async def timed(check: Callable[[int], Awaitable[None]], checks: int) -> dict[str, float]:
    """p50, p99 and mean of ``check`` in microseconds."""
    times = []
    for i in range(checks):
        start = time.perf_counter()
        await check(i)
        times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    return {
        "p50_us": round(times[len(times) // 2], 1),
        "p99_us": round(times[int(len(times) * 0.99)], 1),
        "mean_us": round(statistics.fmean(times), 1),
    }


async def measure(
    shared: SharedQuotas | None, checks: int, settle: Callable[[], Awaitable[None]]
) -> dict[str, object]:
    rate = Rate("new games", 1e9, 1e9, wall_clock_ms, shared, "games")  # never refuses: the cost alone
    slots = Slots(1_000_000, shared, "address")

    async def take(i: int) -> None:
        await rate.require(f"p_{i % 1000}")

    async def open_and_close(i: int) -> None:
        key = f"10.0.{i % 250}.{i % 200}"
        assert await slots.acquire(key)
        slots.release(key)
        await settle()

    return {"rate": await timed(take, checks), "slot": await timed(open_and_close, checks)}


async def main(redis_url: str, checks: int) -> dict[str, object]:
    async def nothing() -> None:
        return None

    local = await measure(None, checks, nothing)
    redis = Redis.from_url(redis_url)
    prefix = f"bench{secrets.token_hex(4)}"
    shared = RedisQuotas(redis, prefix, wall_clock_ms)

    async def released() -> None:
        while shared._tasks:  # the background ZREM, counted in the slot's cost
            await asyncio.sleep(0)

    async def ping(i: int) -> None:
        await redis.ping()

    try:
        round_trip = await timed(ping, checks)  # the floor: one PING
        fleet = await measure(shared, checks, released)
        async for key in redis.scan_iter(f"{prefix}:*"):
            await redis.delete(key)
    finally:
        await shared.close()
        await redis.aclose()
    return {"bench": "quotas", "checks": checks, "in_memory": local, "redis": fleet, "redis_ping": round_trip}


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--checks", type=int, default=5000)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main(args.redis_url, args.checks))))


if __name__ == "__main__":
    run()
