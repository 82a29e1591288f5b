"""The solver on the server: winnable dailies, the ``lost`` status, solutions after a game."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import text

from engine import Action, Game, parse_code
from engine.codes import make_code
from engine.replay import steps_json
from engine.solver import solve
from server.config import Settings
from server.core.games import GameService
from server.features.dailies.model import DAILY_BUDGET
from server.features.solutions.service import DeadEnds
from server.rules.days import FAMILIES
from server.solver.pool import SolverPool
from server.storage.db import make_engine
from tests.server.competing import clocked_server
from tests.support import Client, ManualClock, ahttp, new_player, running_server

WON_SH = str(make_code("SH", "C4", 0))  # the solver wins it in a few hundred nodes


def lost_sh_code() -> tuple[str, Action]:
    """A one-cell deal that cannot be won, with a move that leaves it ``playing`` (not stuck)."""
    for seed in range(100):
        code = make_code("SH", "C1", seed)
        game = Game.new(code)
        if game.status != "playing" or solve(code, 5_000).result != "impossible":
            continue
        for action in game.legal_actions():
            if game.apply(action).game.status == "playing":
                return str(code), action
    pytest.fail("no lost one-cell deal among the first seeds")


def won_board(board: dict[str, Any]) -> bool:
    """Every card cleared: an empty heart (HH), or four complete foundations (SH)."""
    if "heart" in board:
        return all(slot["card"] is None for slot in board["heart"])
    kings = {"S": "KS", "H": "KH", "D": "KD", "C": "KC"}
    return board["foundations"] == kings and not any(board["columns"]) and not any(board["cells"])


def check_steps(body: dict[str, Any]) -> None:
    """``steps``: always present; the engine's replay of ``actions``, ending won when ``won``."""
    assert "steps" in body
    if body["actions"] is None:
        assert body["steps"] is None
        return
    actions = [Action.from_json(a) for a in body["actions"]]
    assert body["steps"] == steps_json(body["code"], actions)
    assert [s["index"] for s in body["steps"]] == list(range(len(actions) + 1))
    if body["result"] == "won":
        last = body["steps"][-1]
        assert last["status"] == "won" and won_board(last["view"]["board"])


async def player_client(base: str, name: str) -> Client:
    player = await new_player(base, name)
    return await Client.connect(base, player["token"])


async def wait_status(base: str, game_id: str, status: str, timeout: float = 15) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        _, body = await ahttp("GET", f"{base}/api/games/{game_id}")
        if body["state"]["status"] == status or time.monotonic() > deadline:
            return dict(body["state"])
        await asyncio.sleep(0.05)


# -- dailies -----------------------------------------------------------------------------------


async def test_every_daily_is_proven_winnable_and_stores_its_solution_length(
    server: str, database_url: str
) -> None:
    status, body = await ahttp("GET", f"{server}/api/daily")
    assert status == 200, body
    assert set(body["challenges"]) == set(FAMILIES)
    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            query = text("SELECT code, solution_length FROM daily_challenges WHERE day = :day")
            rows = await conn.execute(query, {"day": body["day"]})
            lengths = {row.code: row.solution_length for row in rows}
    finally:
        await engine.dispose()
    assert len(lengths) == len(FAMILIES)
    for code in lengths:
        answer = solve(code, DAILY_BUDGET)
        assert answer.result == "won" and answer.actions is not None
        assert Game.replay(code, answer.actions).status == "won"
        assert lengths[code] == len(answer.actions)


# -- after a game ------------------------------------------------------------------------------


