"""Hints during play (``hint``): the next move of a winning line, refused where no hint is given."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from engine import Action, Game
from engine.codes import make_code
from engine.solver import solve
from server.config import Settings
from server.features.solutions.model import hint_refusal
from tests.server.test_solutions import lost_sh_code, player_client
from tests.support import ONE_ADDRESS, UNSCREENED, Client, running_server

WON_SH = str(make_code("SH", "C4", 0))  # the solver wins it in a few hundred nodes


async def new_game(client: Client, code: str) -> tuple[str, Game]:
    reply = await client.request("new_game", code=code)
    assert reply["type"] == "game", reply
    return reply["game"]["id"], Game.new(code)


async def test_a_hint_is_a_legal_move_that_keeps_the_deal_winnable(server: str) -> None:
    client = await player_client(server, "HintFollower")
    game_id, game = await new_game(client, code=WON_SH)
    for seq in range(3):  # follow the hints: each is legal and the position stays winnable
        hint = await client.request("hint", game_id=game_id)
        assert hint["type"] == "hint" and hint["result"] == "won", hint
        assert (hint["game_id"], hint["seq"], hint["budget"]) == (game_id, seq, 200_000)
        action = Action.from_json(hint["action"])
        assert action in game.legal_actions()
        game = game.apply(action).game
        assert hint["length"] >= 1
        assert game.status == "won" or solve(game, 200_000).result == "won"
        reply = await client.act(game_id, seq, **hint["action"])
        assert reply["type"] == "result" and reply["state"]["fingerprint"] == game.fingerprint(), reply
    await client.close()


async def test_a_position_without_a_winning_line_says_so(server: str) -> None:
    code, move = lost_sh_code()
    client = await player_client(server, "HintDoomed")
    game_id, _ = await new_game(client, code=code)
    await client.act(game_id, 0, **move.to_json())
    hint = await client.request("hint", game_id=game_id)
    assert (hint["result"], hint["action"], hint["length"], hint["seq"]) == ("impossible", None, None, 1)
    await client.close()


async def test_refused_in_a_ranked_daily_and_in_heart_to_heart(server: str) -> None:
    client = await player_client(server, "HintRanked")
    daily = await client.request("new_game", daily="SH1-C4")
    assert daily["game"]["ranked"] is True
    refused = await client.request("hint", game_id=daily["game"]["id"])
    assert refused["type"] == "error" and refused["code"] == "hint_refused", refused
    assert "daily" in refused["message"]
    other = await player_client(server, "HintRival")  # another player's daily: sealed, as anything of it
    sealed = await other.request("hint", game_id=daily["game"]["id"])
    assert sealed["code"] == "sealed" and "opens_at" in sealed, sealed
    await other.close()
    hearts = await client.request("new_game", code="HH1-N-AAAAAC5")
    refused = await client.request("hint", game_id=hearts["game"]["id"])
    assert refused["code"] == "hint_refused" and "HH-25" in refused["message"], refused
    await client.close()


def test_which_games_get_no_hint() -> None:
    """Competitions and Heart to Heart (HH-25) get none; practice on a daily's code does."""
    assert hint_refusal("SH", None, True, None) is None
    assert hint_refusal("SH", "2033-03-01", False, None) is None  # a practice attempt
    assert "daily" in str(hint_refusal("SH", "2033-03-01", True, None))
    assert "race" in str(hint_refusal("SH", None, True, "r_1"))
    assert "HH-25" in str(hint_refusal("HH", None, False, None))


async def test_only_the_owner_of_an_open_game_gets_a_hint(server: str) -> None:
    owner = await player_client(server, "HintOwner")
    game_id, _ = await new_game(owner, code=WON_SH)
    other = await player_client(server, "HintOnlooker")
    assert (await other.request("hint", game_id=game_id))["code"] == "forbidden"
    assert (await owner.request("resign", game_id=game_id))["type"] == "game"
    assert (await owner.request("hint", game_id=game_id))["code"] == "game_over"
    assert (await owner.request("hint", game_id="g_nonexistent0"))["code"] == "not_found"
    await owner.close()
    await other.close()


MALFORMED: list[tuple[dict[str, Any], str]] = [
    ({}, "game_id"),
    ({"game_id": 7}, "game_id"),
    ({"game_id": "g_1", "seq": 0}, "seq"),
]


async def test_a_malformed_hint_is_a_bad_message_naming_its_field(server: str) -> None:
    client = await player_client(server, "HintCareless")
    for fields, field in MALFORMED:  # missing, not text, a field hint has not
        refused = await client.request("hint", **fields)
        assert (refused["type"], refused["code"], refused["field"]) == ("error", "bad_message", field)
    await client.close()


@pytest.fixture
def two_solves(database_url: str) -> Iterator[str]:
    """A server where a player may start two games, or have two hints solved, a minute."""
    limits = replace(ONE_ADDRESS, games_per_minute=2)
    settings = Settings(database_url=database_url, secret="hints", limits=limits, screening=UNSCREENED)
    with running_server(settings) as base:
        yield base


def off_the_line(game: Game, hinted: Action) -> Action:
    """A move to a position other than the hint's (so it is not on the cached line)."""
    after = game.apply(hinted).game.state
    for action in game.legal_actions():
        if action.kind == "move" and game.apply(action).game.state not in (after, game.state):
            return action
    raise AssertionError("no other move")


async def test_solves_take_from_the_new_game_quota_and_lines_are_kept(two_solves: str) -> None:
    client = await player_client(two_solves, "HintGreedy")
    game_id, game = await new_game(client, code=WON_SH)
    for seq in range(2):  # two positions off any known line: two solves
        hint = await client.request("hint", game_id=game_id)
        assert hint["result"] == "won", hint
        again = await client.request("hint", game_id=game_id)  # the same position: no solve
        assert again["action"] == hint["action"]
        action = off_the_line(game, Action.from_json(hint["action"]))
        game = game.apply(action).game
        assert (await client.act(game_id, seq, **action.to_json()))["type"] == "result"
    refused = await client.request("hint", game_id=game_id)
    assert refused["code"] == "rate_limited" and refused["retry_after_s"] >= 1, refused
    await client.close()
