"""The published schemas against the server's code and its HTTP answers.

The WebSocket side is also checked at run time: every message any test
client received during the session is validated in ``tests.contract``.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator
from starlette.routing import Mount, Route, WebSocketRoute

from engine.api import ACTION_FIELDS
from server.app import build_features, build_services, create_app
from server.clock import wall_clock_ms
from server.config import Settings
from server.core.backoff import in_memory
from server.edge.protocol import REQUESTS
from tests import sources
from tests.contract import (
    BASE,
    load,
    message_components,
    message_names,
    openapi_validator,
    problems_in,
    registry,
)
from tests.support import Client, ahttp
from wire import ErrorCode

ROOT = Path(__file__).resolve().parent.parent
ASYNCAPI = load("asyncapi.json")
OPENAPI = load("openapi.json")


def python_files(package: str) -> Iterator[ast.Module]:
    for path in sources.files(package):
        yield sources.tree(path)


def dict_types(tree: ast.Module) -> set[str]:
    """Values of the "type" key in dict literals: the messages a module builds.

    ASGI events (``websocket.receive`` and the like, dotted) are the server's
    own plumbing under the protocol, not messages: they are left out.
    """
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                is_type = isinstance(key, ast.Constant) and key.value == "type"
                text = value.value if isinstance(value, ast.Constant) else None
                if is_type and isinstance(text, str) and "." not in text:
                    found.add(text)
    return found


def first_args(tree: ast.Module, names: set[str]) -> set[str]:
    """First string argument of every call to one of ``names`` (error and refusal codes)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            arg = node.args[0]
            if name in names and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.add(arg.value)
            elif name in names and isinstance(arg, ast.Attribute):  # ErrorCode.STALE, Refusal.GAME_OVER
                found.add(arg.attr.lower())
    return found


def enum(name: str) -> set[str]:
    return set(ASYNCAPI["components"]["schemas"][name]["enum"])


# -- the AsyncAPI document ----------------------------------------------------------


def test_asyncapi_shape() -> None:
    assert ASYNCAPI["asyncapi"] == "2.6.0"
    for name, message in ASYNCAPI["components"]["messages"].items():
        kind = message["payload"]["properties"]["type"]["const"]
        assert name in (kind, f"{kind}_reply")  # a reply that shares its request's type
        Draft7Validator.check_schema(message["payload"])
    both = [*message_components("publish").values(), *message_components("subscribe").values()]
    assert len(both) == len(set(both)) == len(ASYNCAPI["components"]["messages"])


def test_every_reference_resolves() -> None:
    for document, name in ((ASYNCAPI, "asyncapi.json"), (OPENAPI, "openapi.json")):
        resolver = registry().resolver(base_uri=BASE + name)
        for ref in refs_in(document):
            resolver.lookup(ref)