async def test_solution_only_after_the_game_over_http_and_websocket(server: str) -> None:
    client = await player_client(server, "Curious")
    game_id = (await client.request("new_game", code=WON_SH))["game"]["id"]
    status, body = await ahttp("GET", f"{server}/api/games/{game_id}/solution")
    assert status == 409 and body["error"]["code"] == "conflict"  # HH-25: never during a game
    refused = await client.request("solution", game_id=game_id)
    assert refused["type"] == "error" and refused["code"] == "conflict"
    await client.request("resign", game_id=game_id)
    status, body = await ahttp("GET", f"{server}/api/games/{game_id}/solution")
    assert status == 200, body
    assert body["winnable"] is True and body["result"] == "won" and body["code"] == WON_SH
    actions = [Action.from_json(a) for a in body["actions"]]
    assert body["length"] == len(actions)
    assert Game.replay(WON_SH, actions).status == "won"  # step by step, as a client replays it
    check_steps(body)
    assert body["steps"][0]["view"]["board"] == Game.new(WON_SH).view()["board"]  # the deal first
    over_ws = await client.request("solution", game_id=game_id)
    assert over_ws["type"] == "solution" and over_ws["actions"] == body["actions"]
    assert over_ws["steps"] == body["steps"]
    missing = await client.request("solution", game_id="g_nothing")
    assert missing["type"] == "error" and missing["code"] == "not_found"
    await client.close()


async def test_a_heart_to_heart_solution_steps_to_an_empty_heart(server: str) -> None:
    code = str(make_code("HH", "N", 3))  # HH1-N-AAAAAAD: the solver wins it in a few nodes
    client = await player_client(server, "Hearty")
    game_id = (await client.request("new_game", code=code))["game"]["id"]
    await client.request("resign", game_id=game_id)
    body = await client.request("solution", game_id=game_id)  # checked against asyncapi.json too
    assert body["type"] == "solution" and body["result"] == "won"
    check_steps(body)
    for step in body["steps"]:  # HH-6: the stock's count, never its cards
        assert set(step["view"]["board"]) == {"heart", "stock_count", "waste_top", "waste_count", "selection"}
    await client.close()


async def test_an_impossible_deal_says_so_after_the_game(server: str) -> None:
    code, _ = lost_sh_code()
    client = await player_client(server, "Doomed")
    game_id = (await client.request("new_game", code=code))["game"]["id"]
    await client.request("resign", game_id=game_id)
    status, body = await ahttp("GET", f"{server}/api/games/{game_id}/solution")
    assert status == 200 and body["winnable"] is False and body["result"] == "impossible"
    assert body["actions"] is None and body["length"] is None
    check_steps(body)
    await client.close()


@pytest.fixture(scope="module")
def clock() -> ManualClock:
    return ManualClock(1_900_000_000_000)


@pytest.fixture(scope="module")
def clocked(database_url: str, clock: ManualClock) -> Iterator[str]:
    with clocked_server(database_url, clock) as base:
        yield base


async def test_a_daily_solution_waits_for_the_end_of_its_day(clocked: str, clock: ManualClock) -> None:
    player = await new_player(clocked, "Daily")
    token = player["token"]
    client = await Client.connect(clocked, token)
    reply = await client.request("new_game", daily="SH1-C4")
    game_id = reply["game"]["id"]
    await client.request("resign", game_id=game_id)
    status, body = await ahttp("GET", f"{clocked}/api/games/{game_id}/solution")
    assert status == 403 and body["error"]["code"] == "sealed"  # to anyone but its player
    status, body = await ahttp("GET", f"{clocked}/api/games/{game_id}/solution", token=token)
    assert status == 409 and "day" in body["error"]["message"]  # to its player: after the day
    clock.advance(86_400_000)
    status, body = await ahttp("GET", f"{clocked}/api/games/{game_id}/solution")
    assert status == 200 and body["winnable"] is True
    check_steps(body)
    await client.close()


# -- dead ends -----------------------------------------------------------------------------------


