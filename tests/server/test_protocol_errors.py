"""Bad input over a real WebSocket: documented errors, nothing stored changes, others still served."""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from tests.conftest import ClockedServer
from tests.support import RECEIVED, Client, ErrorRecords, ahttp, ahttp_raw, new_player


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
    assert refused["rule"] == "wrong_suit_or_rank" and refused["message"]
    # The cards involved, so that any client words the refusal in its own language.
    assert refused["params"] == {"card": "9C", "target": "7H"}
    assert await _stored_state(server, game_id) == game["state"]
    undo = await client.act(game_id, 0, type="undo")
    assert undo["rule"] == "nothing_to_undo" and undo["params"] == {}


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


def _deep(depth: int, kind: str = "[") -> str:
    return "[" * depth + "]" * depth if kind == "[" else '{"a":' * depth + "1" + "}" * depth


async def _first_frame(server: str, frame: str) -> tuple[dict[str, object], int | None]:
    """Open a socket, send ``frame`` first (before auth): the answer and the close code."""
    async with websockets.connect(server.replace("http", "ws", 1) + "/ws", max_size=2**22) as ws:
        assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "hello"
        await ws.send(frame)
        answer = json.loads(await asyncio.wait_for(ws.recv(), 10))
        RECEIVED.append(dict(answer))
        return answer, await _closed_code(ws)


async def test_deep_json_is_bad_json_before_and_after_auth(server: str, server_errors: ErrorRecords) -> None:
    """JSON nested past the parser's depth is ``bad_json``: never a RecursionError, a 500 or a
    dropped socket; nested just short of it, the field holding it is refused."""
    for frame in (_deep(1000), _deep(5000), _deep(1500, "{"), '{"type":"auth","token":' + _deep(2000) + "}"):
        answer, close = await _first_frame(server, frame)
        assert (answer["code"], close) == ("bad_json", 4401), answer
    client, game_id, _ = await _game(server)
    for frame in (_deep(1000), _deep(5000), _deep(1500, "{")):
        await client.send(frame)
        assert (await client.recv())["code"] == "bad_json"
    for depth in (900, 990, 1200):  # inside a request's action, by the parser's limit
        act = json.dumps({"type": "act", "id": depth, "game_id": game_id, "seq": 0, "action": {"type": "x"}})
        await client.send(act.replace('"x"', _deep(depth)))
        assert (await client.recv())["code"] in ("bad_json", "bad_message")  # no id if unparsed
        await client.send(json.dumps({"type": "ping", "id": -depth}).replace("}", f',"x":{_deep(depth)}}}'))
        assert (await client.recv())["code"] in ("bad_json", "bad_message")
    assert (await client.request("ping"))["type"] == "pong"
    for body in (_deep(1500), '{"name":' + _deep(1500) + "}"):
        status, answer = await ahttp_raw("POST", f"{server}/api/players", body.encode())
        assert (status, answer["error"]["code"]) == (400, "bad_json"), answer
    status, answer = await ahttp_raw(
        "POST", f"{server}/api/players", ('{"name":' + _deep(800) + "}").encode()
    )
    assert (status, answer["error"]["field"]) == (400, "name"), answer
    assert not server_errors.records, server_errors.lines()


async def test_a_body_that_is_not_json_is_bad_json_and_only_no_body_is_empty(
    server: str, server_errors: ErrorRecords
) -> None:
    """Only a request without a body means ``{}``: whitespace alone is no JSON text."""
    for body in (b"\r", b" ", b"\n\t", b"\xff", b"null", b"[]"):
        status, answer = await ahttp_raw("POST", f"{server}/api/players", body)
        assert (status, answer["error"]["code"]) == (400, "bad_json"), (body, answer)
    for body in (b"", b" {} ", b"{}\r\n"):
        status, answer = await ahttp_raw("POST", f"{server}/api/players", body)
        assert status == 201 and answer["name"].startswith("Guest-"), (body, answer)
    assert not server_errors.records, server_errors.lines()


SURROGATE_FRAMES = [  # (frame, the field the refusal names)
    ('{"type":"ping","id":"\\ud800"}', "id"),
    ('{"type":"open_game","id":1,"game_id":"\\ud800"}', "game_id"),
    ('{"type":"watch","id":1,"game_id":"g_\\udfff"}', "game_id"),
    ('{"type":"race_join","id":1,"race_id":"\\ud800"}', "race_id"),
    ('{"type":"race_open","id":1,"code":"HH1-N-\\ud800AAAAAA"}', "code"),
    ('{"type":"new_game","id":1,"code":"\\ud800"}', "code"),
    ('{"type":"new_game","id":1,"daily":"\\ud800"}', "daily"),
    ('{"type":"subscribe_leaderboard","id":1,"code":"\\udbff\\udbff"}', "code"),
    ('{"type":"ping","id":1,"\\ud800":true}', "\\ud800"),
    ('{"type":"act","id":1,"game_id":"g_1","seq":0,"action":{"type":"touch","at":"\\ud800"}}', "action"),
    ('{"type":"act","id":1,"game_id":"g_1","seq":0,"action":{"\\udc00":1}}', "action"),
]


