"""The disclosure rule's parts without a server: a sealed code cannot be written out, the
tripwire finds a sealed day's secrets until the day ends, and the edge withholds what holds one."""

from __future__ import annotations

import json
import pickle

import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message

from server.core.hub import encode
from server.edge.disclosure import Withhold, checked_frame
from server.rules.days import DAY_MS, day_start_ms
from server.rules.disclosure import SealedCode, SealedLeak, Tripwire, seal, shown_code
from tests.support import ManualClock

DAY = "2033-04-02"
NOON = day_start_ms(DAY) + DAY_MS // 2
CODE = "SH1-C4-N5LN657FP5OV6"
SALT = "9f" * 16


def test_a_sealed_code_compares_but_cannot_be_written_out() -> None:
    held = seal(CODE, DAY, NOON)
    assert isinstance(held, SealedCode) and held == SealedCode(CODE, DAY) and held.family == "SH1-C4"
    assert CODE not in repr(held)
    for write in (
        str,
        lambda c: f"{c}",
        "{}".format,
        pickle.dumps,
        json.dumps,
        orjson.dumps,
        encode_it,
    ):
        with pytest.raises((SealedLeak, TypeError)):
            write(held)
    assert held.for_engine() == CODE  # the engine's own use, inside the server


def encode_it(held: object) -> str:
    return encode({"type": "game", "code": held})


def test_a_code_is_shown_once_its_day_is_over_and_an_ordinary_one_always() -> None:
    assert shown_code(CODE, DAY, NOON) is None
    assert shown_code(seal(CODE, DAY, NOON), DAY, NOON + DAY_MS) == CODE
    assert shown_code(CODE, DAY, day_start_ms(DAY) + DAY_MS) == CODE  # at midnight exactly
    assert shown_code(CODE, DAY, day_start_ms(DAY) + DAY_MS - 1) is None
    assert shown_code("HH1-N-AAAAAC5", None, NOON) == "HH1-N-AAAAAC5"
    assert seal("HH1-N-AAAAAC5", None, NOON) == "HH1-N-AAAAAC5"


def test_the_tripwire_finds_a_seed_or_salt_until_the_day_ends() -> None:
    wire = Tripwire()
    wire.check(f'{{"code":"{CODE}"}}', NOON)  # nothing sealed yet: nothing to find
    wire.seal(DAY, CODE, SALT)
    for text in (CODE, CODE.rsplit("-", 1)[1].lower().upper(), f"salt {SALT}", CODE.encode()):
        with pytest.raises(SealedLeak):
            wire.check(text, NOON)
    wire.check("SH1-C4 today", NOON)  # the family is public
    wire.check(CODE, day_start_ms(DAY) + DAY_MS)  # published at the day's end
    assert list(wire.sealed()) == []


def test_a_frame_holding_a_secret_becomes_an_internal_error_with_its_id() -> None:
    wire, clock = Tripwire(), ManualClock(NOON)
    wire.seal(DAY, CODE, SALT)
    fine = encode({"type": "pong", "id": 3})
    assert checked_frame(wire, clock, fine) == fine
    withheld = orjson.loads(checked_frame(wire, clock, encode({"type": "result", "id": 7, "code": CODE})))
    assert withheld == {"type": "error", "code": "internal", "message": withheld["message"], "id": 7}


async def get(app: ASGIApp, path: str) -> tuple[int, bytes]:
    """One GET through the ASGI app, as a server would drive it: (status, body)."""
    sent: list[Message] = []
    scope = {"type": "http", "method": "GET", "path": path, "headers": [], "query_string": b""}

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await app({**scope, "asgi": {"version": "3.0"}, "http_version": "1.1", "root_path": ""}, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


async def test_an_http_answer_holding_a_secret_is_withheld() -> None:
    wire, clock = Tripwire(), ManualClock(NOON)
    wire.seal(DAY, CODE, SALT)

    async def leaky(request: Request) -> Response:
        return JSONResponse({"code": CODE})

    async def fine(request: Request) -> Response:
        return JSONResponse({"code": None})

    app = Withhold(Starlette(routes=[Route("/leaky", leaky), Route("/fine", fine)]), wire, clock)
    status, body = await get(app, "/leaky")
    assert status == 500 and orjson.loads(body)["error"]["code"] == "internal" and CODE.encode() not in body
    assert await get(app, "/fine") == (200, b'{"code":null}')
    clock.advance(DAY_MS)
    assert orjson.loads((await get(app, "/leaky"))[1]) == {"code": CODE}
