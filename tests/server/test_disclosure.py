"""The disclosure sweep: every HTTP route and every request message, read from the published
schemas, asked as the player of a sealed daily, as another player, as nobody and as an
operator, while the daily is being played and after it was finished that day.

No answer and no push may hold a sealed day's code, the seed in it or its salt, and nobody but
the player may get the player's moves or boards (their positions' fingerprints). A route or a
message added to a schema is swept without anyone writing a test for it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from engine import Action, Game
from engine.solver import solve
from server.config import Settings
from server.rules.days import DAY_MS, day_of, day_start_ms
from server.storage.db import make_engine
from tests.server.test_integrity import admin_cli
from tests.support import (
    ONE_ADDRESS,
    UNSCREENED,
    Client,
    ManualClock,
    http_bytes,
    new_player,
    running_server,
)

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "server" / "schema"
START_MS = day_start_ms("2033-03-01") + 10 * 3_600_000
FAMILY = "SH1-C4"
OPEN_FAMILY = "HH1-N"


@dataclass
class Sealed:
    """What must not leave the server while the day lasts."""

    secrets: list[str]  # every sealed code, the seed in it, every salt
    boards: list[str] = field(default_factory=list)  # the player's positions (fingerprints)

    def leaks(self, body: str, owner: bool) -> list[str]:
        found = [s for s in self.secrets if s in body]
        if not owner:
            found += [f"board {b[:12]}" for b in self.boards if b in body]
        return found


@dataclass
class World:
    base: str
    owner: dict[str, Any]
    other: dict[str, Any]
    operator: str
    games: dict[str, str]  # name -> game id of the owner's daily attempts
    sealed: Sealed
    day: str
    found: list[str] = field(default_factory=list)

    def tokens(self) -> dict[str, str | None]:
        return {"owner": self.owner["token"], "other": self.other["token"], "anonymous": None}

    def check(self, where: str, viewer: str, body: str) -> None:
        for leak in self.sealed.leaks(body, owner=viewer == "owner"):
            self.found.append(f"{where} as {viewer}: {leak}")


async def day_secrets(database_url: str, day: str) -> list[str]:
    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            query = text("SELECT code, salt FROM daily_challenges WHERE day >= :day")
            rows = (await conn.execute(query, {"day": day})).all()
    finally:
        await engine.dispose()
    secrets: list[str] = []
    for code, salt in rows:
        secrets += [str(code), str(code).rsplit("-", 1)[1]]
        if salt:
            secrets.append(salt.hex() if isinstance(salt, bytes) else str(salt))
    assert secrets, "no daily stored"
    return secrets


def sample(schema: dict[str, Any], name: str, world: World, target: str) -> Any:
    """A value for a parameter or field, from its name first and its schema second."""
    named: dict[str, Any] = {
        "game_id": target,
        "player_id": world.owner["id"],
        "day": world.day,
        "family": FAMILY,
        "daily": FAMILY,
        "decision": "clear",
        "name": "openapi",
        "code": next(s for s in world.sealed.secrets if s.count("-") == 2),
    }
    if name in named:
        return named[name]
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "boolean":
        return True
    return "x"


def http_calls(world: World, target: str) -> Iterator[tuple[str, str, bytes | None]]:
    """Every route of openapi.json with its path parameters filled, once with every query
    parameter and once with the required ones only (the defaults), and a body."""
    spec = json.loads((SCHEMAS / "openapi.json").read_text())
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            params = [*operation.get("parameters", [])]
            url = path
            every, required = [], []
            for p in params:
                value = sample(p.get("schema", {}), p["name"], world, target)
                if p["in"] == "path":
                    url = url.replace("{" + p["name"] + "}", str(value))
                elif p["in"] == "query":
                    every.append(f"{p['name']}={value}")
                    if p.get("required"):
                        required.append(every[-1])
            body = None
            if method in ("post", "patch", "put"):
                body = json.dumps(request_body(operation, world, target)).encode()
            for query in {"&".join(every), "&".join(required)}:
                yield method.upper(), url + ("?" + query if query else ""), body


def request_body(operation: dict[str, Any], world: World, target: str) -> dict[str, Any]:
    schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    props = schema.get("properties", {})
    return {k: sample(v, k, world, target) for k, v in props.items() if k in schema.get("required", [])}


def ws_requests(world: World, target: str) -> Iterator[dict[str, Any]]:
    """Every message a client may send, from asyncapi.json's examples, aimed at ``target``."""
    spec = json.loads((SCHEMAS / "asyncapi.json").read_text())
    refs = spec["channels"]["/ws"]["publish"]["message"]["oneOf"]
    for ref in refs:
        message = spec["components"]["messages"][ref["$ref"].rsplit("/", 1)[1]]
        if message["name"] == "auth":
            continue  # sent by Client.connect
        payload = dict(message["examples"][0]["payload"])
        props = message["payload"]["properties"]
        for key in list(payload):
            if key in ("game_id", "code", "day", "family", "daily"):
                payload[key] = sample(props[key], key, world, target)
        yield payload


def fetch(method: str, url: str, data: bytes | None, token: str | None) -> tuple[int, str]:
    """Any answer as text (JSON, the metrics' text, a script)."""
    status, answer = http_bytes(method, url, data, token)
    return status, answer.decode()


