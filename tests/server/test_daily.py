"""Daily challenges over real WebSockets and HTTP with an injected clock, on both databases."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from engine import parse_code
from server.features.dailies.model import candidate, commitment
from server.rules.days import DAY_MS, FAMILIES, day_of, day_start_ms
from tests.server.competing import (
    clocked_server,
    daily_board,
    independent_ranking,
    line_with_progress,
    play,
    random_line,
    stored_daily_codes,
    verify_entry,
    whole_board,
)
from tests.support import Client, ManualClock, ahttp, new_player

START_MS = day_start_ms("2031-03-14") + 10 * 3_600_000  # 10:00 UTC


@pytest.fixture(scope="module")
def clock(database_url: str) -> ManualClock:
    """One clock per backend's server (so both runs see the same days)."""
    return ManualClock(START_MS)


@pytest.fixture(scope="module")
def daily_server(database_url: str, clock: ManualClock) -> Iterator[str]:
    with clocked_server(database_url, clock) as base:
        yield base


async def today(base: str) -> dict[str, Any]:
    status, body = await ahttp("GET", f"{base}/api/daily")
    assert status == 200, body
    return dict(body)


async def start_daily(base: str, family: str, name: str | None = None) -> tuple[Client, dict[str, Any]]:
    player = await new_player(base, name)
    client = await Client.connect(base, player["token"])
    reply = await client.request("new_game", daily=family)
    assert reply["type"] == "game", reply
    return client, reply


async def wait_result(base: str, game_id: str, result: str, timeout: float = 15) -> dict[str, Any]:
    """Poll a game until the day-end sweeper (driven by the injected clock) has ended it."""
    deadline = time.monotonic() + timeout
    while True:
        status, body = await ahttp("GET", f"{base}/api/games/{game_id}")
        assert status == 200, body
        if body["game"]["result"] == result or time.monotonic() > deadline:
            return dict(body)
        await asyncio.sleep(0.1)


async def test_today_is_sealed_commitments_and_next_reset(
    daily_server: str, database_url: str, clock: ManualClock
) -> None:
    body = await today(daily_server)
    day = day_of(clock.now)
    assert body["day"] == day and body["today"] is True and body["sealed"] is True
    assert body["starts_at"] == day_start_ms(day) and body["ends_at"] == day_start_ms(day) + DAY_MS
    assert body["ends_at"] > clock.now >= body["starts_at"]
    assert "codes" not in body and list(body["challenges"]) == list(FAMILIES)
    assert all(set(c) == {"commitment"} for c in body["challenges"].values())  # no code, no salt
    commitments = {c["commitment"] for c in body["challenges"].values()}
    assert len(commitments) == len(FAMILIES) and all(len(c) == 64 for c in commitments)
    stored = await stored_daily_codes(database_url, day)
    for family, code in stored.items():
        assert parse_code(code).family == family
        assert len(code.rsplit("-", 1)[1]) == 13  # a long seed: not searchable from what a player sees
    assert not any(code in str(body) for code in stored.values())
    assert (await today(daily_server))["challenges"] == body["challenges"]
    status, same = await ahttp("GET", f"{daily_server}/api/daily/{day}")
    assert status == 200 and same["challenges"] == body["challenges"] and same["today"] is True
    assert "solution_lengths" not in body  # a difficulty figure would hint at today's deals


async def test_simultaneous_first_requests_agree_across_instances(
    daily_server: str, database_url: str, clock: ManualClock
) -> None:
    clock.advance(DAY_MS)  # a day nobody has asked for yet
    with clocked_server(database_url, clock) as other:
        bases = [daily_server, other] * 8
        answers = await asyncio.gather(*(today(base) for base in bases))
        starts = await asyncio.gather(*(start_daily(base, "SH1-C4") for base in (daily_server, other) * 3))
    assert len({str(a["challenges"]) for a in answers}) == 1
    day = day_of(clock.now)
    agreed = await stored_daily_codes(database_url, day)
    for _, reply in starts:  # a daily's game is named by day and family, never by its code
        assert reply["game"]["code"] is None and reply["state"]["code"] is None
        assert (reply["game"]["daily"], reply["game"]["family"]) == (day, "SH1-C4")
    for client, _ in starts:
        await client.close()

    # derived from the server secret: another secret gives other candidates
    def candidates(secret: str) -> set[str]:
        return {str(candidate(secret, day, "SH1-C4", n)) for n in range(30)}

    assert agreed["SH1-C4"] in candidates("test-secret")
    assert agreed["SH1-C4"] not in candidates("another-secret")