async def test_lone_surrogates_are_refused_naming_the_field(server: str, server_errors: ErrorRecords) -> None:
    """``"\\ud800"`` is valid JSON but no character: in an id it made the reply unsendable (the
    connection went silent), in an id field a traceback, in a name a 500."""
    player = await new_player(server)
    client = await Client.connect(server, player["token"])
    for frame, field in SURROGATE_FRAMES:
        await client.send(frame)
        answer = await client.recv()
        assert (answer["code"], answer["field"]) == ("bad_message", field), (frame, answer)
        assert (await client.request("ping"))["type"] == "pong"  # never silent
    for first in ('{"type":"auth","id":"\\ud800"}', '{"type":"auth","id":2,"token":"\\ud800"}'):
        answer, close = await _first_frame(server, first)
        assert (answer["code"], close) == ("not_authenticated", 4401), answer
    for method, path, body, token in [
        ("POST", "/api/players", b'{"name":"\\ud800"}', None),
        ("POST", "/api/players", b'{"name":"Ada\\udfff"}', None),
        ("PATCH", "/api/players/me", b'{"name":"\\ud800x"}', player["token"]),
    ]:
        status, answer = await ahttp_raw(method, server + path, body, token)
        assert (status, answer["error"]["code"], answer["error"]["field"]) == (400, "bad_message", "name")
    status, answer = await ahttp_raw("POST", f"{server}/api/players", b'{"\\ud800":1}')
    assert (status, answer["error"]["field"]) == (400, "\\ud800"), answer
    assert not server_errors.records, server_errors.lines()


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/leaderboards/HH1-N-AAAAAAM?cursor=999999999999999999999999999999.p_x", "cursor"),
        ("/api/leaderboards/HH1-N-AAAAAAM?cursor=9223372036854775808.p_x", "cursor"),  # 2**63
        ("/api/leaderboards/HH1-N-AAAAAAM?cursor=1.%00", "cursor"),
        ("/api/leaderboards/HH1-N-AAAAAAM?cursor=%C2%B2.p_x", "cursor"),  # "²" passes str.isdigit
        ("/api/leaderboards/HH1-N-AAAAAAM?limit=%C2%B2", "limit"),
        ("/api/leaderboards/HH1-N-AAAAAAM?limit=%EF%BC%91", "limit"),  # a fullwidth 1
        ("/api/leaderboards/HH1-N-AAAAAAM?limit=" + "9" * 5000, "limit"),  # past int()'s digits
        ("/api/leaderboards/HH1-N-AAAAAAM/players/p_%00?radius=1", "player_id"),
        ("/api/leaderboards/HH1-N-AAAAAAM/players/p_1?radius=%D9%A1", "radius"),  # an Arabic 1
        ("/api/games?limit=%EF%BC%91", "limit"),
        ("/api/games/g_%00", "game_id"),
        ("/api/games/%00/actions", "game_id"),
        ("/api/games/g_" + "a" * 40 + "/verify", "game_id"),
        ("/api/games/%ED%A0%80/solution", "game_id"),  # the bytes of a surrogate: not UTF-8
        ("/api/players/%00", "player_id"),
        ("/api/daily/%EF%BC%92026-01-01", "day"),
        ("/api/daily/2026-02-30", "day"),
    ],
)
async def test_every_http_parameter_is_checked(
    server: str, server_errors: ErrorRecords, path: str, field: str
) -> None:
    """Each query and path parameter is refused as ``bad_message`` naming it: no OverflowError, no
    ValueError, no NUL reaching PostgreSQL (each was a 500)."""
    status, body = await ahttp("GET", server + path)
    assert (status, body["error"]["code"], body["error"].get("field")) == (400, "bad_message", field), body
    assert not server_errors.records, server_errors.lines()


async def test_auth_may_come_before_the_hello_is_read(server: str) -> None:
    """The browser sends auth as soon as the socket opens (one round trip less on a slow
    network); the server reads it once it has said hello, and the order of answers holds."""
    player = await new_player(server)
    async with websockets.connect(server.replace("http", "ws", 1) + "/ws", compression=None) as ws:
        await ws.send(json.dumps({"type": "auth", "id": "auth", "protocol": 1, "token": player["token"]}))
        hello = json.loads(await asyncio.wait_for(ws.recv(), 10))
        welcome = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert hello["type"] == "hello"
    assert welcome["type"] == "welcome" and welcome["id"] == "auth", welcome
    assert welcome["player"]["id"] == player["id"]
