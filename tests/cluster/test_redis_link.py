"""The fan-out's Redis connections against a real Redis: URLs, login, and messages parsed
however the bytes arrive."""

from __future__ import annotations

import asyncio
import secrets
import tempfile
from collections.abc import Iterator
from pathlib import Path

import hiredis
import pytest

from server.cluster.link import Endpoint, LinkError, RedisLink, Reply, open_link
from tests.cluster.fleet import private_redis

DEADLINE_S = 5.0


def test_endpoints_from_urls() -> None:
    assert Endpoint.from_url("redis://127.0.0.1:6380/2") == Endpoint("127.0.0.1", 6380)
    assert Endpoint.from_url("rediss://u:p@cache:7000") == Endpoint(
        "cache", 7000, tls=True, username="u", password="p"
    )
    assert Endpoint.from_url("unix:///run/redis.sock?db=1").path == "/run/redis.sock"
    assert Endpoint.from_url("redis://:secret@h").password == "secret"


async def test_a_message_split_anywhere_is_parsed_whole() -> None:
    replies: list[Reply] = []
    link = RedisLink(replies.append)
    wire = hiredis.pack_command(("message", "t:g_1", "7 of ♣\x1fK of ♦"))  # type: ignore[arg-type]
    for i in range(len(wire)):  # one byte at a time
        link.data_received(wire[i : i + 1])
    assert replies == [[b"message", b"t:g_1", "7 of ♣\x1fK of ♦".encode()]]


@pytest.fixture(params=["tcp", "unix"])
def any_redis_url(request: pytest.FixtureRequest, redis_url: str) -> Iterator[str]:
    """The shared Redis over TCP, or a Redis of the test's own through its Unix socket."""
    if request.param == "tcp":
        yield redis_url
        return
    with (
        tempfile.TemporaryDirectory(dir="/tmp") as directory,  # short: a socket's path has ~100 bytes
        private_redis(Path(directory) / "redis.sock") as server,
    ):
        yield server.socket_url


async def test_publish_reaches_a_subscriber_and_counts_it(any_redis_url: str) -> None:
    endpoint = Endpoint.from_url(any_redis_url)
    channel = f"test-link:{secrets.token_hex(4)}"
    received: asyncio.Queue[Reply] = asyncio.Queue()
    counts: asyncio.Queue[Reply] = asyncio.Queue()
    sub = await open_link(endpoint, received.put_nowait)
    pub = await open_link(endpoint, counts.put_nowait)
    try:
        sub.command("SUBSCRIBE", channel)
        confirmed = await asyncio.wait_for(received.get(), DEADLINE_S)
        assert confirmed[:2] == [b"subscribe", channel.encode()]
        body = "é" * 10_000  # larger than one read
        pub.command("PUBLISH", channel, body)
        pub.command("PUBLISH", channel + ":nobody", "x")
        assert await asyncio.wait_for(counts.get(), DEADLINE_S) == 1
        assert await asyncio.wait_for(counts.get(), DEADLINE_S) == 0
        message = await asyncio.wait_for(received.get(), DEADLINE_S)
        assert message == [b"message", channel.encode(), body.encode()]
    finally:
        sub.close()
        pub.close()
    await asyncio.wait_for(sub.lost, DEADLINE_S)
    assert not sub.open


async def test_a_refused_login_is_a_link_error(redis_url: str) -> None:
    wrong = Endpoint.from_url(redis_url.replace("redis://", "redis://nobody:wrong@"))
    with pytest.raises(LinkError):
        await open_link(wrong, lambda reply: None)