async def test_a_proven_dead_end_is_lost_and_undo_stays_allowed(server: str) -> None:
    code, move = lost_sh_code()
    client = await player_client(server, "Stubborn")
    watcher = await Client.connect(server)
    game_id = (await client.request("new_game", code=code))["game"]["id"]
    await watcher.request("watch", game_id=game_id)
    result = await client.act(game_id, 0, **move.to_json())
    assert result["type"] == "result" and result["state"]["status"] == "playing"  # not on the hot path
    pushed = await watcher.next_push("status")
    assert pushed["state"]["status"] == "lost" and pushed["state"]["seq"] == 1
    assert (await wait_status(server, game_id, "lost"))["seq"] == 1
    undone = await client.act(game_id, 1, type="undo")
    assert undone["type"] == "result"  # undo stays allowed from a lost position
    state = await wait_status(server, game_id, "lost")  # the deal itself is lost too
    assert state["status"] == "lost" and state["seq"] == 2
    await client.close()
    await watcher.close()


async def test_a_dead_end_is_found_again_after_a_restart(tmp_path: Path) -> None:
    """``lost`` is not stored: a game reloaded from storage is checked again."""
    code, move = lost_sh_code()
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'restart.db'}", secret="s")
    with running_server(settings) as base:
        client = await player_client(base, "Again")
        game_id = (await client.request("new_game", code=code))["game"]["id"]
        await client.act(game_id, 0, **move.to_json())
        assert (await wait_status(base, game_id, "lost"))["seq"] == 1
        await client.close()
    with running_server(settings) as base:
        assert (await wait_status(base, game_id, "lost"))["status"] == "lost"


def solver_runs() -> float:
    """``solitaire_solver_runs_total``: the dead-end solves run in this process (cache misses)."""
    return REGISTRY.get_sample_value("solitaire_solver_runs_total") or 0.0


async def test_dead_end_verdicts_are_kept_per_game() -> None:
    """A game's own position again is a lookup; the same position in another game is solved
    again, so no game's answer depends on what other games did."""
    code, move = lost_sh_code()
    position = Game.new(parse_code(code)).apply(move).game
    pool = SolverPool()
    dead_ends = DeadEnds(cast(GameService, None), pool)  # verdicts only: nothing is marked
    try:
        assert await dead_ends.verdict("game-a", position) == "impossible"
        assert await dead_ends.verdict("game-a", position) == "impossible"
        assert dead_ends.checks == 1  # A's own position again: from its cache
        assert await dead_ends.verdict("game-b", position) == "impossible"
        assert dead_ends.checks == 2  # B's answer is B's own solve, not A's verdict
    finally:
        await pool.close()


async def test_a_position_another_game_reached_is_solved_again(server: str) -> None:
    """Game B reaching the position game A was proven lost in runs the solver for B: neither the
    answer's timing nor the solver-run metric tells B's player that A was there."""
    code, move = lost_sh_code()
    first = await player_client(server, "Pathfinder")
    a = (await first.request("new_game", code=code))["game"]["id"]
    await first.act(a, 0, **move.to_json())
    assert (await wait_status(server, a, "lost"))["status"] == "lost"
    runs = solver_runs()
    second = await player_client(server, "Follower")
    b = (await second.request("new_game", code=code))["game"]["id"]
    await second.act(b, 0, **move.to_json())
    assert (await wait_status(server, b, "lost"))["status"] == "lost"
    assert solver_runs() > runs  # B's own solve, not a lookup of A's verdict
    await first.close()
    await second.close()


async def test_a_winnable_position_stays_playing_and_heart_to_heart_is_never_lost(server: str) -> None:
    client = await player_client(server, "Hopeful")
    sh = (await client.request("new_game", code=WON_SH))["game"]["id"]
    first = solve(WON_SH).actions
    assert first is not None
    await client.act(sh, 0, **first[0].to_json())
    doomed_hh = next(
        str(c)
        for c in (make_code("HH", "N", s) for s in range(100))
        if Game.new(c).status == "playing" and solve(c).result == "impossible"
    )
    hh = (await client.request("new_game", code=doomed_hh))["game"]["id"]
    await client.act(hh, 0, type="draw")
    await asyncio.sleep(0.5)  # the checker has had time: it answers in milliseconds here
    assert (await wait_status(server, sh, "lost", timeout=0))["status"] == "playing"
    assert (await wait_status(server, hh, "lost", timeout=0))["status"] == "playing"  # HH-25
    await client.close()
