"""The WebSocket implementations the server can run on, over real sockets.

The default ("buffered", server/edge/ws_transport.py) stops reading a socket only
when 16 messages wait for the app; a pipelining client must still get every
answer, in order, after reading stopped and resumed. uvicorn's own
implementations stay selectable with ``--ws`` and must keep working.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from server.config import Limits, Settings
from server.edge.ws_transport import FEED_BYTES, READ_HIGH_WATER
from tests.support import Client, new_player, running_server

IMPLS = ["buffered", "websockets", "websockets-sansio"]


@pytest.fixture(scope="module", params=IMPLS)
def impl_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path: Path = tmp_path_factory.mktemp("ws") / "solitaire.db"
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{path}",
        secret="test-secret",
        ws_impl=request.param,
        limits=Limits(rate_per_s=1000, burst=1000),
    )
    with running_server(settings) as base:
        yield base


async def _closed_code(client: Client) -> int | None:
    try:
        while True:
            await asyncio.wait_for(client.ws.recv(), 10)
    except ConnectionClosed as exc:
        return exc.rcvd.code if exc.rcvd else None


async def test_play_on_each_implementation(impl_server: str) -> None:
    player = await new_player(impl_server)
    client = await Client.connect(impl_server, player["token"])
    game = await client.request("new_game", code="HH1-N-AAAAAC5")
    reply = await client.act(game["game"]["id"], 0, type="draw")
    assert reply["type"] == "result" and reply["state"]["moves"] == 1
    await client.close()


async def test_pipelined_requests_all_answered_in_order(impl_server: str) -> None:
    player = await new_player(impl_server)
    client = await Client.connect(impl_server, player["token"])
    count = READ_HIGH_WATER * 12
    for rid in range(count):  # all written before any answer is read
        await client.ws.send(json.dumps({"type": "ping", "id": rid}))
    answers = [await client.recv() for _ in range(count)]
    assert [a["id"] for a in answers] == list(range(count))
    assert {a["type"] for a in answers} == {"pong"}
    assert (await client.request("ping"))["type"] == "pong"  # reading resumed
    await client.close()


def masked_text_frame(payload: bytes) -> bytes:
    """A client text frame masked with the zero key (the payload stays as it is)."""
    assert len(payload) < 126
    return bytes([0x81, 0x80 | len(payload)]) + b"\x00\x00\x00\x00" + payload


async def test_one_write_of_many_frames_is_answered_whole_and_in_order(impl_server: str) -> None:
    """Far more than FEED_BYTES in one write: parsed a slice at a time as the app takes them."""
    player = await new_player(impl_server)
    client = await Client.connect(impl_server, player["token"])
    count = 900
    assert count * 24 > 4 * FEED_BYTES
    frames = b"".join(masked_text_frame(b'{"type":"ping","id":%d}' % rid) for rid in range(count))
    client.ws.transport.write(frames)
    answers = [await client.recv() for _ in range(count)]
    assert [a["id"] for a in answers] == list(range(count))
    assert (await client.request("ping"))["type"] == "pong"
    await client.close()


async def test_oversized_frame_closes_1009(impl_server: str) -> None:
    client = await Client.connect(impl_server)
    await client.ws.send(json.dumps({"type": "ping", "pad": "x" * 40_000}))
    assert await _closed_code(client) == 1009
    other = await Client.connect(impl_server)
    assert (await other.request("ping"))["type"] == "pong"
    await other.close()


async def test_invalid_utf8_closes_1007(impl_server: str) -> None:
    client = await Client.connect(impl_server)
    await client.ws.send(b"\xff\xfe not text")  # a binary frame is fine (refused as bad JSON) ...
    assert (await client.recv())["code"] == "bad_json"
    client.ws.protocol.send_text(b"\xff\xfe")  # ... a text frame that is not UTF-8 is not
    await client.ws.send(b"")  # flush the raw frame out
    assert await _closed_code(client) == 1007
