"""Races over real WebSockets on both databases: three racers, a spectator, a reconnect."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

from server.config import Settings
from server.features.races.service import RETAIN_FINISHED_MS
from tests.conftest import ClockedServer
from tests.server.competing import line_with_progress, play, verify_entry, whole_board, winnable_hh
from tests.support import ONE_ADDRESS, Client, ManualClock, free_port, new_player, running_server

TOKENS: dict[str, str] = {}  # racer name -> token, to reconnect


async def racer(base: str, name: str) -> Client:
    player = await new_player(base, name)
    TOKENS[name] = player["token"]
    return await Client.connect(base, player["token"])


def no_boards(message: dict[str, Any]) -> None:
    """Race messages carry progress, never a board or a state."""
    text = json.dumps(message)
    assert '"board"' not in text and '"state"' not in text, message


async def test_race_of_three_with_a_spectator_and_a_reconnect(clocked_server: ClockedServer) -> None:
    server, clock = clocked_server.url, clocked_server.clock
    code, win = winnable_hh()
    slow = line_with_progress(code)
    assert slow is not None
    ada, bob, cy = [await racer(server, n) for n in ("Ada", "Bob", "Cy")]
    spectator = await Client.connect(server)  # anonymous

    opened = await ada.request("race_open", code=code)
    assert opened["type"] == "race" and opened["role"] == "owner", opened
    race_id = opened["race"]["id"]
    assert opened["race"]["link"] == f"/#race={race_id}" and opened["race"]["status"] == "open"
    assert (await bob.request("race_join", race_id=race_id))["role"] == "racer"
    assert (await ada.next_push("race_update"))["event"] == "joined"
    joined = await cy.request("race_join", race_id=race_id)
    assert [r["player"]["name"] for r in joined["race"]["racers"]] == ["Ada", "Bob", "Cy"]
    watching = await spectator.request("race_watch", race_id=race_id)
    assert watching["role"] == "spectator" and watching["game_id"] is None

    refused = await bob.request("race_start", race_id=race_id)
    assert refused["type"] == "error" and refused["code"] == "forbidden"
    started = await ada.request("race_start", race_id=race_id, countdown_s=1)
    assert started["race"]["status"] == "countdown" and started["race"]["starts_at"] is not None
    for client in (ada, bob, cy, spectator):
        countdown = await client.next_push("race_update")
        while countdown["event"] != "countdown":
            countdown = await client.next_push("race_update")
        assert countdown["race"]["starts_at"] == started["race"]["starts_at"]
    clock.advance(1000)  # the countdown runs on the server's clock: no waiting

    games = {}
    for name, client in (("Ada", ada), ("Bob", bob), ("Cy", cy)):
        go = await client.next_push("race_started", timeout=10)
        assert go["race_id"] == race_id and go["game"]["code"] == code and go["game"]["race_id"] == race_id
        assert go["state"]["seq"] == 0
        games[name] = go["game"]["id"]
    assert len(set(games.values())) == 3
    begun = await spectator.next_push("race_update")
    assert begun["event"] == "started" and begun["race"]["status"] == "running"
    assert {r["player"]["name"]: r["game_id"] for r in begun["race"]["racers"]} == games
    late = await Client.connect(server, (await new_player(server, "Late"))["token"])
    refused = await late.request("race_join", race_id=race_id)
    assert refused["type"] == "error" and refused["code"] == "conflict"
    seen = await spectator.request("watch", game_id=games["Ada"])  # boards only when asked for
    assert seen["role"] == "spectator"

    await asyncio.gather(play(ada, games["Ada"], win), play(cy, games["Cy"], slow))
    await cy.close()  # Cy's connection drops mid-race …
    cy = await Client.connect(server, TOKENS["Cy"])
    back = await cy.request("race_join", race_id=race_id)  # … and Cy comes back to it
    assert back["role"] == "racer" and back["game_id"] == games["Cy"]
    assert back["race"]["status"] == "running"
    await bob.request("resign", game_id=games["Bob"])
    await cy.request("race_leave", race_id=race_id)  # leaving a running race resigns

    finished = await spectator.next_push("race_update")
    while finished["event"] != "finished":
        finished = await spectator.next_push("race_update")
    places = {r["player"]["name"]: r["place"] for r in finished["race"]["racers"]}
    assert places == {"Ada": 1, "Cy": 2, "Bob": 3}  # the winner, then by progress (Bob made none)
    racers = {r["player"]["name"]: r for r in finished["race"]["racers"]}
    assert racers["Ada"]["status"] == "won" and racers["Ada"]["progress"] == racers["Ada"]["progress_total"]
    assert racers["Bob"]["status"] == "resigned" and racers["Cy"]["finished"] is True

    progress = [m for m in spectator.pushed if m["type"] in ("race_progress", "race_update")]
    assert any(m["type"] == "race_progress" and m["racer"]["player"]["name"] == "Ada" for m in progress)
    for message in [*progress, finished, begun]:
        no_boards(message)
    ada_moves = [
        m["racer"]["moves"]
        for m in progress
        if m["type"] == "race_progress" and m["racer"]["game_id"] == games["Ada"]
    ]
    assert ada_moves == sorted(ada_moves) and ada_moves[-1] == len(win)

    board = await whole_board(server, code)  # race games count on the code's board like any other
    assert {e["game_id"] for e in board} >= set(games.values())
    await asyncio.gather(*(verify_entry(server, e) for e in board))
    for client in (ada, bob, cy, spectator, late):
        await client.close()


async def test_race_errors_leaving_and_cancelling(server: str) -> None:
    owner, guest = await racer(server, "Owner"), await racer(server, "Guest")
    anonymous = await Client.connect(server)
    denied = await anonymous.request("race_open", game="HH")
    assert denied["type"] == "error" and denied["code"] == "forbidden"
    assert (await owner.request("race_join", race_id="r_missing"))["code"] == "not_found"
    bad = await owner.request("race_open", code="SH1-C9-AAAAAAA")
    assert bad["type"] == "error" and bad["code"] == "bad_code"

    opened = await owner.request("race_open", game="SH", variant="C2")  # a random deal
    race_id = opened["race"]["id"]
    assert opened["race"]["code"].startswith("SH1-C2-")
    too_long = await owner.request("race_start", race_id=race_id, countdown_s=600)
    assert too_long["type"] == "error" and too_long["field"] == "countdown_s"
    await guest.request("race_join", race_id=race_id)
    left = await guest.request("race_leave", race_id=race_id)
    assert left == {"type": "race_left", "race_id": race_id, "id": left["id"]}
    update = await owner.next_push("race_update")
    while update["event"] != "left":
        update = await owner.next_push("race_update")
    assert [r["player"]["name"] for r in update["race"]["racers"]] == ["Owner"]

    await guest.request("race_watch", race_id=race_id)
    await owner.request("race_leave", race_id=race_id)  # the owner leaving before the start cancels
    cancelled = await guest.next_push("race_update")
    while cancelled["event"] != "cancelled":
        cancelled = await guest.next_push("race_update")
    assert cancelled["race"]["status"] == "cancelled"
    again = await guest.request("race_join", race_id=race_id)
    assert again["type"] == "error" and again["code"] == "conflict"
    for client in (owner, guest, anonymous):
        await client.close()


async def test_a_race_is_found_again_from_storage(server: str, database_url: str) -> None:
    """Another instance (or this one after a restart) rebuilds the race from its tables."""
    owner, guest = await racer(server, "Opener"), await racer(server, "Joiner")
    opened = await owner.request("race_open", game="HH")
    race_id = opened["race"]["id"]
    await guest.request("race_join", race_id=race_id)
    with running_server(Settings(database_url=database_url, secret="test-secret")) as other:
        watcher = await Client.connect(other)
        seen = await watcher.request("race_watch", race_id=race_id)
        assert seen["type"] == "race", seen
        assert [r["player"]["name"] for r in seen["race"]["racers"]] == ["Opener", "Joiner"]
        assert seen["race"]["status"] == "open" and seen["race"]["code"] == opened["race"]["code"]
        await watcher.close()
    for client in (owner, guest):
        await client.close()


def tasks_on(listen: str) -> float:
    """The server's event-loop task count, from its metrics listener."""
    with urllib.request.urlopen(f"http://{listen}/metrics", timeout=10) as answer:
        for line in answer.read().decode().splitlines():
            if line.startswith("solitaire_event_loop_tasks "):
                return float(line.split()[-1])
    raise AssertionError("no solitaire_event_loop_tasks in /metrics")


