"""Fuzzing a live server: whatever a client sends, it gets a documented answer or a documented
close, the server logs no error, and it goes on serving everyone else.

The WebSocket is fed thousands of hypothesis-generated frames, before and after auth: JSON of
every shape, valid requests mutated (fields dropped, replaced, added), odd strings (lone
surrogates, bidi and zero-width characters, other scripts' digits), JSON nested past the
parser's depth, frames about the size limit, binary frames. After each batch a ``ping`` with
an id must be answered (a silent connection fails the test at its deadline), and every frame of
the batch must have had exactly one answer. The HTTP API is fuzzed by schemathesis from the
server's own ``/api/schema/openapi.json``: no 5xx, answers of the documented status and shape,
schema-violating requests refused. Every received WebSocket message also joins the session's
contract check (``tests/contract.py``).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import positive_data_acceptance
from schemathesis.core.result import Ok
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from server.config import Settings
from server.edge.protocol import REQUESTS
from tests.contract import load
from tests.support import ONE_ADDRESS, RECEIVED, ErrorRecords, http, running_server

# Every frame is processed: the rate limit (tested on its own) would drop some unanswered; and
# the per-address quotas are off, as on every shared test server (all clients are 127.0.0.1).
FUZZ_LIMITS = replace(ONE_ADDRESS, rate_per_s=1_000_000, burst=1_000_000)
MAX_FRAME = FUZZ_LIMITS.max_frame_bytes
DEADLINE_S = 20  # for the answers to one batch
FUZZ = settings(
    deadline=None,
    database=None,  # nothing written beside the tests; a failure prints its seed
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
BEFORE_AUTH_EXAMPLES, AFTER_AUTH_EXAMPLES, SCHEMATHESIS_EXAMPLES = 150, 220, 25
COUNTS = {"frames before auth": 0, "frames after auth": 0, "schemathesis cases": 0}


def _message_types() -> tuple[set[str], set[str]]:
    """(every server message type, the pushed ones: those that never carry a request's id)."""
    document = load("asyncapi.json")
    messages = document["components"]["messages"]
    every, pushed = set(), set()
    for ref in document["channels"]["/ws"]["subscribe"]["message"]["oneOf"]:
        payload = messages[ref["$ref"].rsplit("/", 1)[1]]["payload"]
        every.add(payload["properties"]["type"]["const"])
        if "id" not in payload["properties"]:
            pushed.add(payload["properties"]["type"]["const"])
    return every, pushed


MESSAGE_TYPES, PUSHED = _message_types()
REQUEST_FIELDS = sorted({name for fields in REQUESTS.values() for name in fields})  # every field name

# -- what is sent ------------------------------------------------------------------------------

ODD = st.sampled_from(
    [
        *("\ud800", "\udfff", "\u202e", "\u2066", "\u200b", "\u200d", "\ufeff", "\x00", "\x1f", "\u0301"),
        *("²", "١", "Ａ", "ﷺ", "\u3164", "\ue000", "\U0010ffff", "🇫🇷", "é", "\\", '"', "%00", "g_", "p_"),
    ]
)
LONE_SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
TEXT = st.lists(st.one_of(st.characters(), ODD, LONE_SURROGATES), max_size=24).map("".join)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.integers(-3, 60),
    st.floats(),  # NaN and Infinity too: not JSON, refused as such
    TEXT,
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


def templates(game_id: str, spare_id: str, race_id: str, token: str) -> list[dict[str, Any]]:
    """A valid request of every type, on real games and a real race: what mutations start from."""
    return [
        {"type": "ping", "id": 1},
        {"type": "auth", "protocol": 1, "token": token},
        {"type": "auth"},
        {"type": "new_game", "code": "HH1-N-AAAAAAM"},
        {"type": "new_game", "game": "SH", "variant": "C4"},
        {"type": "new_game", "daily": "SH1-C4"},
        {"type": "open_game", "game_id": game_id},
        {"type": "watch", "game_id": game_id},
        {"type": "unwatch", "game_id": game_id},
        {"type": "act", "game_id": game_id, "seq": 0, "action": {"type": "draw"}},
        {"type": "act", "game_id": game_id, "seq": 1, "action": {"type": "touch", "at": "heart:25"}},
        {
            "type": "act",
            "game_id": game_id,
            "seq": 0,
            "action": {"type": "pair", "a": "heart:1", "b": "waste"},
        },
        {
            "type": "act",
            "game_id": game_id,
            "seq": 0,
            "action": {"type": "move", "from": "col:1", "to": "found"},
        },
        {"type": "act", "game_id": game_id, "seq": 0, "action": {"type": "undo"}, "reply": "brief"},
        {"type": "resign", "game_id": spare_id},
        {"type": "solution", "game_id": game_id},
        {"type": "subscribe_leaderboard", "code": "HH1-N-AAAAAAM", "limit": 5},
        {"type": "unsubscribe_leaderboard", "code": "HH1-N-AAAAAAM"},
        {"type": "race_open", "code": "SH1-C4-AAAAAAA"},
        {"type": "race_join", "race_id": race_id},
        {"type": "race_watch", "race_id": race_id},
        {"type": "race_start", "race_id": race_id, "countdown_s": 60},
        {"type": "race_leave", "race_id": race_id},
    ]


@st.composite
def mutated(draw: st.DrawFn, requests: list[dict[str, Any]]) -> dict[str, Any]:
    """A valid request with up to three fields dropped, replaced or added, its id maybe odd."""
    message = dict(draw(st.sampled_from(requests)))
    for _ in range(draw(st.integers(0, 3))):
        key = draw(st.sampled_from(["type", "id", *message, *REQUEST_FIELDS]) | TEXT)
        if key in message and draw(st.booleans()):
            del message[key]
        else:
            message[key] = draw(JSON)
    return message


@st.composite
def deep(draw: st.DrawFn, requests: list[dict[str, Any]]) -> str:
    """JSON nested up to 2,500 levels (the parser stops near 1,000), alone or inside a request."""
    depth = draw(st.integers(1, 2500))
    nested = "[" * depth + "]" * depth if draw(st.booleans()) else '{"a":' * depth + "0" + "}" * depth
    if draw(st.booleans()):
        return nested
    message = dict(draw(st.sampled_from(requests)))
    message[draw(st.sampled_from([*message, "action", "x"]))] = "\x00deep"
    return json.dumps(message).replace('"\\u0000deep"', nested)


def frames(requests: list[dict[str, Any]]) -> st.SearchStrategy[str | bytes]:
    """One frame of any kind the fuzzer sends."""
    return st.one_of(
        JSON.map(json.dumps),  # ensure_ascii: a lone surrogate travels escaped, as "\\ud800"
        mutated(requests).map(json.dumps),
        mutated(requests).map(json.dumps),
        deep(requests),
        st.text(st.characters(exclude_categories=["Cs"]), max_size=40),  # not JSON at all
        st.binary(max_size=64),
        st.integers(MAX_FRAME - 64, MAX_FRAME + 64).map(
            lambda n: json.dumps({"type": "ping", "pad": "x" * n})
        ),
    )


def size(frame: str | bytes) -> int:
    return len(frame.encode("utf-8") if isinstance(frame, str) else frame)


# -- the server and its sockets ------------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzz_server(database_url: str, request: pytest.FixtureRequest) -> Iterator[str]:
    with running_server(Settings(database_url=database_url, secret="fuzz", limits=FUZZ_LIMITS)) as base:
        yield base
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():  # the counts are shown, not captured
            reporter.write_line("fuzz: " + ", ".join(f"{n} {what}" for what, n in COUNTS.items()))


def receive(ws: ClientConnection, deadline: float) -> dict[str, Any]:
    """The next message: a documented type, recorded for the contract check."""
    raw = ws.recv(timeout=max(0.01, deadline - time.monotonic()))
    message = json.loads(raw)
    assert isinstance(message, dict) and message.get("type") in MESSAGE_TYPES, message
    RECEIVED.append(json.loads(raw))
    return message


@dataclass
class Socket:
    """An authenticated connection, opened again whenever a frame closed it (1009)."""

    url: str
    token: str
    ws: ClientConnection | None = None
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    stack: ExitStack = field(default_factory=ExitStack)

    def open(self) -> ClientConnection:
        if self.ws is None:
            self.stack.close()  # a socket the server closed
            ws = self.stack.enter_context(
                connect(self.url, compression=None, max_size=2**22, open_timeout=10, close_timeout=5)
            )
            deadline = time.monotonic() + DEADLINE_S
            assert receive(ws, deadline)["type"] == "hello"
            ws.send(json.dumps({"type": "auth", "id": "auth", "token": self.token}))
            assert receive(ws, deadline)["type"] == "welcome"
            self.ws = ws
        return self.ws

    def ping(self) -> None:
        ws, marker = self.open(), f"ping-{next(self.ids)}"
        ws.send(json.dumps({"type": "ping", "id": marker}))
        deadline = time.monotonic() + DEADLINE_S
        while (message := receive(ws, deadline)).get("id") != marker:
            pass
        assert message["type"] == "pong"

    def close(self) -> None:
        self.stack.close()
        self.ws = None


def exchange(socket: Socket, batch: list[str | bytes]) -> None:
    """Send a batch then a ping with an id: each frame must have had exactly one answer by the
    pong. A frame over the size limit ends the batch: the socket must then close with 1009 (what
    came just before it may go unanswered: the server stops reading at once)."""
    ws, marker = socket.open(), f"batch-{next(socket.ids)}"
    too_big = next((i for i, frame in enumerate(batch) if size(frame) > MAX_FRAME), None)
    if too_big is not None:
        try:
            for frame in batch[: too_big + 1]:  # nothing after it: a send would race the close
                ws.send(frame)
        except ConnectionClosed:  # the server dropped the socket before the frame was all sent
            socket.ws = None
            assert ws.close_code in (1009, 1006), ws.close_code
            return
        with pytest.raises(ConnectionClosed):
            receive_until_closed(ws, time.monotonic() + DEADLINE_S)
        socket.ws = None
        assert ws.close_code == 1009, ws.close_code
        return
    for frame in batch:
        ws.send(frame)
    ws.send(json.dumps({"type": "ping", "id": marker}))
    answers, deadline = 0, time.monotonic() + DEADLINE_S
    while (message := receive(ws, deadline)).get("id") != marker:
        answers += message["type"] not in PUSHED
    assert message["type"] == "pong"
    assert answers == len(batch), (answers, batch)


def receive_until_closed(ws: ClientConnection, deadline: float) -> None:
    while True:
        receive(ws, deadline)


def first_frame(url: str, frame: str | bytes) -> None:
    """A fresh socket's first frame: a welcome (then served), or one refusal and a documented close."""
    with connect(url, compression=None, max_size=2**22, open_timeout=10, close_timeout=5) as ws:
        deadline = time.monotonic() + DEADLINE_S
        assert receive(ws, deadline)["type"] == "hello"
        try:
            ws.send(frame)
            answer = receive(ws, deadline)
        except ConnectionClosed:
            assert size(frame) > MAX_FRAME and ws.close_code == 1009, ws.close_code
            return
        if answer["type"] == "welcome":
            ws.send('{"type":"ping","id":"after"}')
            assert receive(ws, deadline) == {"type": "pong", "id": "after"}
            return
        assert answer["type"] == "error", answer
        assert answer["code"] in ("bad_json", "not_authenticated", "unsupported_version", "bad_token"), answer
        with pytest.raises(ConnectionClosed):
            receive(ws, deadline)
        assert ws.close_code == (4400 if answer["code"] == "unsupported_version" else 4401), ws.close_code


@dataclass(frozen=True)
class World:
    """Where the fuzzed requests go, and what they refer to: a player, their games and race."""

    ws_url: str
    token: str
    requests: list[dict[str, Any]]


@pytest.fixture(scope="module")
def world(fuzz_server: str) -> Iterator[World]:
    ws_url = fuzz_server.replace("http", "ws", 1) + "/ws"
    status, player = http("POST", f"{fuzz_server}/api/players", {})
    assert status == 201, player
    assert http("GET", f"{fuzz_server}/api/daily")[0] == 200  # today's deals found before fuzzing
    setup = Socket(ws_url, player["token"])
    ws, deadline = setup.open(), time.monotonic() + DEADLINE_S
    ids = []
    for request in (
        {"type": "new_game", "code": "HH1-N-AAAAAAM"},
        {"type": "new_game", "code": "SH1-C4-AAAAAJ2"},
    ):
        ws.send(json.dumps({**request, "id": "game"}))
        ids.append(receive(ws, deadline)["game"]["id"])
    ws.send(json.dumps({"type": "race_open", "id": "race", "code": "SH1-C4-AAAAAAA"}))
    while (race := receive(ws, deadline)).get("id") != "race":
        pass
    setup.close()
    yield World(ws_url, player["token"], templates(ids[0], ids[1], race["race"]["id"], player["token"]))


# -- the tests ------------------------------------------------------------------------------------


def test_any_first_frame_gets_a_documented_answer(world: World, server_errors: ErrorRecords) -> None:
    bystander = Socket(world.ws_url, world.token)

    @settings(FUZZ, max_examples=BEFORE_AUTH_EXAMPLES)
    @given(frame=frames(world.requests))
    def run(frame: str | bytes) -> None:
        COUNTS["frames before auth"] += 1
        first_frame(world.ws_url, frame)

    try:
        run()
        bystander.ping()  # everyone else is still served
    finally:
        bystander.close()
    assert not server_errors.records, server_errors.lines()


def test_any_frames_after_auth_get_documented_answers(world: World, server_errors: ErrorRecords) -> None:
    socket, bystander = Socket(world.ws_url, world.token), Socket(world.ws_url, world.token)
    examples = itertools.count()

    @settings(FUZZ, max_examples=AFTER_AUTH_EXAMPLES)
    @given(batch=st.lists(frames(world.requests), min_size=1, max_size=12))
    def run(batch: list[str | bytes]) -> None:
        COUNTS["frames after auth"] += len(batch)
        exchange(socket, batch)
        if next(examples) % 25 == 0:
            bystander.ping()

    try:
        run()
        bystander.ping()
    finally:
        socket.close()
        bystander.close()
    assert not server_errors.records, server_errors.lines()


def test_http_api_keeps_to_its_openapi_document(fuzz_server: str, server_errors: ErrorRecords) -> None:
    """schemathesis, from the running server's own document: positive and negative cases of every
    operation. A schema-valid request may still be refused: the document cannot say everything (a
    name's rules, a date's calendar, a code's parts), so only that check is left out."""
    schema = schemathesis.openapi.from_url(f"{fuzz_server}/api/schema/openapi.json")
    status, player = http("POST", f"{fuzz_server}/api/players", {})
    assert status == 201, player
    headers = {"Authorization": f"Bearer {player['token']}"}
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result  # the document loads whole
        operation = result.ok()
        has_input = any(len(part) for part in (operation.path_parameters, operation.query, operation.body))
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)[: 2 if has_input else 1]:

            @settings(FUZZ, max_examples=SCHEMATHESIS_EXAMPLES)
            @given(case=operation.as_strategy(generation_mode=mode))
            def run(case: schemathesis.Case[Any]) -> None:
                COUNTS["schemathesis cases"] += 1
                case.call_and_validate(
                    base_url=fuzz_server, headers=headers, excluded_checks=[positive_data_acceptance]
                )

            run()
    assert http("GET", f"{fuzz_server}/health")[0] == 200
    assert not server_errors.records, server_errors.lines()
