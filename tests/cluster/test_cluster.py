"""Several real server processes on one PostgreSQL database and Redis: any instance serves any client.

Owner, spectator and leaderboard subscriber on three different instances; one
action sent to two instances at once; the refusal of a second instance without
Redis; a race whose racers are on different instances.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from engine import Action, Game
from server.cluster.control import SEP, Control
from tests.cluster.fleet import Fleet, private_redis, subscribed, subscriptions
from tests.support import Client, ahttp, new_player

pytestmark = pytest.mark.timeout(180)


async def actions_stored(database_url: str, game_id: str) -> list[tuple[int, str]]:
    """Every stored action of a game, (seq, action) in order, read straight from PostgreSQL."""
    url = make_url(database_url)
    conn = await asyncpg.connect(
        host=url.host, port=url.port or 5432, user=url.username, database=url.database
    )
    try:
        rows = await conn.fetch("SELECT seq, action FROM actions WHERE game_id = $1 ORDER BY seq", game_id)
    finally:
        await conn.close()
    return [(r["seq"], r["action"]) for r in rows]


def next_action(mirror: Game) -> dict[str, Any]:
    legal = mirror.legal_actions()
    return legal[0].to_json() if legal else {"kind": "undo"}


async def play_one(client: Client, game_id: str, mirror: Game) -> tuple[dict[str, Any], Game]:
    """One legal action; the result and the mirror after it."""
    action = next_action(mirror)
    reply = await client.act(game_id, mirror.seq, **action)
    assert reply["type"] == "result", reply
    return reply, mirror.apply(Action.from_json(action)).game


def test_a_second_instance_without_redis_refuses_to_start_and_says_why(fleet: Fleet) -> None:
    fleet.start()
    alone = fleet.refused(redis_url=None)
    assert alone.returncode != 0
    assert "--redis-url" in alone.stderr and "Redis" in alone.stderr, alone.stderr[-2000:]


def test_an_instance_with_redis_refuses_to_join_one_running_alone(pg_url: str, redis_url: str) -> None:
    fleet = Fleet(pg_url, None)
    try:
        fleet.start(redis_url=False)
        joining = fleet.refused(redis_url=redis_url)
        assert joining.returncode != 0
        assert "without Redis" in joining.stderr, joining.stderr[-2000:]
    finally:
        fleet.close()


async def test_owner_on_a_spectator_on_b_leaderboard_on_c(fleet: Fleet) -> None:
    a, b, c = fleet.start(), fleet.start(), fleet.start()
    player = await new_player(a.url, "Ada")
    owner = await Client.connect(a.url, player["token"])
    game = (await owner.request("new_game", game="SH", variant="C4"))["game"]
    mirror = Game.new(game["code"])
    spectator = await Client.connect(b.url)
    assert (await spectator.request("watch", game_id=game["id"]))["type"] == "game"
    board = await Client.connect(c.url)
    assert (await board.request("subscribe_leaderboard", code=game["code"]))["type"] == "leaderboard"
    await subscribed(fleet.redis_url or "", fleet, f"game:{game['id']}", 1)  # B's
    await subscribed(fleet.redis_url or "", fleet, f"leaderboard:{game['code']}", 1)
    # The owner's instance does not subscribe to the game it holds (its pushes start there).
    assert await subscriptions(fleet.redis_url or "", fleet, f"game:{game['id']}") == 1
    for _ in range(5):
        reply, mirror = await play_one(owner, game["id"], mirror)
        update = await spectator.next_push("update", timeout=5)
        assert (
            update["seq"] == reply["seq"] and update["state"]["fingerprint"] == reply["state"]["fingerprint"]
        )
    assert (await owner.request("resign", game_id=game["id"]))["type"] == "game"
    finished = await spectator.next_push("finished", timeout=5)
    assert finished["game"]["result"] == "resigned"
    entry = await board.next_push("leaderboard_update", timeout=5)
    assert entry["code"] == game["code"] and entry["entry"]["player"]["id"] == player["id"]
    leaders = 0
    for instance in (a, b, c):
        status, metrics = await ahttp_text(instance.metrics_url)
        assert status == 200 and "solitaire_redis_connected 1.0" in metrics
        leaders += "solitaire_leader 1.0" in metrics
        status, ready = await ahttp("GET", f"{instance.url}/ready")
        assert status == 200 and ready == {"status": "ok", "database": "ok", "redis": "ok"}
    assert leaders == 1  # the once-per-cluster jobs run on exactly one instance


async def test_a_watch_from_another_instance_is_sent_the_last_update_again(fleet: Fleet) -> None:
    """The watch read the game before its instance subscribed: the owner sends the last update
    again once the subscription holds, so an action that fell between the two is not missed."""
    a, b = fleet.start(), fleet.start()
    player = await new_player(a.url, "Ada")
    owner = await Client.connect(a.url, player["token"])
    game = (await owner.request("new_game", game="HH"))["game"]
    mirror = Game.new(game["code"])
    for _ in range(3):
        reply, mirror = await play_one(owner, game["id"], mirror)
    spectator = await Client.connect(b.url)
    watched = await spectator.request("watch", game_id=game["id"])
    assert watched["state"]["seq"] == 3
    again = await spectator.next_push("update", timeout=5)
    assert again["seq"] == 2 and again["state"]["fingerprint"] == reply["state"]["fingerprint"]


async def test_a_game_that_ended_is_announced_again_to_an_instance_that_follows_it(fleet: Fleet) -> None:
    """Interest in a finished game (a watch that fell just before its end) gets its end again:
    the ``finished`` push, then the topic's close."""
    from redis.asyncio import Redis

    a = fleet.start()
    player = await new_player(a.url, "Ada")
    owner = await Client.connect(a.url, player["token"])
    game = (await owner.request("new_game", game="HH"))["game"]
    assert (await owner.request("resign", game_id=game["id"]))["type"] == "game"
    redis = Redis.from_url(fleet.redis_url or "")
    listener = redis.pubsub()
    topic = f"game:{game['id']}"
    try:
        await listener.subscribe(f"{fleet.prefix}:t:{topic}")
        await redis.publish(
            f"{fleet.prefix}:ctl", f"tester{SEP}{Control.INTEREST}{SEP}{topic}"
        )  # as an instance
        kinds: list[tuple[str, str]] = []
        async with asyncio.timeout(5):
            while len(kinds) < 2:
                message = await listener.get_message(ignore_subscribe_messages=True, timeout=1)
                if message is not None:
                    _sender, kind, body = message["data"].decode().split(SEP, 2)
                    kinds.append((kind, body))
        assert kinds[0][0] == Control.FRAME and json.loads(kinds[0][1])["type"] == "finished"
        assert json.loads(kinds[0][1])["game"]["result"] == "resigned"
        assert kinds[1][0] == Control.CLOSE
    finally:
        await listener.aclose()  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated
        await redis.aclose()


