"""Half-sent requests cannot lock anyone out (server/edge/http_transport.py).

Two thousand raw sockets each send the start of a WebSocket upgrade and then
nothing (slowloris) while a real client plays and ``/health`` answers; after
the request timeout the server closes every one of them. A server at its
connection cap answers ``503`` at once instead of holding the socket, and
floods of "too many open files" reach the log once per interval.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import selectors
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.config import Settings
from server.edge.http_transport import ExhaustionFilter, OncePer, connection_cap
from tests.support import Client, ahttp, new_player, running_server

HALF_OPEN = 2000
TIMEOUT_S = 3.0  # the server's request timeout in these tests (10 s by default)
PARTIAL = b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"  # and never the end


@pytest.fixture(scope="module", autouse=True)
def enough_descriptors() -> Iterator[None]:
    """This process holds both ends of every socket: raise its own soft limit for the test."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 3 * HALF_OPEN + 1024
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"the hard open-files limit ({hard}) is below the {needed} this test needs")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def half_open(port: int, count: int) -> list[socket.socket]:
    """``count`` connections, each with an unfinished request sent."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(PARTIAL)
            sock.setblocking(False)
            sockets.append(sock)
    except BaseException:
        close_all(sockets)
        raise
    return sockets


def close_all(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


def still_open(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def wait_closed_by_server(sockets: list[socket.socket], within_s: float) -> list[float]:
    """When (monotonic) the server closed each socket; fails past ``within_s``."""
    closed_at: dict[socket.socket, float] = {}
    deadline = time.monotonic() + within_s
    with selectors.DefaultSelector() as selector:
        for sock in sockets:
            selector.register(sock, selectors.EVENT_READ, data=sock)
        while len(closed_at) < len(sockets):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{len(sockets) - len(closed_at)} sockets still open"
            for key, _ in selector.select(min(remaining, 1.0)):
                sock = key.data
                if not still_open(sock):
                    closed_at[sock] = time.monotonic()
                    selector.unregister(sock)
    return list(closed_at.values())


async def test_half_open_handshakes_are_closed_after_the_timeout_while_others_play(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'slow.db'}", secret="s", request_timeout_s=TIMEOUT_S
    )
    with running_server(settings) as base:
        port = int(base.rsplit(":", 1)[1])
        player = await new_player(base, "Real")
        client = await Client.connect(base, player["token"])
        game_id = (await client.request("new_game", code="HH1-N-AAAAAAM"))["game"]["id"]
        opened = time.monotonic()
        sockets = await asyncio.to_thread(half_open, port, HALF_OPEN)
        try:
            assert (await ahttp("GET", f"{base}/health"))[0] == 200
            assert (await client.act(game_id, 0, type="draw"))["type"] == "result"
            newcomer = await new_player(base, "New")  # new players still get in
            await Client.connect(base, newcomer["token"])
            assert time.monotonic() - opened < TIMEOUT_S, "too slow to check while they are held"
            assert sum(map(still_open, sockets)) == HALF_OPEN  # all held until the timeout
            closed_at = await asyncio.to_thread(wait_closed_by_server, sockets, TIMEOUT_S + 10)
            assert min(closed_at) - opened >= TIMEOUT_S - 0.5  # closed for the timeout, not before
            assert (await ahttp("GET", f"{base}/health"))[0] == 200
            assert (await client.act(game_id, 1, type="draw"))["type"] == "result"
        finally:
            close_all(sockets)


async def test_past_the_cap_a_connection_is_answered_503_at_once(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'cap.db'}",
        secret="s",
        request_timeout_s=TIMEOUT_S,
        max_connections=20,
    )
    with running_server(settings) as base:
        port = int(base.rsplit(":", 1)[1])
        sockets = await asyncio.to_thread(half_open, port, 20)
        try:
            refused = await asyncio.to_thread(socket.create_connection, ("127.0.0.1", port), 10)
            refused.settimeout(10)
            with refused:
                answer = refused.recv(4096)
            assert answer.startswith(b"HTTP/1.1 503 ") and b"too many connections" in answer
            await asyncio.to_thread(wait_closed_by_server, sockets, TIMEOUT_S + 10)
            deadline = time.monotonic() + 10
            while (await ahttp("GET", f"{base}/health"))[0] != 200:  # slots free again
                assert time.monotonic() < deadline
                await asyncio.sleep(0.1)
        finally:
            close_all(sockets)


def test_the_cap_keeps_descriptors_in_reserve() -> None:
    assert connection_cap(20_000, 1024) == 1024 - 128
    assert connection_cap(500, 1024) == 500
    assert connection_cap(20_000, 100) == 1  # a tiny limit still serves someone


def test_once_per_interval_counts_what_it_held_back() -> None:
    now = [0.0]
    gate = OncePer(60, lambda: now[0])
    assert gate.ready() == 0
    assert [gate.ready() for _ in range(3)] == [None, None, None]
    now[0] = 60
    assert gate.ready() == 3


def test_running_out_of_descriptors_is_logged_once_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    logger = logging.getLogger("test.exhaustion")
    handler = caplog.handler
    handler.addFilter(exhaustion := ExhaustionFilter(60, lambda: now[0]))
    try:
        failure = OSError(errno.EMFILE, "Too many open files")
        for _ in range(1000):
            logger.error("socket.accept() out of system resource", exc_info=failure)
        logger.error("something else")
        now[0] = 61
        logger.error("socket.accept() out of system resource", exc_info=failure)
    finally:
        handler.removeFilter(exhaustion)
    messages = [record.getMessage() for record in caplog.records]
    assert messages[:2] == ["socket.accept() out of system resource", "something else"]
    assert (
        messages[2]
        == "socket.accept() out of system resource [999 more like this since the last one, not logged]"
    )
    assert len(messages) == 3