async def test_first_attempt_is_ranked_later_ones_are_practice(
    daily_server: str, database_url: str, clock: ManualClock
) -> None:
    day = day_of(clock.now)
    client, first = await start_daily(daily_server, "sh1-c2", "Twice")
    assert first["game"]["ranked"] is True and first["game"]["daily"] == day
    second = await client.request("new_game", daily="SH1-C2")
    assert second["game"]["ranked"] is False and second["game"]["daily"] == day
    code = (await stored_daily_codes(database_url, day))["SH1-C2"]
    by_code = await client.request("new_game", code=code)
    assert by_code["game"]["ranked"] is False and by_code["game"]["daily"] == day
    other = await client.request("new_game", daily="HH1-N")  # another family: its own first attempt
    assert other["game"]["ranked"] is True
    bad = await client.request("new_game", daily="SH1-C3")
    assert bad["type"] == "error" and bad["code"] == "bad_message" and bad["field"] == "daily"
    await client.close()

    player = await new_player(daily_server, "Tabs")  # four tabs at once: exactly one ranked attempt
    tabs = [await Client.connect(daily_server, player["token"]) for _ in range(4)]
    replies = await asyncio.gather(*(tab.request("new_game", daily="SH1-C1") for tab in tabs))
    assert sorted(r["game"]["ranked"] for r in replies) == [False, False, False, True]
    for tab in tabs:
        await tab.close()


async def test_day_rollover_expires_unfinished_attempts_and_counts_them(
    daily_server: str, database_url: str, clock: ManualClock
) -> None:
    clock.advance(DAY_MS)  # a fresh day: earlier tests' open attempts are not on this board
    before = await today(daily_server)
    codes = await stored_daily_codes(database_url, before["day"])
    # the first family whose deal allows some progress (until the solver vouches for every daily)
    family, line = next((f, found) for f in FAMILIES if (found := line_with_progress(codes[f])))
    code = codes[family]
    ada, ada_game = await start_daily(daily_server, family, "Ada")  # plays, leaves it open
    state = await play(ada, ada_game["game"]["id"], line)
    assert state["progress"] > 0
    bob, bob_game = await start_daily(daily_server, family, "Bob")  # resigns at once
    await bob.request("resign", game_id=bob_game["game"]["id"])
    cy, cy_game = await start_daily(daily_server, family, "Cy")  # ranked left open, practice played
    practice = await cy.request("new_game", daily=family)
    await play(cy, practice["game"]["id"], line)
    await cy.request("resign", game_id=practice["game"]["id"])
    sealed = await daily_board(daily_server, before["day"], family.lower())
    assert sealed["code"] is None and sealed["family"] == family
    assert [e["player"]["name"] for e in sealed["entries"]] == ["Bob"]
    status, refused = await ahttp("GET", f"{daily_server}/api/leaderboards/{code}")
    assert status == 403 and refused["error"]["code"] == "sealed"  # by code: only once the day is over

    clock.advance(DAY_MS)  # midnight passes: the sweeper ends yesterday's open ranked attempts
    expired = await wait_result(daily_server, ada_game["game"]["id"], "expired")
    assert expired["game"]["result"] == "expired" and expired["state"]["progress"] == state["progress"]
    assert (await wait_result(daily_server, cy_game["game"]["id"], "expired"))["game"]["result"] == "expired"
    board = await whole_board(daily_server, code)
    assert {e["player"]["name"]: e["game_id"] for e in board} == {
        "Ada": ada_game["game"]["id"],
        "Bob": bob_game["game"]["id"],
        "Cy": cy_game["game"]["id"],  # the ranked attempt, not the better practice one
    }
    assert board[0]["player"]["name"] == "Ada" and board[0]["result"] == "expired"
    assert [independent_ranking([e])[0] for e in board] == independent_ranking(board)
    await asyncio.gather(*(verify_entry(daily_server, e) for e in board))

    after = await today(daily_server)
    assert after["day"] == day_of(clock.now) != before["day"]
    assert not set((await stored_daily_codes(database_url, after["day"])).values()) & set(codes.values())
    status, past = await ahttp("GET", f"{daily_server}/api/daily/{before['day']}")
    assert status == 200 and past["codes"] == codes and past["today"] is False and past["sealed"] is False
    for fam, published in past["challenges"].items():  # the code played all day is the one committed to
        assert published["commitment"] == before["challenges"][fam]["commitment"]
        assert commitment(before["day"], fam, published["code"], published["salt"]) == published["commitment"]
    opened = await daily_board(daily_server, before["day"], family)
    assert opened["code"] == code and opened["entries"] == board
    lengths = past["solution_lengths"]  # every daily was proven winnable: its length is known
    assert set(lengths) == set(past["codes"]) and all(n and n > 0 for n in lengths.values())
    replay = await ada.request("new_game", code=code)  # yesterday's daily is practice now
    assert replay["game"]["ranked"] is False and replay["game"]["daily"] == before["day"]
    for client in (ada, bob, cy):
        await client.close()


