"""Ghost races: a recorded win raced again, the ghost's progress pushed at its recorded times."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from server.rules.days import day_start_ms
from tests.server.competing import clocked_server, winnable_hh
from tests.support import Client, ManualClock, new_player

START_MS = day_start_ms("2033-02-01") + 9 * 3_600_000
STEP_MS = 2_000  # the recorded game plays one action every two seconds


@pytest.fixture(scope="module")
def clock(database_url: str) -> ManualClock:
    return ManualClock(START_MS)


@pytest.fixture(scope="module")
def base(database_url: str, clock: ManualClock) -> Iterator[str]:
    with clocked_server(database_url, clock) as url:
        yield url


async def record_win(base: str, clock: ManualClock, name: str = "Recorded") -> tuple[str, str, int]:
    """(game id, code, actions) of a win played one action every STEP_MS."""
    code, line = winnable_hh()
    player = await new_player(base, name)
    client = await Client.connect(base, player["token"])
    game = (await client.request("new_game", code=code))["game"]
    for seq, action in enumerate(line):
        reply = await client.act(game["id"], seq, **action.to_json())
        assert reply["type"] == "result", reply
        clock.advance(STEP_MS)
    await client.close()
    return game["id"], code, len(line)


async def test_a_ghost_race_against_a_recorded_win(base: str, clock: ManualClock) -> None:
    recorded, code, length = await record_win(base, clock)
    racer = await new_player(base, "Racer")
    client = await Client.connect(base, racer["token"])
    reply = await client.request("ghost_race", game_id=recorded)
    assert reply["type"] == "ghost_race", reply
    assert reply["game"]["code"] == code and reply["game"]["owner"]["id"] == racer["id"]
    assert reply["ghost"]["status"] == "waiting" and reply["ghost"]["player"]["name"] == "Recorded"
    assert reply["recorded"]["status"] == "won" and reply["recorded"]["elapsed_ms"] == (length - 1) * STEP_MS
    race_id, game_id = reply["race_id"], reply["game"]["id"]
    clock.advance(60_000)  # nothing moves before the racer's first action
    assert not [m for m in client.pushed if m["type"] == "ghost_progress"]
    first = await client.request("act", game_id=game_id, seq=0, action={"type": "draw"})
    assert first["type"] == "result", first
    progress = await client.next_push("ghost_progress")  # the ghost's first action is at 0 s
    assert progress["race_id"] == race_id and progress["racer"]["moves"] >= 0
    assert progress["racer"]["elapsed_ms"] == 0
    clock.advance(STEP_MS)
    second = await client.next_push("ghost_progress")
    assert second["racer"]["elapsed_ms"] == STEP_MS
    clock.advance(length * STEP_MS)  # the ghost plays to its win
    last = second
    while not last["racer"]["finished"]:
        last = await client.next_push("ghost_progress")
    assert last["racer"]["status"] == "won" and last["racer"]["progress"] == last["racer"]["progress_total"]
    await client.request("resign", game_id=game_id)
    finished = await client.next_push("ghost_finished")
    assert finished["winner"] == "ghost" and finished["racer"]["status"] == "resigned"
    await client.close()


async def test_only_finished_games_can_be_raced(base: str) -> None:
    player = await new_player(base)
    client = await Client.connect(base, player["token"])
    open_game = await client.request("new_game", code="SH1-C4-AAAAAJ2")
    refused = await client.request("ghost_race", game_id=open_game["game"]["id"])
    assert refused["type"] == "error" and refused["code"] == "conflict"
    missing = await client.request("ghost_race", game_id="g_000000000000")
    assert missing["code"] == "not_found"
    daily = await client.request("new_game", daily="SH1-C2")
    await client.request("resign", game_id=daily["game"]["id"])
    await client.close()
    other = await Client.connect(base, (await new_player(base))["token"])
    sealed = await other.request("ghost_race", game_id=daily["game"]["id"])
    assert sealed["code"] == "sealed"  # another's daily attempt, before its day ends
    await other.close()


async def test_a_ghost_race_is_followed_again_after_a_reconnect(base: str, clock: ManualClock) -> None:
    recorded, _, length = await record_win(base, clock, "Recorded again")
    racer = await new_player(base, "Reconnecting")
    client = await Client.connect(base, racer["token"])
    reply = await client.request("ghost_race", game_id=recorded)
    race_id, game_id = reply["race_id"], reply["game"]["id"]
    assert (await client.request("act", game_id=game_id, seq=0, action={"type": "draw"}))["type"] == "result"
    assert (await client.next_push("ghost_progress"))["racer"]["elapsed_ms"] == 0
    await client.close()  # the connection drops; the ghost goes on

    clock.advance(STEP_MS)
    again = await Client.connect(base, racer["token"])
    watched = await again.request("ghost_watch", race_id=race_id)
    assert watched["type"] == "ghost_watch", watched
    assert watched["game_id"] == game_id and watched["recorded"]["status"] == "won"
    assert watched["ghost"]["elapsed_ms"] <= STEP_MS and not watched["ghost"]["finished"]
    clock.advance(length * STEP_MS)
    last = await again.next_push("ghost_progress")
    while not last["racer"]["finished"]:
        last = await again.next_push("ghost_progress")
    await again.request("open_game", game_id=game_id)
    await again.request("resign", game_id=game_id)
    assert (await again.next_push("ghost_finished"))["winner"] == "ghost"
    # Finished, it is forgotten; another player's id is never theirs to follow.
    assert (await again.request("ghost_watch", race_id=race_id))["code"] == "not_found"
    other = await new_player(base)
    stranger = await Client.connect(base, other["token"])
    assert (await stranger.request("ghost_watch", race_id="h_0a1b2c3d4e5f"))["code"] == "not_found"
    await stranger.close()
    await again.close()
