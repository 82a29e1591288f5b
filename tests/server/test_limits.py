"""One client cannot crowd out the others: quotas per player and per address, over real sockets.

Every refusal is ``rate_limited`` (HTTP 429 with ``Retry-After``) and stores
nothing; the server's clock is moved by hand, so budgets refill without
sleeping. Clients that must count as another address connect from another
loopback address (127.0.0.0/8 is all the local machine).
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import websockets
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from websockets.exceptions import ConnectionClosed, InvalidStatus

from server.config import Limits, Settings
from server.storage.models import GameRow, Player, Race
from tests.server.competing import play, winnable_hh
from tests.support import Client, ManualClock, new_player, running_server

LIMITS = Limits(
    connections_per_player=2,
    connections_per_address=3,
    games_per_minute=3,
    races_per_minute=2,
    players_per_hour=1000,
    max_watches=3,
)


@dataclass(frozen=True)
class Limited:
    url: str
    clock: ManualClock
    database_url: str


@pytest.fixture(scope="module")
def limited(database_url: str) -> Iterator[Limited]:
    clock = ManualClock()
    settings = Settings(database_url=database_url, secret="test-secret", limits=LIMITS)
    with running_server(settings, clock) as base:
        yield Limited(base, clock, database_url)


@pytest.fixture
async def db(limited: Limited) -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(limited.database_url)
    yield engine
    await engine.dispose()


async def count(engine: AsyncEngine, column: Any, where: Any = None) -> int:
    query = select(func.count(column))
    if where is not None:
        query = query.where(where)
    async with engine.connect() as conn:
        return int((await conn.execute(query)).scalar_one())


async def raw_connect(base: str, source: str) -> Any:
    """A WebSocket from the loopback address ``source``, its hello read."""
    ws = await websockets.connect(
        base.replace("http", "ws", 1) + "/ws", local_addr=(source, 0), compression=None, open_timeout=10
    )
    hello = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert hello["type"] == "hello"
    return ws


async def refused_then_closed(ws: Any) -> tuple[dict[str, Any], int | None]:
    """The error a refused connection gets, and the code it is closed with."""
    error = json.loads(await asyncio.wait_for(ws.recv(), 10))
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(ws.recv(), 10)
    return error, ws.close_code


async def test_open_connections_are_capped_per_address(limited: Limited) -> None:
    held = [await raw_connect(limited.url, "127.0.0.21") for _ in range(LIMITS.connections_per_address)]
    extra = await raw_connect(limited.url, "127.0.0.21")
    error, code = await refused_then_closed(extra)
    assert error["code"] == "rate_limited" and error["retry_after_s"] >= 1
    assert code == 1013  # try again later
    other = await raw_connect(limited.url, "127.0.0.22")  # another address has slots of its own
    await other.send(json.dumps({"type": "auth", "id": 1}))
    assert json.loads(await asyncio.wait_for(other.recv(), 10))["type"] == "welcome"
    await held.pop().close()
    deadline = asyncio.get_running_loop().time() + 10
    while True:  # the slot comes back once the server has seen the close
        again = await raw_connect(limited.url, "127.0.0.21")
        await again.send(json.dumps({"type": "auth", "id": 1}))
        if json.loads(await asyncio.wait_for(again.recv(), 10))["type"] == "welcome":
            break
        await again.close()
        assert asyncio.get_running_loop().time() < deadline, "the closed connection's slot never came back"
        await asyncio.sleep(0.05)
    for ws in [*held, extra, other, again]:
        await ws.close()


async def test_open_connections_are_capped_per_player(limited: Limited) -> None:
    player = await new_player(limited.url)
    first = await Client.connect(limited.url, player["token"])
    await Client.connect(limited.url, player["token"])
    ws = await raw_connect(limited.url, "127.0.0.23")
    await ws.send(json.dumps({"type": "auth", "id": "a", "token": player["token"]}))
    error, code = await refused_then_closed(ws)
    assert (error["code"], error["id"], code) == ("rate_limited", "a", 1013)
    await first.close()
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        try:
            await Client.connect(limited.url, player["token"])
            break
        except AssertionError:
            assert asyncio.get_running_loop().time() < deadline, "the player's slot never came back"
            await asyncio.sleep(0.05)


async def test_games_per_minute_refused_stores_nothing(limited: Limited, db: AsyncEngine) -> None:
    player = await new_player(limited.url)
    client = await Client.connect(limited.url, player["token"])
    for _ in range(LIMITS.games_per_minute):
        assert (await client.request("new_game", game="HH"))["type"] == "game"
    stored = await count(db, GameRow.id, GameRow.player_id == player["id"])
    refused = await client.request("new_game", game="HH")
    assert refused["code"] == "rate_limited" and refused["retry_after_s"] == 20
    assert await count(db, GameRow.id, GameRow.player_id == player["id"]) == stored
    limited.clock.advance(20_000)  # one game every 20 s
    assert (await client.request("new_game", game="HH"))["type"] == "game"


async def test_races_per_minute_and_a_full_watch_list_store_nothing(
    limited: Limited, db: AsyncEngine
) -> None:
    player = await new_player(limited.url)
    client = await Client.connect(limited.url, player["token"])
    for _ in range(LIMITS.races_per_minute):
        assert (await client.request("race_open", game="HH"))["type"] == "race"
    races = await count(db, Race.id)
    refused = await client.request("race_open", game="HH")
    assert refused["code"] == "rate_limited" and refused["retry_after_s"] == 30
    assert await count(db, Race.id) == races
    limited.clock.advance(60_000)
    # Two races and one leaderboard fill this connection's three watches: the next race, though
    # within the per-minute budget, is refused before it is stored.
    await client.request("subscribe_leaderboard", code="HH1-N-AAAAAAM")
    refused = await client.request("race_open", game="HH")
    assert refused["code"] == "rate_limited" and "subscriptions" in refused["message"]
    assert await count(db, Race.id) == races
    host = await Client.connect(limited.url, (await new_player(limited.url))["token"])
    race_id = (await host.request("race_open", game="HH"))["race"]["id"]
    joined = await client.request("race_join", race_id=race_id)
    assert joined["code"] == "rate_limited"  # no racer entry stored: the race still has one racer
    assert len((await host.request("race_watch", race_id=race_id))["race"]["racers"]) == 1


async def test_finished_games_leave_the_watch_list(limited: Limited) -> None:
    owner = await Client.connect(limited.url, (await new_player(limited.url))["token"])
    watcher = await Client.connect(limited.url)
    code, win = winnable_hh()
    won = (await owner.request("new_game", code=code))["game"]["id"]
    resigned = (await owner.request("new_game", game="HH"))["game"]["id"]
    third = (await owner.request("new_game", game="HH"))["game"]["id"]
    limited.clock.advance(60_000)
    for game_id in (won, resigned, third):
        assert (await watcher.request("watch", game_id=game_id))["type"] == "game"
    fourth = (await owner.request("new_game", game="HH"))["game"]["id"]
    assert (await watcher.request("watch", game_id=fourth))["code"] == "rate_limited"  # three watches
    await owner.request("resign", game_id=resigned)
    assert (await watcher.next_push("finished"))["game"]["id"] == resigned
    assert (await watcher.request("watch", game_id=fourth))["type"] == "game"  # its watch was let go
    state = await play(owner, won, win)
    assert state["status"] == "won"
    fifth = (await owner.request("new_game", game="HH"))["game"]["id"]
    assert (await watcher.request("watch", game_id=fifth))["type"] == "game"  # so was the won game's
    watched = await watcher.request("watch", game_id=resigned)  # a finished game: shown, not followed
    assert watched["game"]["result"] == "resigned"
    assert (await watcher.request("unwatch", game_id=third))["type"] == "unwatched"


def lower(headers: Any) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read()), lower(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), lower(exc.headers)


def get(url: str) -> tuple[int, dict[str, str]]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            response.read()
            return response.status, lower(response.headers)
    except urllib.error.HTTPError as exc:
        exc.read()
        return exc.code, lower(exc.headers)


@pytest.fixture(scope="module")
def http_limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Limited]:
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('http') / 'limits.db'}"
    limits = Limits(players_per_hour=2, http_rate_per_s=1, http_burst=6)
    clock = ManualClock()
    with running_server(Settings(database_url=url, secret="test-secret", limits=limits), clock) as base:
        yield Limited(base, clock, url)


async def test_http_requests_and_players_are_rated_per_address(http_limited: Limited) -> None:
    base, clock = http_limited.url, http_limited.clock
    engine = create_async_engine(http_limited.database_url)
    try:
        for _ in range(2):
            assert (await asyncio.to_thread(post, f"{base}/api/players", {}))[0] == 201
        players = await count(engine, Player.id)
        status, body, headers = await asyncio.to_thread(post, f"{base}/api/players", {"name": "Third"})
        assert (status, body["error"]["code"]) == (429, "rate_limited")
        assert headers["retry-after"] == "1800" == str(body["error"]["retry_after_s"])  # 2 an hour
        assert await count(engine, Player.id) == players  # refused: nothing stored
        statuses = [(await asyncio.to_thread(get, f"{base}/api/daily"))[0] for _ in range(4)]
        assert statuses[:3] == [200, 200, 200] and statuses[3] == 429  # six requests in all
        status, headers = await asyncio.to_thread(get, f"{base}/health")
        assert status == 429 and headers["retry-after"] == "1"
        with pytest.raises(InvalidStatus) as handshake:  # a WebSocket handshake is a request too
            await websockets.connect(base.replace("http", "ws", 1) + "/ws", open_timeout=10)
        assert handshake.value.response.status_code == 429
        clock.advance(1000)
        assert (await asyncio.to_thread(get, f"{base}/health"))[0] == 200
    finally:
        await engine.dispose()