async def test_a_watcher_where_a_game_was_held_follows_it_to_its_next_holder(fleet: Fleet) -> None:
    """The game held on A (not subscribed there) moves to B: A subscribes again for its own
    spectator, who gets the last update again and every update from B after it."""
    a, b = fleet.start(), fleet.start()
    player = await new_player(a.url, "Ada")
    on_a = await Client.connect(a.url, player["token"])
    game = (await on_a.request("new_game", game="HH"))["game"]
    mirror = Game.new(game["code"])
    _, mirror = await play_one(on_a, game["id"], mirror)
    spectator = await Client.connect(a.url)
    assert (await spectator.request("watch", game_id=game["id"]))["state"]["seq"] == 1
    on_b = await Client.connect(b.url, player["token"])
    assert (await on_b.request("open_game", game_id=game["id"]))["role"] == "owner"
    moved, mirror = await play_one(on_b, game["id"], mirror)  # B takes the game
    await subscribed(fleet.redis_url or "", fleet, f"game:{game['id']}", 1)  # A's, for its spectator
    seen = await spectator.next_push("update", timeout=5)
    while seen["state"]["seq"] < moved["state"]["seq"]:  # A's own push of seq 1 may come first
        seen = await spectator.next_push("update", timeout=5)
    assert seen["state"]["fingerprint"] == moved["state"]["fingerprint"]  # sent again by B
    after, mirror = await play_one(on_b, game["id"], mirror)
    update = await spectator.next_push("update", timeout=5)
    assert update["seq"] == after["seq"] and update["state"]["fingerprint"] == after["state"]["fingerprint"]


