"""The protocol's facts as the browser reads them: ``/js/facts.js``, built at start from their sources.

The browser client checks what a player types (a game code, a name, a
countdown) and reacts to close codes before the server answers, so it needs
the same facts the server keeps. Each has one source, and the module is
written from it when the app is made, never by hand:

- shapes, patterns and bounds: the AsyncAPI document (``server/schema``),
  through :mod:`server.edge.protocol`, and the OpenAPI one (a body's field
  through :data:`server.edge.openapi.OPERATIONS`, a query's ``limit`` as written);
- the protocol version: :data:`wire.PROTOCOL_VERSION`;
- close codes: :class:`server.vocabulary.CloseCode`;
- the heart's layout and the idle gap's cap: the engine;
- the daily families, the username and password rules and a race's default countdown:
  their features' models.

Each export is one JSON value (``export const NAME = <JSON>;``), frozen, so
what the server meant is what the page reads; a pattern is the schema's text,
which ECMA-262 reads as JSON Schema means it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from engine.hearts import HEART_ROWS
from engine.verify import IDLE_GAP_CAP_MS
from server.edge.openapi import OPERATIONS, SCHEMA_DIR
from server.edge.protocol import REQUESTS, schema_of
from server.features.accounts.model import PASSWORD_MAX, PASSWORD_MIN, USERNAME_MAX, USERNAME_MIN
from server.features.races.model import DEFAULT_COUNTDOWN_S
from server.rules.days import FAMILIES
from wire import PROTOCOL_VERSION, CloseCode

PATH = "/js/facts.js"
MEDIA_TYPE = "text/javascript; charset=utf-8"
HEADER = (
    "// Written by the server at start (server/edge/facts.py) from the schemas, the enums, the\n"
    "// engine and the models: every value here has its one source there.\n"
)

FROZEN = """
function frozen(value) {
  if (value && typeof value === "object") for (const item of Object.values(value)) frozen(item);
  return Object.freeze(value);
}

"""


def facts() -> dict[str, Any]:
    """Every fact the browser reads, by its export name."""
    name = schema_of("Player")["properties"]["name"]
    countdown = REQUESTS["race_start"]["countdown_s"]
    return {
        "PROTOCOL": PROTOCOL_VERSION,
        "CLOSE": {code.name: code.value for code in CloseCode},
        "GAME_CODE": schema_of("GameCode")["pattern"],
        "CODE_FAMILY": schema_of("CodeFamily")["pattern"],
        "DAY": schema_of("DayDate")["pattern"],
        "FAMILIES": list(FAMILIES),
        "PLAYER_NAME": {"min": name["minLength"], "max": name["maxLength"]},
        "USERNAME": {"min": USERNAME_MIN, "max": USERNAME_MAX},
        "PASSWORD": {"min": PASSWORD_MIN, "max": PASSWORD_MAX},
        "SESSION_LABEL": {"max": (OPERATIONS[("/api/sessions", "POST")].body or {})["label"].max_len},
        "LEADERBOARD_LIMIT": query_bounds("/api/leaderboards/{code}", "limit"),
        "HISTORY_LIMIT": query_bounds("/api/players/{player_id}/games", "limit"),
        "COUNTDOWN_S": {"min": countdown.minimum, "max": countdown.maximum, "default": DEFAULT_COUNTDOWN_S},
        "IDLE_GAP_CAP_MS": IDLE_GAP_CAP_MS,
        "HEART_ROWS": [list(row) for row in HEART_ROWS],
    }


def query_bounds(path: str, name: str) -> dict[str, int]:
    """A GET query parameter's bounds and default, from the OpenAPI document."""
    document = json.loads((SCHEMA_DIR / "openapi.json").read_text(encoding="utf-8"))
    (param,) = (p for p in document["paths"][path]["get"]["parameters"] if p["name"] == name)
    schema = param["schema"]
    return {"min": schema["minimum"], "max": schema["maximum"], "default": schema["default"]}


def module_text(values: dict[str, Any]) -> str:
    """An ES module exporting each value as a deeply frozen constant."""
    exports = [f"export const {name} = frozen({json.dumps(value)});\n" for name, value in values.items()]
    return HEADER + FROZEN + "".join(exports)


def generated() -> dict[str, bytes]:
    """The module as a file of the client's bundle (server/edge/static.py), by its path there."""
    return {PATH.removeprefix("/"): module_text(facts()).encode("utf-8")}


def route() -> Route:
    """``GET /js/facts.js``: the module, built once; revalidated by its ETag (the service worker
    fetches it again on every visit)."""
    body = module_text(facts()).encode("utf-8")
    etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'

    async def facts_module(request: Request) -> Response:
        headers = {"ETag": etag, "Cache-Control": "no-cache"}
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=MEDIA_TYPE, headers=headers)

    return Route(PATH, facts_module, methods=["GET"])
