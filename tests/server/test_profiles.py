"""A player's home: statistics kept as games finish (daily ranks once the day ends), history in
keyset pages with filters and what other viewers may see, and replay steps against the engine."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from engine import Game
from engine.solver import solve
from server.clock import wall_clock_ms
from server.features.moderation.service import Moderation
from server.features.profiles.model import fold_daily, fold_finish, median_percentile, percentile
from server.rules.days import DAY_MS, day_start_ms
from server.storage.db import Database
from server.storage.leaderboards import set_standing
from tests.server.competing import (
    Line,
    clocked_server,
    line_with_progress,
    play,
    random_line,
    stored_daily_codes,
    winnable_hh,
)
from tests.support import Client, ManualClock, ahttp, new_player
from wire import Standing

START_MS = day_start_ms("2032-05-10") + 9 * 3_600_000


@pytest.fixture(scope="module")
def clock(database_url: str) -> ManualClock:
    return ManualClock(START_MS)


@pytest.fixture(scope="module")
def home(database_url: str, clock: ManualClock) -> Iterator[str]:
    with clocked_server(database_url, clock) as base:
        yield base


async def get(base: str, path: str, token: str | None = None) -> Any:
    status, body = await ahttp("GET", base + path, token=token)
    assert status == 200, (path, body)
    return body


def variant(stats: dict[str, Any], family: str) -> dict[str, Any]:
    return next(v for v in stats["variants"] if v["variant"] == family)


# -- pure ------------------------------------------------------------------------------------------


def test_streaks_and_bests_fold_one_game_at_a_time() -> None:
    row = None
    for won, moves, ms in [(True, 50, 9000), (True, 40, 12000), (False, 9, 100), (True, 45, 8000)]:
        row = fold_finish(row, won, moves, ms, 1)
    assert row is not None
    assert (row["played"], row["won"], row["current_streak"], row["best_streak"]) == (4, 3, 1, 2)
    assert (row["best_moves"], row["won_moves"], row["best_time_ms"]) == (40, 135, 8000)


def test_daily_streaks_count_consecutive_days_once() -> None:
    row = fold_daily(None, "2032-01-01", True)
    assert fold_daily(row, "2032-01-01", False) is None  # another family the same day
    row = fold_daily(row, "2032-01-02", True)
    assert row is not None and (row["days_played"], row["current_streak"]) == (2, 2)
    row = fold_daily(row, "2032-01-04", True)
    assert row is not None and (row["days_played"], row["current_streak"], row["best_streak"]) == (3, 1, 2)


def test_percentiles_and_their_median() -> None:
    assert percentile(1, 1) == 100 and percentile(1, 5) == 100 and percentile(5, 5) == 0
    assert percentile(2, 3) == 50
    counts = [0] * 101
    for value in (10, 20, 90):
        counts[value] += 1
    assert median_percentile(str(counts).replace(" ", "")) == 20
    counts[100] += 1
    assert median_percentile(str(counts).replace(" ", "")) == 55
    assert median_percentile(str([0] * 101)) is None


# -- over HTTP -------------------------------------------------------------------------------------


async def test_stats_after_a_win_and_resignations(home: str) -> None:
    code, line = winnable_hh()
    player = await new_player(home)
    client = await Client.connect(home, player["token"])
    for _ in range(2):
        game = await client.request("new_game", code="SH1-C4-AAAAAJ2")
        await client.request("resign", game_id=game["game"]["id"])
    won = await client.request("new_game", code=code)
    state = await play(client, won["game"]["id"], line)
    assert state["status"] == "won"
    await client.close()
    stats = await get(home, f"/api/players/{player['id']}/stats")
    assert [v["variant"] for v in stats["variants"]] == ["HH1-N", "SH1-C4", "SH1-C2", "SH1-C1"]
    hh = variant(stats, "HH1-N")
    assert (hh["played"], hh["won"], hh["win_rate"], hh["current_streak"], hh["best_streak"]) == (
        1,
        1,
        1.0,
        1,
        1,
    )
    assert hh["best_moves"] == hh["average_moves"] == state["moves"]
    assert hh["best_time_ms"] == state["elapsed_ms"]
    sh = variant(stats, "SH1-C4")
    assert (sh["played"], sh["won"], sh["win_rate"], sh["best_moves"]) == (2, 0, 0.0, None)
    assert variant(stats, "SH1-C1")["win_rate"] is None
    assert stats["games"] == [
        {"game": "heart_to_heart", "played": 1, "won": 1, "win_rate": 1.0},
        {"game": "seahaven", "played": 2, "won": 0, "win_rate": 0.0},
    ]
    assert stats["dailies"]["days_played"] == 0
    status, body = await ahttp("GET", f"{home}/api/players/p_000000000000/stats")
    assert status == 404, body


async def test_daily_ranks_are_fixed_once_the_day_ends(
    home: str, clock: ManualClock, database_url: str
) -> None:
    players = [await new_player(home) for _ in range(3)]
    finished = []
    for n, player in enumerate(players):
        client = await Client.connect(home, player["token"])
        game = await client.request("new_game", daily="SH1-C4")
        assert game["game"]["ranked"] is True
        if n == 0:  # the best of the three: some progress, then resigned
            code = (await stored_daily_codes(database_url, game["game"]["daily"]))["SH1-C4"]  # sealed today
            line = line_with_progress(code)
            assert line is not None
            await play(client, game["game"]["id"], line)
        await client.request("resign", game_id=game["game"]["id"])
        finished.append(game["game"])
        await client.close()
    first = await get(home, f"/api/players/{players[0]['id']}/stats")
    today = first["dailies"]
    assert (today["days_played"], today["current_streak"], today["best_rank"], today["ranked"]) == (
        1,
        1,
        None,
        0,
    )
    clock.advance(DAY_MS)  # the day is over: ranks are final
    first = (await get(home, f"/api/players/{players[0]['id']}/stats"))["dailies"]
    assert (first["best_rank"], first["ranked"], first["median_percentile"], first["current_streak"]) == (
        1,
        1,
        100,
        1,
    )
    # The two others gave up before a move: no day played, no streak, no rank (a real attempt
    # has one move at least), though their resignations stay on the day's board.
    last = (await get(home, f"/api/players/{players[1]['id']}/stats"))["dailies"]
    assert (last["days_played"], last["current_streak"], last["best_rank"], last["ranked"]) == (0, 0, None, 0)
    again = (await get(home, f"/api/players/{players[0]['id']}/stats"))["dailies"]
    assert again["ranked"] == 1  # fixed once
    clock.advance(DAY_MS)  # a day without a daily breaks the streak
    later = (await get(home, f"/api/players/{players[0]['id']}/stats"))["dailies"]
    assert (later["current_streak"], later["best_streak"], later["days_played"]) == (0, 1, 1)


async def standing(database_url: str, code: str, player_id: str, to: Standing, banned: bool = False) -> None:
    """An entry's review standing as an operator's decision leaves it (the board's counts too)."""
    db = Database.open(database_url)
    try:
        async with db.transaction() as tx:
            await set_standing(tx, code, player_id, to, banned)
    finally:
        await db.dispose()


async def ban(database_url: str, player_id: str) -> None:
    db = Database.open(database_url)
    try:
        await Moderation(db, wall_clock_ms).ban(("test", "test"), player_id, "seeded")
    finally:
        await db.dispose()


async def dailies_of(home: str, player: dict[str, Any]) -> dict[str, Any]:
    return dict((await get(home, f"/api/players/{player['id']}/stats"))["dailies"])


def one_move_without_progress(code: str) -> Line:
    """One move that clears nothing: an attempt, the least of them."""
    for seed in range(50):
        line = random_line(code, seed, 1)
        if line and Game.replay(code, line).progress == 0:
            return line
    raise AssertionError(f"no quiet first move on {code}")


async def test_a_daily_given_up_before_a_move_is_no_day_played(home: str, clock: ManualClock) -> None:
    """A daily opened and given up at once is no attempt: no day played, no streak, no rank."""
    clock.advance(5 * DAY_MS)  # a day of its own
    player = await new_player(home)
    client = await Client.connect(home, player["token"])
    game = (await client.request("new_game", daily="HH1-N"))["game"]
    assert game["ranked"] is True, game
    await client.request("resign", game_id=game["id"])
    await client.close()
    today = await dailies_of(home, player)
    assert (today["days_played"], today["current_streak"], today["best_streak"]) == (0, 0, 0)
    clock.advance(DAY_MS)
    assert (await dailies_of(home, player))["best_rank"] is None


async def test_ranks_count_listed_entries_only_and_a_flagged_result_is_held_until_cleared(
    home: str, clock: ManualClock, database_url: str
) -> None:
    """best_rank and median_percentile among what the default board shows: not the flagged
    (held, its time and rank too, until cleared), removed or banned entries, and bots apart."""
    clock.advance(3 * DAY_MS)  # a day of its own
    names = ("Flo", "Rex", "Ban", "Ann", "Bea")
    players = {name: await new_player(home, f"{name}{clock.now % 100_000}") for name in names}
    status, bot = await ahttp("POST", f"{home}/api/players", {"bot": True})
    assert status == 201, bot
    players["Bot"] = bot
    codes: dict[str, str] = {}
    for name, player in players.items():
        client = await Client.connect(home, player["token"])
        game = (await client.request("new_game", daily="SH1-C4"))["game"]
        assert game["ranked"] is True, game
        if not codes:
            codes.update(await stored_daily_codes(database_url, game["daily"]))
        code = codes["SH1-C4"]
        if name == "Flo":  # the solver's line: the best result, flagged for review
            line = solve(code, 200_000).actions
            assert line, "the daily is proven winnable"
            assert (await play(client, game["id"], line))["status"] == "won"
        else:
            if name in ("Rex", "Ban", "Ann"):  # some progress: ahead of a resignation at once
                progress = line_with_progress(code)
                assert progress is not None
                await play(client, game["id"], progress)
            else:  # a real attempt (one move, no progress) behind those
                await play(client, game["id"], one_move_without_progress(code))
            await client.request("resign", game_id=game["id"])
        await client.close()
    code = codes["SH1-C4"]
    await standing(database_url, code, players["Flo"]["id"], Standing.FLAGGED)
    await standing(database_url, code, players["Rex"]["id"], Standing.REMOVED)
    await ban(database_url, players["Ban"]["id"])

    flo = await get(home, f"/api/players/{players['Flo']['id']}/stats")  # during the day
    assert (variant(flo, "SH1-C4")["won"], variant(flo, "SH1-C4")["best_time_ms"]) == (0, None)
    clock.advance(DAY_MS)  # the day is over: ranks are final
    seen = {name: await dailies_of(home, player) for name, player in players.items()}
    figures = {name: (d["best_rank"], d["ranked"], d["median_percentile"]) for name, d in seen.items()}
    assert figures == {
        "Flo": (None, 0, None),  # under review: held
        "Rex": (None, 0, None),  # removed
        "Ban": (None, 0, None),  # banned
        "Ann": (1, 1, 100),  # first of the two listed people
        "Bea": (2, 1, 0),
        "Bot": (1, 1, 100),  # alone on the bots' board
    }
    flo = await get(home, f"/api/players/{players['Flo']['id']}/stats")  # still under review
    assert (variant(flo, "SH1-C4")["won"], variant(flo, "SH1-C4")["best_time_ms"]) == (0, None)
    assert flo["dailies"]["days_played"] == 1

    await standing(database_url, code, players["Flo"]["id"], Standing.CLEARED)  # an operator clears it
    flo = await get(home, f"/api/players/{players['Flo']['id']}/stats")
    assert (flo["dailies"]["best_rank"], flo["dailies"]["median_percentile"]) == (1, 100)
    won = variant(flo, "SH1-C4")
    assert (won["won"], won["played"]) == (1, 1) and won["best_time_ms"] is not None
    assert (await dailies_of(home, players["Ann"]))["best_rank"] == 1  # fixed once, at the day's end


async def test_history_pages_filters_and_what_others_see(home: str, clock: ManualClock) -> None:
    player = await new_player(home)
    client = await Client.connect(home, player["token"])
    ids = []
    for code in ("SH1-C4-AAAAAJ2", "SH1-C2-AAAAAJ2", "HH1-N-AAAAAAM", "SH1-C4-AAAAAJ3"):
        game = await client.request("new_game", code=code)
        await client.request("resign", game_id=game["game"]["id"])
        ids.append(game["game"]["id"])
        clock.advance(1000)
    open_game = await client.request("new_game", code="SH1-C1-AAAAAJ2")
    clock.advance(1000)
    daily = await client.request("new_game", daily="HH1-N")
    await client.request("resign", game_id=daily["game"]["id"])
    await client.close()
    base = f"/api/players/{player['id']}/games"
    seen, cursor = [], None
    while True:
        page = await get(home, base + "?limit=2" + (f"&cursor={cursor}" if cursor else ""), player["token"])
        seen += [g["id"] for g in page["games"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [daily["game"]["id"], open_game["game"]["id"], *reversed(ids)]  # newest first, all
    others = await get(home, base)  # no token: finished only, and no daily of a day not over
    assert [g["id"] for g in others["games"]] == list(reversed(ids))
    assert [g["variant"] for g in (await get(home, base + "?variant=SH1-C4"))["games"]] == ["SH1-C4"] * 2
    assert [g["code"][:2] for g in (await get(home, base + "?game=HH"))["games"]] == ["HH"]
    own_daily = await get(home, base + "?daily=true", player["token"])
    assert [g["id"] for g in own_daily["games"]] == [daily["game"]["id"]]
    assert (await get(home, base + "?result=open", player["token"]))["games"][0]["status"] == "playing"
    assert (await get(home, base + "?result=open"))["games"] == []
    for bad in ("?cursor=nonsense", "?result=lost", "?variant=XX", "?game=poker", "?daily=maybe", "?limit=0"):
        status, body = await ahttp("GET", home + base + bad)
        assert status == 400 and body["error"]["code"] == "bad_message", (bad, body)


async def test_replay_steps_are_the_engines_positions(home: str) -> None:
    code, line = winnable_hh()
    player = await new_player(home)
    client = await Client.connect(home, player["token"])
    game = await client.request("new_game", code=code)
    game_id = game["game"]["id"]
    status, body = await ahttp("GET", f"{home}/api/games/{game_id}/replay")
    assert status == 409 and body["error"]["code"] == "conflict"
    await play(client, game_id, line)
    daily = await client.request("new_game", daily="SH1-C2")
    await client.request("resign", game_id=daily["game"]["id"])
    await client.close()
    replay = await get(home, f"/api/games/{game_id}/replay")
    assert replay["result"] == "won" and replay["owner"]["id"] == player["id"]
    assert len(replay["steps"]) == len(line) + 1
    game_now = Game.new(code)
    assert replay["steps"][0]["view"]["fingerprint"] == game_now.fingerprint()
    for step, action in zip(replay["steps"][1:], line, strict=True):
        game_now = game_now.apply(action).game
        assert step["view"]["fingerprint"] == game_now.fingerprint()
        assert step["action"] == action.to_json()
        assert step["moves"] == game_now.moves and step["at"] is not None
    assert replay["steps"][-1]["status"] == "won"
    elapsed = [s["elapsed_ms"] for s in replay["steps"]]
    assert elapsed == sorted(elapsed)
    sealed = f"/api/games/{daily['game']['id']}/replay"
    status, body = await ahttp("GET", home + sealed)
    assert status == 403 and body["error"]["code"] == "sealed", body
    assert (await get(home, sealed, player["token"]))["result"] == "resigned"  # its player: at once
