"""Failed logins counted in Redis (server.cluster.backoff) against a real Redis, on an
injected clock: the same rule as one instance's counts, shared by every instance of a prefix,
added atomically, stored under hashed names, and falling back to this instance's counts
while Redis does not answer."""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from server.cluster import backoff as redis_backoff
from server.cluster.backoff import RedisCounts
from server.core.backoff import BackoffRule, Failures, in_memory
from tests.cluster.fleet import private_redis
from tests.support import ManualClock, free_port

pytestmark = pytest.mark.timeout(60)
RULE = BackoffRule(free=2, base_s=1, cap_s=8, forget_s=60)


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    """A client of the shared Redis; every key the test made (under ``prefix``) removed after."""
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
async def prefix(redis: Redis) -> AsyncIterator[str]:
    name = f"t{secrets.token_hex(4)}"
    yield name
    keys = [key async for key in redis.scan_iter(match=f"{name}:*")]
    if keys:
        await redis.delete(*keys)


async def waits(counts: list[Failures], key: str) -> list[float]:
    return [await c.wait_s(key) for c in counts]


async def test_the_rule_is_the_same_in_memory_and_in_redis(redis: Redis, prefix: str) -> None:
    clock = ManualClock(0)
    both = [in_memory(clock)("account", RULE), RedisCounts(redis, prefix, clock)("account", RULE)]

    async def fail(times: int = 1) -> None:
        for _ in range(times):
            for counts in both:
                await counts.failed("k")

    for _ in range(2):  # free
        assert await waits(both, "k") == [0, 0]
        await fail()
    assert await waits(both, "k") == [0, 0]
    await fail()  # the first failure past the free ones: 1 s
    assert await waits(both, "k") == [1, 1]
    clock.advance(400)
    assert await waits(both, "k") == [0.6, 0.6]
    clock.advance(600)
    assert await waits(both, "k") == [0, 0]
    await fail()
    assert await waits(both, "k") == [2, 2]
    await fail(10)
    assert await waits(both, "k") == [8, 8]  # capped
    clock.advance(60_000)  # quiet for forget_s: forgotten (in Redis, on the injected clock)
    assert await waits(both, "k") == [0, 0]
    await fail(3)  # counted from nothing again
    assert await waits(both, "k") == [1, 1]
    for counts in both:
        await counts.succeeded("k")
    assert await waits(both, "k") == [0, 0]
    await fail(3)
    assert await waits(both, "k") == [1, 1]


async def test_instances_of_one_prefix_count_together_and_no_other(redis_url: str, prefix: str) -> None:
    clock = ManualClock(0)
    clients = [Redis.from_url(redis_url) for _ in range(3)]
    try:
        a, b = (RedisCounts(client, prefix, clock)("account", RULE) for client in clients[:2])
        elsewhere = RedisCounts(clients[2], prefix + "x", clock)("account", RULE)
        by_address = RedisCounts(clients[0], prefix, clock)("address", RULE)
        await a.failed("ada")
        await b.failed("ada")
        assert await a.wait_s("ada") == await b.wait_s("ada") == 0
        await a.failed("ada")  # the third failure, on either: both slow the next try
        assert await a.wait_s("ada") == await b.wait_s("ada") == 1
        assert await elsewhere.wait_s("ada") == 0  # another fleet's prefix
        assert await by_address.wait_s("ada") == 0  # another kind of key
        await b.succeeded("ada")
        assert await a.wait_s("ada") == 0
    finally:
        for client in clients:
            await client.aclose()


async def test_failures_are_added_atomically(redis_url: str, prefix: str) -> None:
    clock = ManualClock(0)
    clients = [Redis.from_url(redis_url) for _ in range(4)]
    try:
        counts = [RedisCounts(client, prefix, clock)("account", RULE) for client in clients]
        await asyncio.gather(*(counts[i % 4].failed("ada") for i in range(200)))
        name = counts[0].name("ada")
        stored = await clients[0].hget(name, "n")
        assert stored is not None and int(stored) == 200
        assert await counts[1].wait_s("ada") == 8
    finally:
        for client in clients:
            await client.aclose()


async def test_keys_are_hashed_under_the_prefix_and_expire(redis: Redis, prefix: str) -> None:
    clock = ManualClock(1_000_000)
    counts = RedisCounts(redis, prefix, clock)
    odd = ["ada", "Ada:*", "x" * 1000, "a\r\nDEL *", "{tag}", "\udcff", "ünïcödé"]
    for key in odd:
        await counts("account", RULE).failed(key)
        await counts("address", RULE).failed(key)
    names = sorted([key.decode() async for key in redis.scan_iter(match=f"{prefix}:*")])
    assert len(names) == 2 * len(odd)  # none collided
    shape = re.compile(rf"{prefix}:fail:(account|address):[0-9a-f]{{64}}")
    assert all(shape.fullmatch(name) for name in names), names
    for name in names:
        assert 0 < await redis.pttl(name) <= RULE.forget_ms  # forgotten by Redis after forget_s
        assert await redis.hgetall(name) == {b"n": b"1", b"t": b"1000000"}


async def test_an_unreachable_redis_falls_back_to_this_instances_counts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock(0)
    client = Redis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=1)
    try:
        counts = RedisCounts(client, "nowhere", clock)
        account = counts("account", RULE)
        with caplog.at_level(logging.WARNING, logger=redis_backoff.__name__):
            for _ in range(3):
                assert await account.wait_s("ada") == 0
                await account.failed("ada")
            assert await account.wait_s("ada") == 1  # counted here, by the same rule
            await account.succeeded("ada")
            assert await account.wait_s("ada") == 0
        warnings = [r for r in caplog.records if r.name == redis_backoff.__name__]
        assert len(warnings) == 1, [r.getMessage() for r in warnings]  # once, not per request
        assert warnings[0].levelno == logging.WARNING and warnings[0].exc_info is None
        assert "this instance alone" in warnings[0].getMessage()
    finally:
        await client.aclose()


async def test_counts_are_shared_again_once_redis_is_back_and_a_restart_forgets_them(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redis_backoff, "RETRY_S", 0.0)  # ask Redis again at once, not 5 s later
    clock = ManualClock(0)
    with private_redis() as server:
        clients = [Redis.from_url(server.url, socket_connect_timeout=1) for _ in range(2)]
        try:
            a, b = (RedisCounts(client, "p", clock)("account", RULE) for client in clients)
            for _ in range(3):
                await a.failed("ada")
            assert await b.wait_s("ada") == 1
            server.stop()
            with caplog.at_level(logging.WARNING, logger=redis_backoff.__name__):
                assert await a.wait_s("ada") == 0  # not counted here while Redis was there
                await a.failed("ada")
                server.start()  # an empty Redis: the counts were not durable
                assert await b.wait_s("ada") == 0
                for _ in range(3):
                    await b.failed("ada")
                assert await a.wait_s("ada") == 1  # shared again
            said = [r.getMessage() for r in caplog.records if r.name == redis_backoff.__name__]
            assert len(said) == 2 and "again" in said[1], said
        finally:
            for client in clients:
                await client.aclose()
