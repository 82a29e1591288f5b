"""Verified replays: the engine's verifier, and the server's /verify against its own storage."""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy import text

from engine import Action, Game, random_code
from engine.verify import elapsed_from_times, summary, verify, verify_log
from server.storage.db import make_engine
from tests.server.competing import play, verify_entry, winnable_hh
from tests.support import Client, ahttp, new_player

# -- the verifier alone ---------------------------------------------------------------------


def won_game() -> tuple[str, list[Action], dict[str, Any]]:
    code, line = winnable_hh()
    return code, line, summary(Game.replay(code, line), "won")


def test_a_true_claim_verifies_from_text_json_or_log_rows() -> None:
    code, line, claimed = won_game()
    assert verify(code, [a.to_text() for a in line], claimed).ok
    assert verify(code, [a.to_json() for a in line], claimed).ok
    rows = [{"seq": i, "action": a.to_text(), "at": 0} for i, a in enumerate(line)]
    assert verify_log({"code": code, "actions": rows, "final": claimed}).ok


def test_every_false_claim_is_caught() -> None:
    code, line, claimed = won_game()
    for name, value in (("score", claimed["score"] + 10), ("moves", 1), ("fingerprint", "0" * 16)):
        verdict = verify(code, line, {**claimed, name: value})
        assert not verdict.ok and [m.field for m in verdict.mismatches] == [name]
    short = verify(code, line[:-1], claimed)  # one action left out: not won, other numbers
    assert {m.field for m in short.mismatches} >= {"result", "status", "moves", "fingerprint"}
    resigned = verify(code, line, {**claimed, "result": "resigned"})  # a won game was not resigned
    assert [m.field for m in resigned.mismatches] == ["result"]
    missing = verify(code, line, {"result": "won"})
    assert {m.field for m in missing.mismatches} == {"score", "moves", "fingerprint"}


def test_a_log_that_does_not_replay_is_an_error() -> None:
    code, line, claimed = won_game()
    assert "refused" in (verify(code, [Action("pair", ("heart:1", "heart:2")), *line], claimed).error or "")
    assert "bad code" in (verify("HH9-N-AAAAAAA", line, claimed).error or "")
    rows = [{"seq": i * 2, "action": a.to_text()} for i, a in enumerate(line)]
    assert "seq gap" in (verify_log({"code": code, "actions": rows, "final": claimed}).error or "")


def test_elapsed_time_from_the_log() -> None:
    assert elapsed_from_times([]) == 0
    assert elapsed_from_times([1000, 1500, 1500, 200_000, 200_100]) == 500 + 0 + 60_000 + 100


# -- the server's verification ---------------------------------------------------------------


async def finished_games(base: str) -> tuple[str, str, str]:
    """A won game, a resigned one with moves, and an unfinished one; returns their ids."""
    code, win = winnable_hh()
    player = await new_player(base)  # a guest: this runs twice, and names are unique
    client = await Client.connect(base, player["token"])
    won = (await client.request("new_game", code=code))["game"]["id"]
    await play(client, won, win)
    other = str(random_code("SH", "C4", secrets.randbits(35)))
    resigned = (await client.request("new_game", code=other))["game"]["id"]
    await play(client, resigned, Game.new(other).legal_actions()[:1])
    await client.request("resign", game_id=resigned)
    open_game = (await client.request("new_game", code=other))["game"]["id"]
    await client.close()
    return won, resigned, open_game


async def test_server_verifies_finished_games_and_their_entries(server: str) -> None:
    won, resigned, open_game = await finished_games(server)
    for game_id, result in ((won, "won"), (resigned, "resigned")):
        status, body = await ahttp("GET", f"{server}/api/games/{game_id}/verify")
        assert status == 200 and body["ok"], body
        assert body["replayed"]["result"] == result == body["claimed"]["result"]
        assert body["leaderboard"] == {"ok": True, "mismatches": []}
        _, log = await ahttp("GET", f"{server}/api/games/{game_id}/actions")
        assert verify_log(log).ok  # what a client library does with the public log
    _, board = await ahttp("GET", f"{server}/api/leaderboards/{winnable_hh()[0]}")
    for entry in board["entries"]:
        await verify_entry(server, entry)
    status, body = await ahttp("GET", f"{server}/api/games/{open_game}/verify")
    assert status == 409 and body["error"]["code"] == "conflict"
    status, body = await ahttp("GET", f"{server}/api/games/g_nothing/verify")
    assert status == 404 and body["error"]["code"] == "not_found"


async def test_tampered_storage_is_caught(server: str, database_url: str) -> None:
    """Change the stored row and entry behind the server's back: /verify must notice."""
    won, resigned, _ = await finished_games(server)
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("UPDATE games SET score = score + 10 WHERE id = :id"), {"id": resigned})
            await conn.execute(
                text("UPDATE leaderboard_entries SET moves = 1 WHERE game_id = :id"), {"id": won}
            )
    finally:
        await engine.dispose()
    _, body = await ahttp("GET", f"{server}/api/games/{resigned}/verify")
    assert not body["ok"] and [m["field"] for m in body["mismatches"]] == ["score"]
    _, body = await ahttp("GET", f"{server}/api/games/{won}/verify")
    assert not body["ok"] and body["mismatches"] == []
    assert [m["field"] for m in body["leaderboard"]["mismatches"]] == ["moves"]
