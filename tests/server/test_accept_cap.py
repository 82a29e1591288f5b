"""One address cannot take every descriptor: the cap per address at accept (server/edge/http_transport.py).

A real server process runs with 1,024 open files (soft and hard, so it cannot
raise them). One address (127.0.0.1) opens 1,074 connections, each sending
half of a WebSocket upgrade and nothing more; before the cap per address that
filled the connection cap and every newcomer got ``503``. Now that address
holds at most a quarter of the descriptors (256): the rest are answered
``503`` at once, and a client from another address (127.0.0.2) gets
``/health`` and plays a move over a WebSocket meanwhile.

The server trusts forwarded headers from another address only (a test-net
address): a trusted proxy is not capped per address at accept, since it
carries many clients (docs/operations.md, Connection cap).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets

from server.cli import READY_LINE
from server.config import Settings
from tests.processes import read_line, started
from tests.support import RECEIVED, free_port, running_server

ROOT = Path(__file__).resolve().parents[2]
FILES = 1024
HELD = 1074
PARTIAL = b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"  # and never the end
OTHER = "127.0.0.2"


@pytest.fixture(scope="module", autouse=True)
def enough_descriptors() -> Iterator[None]:
    """This process holds the attacker's ends: raise its own soft limit for the test."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = HELD + 1024
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"the hard open-files limit ({hard}) is below the {needed} this test needs")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def few_files() -> None:
    """In the server's process before exec: ``ulimit -n 1024``, soft and hard."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILES, FILES))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "SOLITAIRE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cap.db'}",
        "SOLITAIRE_PORT": str(port),
        "SOLITAIRE_SECRET": "s",
        "SOLITAIRE_DRAIN_S": "0",
        "FORWARDED_ALLOW_IPS": "192.0.2.1",  # a proxy elsewhere: loopback clients are clients
    }
    env.pop("SOLITAIRE_REDIS_URL", None)
    env.pop("SOLITAIRE_MAX_CONNECTIONS_PER_ADDRESS", None)
    argv = [sys.executable, "-m", "server.cli", "--log-level", "warning"]
    with started(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, preexec_fn=few_files) as proc:
        read_line(proc, 60, READY_LINE.encode())
        yield f"127.0.0.1:{port}"


def half_open(port: int, count: int) -> list[socket.socket]:
    """``count`` connections from 127.0.0.1, each with an unfinished request sent (a refused one
    may already be closed by the server when the send happens)."""
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        with contextlib.suppress(OSError):
            sock.sendall(PARTIAL)
        sock.setblocking(False)
        sockets.append(sock)
    return sockets


def refused_and_held(sockets: list[socket.socket], settle_s: float) -> tuple[int, int]:
    """How many got ``503`` and were closed, and how many are still held, after ``settle_s``
    without a change."""
    refused = 0
    with selectors.DefaultSelector() as selector:
        for sock in sockets:
            selector.register(sock, selectors.EVENT_READ, data=sock)
        while events := selector.select(settle_s):
            for key, _ in events:
                try:
                    answer = key.data.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    answer = b""
                if answer.startswith(b"HTTP/1.1 503 ") or not answer:
                    refused += 1
                    selector.unregister(key.data)
        return refused, len(selector.get_map())


def health_from(port: int, source: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        conn.request("GET", "/health")
        return conn.getresponse().status
    finally:
        conn.close()


def new_player_from(port: int, source: str) -> dict[str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        conn.request("POST", "/api/players", body=b"{}", headers={"content-type": "application/json"})
        response = conn.getresponse()
        body: dict[str, Any] = json.loads(response.read())
        assert response.status == 201, body
        return body
    finally:
        conn.close()


async def play_a_move_from(port: int, source: str, token: str) -> dict[str, Any]:
    ws = await websockets.connect(
        f"ws://127.0.0.1:{port}/ws", local_addr=(source, 0), compression=None, open_timeout=10
    )
    try:

        async def recv() -> dict[str, Any]:
            message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 10))
            RECEIVED.append(dict(message))
            return message

        async def request(rid: int, **fields: Any) -> dict[str, Any]:
            await ws.send(json.dumps({"id": rid, **fields}))
            while (message := await recv()).get("id") != rid:
                pass
            return message

        assert (await recv())["type"] == "hello"
        assert (await request(1, type="auth", token=token))["type"] == "welcome"
        game = await request(2, type="new_game", code="HH1-N-AAAAAAM")
        return await request(3, type="act", game_id=game["game"]["id"], seq=0, action={"type": "draw"})
    finally:
        await ws.close()


async def test_one_address_holds_its_share_while_another_plays(server: str) -> None:
    port = int(server.rsplit(":", 1)[1])
    opened = time.monotonic()
    sockets = await asyncio.to_thread(half_open, port, HELD)
    try:
        refused, held = await asyncio.to_thread(refused_and_held, sockets, 1.0)
        assert held == FILES // 4, (refused, held)  # a quarter of the descriptors, the rest refused
        assert refused == HELD - FILES // 4
        assert await asyncio.to_thread(health_from, port, OTHER) == 200
        player = await asyncio.to_thread(new_player_from, port, OTHER)
        result = await play_a_move_from(port, OTHER, player["token"])
        assert result["type"] == "result", result
        assert time.monotonic() - opened < 10, "the held requests would have timed out by now"
        # and the address itself may use what it holds no more than its share of:
        assert await asyncio.to_thread(health_from, port, "127.0.0.3") == 200
    finally:
        for sock in sockets:
            sock.close()


async def test_a_websocket_keeps_its_slot_until_it_closes(tmp_path: Path) -> None:
    """The slot taken at accept passes to the WebSocket on upgrade and is freed when it closes."""
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'slots.db'}", secret="s", max_connections_per_address=3
    )
    with running_server(settings) as base:
        port = int(base.rsplit(":", 1)[1])
        source = "127.0.0.41"  # not a trusted proxy (only 127.0.0.1 and ::1 are, by default)

        async def open_ws() -> Any:
            return await websockets.connect(
                f"ws://127.0.0.1:{port}/ws", local_addr=(source, 0), compression=None, open_timeout=10
            )

        held = [await open_ws() for _ in range(3)]
        try:
            with pytest.raises(websockets.InvalidStatus) as refused:
                await open_ws()
            assert refused.value.response.status_code == 503
            await held.pop().close()
            deadline = time.monotonic() + 10
            while True:  # the slot comes back once the server has seen the close
                try:
                    held.append(await open_ws())
                    break
                except websockets.InvalidStatus:
                    assert time.monotonic() < deadline, "the closed WebSocket's slot never came back"
                    await asyncio.sleep(0.05)
            assert await asyncio.to_thread(health_from, port, "127.0.0.42") == 200
        finally:
            for ws in held:
                await ws.close()
