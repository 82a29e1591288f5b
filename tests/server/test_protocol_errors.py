"""Bad input over a real WebSocket: documented errors, nothing stored changes, others still served."""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from tests.conftest import ClockedServer
from tests.support import Client, ahttp, new_player


async def _game(server: str) -> tuple[Client, str, dict[str, object]]:
    player = await new_player(server)
    client = await Client.connect(server, player["token"])
    reply = await client.request("new_game", code="HH1-N-AAAAAAM")
    return client, reply["game"]["id"], player


async def _stored_state(server: str, game_id: str) -> dict[str, object]:
    status, body = await ahttp("GET", f"{server}/api/games/{game_id}")
    assert status == 200
    return dict(body["state"])


async def _closed_code(ws: websockets.ClientConnection) -> int | None:
    with pytest.raises(ConnectionClosed):
        for _ in range(20):
            await asyncio.wait_for(ws.recv(), 10)
    return ws.close_code


async def test_malformed_messages_get_documented_errors(server: str) -> None:
    client, game_id, _ = await _game(server)
    before = await _stored_state(server, game_id)
    await client.send("{not json")
    assert (await client.recv())["code"] == "bad_json"
    await client.send("[1, 2]")
    assert (await client.recv())["code"] == "bad_json"
    assert (await client.request("fly"))["code"] == "unknown_type"
    missing = await client.request("act", game_id=game_id, action={"type": "draw"})
    assert missing["code"] == "bad_message" and missing["field"] == "seq"
    wrong = await client.request("act", game_id=game_id, seq="0", action={"type": "draw"})
    assert wrong["code"] == "bad_message" and wrong["field"] == "seq"
    bad_action = await client.act(game_id, 0, type="teleport")
    assert bad_action["code"] == "bad_message" and bad_action["field"] == "action"
    assert (await client.request("new_game", code="XX1-N-AAAAAAA"))["part"] == "game"
    assert (await client.request("new_game", code="SH1-C3-AAAAAAA"))["part"] == "variant"
    assert (await client.request("new_game", code="SH1-C4-AAAAAA1"))["part"] == "seed"
    assert await _stored_state(server, game_id) == before
    assert (await client.request("ping"))["type"] == "pong"


async def test_illegal_move_changes_nothing(server: str) -> None:
    """SH-4 over the wire: a refused move answers with the rule's code and reason."""
    player = await new_player(server)
    client = await Client.connect(server, player["token"])
    game = await client.request("new_game", code="SH1-C4-AAAAAAA")
    game_id = game["game"]["id"]
    # Column 1's top is 9C, column 2's top is 7H: 9C cannot go onto 7H.
    refused = await client.act(game_id, 0, type="move", **{"from": "col:1", "to": "col:2"})
    assert refused["type"] == "error" and refused["code"] == "illegal_action"
    assert refused["rule"] and refused["message"]
    assert await _stored_state(server, game_id) == game["state"]


async def test_unknown_and_foreign_games(server: str) -> None:
    _, game_id, _ = await _game(server)
    intruder = await Client.connect(server, (await new_player(server))["token"])
    assert (await intruder.request("open_game", game_id="g_missing"))["code"] == "not_found"
    forbidden = await intruder.act(game_id, 0, type="draw")
    assert forbidden["code"] == "forbidden"
    assert (await intruder.request("resign", game_id=game_id))["code"] == "forbidden"
    anonymous = await Client.connect(server)
    assert (await anonymous.request("new_game", game="HH"))["code"] == "forbidden"
    assert (await _stored_state(server, game_id))["seq"] == 0


async def test_authentication_failures_close_the_socket(server: str) -> None:
    ws_url = server.replace("http", "ws", 1) + "/ws"
    cases = [
        ({"type": "ping"}, "not_authenticated", 4401),
        ({"type": "auth", "token": "st_nope"}, "bad_token", 4401),
        ({"type": "auth", "protocol": 99}, "unsupported_version", 4400),
    ]
    for first, code, close in cases:
        async with websockets.connect(ws_url) as ws:
            assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "hello"
            await ws.send(json.dumps(first))
            assert json.loads(await asyncio.wait_for(ws.recv(), 10))["code"] == code
            assert await _closed_code(ws) == close


async def test_oversized_frame_closes_1009_and_server_lives(server: str) -> None:
    client, _, _ = await _game(server)
    await client.send(json.dumps({"type": "ping", "pad": "x" * 40_000}))
    assert await _closed_code(client.ws) == 1009
    other, _, _ = await _game(server)
    assert (await other.request("ping"))["type"] == "pong"


async def test_foreign_origin_is_refused(server: str) -> None:
    ws_url = server.replace("http", "ws", 1) + "/ws"
    async with websockets.connect(ws_url, origin="http://evil.example") as ws:  # type: ignore[arg-type]
        assert await _closed_code(ws) == 4403
    async with websockets.connect(ws_url, origin=server) as ws:  # type: ignore[arg-type]
        assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "hello"


async def _tally(client: Client, kinds: dict[str, int], quiet_s: float) -> bool:
    """Count what arrives until ``quiet_s`` passes without a frame; True once "last" came."""
    while True:
        try:
            message = await client.recv(timeout=quiet_s)
        except TimeoutError:
            return False
        key = message.get("code", message["type"])
        kinds[key] = kinds.get(key, 0) + 1
        if message.get("id") == "last":
            return True


async def test_flood_is_refused_then_not_read_and_others_are_served(clocked_server: ClockedServer) -> None:
    """Past its budget a frame is dropped with rate_limited, and the connection is not read
    again until the budget refills on the server's clock: the rest of the flood waits in the
    sender's socket, the server and the other clients go on."""
    server = clocked_server.url
    client, game_id, _ = await _game(server)
    bystander, other_id, _ = await _game(server)
    for _ in range(300):
        await client.send('{"type":"ping"}')
    await client.send('{"type":"ping","id":"last"}')
    assert (await bystander.act(other_id, 0, type="draw"))["type"] == "result"
    kinds: dict[str, int] = {}
    assert not await _tally(client, kinds, quiet_s=1.0)  # the clock stands still: not read on
    assert kinds["rate_limited"] == 1 and kinds["pong"] < 100  # the burst, then one refusal
    answered = False
    for _ in range(10):
        clocked_server.clock.advance(2000)  # the budget refills: the connection is read again
        if answered := await _tally(client, kinds, quiet_s=1.0):
            break
    assert answered and kinds["pong"] < 300  # dropped frames were not processed
    clocked_server.clock.advance(2000)
    assert (await client.request("ping"))["type"] == "pong"
    assert (await client.act(game_id, 0, type="draw"))["type"] == "result"


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/api/nothing-here", 404, "not_found"),
        ("POST", "/api/games/g_1/nothing", 404, "not_found"),
        ("DELETE", "/api/players", 404, "not_found"),
        ("GET", "/api/players", 404, "not_found"),
        ("PUT", "/api/players/me", 404, "not_found"),
    ],
)
async def test_unknown_api_routes_answer_the_json_envelope(
    server: str, method: str, path: str, status: int, code: str
) -> None:
    got, body = await ahttp(method, server + path)
    assert got == status and body["error"]["code"] == code, body