def refs_in(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from refs_in(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs_in(item)


def test_examples_follow_the_schema() -> None:
    for name, message in ASYNCAPI["components"]["messages"].items():
        ref = {"$ref": f"{BASE}asyncapi.json#/components/messages/{name}/payload"}
        validator = Draft7Validator(ref, registry=registry())
        for example in message.get("examples", []):
            errors = [e.message for e in validator.iter_errors(example["payload"])]
            assert not errors, (name, errors)


def test_every_server_message_type_is_documented() -> None:
    sent = set().union(*(dict_types(tree) for tree in python_files("server")))
    assert sent <= set(message_names("subscribe")), sent - set(message_names("subscribe"))


def test_every_request_is_documented() -> None:
    served = {
        *build_features(build_services(Settings(), wall_clock_ms), in_memory(wall_clock_ms)).handlers,
        "auth",
    }
    documented = set(message_names("publish"))
    assert served <= documented, served - documented
    assert documented <= set(REQUESTS), documented - set(REQUESTS)


def test_error_and_refusal_codes_are_documented() -> None:
    assert set(ErrorCode) == enum("ErrorCode")
    raised = set().union(*(first_args(t, {"ProtocolError"}) for t in python_files("server")))
    assert raised <= enum("ErrorCode"), raised - enum("ErrorCode")
    refusals = set().union(*(first_args(t, {"IllegalAction", "_refuse"}) for t in python_files("engine")))
    assert refusals <= enum("RefusalCode"), refusals - enum("RefusalCode")


def test_every_action_kind_is_documented() -> None:
    refs = ASYNCAPI["components"]["schemas"]["Action"]["oneOf"]
    schemas = ASYNCAPI["components"]["schemas"]
    kinds = {schemas[r["$ref"].rsplit("/", 1)[1]]["properties"]["type"]["const"] for r in refs}
    assert kinds == set(ACTION_FIELDS)


def test_problems_are_reported() -> None:
    """The session check itself: a wrong message and an unknown type are both caught."""
    assert problems_in([{"type": "pong"}]) == []
    assert problems_in([{"type": "pong", "extra": 1}])
    assert problems_in([{"type": "nonsense"}])


# -- the OpenAPI document -----------------------------------------------------------


def app_routes() -> dict[str, set[str]]:
    """Path -> HTTP methods of every HTTP route the app serves (static files aside)."""
    routes: dict[str, set[str]] = {}
    for route in create_app(Settings()).routes:
        if isinstance(route, Route):
            methods = {m.lower() for m in route.methods or ()} - {"head"}
            routes.setdefault(route.path, set()).update(methods)
        else:
            assert isinstance(route, Mount | WebSocketRoute), route
    return routes


def test_every_route_is_documented() -> None:
    documented = {path: set(ops) - {"parameters"} for path, ops in OPENAPI["paths"].items()}
    assert app_routes() == documented


def check_http(method: str, path: str, status: int, body: Any) -> None:
    """The answer must be one the document lists for this path, method and status."""
    operation = OPENAPI["paths"][path][method]
    assert str(status) in operation["responses"], (path, method, status, body)
    pointer = f"/paths/{path.replace('/', '~1')}/{method}/responses/{status}/content/application~1json/schema"
    errors = [e.message for e in openapi_validator(pointer).iter_errors(body)]
    assert not errors, (path, status, errors)


async def test_http_answers_follow_openapi(server: str) -> None:
    async def call(
        method: str, template: str, url: str, payload: Any = None, token: str | None = None
    ) -> Any:
        status, body = await ahttp(method, server + url, payload, token)
        check_http(method.lower(), template, status, body)
        return body

    await call("GET", "/health", "/health")
    player = await call("POST", "/api/players", "/api/players", {"name": "Contract"})
    await call("POST", "/api/players", "/api/players", {"name": ""})
    await call("PATCH", "/api/players/me", "/api/players/me", {"name": "Renamed"}, player["token"])
    await call("PATCH", "/api/players/me", "/api/players/me", {"name": "x"}, "st_wrong")
    await call("GET", "/api/players/{player_id}", f"/api/players/{player['id']}")
    await call("GET", "/api/players/{player_id}", "/api/players/p_missing")
    client = await Client.connect(server, player["token"])
    game = (await client.request("new_game", code="SH1-C4-AAAAAJ2"))["game"]
    gid = game["id"]
    await call("GET", "/api/games/{game_id}", f"/api/games/{gid}")
    moved = await client.act(gid, 0, type="move", **{"from": "col:1", "to": "cell:3"})
    assert moved["type"] == "result"
    live = await call("GET", "/api/games", "/api/games?limit=100")
    assert gid in [g["id"] for g in live["games"]]
    await call("GET", "/api/games", "/api/games?limit=0")
    await call("GET", "/api/games/{game_id}", "/api/games/g_missing")
    await call("GET", "/api/games/{game_id}/actions", f"/api/games/{gid}/actions")
    await call("GET", "/api/games/{game_id}/verify", f"/api/games/{gid}/verify")
    await client.request("resign", game_id=gid)
    log = await call("GET", "/api/games/{game_id}/actions", f"/api/games/{gid}/actions")
    assert log["final"]["result"] == "resigned"
    assert (await call("GET", "/api/games/{game_id}/verify", f"/api/games/{gid}/verify"))["ok"]
    await call("GET", "/api/games/{game_id}/verify", "/api/games/g_missing/verify")
    await competing_routes(call, player["id"])
    await home_routes(call, player, gid)
    for name in ("asyncapi.json", "openapi.json"):
        served = await call("GET", "/api/schema/{name}", f"/api/schema/{name}")
        assert served == json.loads((ROOT / "server" / "schema" / name).read_text(encoding="utf-8"))
    await call("GET", "/api/schema/{name}", "/api/schema/other.json")
    await client.close()


async def competing_routes(call: Any, player_id: str) -> None:
    today = await call("GET", "/api/daily", "/api/daily")
    await call("GET", "/api/daily/{day}", f"/api/daily/{today['day']}")
    await call("GET", "/api/daily/{day}", "/api/daily/2000-01-01")
    await call("GET", "/api/daily/{day}", "/api/daily/yesterday")
    board = "/api/leaderboards/{code}"
    page = await call("GET", board, "/api/leaderboards/SH1-C4-AAAAAJ2?limit=1")
    assert page["entries"][0]["player"]["id"] == player_id
    await call("GET", board, "/api/leaderboards/SH1-C4-AAAAAJ2?limit=0")
    await call("GET", board, "/api/leaderboards/XX1-C4-AAAAAJ2")
    mine = "/api/leaderboards/{code}/players/{player_id}"
    assert (await call("GET", mine, f"/api/leaderboards/SH1-C4-AAAAAJ2/players/{player_id}"))["rank"] == 1
    await call("GET", mine, "/api/leaderboards/SH1-C4-AAAAAJ2/players/p_missing")


async def home_routes(call: Any, player: dict[str, Any], game_id: str) -> None:
    """Accounts, sessions, statistics, history and replays: every answer as documented."""
    token, username = player["token"], f"contract{player['id'][-6:]}"
    await call("GET", "/api/accounts/me", "/api/accounts/me", token=token)
    secret = {"username": username, "password": "correct horse battery"}
    await call("POST", "/api/accounts", "/api/accounts", {"username": "x", "password": "y"}, token)
    await call("POST", "/api/accounts", "/api/accounts", secret, token)
    await call("POST", "/api/accounts", "/api/accounts", secret, token)  # 409: once
    await call("POST", "/api/accounts", "/api/accounts", secret, "st_wrong")
    await call("POST", "/api/sessions", "/api/sessions", {**secret, "password": "wrong password"})
    session = await call("POST", "/api/sessions", "/api/sessions", {**secret, "label": "contract"})
    other = session["token"]
    await call("GET", "/api/accounts/me", "/api/accounts/me", token=other)
    listed = await call("GET", "/api/sessions", "/api/sessions", token=other)
    first = listed["sessions"][0]["id"]
    await call("DELETE", "/api/sessions/{session_id}", f"/api/sessions/{first}", token=other)
    await call("DELETE", "/api/sessions/{session_id}", f"/api/sessions/{first}", token=other)  # 404
    change = {"password": "wrong password", "new_password": "another good passphrase"}
    await call("POST", "/api/accounts/me/password", "/api/accounts/me/password", change, other)
    change["password"] = secret["password"]
    await call("POST", "/api/accounts/me/password", "/api/accounts/me/password", change, other)
    pid = player["id"]
    await call("GET", "/api/players/{player_id}/stats", f"/api/players/{pid}/stats")
    await call("GET", "/api/players/{player_id}/stats", "/api/players/p_missing/stats")
    await call("GET", "/api/players/{player_id}/games", f"/api/players/{pid}/games?limit=1", token=other)
    await call("GET", "/api/players/{player_id}/games", f"/api/players/{pid}/games?result=lost")
    await call("GET", "/api/games/{game_id}/replay", f"/api/games/{game_id}/replay")
    await call("GET", "/api/games/{game_id}/replay", "/api/games/g_missing/replay")
    await call("DELETE", "/api/sessions/current", "/api/sessions/current", token=other)
    await call("GET", "/api/sessions", "/api/sessions", token=other)  # 401 now
    await call("DELETE", "/api/sessions/current", "/api/sessions/current", token=(await new_guest(call)))


async def new_guest(call: Any) -> str:
    guest = await call("POST", "/api/players", "/api/players", {})
    return str(guest["token"])


@pytest.mark.parametrize("direction", ["publish", "subscribe"])
def test_messages_have_summaries(direction: str) -> None:
    for name in message_components(direction).values():
        assert ASYNCAPI["components"]["messages"][name]["summary"]


@pytest.mark.parametrize("name", ["asyncapi.json", "openapi.json"])
def test_schema_documents_name_each_key_once(name: str) -> None:
    """JSON keeps the last of two equal keys silently: a path or message written twice would hide one."""

    def refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        assert len(keys) == len(set(keys)), sorted({k for k in keys if keys.count(k) > 1})
        return dict(pairs)

    json.loads((ROOT / "server" / "schema" / name).read_text(), object_pairs_hook=refuse_duplicates)
