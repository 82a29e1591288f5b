"""Leaderboards, dailies and races through the client library, against a real server."""

from __future__ import annotations

import asyncio

from client import SolitaireClient
from tests.contract import SENT
from tests.support import RECEIVED

CODE = "HH1-N-AAAAAC5"  # heart:25 pairs with the waste at once


def make(server: str, token: str | None = None) -> SolitaireClient:
    return SolitaireClient(server, token, trace=RECEIVED.append, trace_sent=SENT.append)


async def token(server: str, name: str) -> str:
    return (await SolitaireClient.create_player(server, name)).token


async def test_a_leaderboard_feed_follows_results(server: str) -> None:
    code = "SH1-C1-AAAAAJ2"
    async with make(server) as anon, make(server, await token(server, "Board")) as player:
        feed = await anon.subscribe_leaderboard(code, limit=5)
        assert feed.code == code and feed.entries == []
        game = await player.new_game(code)
        version = feed.version
        await game.resign()
        await feed.wait_change(version, timeout=10)
        assert feed.entries[0]["player"]["name"] == "Board" and feed.entries[0]["rank"] == 1
        page = await anon.http.leaderboard(code)
        assert page["entries"] == feed.entries
        await anon.unsubscribe_leaderboard(code)
        assert code not in anon.leaderboards


async def test_dailies(server: str) -> None:
    async with make(server, await token(server, "Daily")) as client:
        today = await client.daily()
        game = await client.new_daily("HH1-N")
        assert "codes" not in today and set(today["challenges"]["HH1-N"]) == {"commitment"}  # sealed
        assert game.code is None and game.info.family == "HH1-N"
        assert game.info.daily == today["day"] and game.info.ranked
        again = await client.new_daily("HH1-N")  # a second attempt is played but not ranked
        assert again.id != game.id and not again.info.ranked


async def test_a_race_from_open_to_finish(server: str) -> None:
    host_token, guest_token = await token(server, "Host"), await token(server, "Guest")
    async with make(server, host_token) as host, make(server, guest_token) as guest, make(server) as fan:
        race = await host.race_open(CODE)
        joined = await guest.race_join(race.id)
        watched = await fan.race_watch(race.id)
        assert joined.role == "racer" and watched.role == "spectator" and len(watched.racers) == 2
        await race.start(0)
        mine, theirs = await race.wait_game(10), await joined.wait_game(10)
        assert mine.code == theirs.code == CODE and mine.id != theirs.id
        version = watched.version
        await theirs.pair("heart:25", "waste")
        await watched.wait_change(version, timeout=10)
        progress = {r["player"]["name"]: r["progress"] for r in watched.racers}
        assert progress["Guest"] == 1 and watched.status == "running"
        await guest.race_leave(race.id)  # a running racer leaving resigns
        await mine.resign()
        await asyncio.wait_for(watched.wait_status("finished"), 10)
        assert "finished" in watched.events and all(r["finished"] for r in watched.racers)