async def test_the_day_ends_at_the_action_one_millisecond_either_side_of_midnight(
    daily_server: str, database_url: str, clock: ManualClock
) -> None:
    """A move 1 ms before midnight counts; 1 ms after it every change of the ranked attempt is
    ``day_over``, before the sweeper has expired it and after; practice on the code plays on."""
    clock.advance(DAY_MS)  # a day of its own
    day = (await today(daily_server))["day"]
    code = (await stored_daily_codes(database_url, day))["HH1-N"]
    line = random_line(code, 7, 3)
    client, started = await start_daily(daily_server, "HH1-N", "Late")
    game_id = started["game"]["id"]
    end = day_start_ms(day) + DAY_MS

    clock.now = end - 1
    counted = await client.act(game_id, 0, **line[0].to_json())
    assert counted["type"] == "result" and counted["state"]["seq"] == 1, counted
    clock.now = end + 1  # the sweeper looks every 0.5 s: it has not run yet
    for refused in (
        await client.act(game_id, 1, **line[1].to_json()),
        await client.act(game_id, 1, type="undo"),
        await client.request("resign", game_id=game_id),
    ):
        assert refused["type"] == "error" and refused["code"] == "day_over", refused
    again = await client.act(game_id, 0, **line[0].to_json())  # the repeat of what counted
    assert again["type"] == "result" and again["duplicate"] is True, again

    swept = await wait_result(daily_server, game_id, "expired")  # the sweeper only tidies
    assert swept["game"]["result"] == "expired" and swept["state"]["seq"] == 1, swept
    after = await client.act(game_id, 1, **line[1].to_json())
    assert after["type"] == "error" and after["code"] == "day_over", after
    [entry] = [e for e in await whole_board(daily_server, code) if e["game_id"] == game_id]
    assert entry["result"] == "expired" and entry["moves"] == swept["state"]["moves"]

    practice = await client.request("new_game", code=code)  # yesterday's code is practice now
    assert practice["game"]["ranked"] is False and practice["game"]["daily"] == day
    assert (await client.act(practice["game"]["id"], 0, **line[0].to_json()))["type"] == "result"
    await client.close()


async def test_past_future_and_bad_days(daily_server: str, clock: ManualClock) -> None:
    tomorrow = day_of(clock.now + DAY_MS)
    status, body = await ahttp("GET", f"{daily_server}/api/daily/{tomorrow}")
    assert status == 404 and body["error"]["code"] == "not_found"
    assert (await ahttp("GET", f"{daily_server}/api/daily/2001-01-01"))[0] == 404  # never published
    for bad in ("yesterday", "2031-02-30", "2031-3-1"):
        status, body = await ahttp("GET", f"{daily_server}/api/daily/{bad}")
        assert status == 400 and body["error"]["code"] == "bad_message", bad


async def test_days_never_repeat(daily_server: str, database_url: str, clock: ManualClock) -> None:
    seen: set[str] = set()
    for _ in range(15):
        clock.advance(DAY_MS)
        await today(daily_server)
        codes = (await stored_daily_codes(database_url, day_of(clock.now))).values()
        assert not seen & set(codes)
        seen.update(codes)
    assert len(seen) == 15 * len(FAMILIES)
