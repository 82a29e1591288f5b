"""Leaderboards over real WebSockets and HTTP, on both databases.

Every board a test builds is checked against a ranking computed here from
the shown fields, and every entry is verified by replaying its public log.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import pytest
from sqlalchemy import text

from engine import Action, Game, random_code
from server.features.leaderboards.model import LEVELS, ranks
from server.rules.ranking import MOVES_CAP, TIME_CAP, sort_key
from server.storage.db import make_engine
from tests.server.competing import (
    competition_ranks,
    independent_ranking,
    line_with_progress,
    play,
    random_line,
    search,
    verify_entry,
    whole_board,
    winnable_hh,
)
from tests.support import Client, ahttp, new_player


def fresh_code(game: str = "HH", variant: str = "N") -> str:
    return str(random_code(game, variant, secrets.randbits(35)))


async def attempt(base: str, code: str, line: list[Action], name: str, resign: bool = True) -> dict[str, Any]:
    """A new player plays ``line`` on ``code`` and resigns unless the line won; returns the summary."""
    player = await new_player(base, name)
    client = await Client.connect(base, player["token"])
    try:
        game = await client.request("new_game", code=code)
        game_id = game["game"]["id"]
        state = await play(client, game_id, line) if line else game["state"]
        if resign and state["status"] != "won":
            ended = await client.request("resign", game_id=game_id)
            assert ended["game"]["result"] == "resigned", ended
            state = ended["state"]
        return {"player": player, "game_id": game_id, "state": state}
    finally:
        await client.close()


async def fill(base: str, code: str, count: int, seed: int = 0) -> list[dict[str, Any]]:
    """``count`` players resign after random lines, all at the same time."""
    jobs = []
    for i in range(count):
        line = random_line(code, seed + i, (seed + i * 7) % 45)
        jobs.append(attempt(base, code, line, f"R{seed + i}"))  # names are unique
    return list(await asyncio.gather(*jobs))


def check_order(board: list[dict[str, Any]]) -> None:
    """The board is in the issue's order and ranked "1224", per the test's own computation."""
    shown = [independent_ranking([e])[0] for e in board]
    assert shown == independent_ranking(board)
    assert [e["rank"] for e in board] == competition_ranks(board)


# -- the ranking key -----------------------------------------------------------------------


def test_sort_key_orders_like_the_issue() -> None:
    win_fast = sort_key(True, 25, 40, 90_000)
    win_slow = sort_key(True, 25, 40, 95_000)
    win_long = sort_key(True, 25, 41, 1_000)
    best_loss = sort_key(False, 24, 500, 10**9)
    worse_loss = sort_key(False, 23, 1, 1)
    assert win_fast < win_slow < win_long < best_loss < worse_loss
    assert sort_key(False, 0, 0, 0) < sort_key(False, 0, 1, 0) < sort_key(False, 0, 1, 1)
    assert 0 < sort_key(False, 0, MOVES_CAP * 9, TIME_CAP * 9) < 2**63


def test_ranks_share_ties() -> None:
    assert ranks([5, 5, 7, 9, 9, 10], 0, 0) == [1, 1, 3, 4, 4, 6]
    # a page that starts inside a run of ties: 4 entries before it, 2 of them better
    assert ranks([5, 5, 7], 4, 2) == [3, 3, 7]


# -- boards over the wire ---------------------------------------------------------------------


async def test_many_players_finishing_at_once_are_ranked_correctly(server: str) -> None:
    code, win = winnable_hh()
    detour = [Action("draw"), Action("undo")]
    jobs = [attempt(server, code, win, "Winner"), attempt(server, code, detour + win, "Detour")]
    jobs += [attempt(server, code, random_line(code, i, i % 40), f"P{i}") for i in range(22)]
    results = await asyncio.gather(*jobs)

    board = await whole_board(server, code, limit=7)
    assert len(board) == len(results)
    check_order(board)
    assert board[0]["player"]["name"] == "Winner" and board[0]["result"] == "won"
    assert board[1]["player"]["name"] == "Detour" and board[1]["moves"] == board[0]["moves"] + 2
    assert board[1]["undos"] == 1
    by_player = {e["player"]["id"]: e for e in board}
    for result in results:
        entry, state = by_player[result["player"]["id"]], result["state"]
        assert entry["game_id"] == result["game_id"]
        assert (entry["moves"], entry["progress"], entry["score"]) == (
            state["moves"],
            state["progress"],
            state["score"],
        )
        assert entry["finished_at"] is not None and entry["elapsed_ms"] == state["elapsed_ms"]
    await asyncio.gather(*(verify_entry(server, e) for e in board))


async def test_bucket_counts_match_the_entries(server: str, database_url: str) -> None:
    """The rank counts kept beside the boards agree with a recount of the entries themselves."""
    code = fresh_code()
    await fill(server, code, 6, seed=300)
    await attempt(server, code, [], "Last")  # a new player with the worst result
    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            for level, shift in LEVELS:
                kept_sql = "SELECT code, bucket, sum(entries) FROM leaderboard_counts WHERE level = :l"
                kept_sql += " GROUP BY code, bucket HAVING sum(entries) <> 0"  # the shards summed
                kept = await conn.execute(text(kept_sql), {"l": level})
                recount = await conn.execute(
                    text(f"SELECT code, sort_key >> {shift}, count(*) FROM leaderboard_entries GROUP BY 1, 2")
                )
                assert sorted(map(tuple, kept)) == sorted(map(tuple, recount))
    finally:
        await engine.dispose()


async def test_paging_is_stable_and_complete(server: str) -> None:
    code = fresh_code()
    await fill(server, code, 17, seed=100)
    status, one_page = await ahttp("GET", f"{server}/api/leaderboards/{code}?limit=100")
    assert status == 200 and one_page["next_cursor"] is None
    for limit in (1, 4, 5, 16):
        paged = await whole_board(server, code, limit=limit)
        assert paged == one_page["entries"]
    check_order(one_page["entries"])
    await asyncio.gather(*(verify_entry(server, e) for e in one_page["entries"]))

    assert (await ahttp("GET", f"{server}/api/leaderboards/{code}?cursor=nonsense"))[0] == 400
    assert (await ahttp("GET", f"{server}/api/leaderboards/{code}?limit=0"))[0] == 400
    assert (await ahttp("GET", f"{server}/api/leaderboards/{code}?limit=101"))[0] == 400
    status, body = await ahttp("GET", f"{server}/api/leaderboards/XX1-N-AAAAAAA")
    assert status == 400 and body["error"]["code"] == "bad_code"
    status, empty = await ahttp("GET", f"{server}/api/leaderboards/{fresh_code('SH', 'C2')}")
    assert status == 200 and empty == {"code": empty["code"], "entries": [], "next_cursor": None}


async def test_own_rank_with_neighbours(server: str) -> None:
    code = fresh_code()
    await fill(server, code, 15, seed=200)
    board = await whole_board(server, code)
    for index in (0, 1, 7, 13, 14):
        me = board[index]
        url = f"{server}/api/leaderboards/{code}/players/{me['player']['id']}?radius=3"
        status, body = await ahttp("GET", url)
        assert status == 200, body
        assert body["entry"] == me and body["rank"] == me["rank"]
        assert body["entries"] == board[max(0, index - 3) : index + 4]
    status, body = await ahttp("GET", f"{server}/api/leaderboards/{code}/players/p_nobody")
    assert status == 404 and body["error"]["code"] == "not_found"
    url = f"{server}/api/leaderboards/{code}/players/{board[0]['player']['id']}?radius=99"
    assert (await ahttp("GET", url))[0] == 400


async def test_one_entry_per_player_keeps_the_best(server: str) -> None:
    code = fresh_code()
    line = line_with_progress(code)
    while line is None:
        code = fresh_code()
        line = line_with_progress(code)
    player = await new_player(server, "Keeper")
    client = await Client.connect(server, player["token"])

    async def one_attempt(actions: list[Action]) -> str:
        game = await client.request("new_game", code=code)
        await play(client, game["game"]["id"], actions)
        await client.request("resign", game_id=game["game"]["id"])
        return str(game["game"]["id"])

    first = await one_attempt([])
    board = await whole_board(server, code)
    assert [e["game_id"] for e in board] == [first]
    better = await one_attempt(line)
    board = await whole_board(server, code)
    assert [e["game_id"] for e in board] == [better] and board[0]["progress"] > 0
    await one_attempt([])  # worse: the better one stays
    board = await whole_board(server, code)
    assert [e["game_id"] for e in board] == [better]
    await verify_entry(server, board[0])
    await client.close()


async def test_stalemate_counts_when_the_player_starts_again(server: str) -> None:
    code, line = next(
        (str(c), found)
        for i in range(200)
        if Game.new(c := random_code("HH", "N", 7 + i * 104_729)).status == "playing"
        and (found := search(str(c), "stalemate", 3000, 1))
    )
    player = await new_player(server, "Stuck")
    client = await Client.connect(server, player["token"])
    game = await client.request("new_game", code=code)
    state = await play(client, game["game"]["id"], line)
    assert state["status"] == "stalemate"
    assert await whole_board(server, code) == []  # a stalemate alone does not count yet

    playing = await client.request("new_game", code=code)  # starts again: the stalemate counts
    board = await whole_board(server, code)
    assert [e["game_id"] for e in board] == [game["game"]["id"]]
    assert board[0]["result"] == "resigned" and board[0]["moves"] == state["moves"]
    await verify_entry(server, board[0])

    await client.request("new_game", code=code)  # a game still in play is left alone
    status, body = await ahttp("GET", f"{server}/api/games/{playing['game']['id']}")
    assert status == 200 and body["game"]["result"] is None
    await client.close()


async def test_stuck_seahaven_game_counts_when_resigned(server: str) -> None:
    code, line = next(
        (str(c), found)
        for i in range(200)
        if (found := search(str(c := random_code("SH", "C1", 7 + i * 104_729)), "stuck", 3000, 1))
    )
    result = await attempt(server, code, line, "SeaStuck")
    assert result["state"]["status"] == "resigned"
    board = await whole_board(server, code)
    assert len(board) == 1 and board[0]["progress"] == result["state"]["progress"]
    await verify_entry(server, board[0])


async def test_live_updates_as_results_land(server: str) -> None:
    code = fresh_code()
    watcher = await Client.connect(server, (await new_player(server, "Watcher"))["token"])
    anonymous = await Client.connect(server)  # auth without a token
    snapshot = await watcher.request("subscribe_leaderboard", code=code, limit=10)
    assert snapshot["type"] == "leaderboard", snapshot
    assert (snapshot["code"], snapshot["entries"], snapshot["next_cursor"]) == (code, [], None)
    assert (await anonymous.request("subscribe_leaderboard", code=code))["type"] == "leaderboard"

    first = await attempt(server, code, random_line(code, 5, 12), "First")
    for client in (watcher, anonymous):
        update = await client.next_push("leaderboard_update")
        assert update["code"] == code and update["entry"]["rank"] == 1
        assert update["entry"]["game_id"] == first["game_id"]

    second = await attempt(server, code, random_line(code, 6, 30), "Second")
    update = await watcher.next_push("leaderboard_update")
    assert update["entry"]["game_id"] == second["game_id"]
    board = await whole_board(server, code)
    assert update["entry"] == next(e for e in board if e["game_id"] == second["game_id"])

    reply = await watcher.request("unsubscribe_leaderboard", code=code)
    assert reply["type"] == "leaderboard_unsubscribed"
    await attempt(server, code, [], "Third")
    await anonymous.next_push("leaderboard_update")  # the anonymous one still hears it
    with pytest.raises(asyncio.TimeoutError):
        await watcher.next_push("leaderboard_update", timeout=0.5)
    bad = await watcher.request("subscribe_leaderboard", code="HH1-N-!!")
    assert bad["type"] == "error" and bad["code"] == "bad_code"
    await asyncio.gather(*(verify_entry(server, e) for e in await whole_board(server, code)))
    await watcher.close()
    await anonymous.close()
