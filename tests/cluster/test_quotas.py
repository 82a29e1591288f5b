"""The quotas are the fleet's, not each instance's (server/cluster/quotas.py).

Three real instances on one PostgreSQL database and Redis, each with the
default limits; a client spreads its connections and requests over all three,
as a balancer would. Before, each instance counted only what it saw, so the
fleet allowed three times each limit. Then :class:`RedisQuotas` alone, against
the real Redis with a clock the test moves: a killed instance's connections
expire, a live one's are renewed, and with Redis away each instance counts
alone.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import websockets
from redis.asyncio import Redis
from websockets.exceptions import ConnectionClosed

from server.cluster.quotas import HOLD_S, RedisQuotas
from server.config import Limits
from server.core.quotas import Rate, Slots
from server.errors import ProtocolError
from tests.cluster.fleet import SHARED_REDIS, Fleet, Instance, migrate, redis_answers
from tests.conftest import create_pg_database, drop_pg_database, pg_database_url
from tests.support import RECEIVED, ManualClock, free_port

LIMITS = Limits()  # the defaults: 64 a address, 8 a player, 30 new games a minute, 60 players an hour
FLEET_LIMITS = {
    "SOLITAIRE_CONNECTIONS_PER_ADDRESS": str(LIMITS.connections_per_address),
    "SOLITAIRE_CONNECTIONS_PER_PLAYER": str(LIMITS.connections_per_player),
    "SOLITAIRE_GAMES_PER_MINUTE": str(LIMITS.games_per_minute),
    "SOLITAIRE_PLAYERS_PER_HOUR": str(LIMITS.players_per_hour),
}


@pytest.fixture(scope="module")
def three() -> Iterator[list[Instance]]:
    """Three instances for the module (each test counts from addresses and players of its own)."""
    if not redis_answers():
        if os.environ.get("SOLITAIRE_REQUIRE_REDIS") == "1":
            pytest.fail(f"Redis is required but does not answer at {SHARED_REDIS}")
        pytest.skip(f"Redis does not answer at {SHARED_REDIS}")
    name = create_pg_database()
    fleet = Fleet(pg_database_url(name), SHARED_REDIS)
    try:
        migrate(fleet.database_url)
        yield [fleet.start(env=FLEET_LIMITS) for _ in range(3)]
    finally:
        fleet.close()
        drop_pg_database(name)


async def connect(instance: Instance, source: str) -> Any:
    """A WebSocket to ``instance`` from the loopback address ``source``, its hello read."""
    ws = await websockets.connect(
        f"ws://127.0.0.1:{instance.port}/ws", local_addr=(source, 0), compression=None, open_timeout=10
    )
    assert (await recv(ws))["type"] == "hello"
    return ws


async def recv(ws: Any) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 10))
    RECEIVED.append(dict(message))
    return message


async def request(ws: Any, rid: int, **fields: Any) -> dict[str, Any]:
    await ws.send(json.dumps({"id": rid, **fields}))
    while (message := await recv(ws)).get("id") != rid:
        pass
    return message


async def refused_then_closed(ws: Any) -> dict[str, Any]:
    """The error a refused connection gets (it is closed after it)."""
    error = await recv(ws)
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(ws.recv(), 10)
    return error


def post_player(instance: Instance, source: str) -> int:
    """POST /api/players from ``source``; the status."""
    conn = http.client.HTTPConnection("127.0.0.1", instance.port, timeout=10, source_address=(source, 0))
    try:
        conn.request("POST", "/api/players", body=b"{}", headers={"content-type": "application/json"})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


@pytest.fixture
async def closing() -> AsyncIterator[list[Any]]:
    sockets: list[Any] = []
    yield sockets
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)


async def test_one_address_holds_64_websockets_across_the_fleet(
    three: list[Instance], closing: list[Any]
) -> None:
    cap = LIMITS.connections_per_address
    for i in range(cap):
        closing.append(await connect(three[i % 3], "127.0.0.31"))
    for instance in three:  # every instance refuses the 65th, whichever it is
        extra = await connect(instance, "127.0.0.31")
        closing.append(extra)
        error = await refused_then_closed(extra)
        assert error["code"] == "rate_limited", error
    other = await connect(three[0], "127.0.0.32")  # another address has slots of its own
    closing.append(other)
    assert (await request(other, 1, type="auth"))["type"] == "welcome"
    await closing.pop(0).close()  # one closed: its slot is the fleet's again
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        again = await connect(three[2], "127.0.0.31")
        closing.append(again)
        if (await request(again, 1, type="auth"))["type"] == "welcome":
            break
        assert asyncio.get_running_loop().time() < deadline, "the closed connection's slot never came back"
        await asyncio.sleep(0.05)


async def test_one_player_holds_8_websockets_across_the_fleet(
    three: list[Instance], closing: list[Any]
) -> None:
    token = await asyncio.to_thread(new_player_token, three[0])
    for i in range(LIMITS.connections_per_player):
        ws = await connect(three[i % 3], "127.0.0.33")
        closing.append(ws)
        assert (await request(ws, 1, type="auth", token=token))["type"] == "welcome"
    for instance in three:
        ws = await connect(instance, "127.0.0.34")
        closing.append(ws)
        await ws.send(json.dumps({"type": "auth", "id": 1, "token": token}))
        error = await refused_then_closed(ws)
        assert error["code"] == "rate_limited", error


async def test_new_game_bursts_are_limited_across_the_fleet(
    three: list[Instance], closing: list[Any]
) -> None:
    token = await asyncio.to_thread(new_player_token, three[0])
    sockets = []
    for instance in three:
        ws = await connect(instance, "127.0.0.35")
        closing.append(ws)
        assert (await request(ws, 1, type="auth", token=token))["type"] == "welcome"
        sockets.append(ws)
    burst = LIMITS.games_per_minute
    started = time.monotonic()
    answers = [
        (await request(sockets[i % 3], 2 + i, type="new_game", code="HH1-N-AAAAAAM"))["type"]
        for i in range(burst + 15)
    ]
    refilled = (time.monotonic() - started) * burst / 60  # one token every 2 s meanwhile
    assert answers[:burst] == ["game"] * burst
    assert answers.count("game") <= burst + refilled + 1, answers  # each instance alone: all 45
    assert answers.count("error") >= 15 - refilled - 1


async def test_players_created_per_address_are_limited_across_the_fleet(three: list[Instance]) -> None:
    statuses = [await asyncio.to_thread(post_player, three[i % 3], "127.0.0.36") for i in range(75)]
    assert statuses.count(201) == LIMITS.players_per_hour, statuses
    assert statuses[LIMITS.players_per_hour :] == [429] * (75 - LIMITS.players_per_hour)
    assert await asyncio.to_thread(post_player, three[1], "127.0.0.37") == 201  # another address


def new_player_token(instance: Instance) -> str:
    request = urllib.request.Request(
        f"{instance.url}/api/players", data=b"{}", headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(json.load(response)["token"])


# -- RedisQuotas alone, on the real Redis, on a clock the test moves ---------------------------


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


async def test_a_killed_instances_connections_expire_and_a_live_ones_are_renewed(redis: Redis) -> None:
    clock = ManualClock(1_000_000)
    prefix = f"tq{free_port()}"
    killed, live = RedisQuotas(redis, prefix, clock), RedisQuotas(redis, prefix, clock)
    try:
        assert await killed.acquire("address", "10.0.0.1", 2, "a:1")
        assert await live.acquire("address", "10.0.0.1", 2, "b:1")
        assert await live.acquire("address", "10.0.0.1", 2, "b:2") is False  # the fleet's cap
        clock.advance(int(HOLD_S * 1000) // 2)
        await live.renew()  # the live instance renews its member; the killed one cannot
        clock.advance(int(HOLD_S * 1000) // 2 + 1)
        assert await live.acquire("address", "10.0.0.1", 2, "b:2")  # a:1 expired, b:1 still held
        assert await live.acquire("address", "10.0.0.1", 2, "b:3") is False
        live.release("address", "10.0.0.1", "b:1")
        await live.close()  # waits for the release
        assert await live.acquire("address", "10.0.0.1", 2, "b:4")
    finally:
        await live.close()
        await killed.close()


async def test_a_token_bucket_is_shared_and_refills_on_the_clock(redis: Redis) -> None:
    clock = ManualClock(1_000_000)
    prefix = f"tq{free_port()}"
    one, two = RedisQuotas(redis, prefix, clock), RedisQuotas(redis, prefix, clock)
    waits = [await (one if i % 2 else two).take("games", "p_1", 0.5, 3) for i in range(4)]
    assert waits == [0.0, 0.0, 0.0, 2.0]  # three at once, then one every 2 s
    clock.advance(2000)
    assert await one.take("games", "p_1", 0.5, 3) == 0.0
    assert await two.take("games", "p_2", 0.5, 3) == 0.0  # another key has a bucket of its own


async def test_with_redis_away_each_instance_counts_alone(caplog: pytest.LogCaptureFixture) -> None:
    clock = ManualClock(0)
    away = Redis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=0.5)
    shared = RedisQuotas(away, "tq", clock)
    try:
        slots = Slots(2, shared, "player")
        assert await slots.acquire("p") and await slots.acquire("p") and not await slots.acquire("p")
        slots.release("p")
        assert await slots.acquire("p")
        rate = Rate("new games", 0.5, 2, clock, shared, "games")
        await rate.require("p")
        await rate.require("p")
        with pytest.raises(ProtocolError):
            await rate.require("p")
        assert sum("counted by each instance alone" in r.message for r in caplog.records) == 1  # once
    finally:
        await shared.close()
        await away.aclose()