async def test_instances_reach_redis_through_its_unix_socket(pg_url: str) -> None:
    with (
        tempfile.TemporaryDirectory(dir="/tmp") as directory,  # short: a socket's path has ~100 bytes
        private_redis(Path(directory) / "redis.sock") as redis,
    ):
        fleet = Fleet(pg_url, redis.socket_url)
        try:
            a, b = fleet.start(), fleet.start()
            player = await new_player(a.url, "Ada")
            owner = await Client.connect(a.url, player["token"])
            game = (await owner.request("new_game", game="HH"))["game"]
            mirror = Game.new(game["code"])
            spectator = await Client.connect(b.url)
            assert (await spectator.request("watch", game_id=game["id"]))["type"] == "game"
            await subscribed(redis.socket_url, fleet, f"game:{game['id']}", 1)  # B's
            for _ in range(3):
                reply, mirror = await play_one(owner, game["id"], mirror)
                update = await spectator.next_push("update", timeout=5)
                assert update["seq"] == reply["seq"]
            for instance in (a, b):
                status, ready = await ahttp("GET", f"{instance.url}/ready")
                assert status == 200 and ready["redis"] == "ok"
        finally:
            fleet.close()


async def ahttp_text(url: str) -> tuple[int, str]:
    import urllib.request

    def get() -> tuple[int, str]:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()

    return await asyncio.to_thread(get)


async def test_the_same_action_sent_to_two_instances_at_once_is_applied_once(fleet: Fleet) -> None:
    a, b = fleet.start(), fleet.start()
    player = await new_player(a.url)
    on_a = await Client.connect(a.url, player["token"])
    on_b = await Client.connect(b.url, player["token"])
    game = (await on_a.request("new_game", game="SH", variant="C4"))["game"]
    mirror = Game.new(game["code"])
    for _ in range(6):
        action = next_action(mirror)
        seq = mirror.seq
        first, second = await asyncio.gather(
            on_a.act(game["id"], seq, **action), on_b.act(game["id"], seq, **action)
        )
        replies = [first, second]
        assert all(r["type"] == "result" for r in replies), replies
        assert sorted(r["duplicate"] for r in replies) == [False, True], replies
        assert replies[0]["state"]["fingerprint"] == replies[1]["state"]["fingerprint"]
        mirror = mirror.apply(Action.from_json(action)).game
    stored = await actions_stored(fleet.database_url, game["id"])
    assert [seq for seq, _ in stored] == list(range(6))
    stale = await on_b.act(game["id"], 2, **next_action(mirror))
    assert stale["type"] == "error" and stale["code"] == "stale" and stale["seq"] == 6


async def race_event(client: Client, event: str) -> dict[str, Any]:
    while True:
        update = await client.next_push("race_update", timeout=10)
        if update["event"] == event:
            return update


async def test_a_race_with_racers_on_different_instances(fleet: Fleet) -> None:
    a, b = fleet.start(), fleet.start()
    host_player, guest_player = await new_player(a.url, "Host"), await new_player(b.url, "Guest")
    host = await Client.connect(a.url, host_player["token"])
    guest = await Client.connect(b.url, guest_player["token"])
    race = (await host.request("race_open", game="SH", variant="C4"))["race"]
    joined = await guest.request("race_join", race_id=race["id"])
    assert joined["type"] == "race" and len(joined["race"]["racers"]) == 2, joined
    assert len((await race_event(host, "joined"))["race"]["racers"]) == 2
    await subscribed(fleet.redis_url or "", fleet, f"race:{race['id']}", 2)
    await subscribed(fleet.redis_url or "", fleet, f"race:{race['id']}:{guest_player['id']}", 1)
    assert (await host.request("race_start", race_id=race["id"], countdown_s=0))["type"] == "race"
    host_start = await host.next_push("race_started", timeout=10)
    guest_start = await guest.next_push("race_started", timeout=10)
    assert host_start["game"]["code"] == guest_start["game"]["code"] == race["code"]
    guest_game = guest_start["game"]["id"]
    reply, _ = await play_one(guest, guest_game, Game.new(race["code"]))
    while True:  # the guest's move, seen on A (after their game's start)
        progress = await host.next_push("race_progress", timeout=5)
        assert progress["race_id"] == race["id"]
        if progress["racer"]["moves"] == reply["state"]["moves"]:
            break
    assert (await guest.request("resign", game_id=guest_game))["type"] == "game"
    assert (await host.request("resign", game_id=host_start["game"]["id"]))["type"] == "game"
    for client in (host, guest):
        finished = await race_event(client, "finished")
        assert finished["race"]["status"] == "finished"
        assert sorted(r["place"] for r in finished["race"]["racers"]) == [1, 2]
    extra = [m for m in host.pushed + guest.pushed if m.get("event") == "finished"]
    assert not extra, extra  # ended once, by one instance