async def sweep_http(world: World, phase: str) -> int:
    calls = 0
    tokens = {**world.tokens(), "operator": world.operator}
    for target in world.games.values():
        for method, url, body in http_calls(world, target):
            for viewer, token in tokens.items():
                status, answer = await asyncio.to_thread(fetch, method, world.base + url, body, token)
                world.check(f"{phase} {method} {url} ({status})", viewer, answer)
                calls += 1
    return calls


async def sweep_ws(world: World, phase: str) -> int:
    calls = 0
    for viewer, token in world.tokens().items():
        client = await Client.connect(world.base, token)
        try:
            for target in world.games.values():
                for payload in ws_requests(world, target):
                    if viewer == "owner" and payload["type"] in ("act", "resign"):
                        continue  # the player's own play is checked as it is played
                    await client.send(payload)
                    calls += 1
                    await drain(client, world, f"{phase} ws {payload['type']}", viewer)
        finally:
            await client.close()
    return calls


async def drain(client: Client, world: World, where: str, viewer: str, quiet: float = 0.05) -> None:
    """Every frame that arrives until the connection is quiet (replies and pushes)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            raw = await asyncio.wait_for(client.ws.recv(), quiet)
        except TimeoutError:
            return
        world.check(where, viewer, raw if isinstance(raw, str) else raw.decode())


def solver_line(code: str) -> list[Action]:
    answer = solve(code, 200_000)
    assert answer.result == "won" and answer.actions is not None
    return answer.actions


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START_MS)


@pytest.fixture
def base(database_url: str, clock: ManualClock) -> Iterator[str]:
    settings = Settings(database_url=database_url, secret="sweep", limits=ONE_ADDRESS, screening=UNSCREENED)
    with running_server(settings, clock) as url:
        yield url


async def build_world(base: str, database_url: str, clock: ManualClock) -> World:
    """The player of two sealed dailies: one won today, one being played (a few moves in)."""
    day = day_of(clock.now)
    owner, other = await new_player(base, "Owner"), await new_player(base, "Other")
    assert (await asyncio.to_thread(fetch, "GET", f"{base}/api/daily", None, None))[0] == 200
    made = await asyncio.to_thread(admin_cli, database_url, "--operator", "op", "create-token", "op")
    world = World(base, owner, other, made["token"], {}, Sealed(await day_secrets(database_url, day)), day)
    # the other player plays the same daily too: their board at the deal is everyone's
    rival = await Client.connect(base, other["token"])
    await rival.request("new_game", daily=FAMILY)
    await rival.close()
    player = await Client.connect(base, owner["token"])
    won = await player.request("new_game", daily=FAMILY)
    world.games["won"] = won["game"]["id"]
    code = next(s for s in world.sealed.secrets if s.startswith(FAMILY))
    for seq, action in enumerate(solver_line(code)):
        clock.advance(900)
        reply = await player.act(won["game"]["id"], seq, **action.to_json())
        assert reply["type"] == "result", reply
        world.sealed.boards.append(reply["state"]["fingerprint"])
        world.check("own play", "owner", json.dumps(reply))
    assert reply["state"]["status"] == "won"
    playing = await player.request("new_game", daily=OPEN_FAMILY)
    world.games["playing"] = playing["game"]["id"]
    hearts = Game.new(next(s for s in world.sealed.secrets if s.startswith(OPEN_FAMILY)))
    for seq in range(3):
        clock.advance(900)
        action = hearts.legal_actions()[0]
        hearts = hearts.apply(action).game
        reply = await player.act(playing["game"]["id"], seq, **action.to_json())
        assert reply["type"] == "result", reply
        world.sealed.boards.append(reply["state"]["fingerprint"])
    for message in player.pushed:
        world.check("own pushes", "owner", json.dumps(message))
    await player.close()
    return world


async def test_nothing_sealed_leaves_the_server_by_any_route_or_message(
    base: str, database_url: str, clock: ManualClock, server_errors: Any
) -> None:
    world = await build_world(base, database_url, clock)
    assert len(world.sealed.boards) > 10
    http_calls_made = await sweep_http(world, "during the day")
    ws_calls_made = await sweep_ws(world, "during the day")
    assert http_calls_made > 200 and ws_calls_made > 60
    assert world.found == [], "\n".join(world.found[:40])

    clock.advance(DAY_MS)  # the day is over: the code is published and the game opens
    status, published = await asyncio.to_thread(fetch, "GET", f"{base}/api/daily/{world.day}", None, None)
    assert status == 200 and any(s in published for s in world.sealed.secrets)


def test_the_sweep_finds_a_seeded_leak() -> None:
    """The checker itself: a code or a board in an answer is found, for the right viewers."""
    sealed = Sealed(["SH1-C4-ABCDEFG", "ABCDEFG", "00ff"], ["f" * 40])
    assert sealed.leaks('{"code":"SH1-C4-ABCDEFG"}', owner=True) == ["SH1-C4-ABCDEFG", "ABCDEFG"]
    assert sealed.leaks('{"fingerprint":"' + "f" * 40 + '"}', owner=False) == ["board ffffffffffff"]
    assert sealed.leaks('{"fingerprint":"' + "f" * 40 + '"}', owner=True) == []