async def finish_a_race(host: Client, guest: Client) -> None:
    opened = await host.request("race_open", game="SH", variant="C4")
    assert opened["type"] == "race", opened
    race_id = opened["race"]["id"]
    await guest.request("race_join", race_id=race_id)
    await host.request("race_start", race_id=race_id, countdown_s=0)
    for client in (host, guest):
        await client.next_push("race_started")
    await guest.request("race_leave", race_id=race_id)  # leaving a running race resigns
    await host.request("race_watch", race_id=race_id)
    await host.request("race_leave", race_id=race_id)
    update = await host.next_push("race_update")
    while update["event"] != "finished":
        update = await host.next_push("race_update")


async def test_finished_races_are_kept_by_one_timer_not_a_task_each(tmp_path: Path) -> None:
    """A finished race stays in memory a while (RETAIN_FINISHED_MS); a sleeping task per race
    for that while piled up with every race played, so one timer forgets them all in turn."""
    listen = f"127.0.0.1:{free_port()}"
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'r.db'}",
        secret="t",
        limits=replace(ONE_ADDRESS, races_per_minute=0, games_per_minute=0),
        metrics_listen=listen,
    )
    clock = ManualClock()
    with running_server(settings, clock) as base:
        host, guest = await racer(base, "Host"), await racer(base, "Guest")
        await finish_a_race(host, guest)
        after_one = await asyncio.to_thread(tasks_on, listen)
        for _ in range(8):
            await finish_a_race(host, guest)
        deadline = time.monotonic() + 10
        while (after := await asyncio.to_thread(tasks_on, listen)) >= after_one + 4:
            assert time.monotonic() < deadline, f"{after_one} tasks after one race, {after} after nine"
            await asyncio.sleep(0.05)
        clock.advance(RETAIN_FINISHED_MS + 2_000)  # every finished race is forgotten, the timer ends
        deadline = time.monotonic() + 10
        while (await asyncio.to_thread(tasks_on, listen)) >= after_one:
            assert time.monotonic() < deadline, "the finished races' timer did not end"
            await asyncio.sleep(0.05)
        for client in (host, guest):
            await client.close()
