"""Playing over real WebSockets: seq numbers, duplicates, stale, reopen, spectators, races."""

from __future__ import annotations

import asyncio
from typing import Any

from engine import Action, Game
from tests.support import Client, ahttp, new_player


async def _start(server: str, code: str = "HH1-N-AAAAAAM") -> tuple[Client, str, dict[str, Any]]:
    player = await new_player(server)  # names are unique: a guest per game's owner
    client = await Client.connect(server, player["token"])
    reply = await client.request("new_game", code=code)
    return client, reply["game"]["id"], player


async def test_random_code_and_variant(server: str) -> None:
    player = await new_player(server)
    client = await Client.connect(server, player["token"])
    reply = await client.request("new_game", game="SH", variant="C2")
    assert reply["state"]["code"].startswith("SH1-C2-")
    assert len(reply["state"]["board"]["cells"]) == 2


async def test_state_matches_engine_and_hides_stock(server: str) -> None:
    """HH-6: the state holds the board, information bar data and hints, never the stock order."""
    client, game_id, _ = await _start(server)
    reply = await client.act(game_id, 0, type="draw")
    state = reply["state"]
    local = Game.new("HH1-N-AAAAAAM").apply(Action("draw")).game
    assert state["fingerprint"] == local.fingerprint()
    assert state["board"] == local.view()["board"]
    for key in ("score", "moves", "seq", "undo_depth", "elapsed_ms", "code", "status", "hints"):
        assert key in state
    assert "stock" not in state["board"]


async def test_duplicate_is_answered_again_not_applied(server: str) -> None:
    client, game_id, _ = await _start(server)
    first = await client.act(game_id, 0, type="draw")
    again = await client.act(game_id, 0, type="draw")
    assert again["type"] == "result" and again["duplicate"] is True
    assert again["outcome"] == first["outcome"]
    assert again["state"]["moves"] == 1 and again["state"]["seq"] == 1


async def test_stale_seq_carries_current_state(server: str) -> None:
    client, game_id, _ = await _start(server)
    await client.act(game_id, 0, type="draw")
    stale = await client.act(game_id, 0, type="touch", at="heart:25")
    assert stale["code"] == "stale" and stale["state"]["seq"] == 1
    ahead = await client.act(game_id, 5, type="draw")
    assert ahead["code"] == "stale" and ahead["state"]["seq"] == 1


async def test_touch_selection_counts_seq_not_moves(server: str) -> None:
    """HH-13/15: selecting and deselecting are accepted actions but not moves."""
    client, game_id, _ = await _start(server)
    selected = await client.act(game_id, 0, type="touch", at="heart:25")
    assert selected["state"]["board"]["selection"] == "heart:25"
    deselected = await client.act(game_id, 1, type="touch", at="heart:25")
    assert deselected["state"]["board"]["selection"] is None
    assert deselected["state"]["moves"] == 0 and deselected["state"]["seq"] == 2


async def test_reopen_in_new_connection_with_undo_history(server: str) -> None:
    client, game_id, player = await _start(server)
    for seq in range(3):
        await client.act(game_id, seq, type="draw")
    await client.close()
    again = await Client.connect(server, player["token"])
    reopened = await again.request("open_game", game_id=game_id)
    assert reopened["role"] == "owner" and reopened["state"]["undo_depth"] == 3
    undone = await again.act(game_id, 3, type="undo")
    assert undone["state"]["moves"] == 4 and undone["state"]["undo_depth"] == 2


async def test_spectator_sees_exactly_the_owners_state(server: str) -> None:
    client, game_id, player = await _start(server)
    watcher = await Client.connect(server)
    watched = await watcher.request("watch", game_id=game_id)
    assert watched["role"] == "spectator"
    second = await Client.connect(server, player["token"])
    await second.request("open_game", game_id=game_id)
    result = await client.act(game_id, 0, type="draw")
    update = await watcher.next_push("update")
    assert update["state"] == result["state"] and update["seq"] == 0
    assert (await second.next_push("update"))["state"] == result["state"]
    assert (await watcher.act(game_id, 1, type="draw"))["code"] == "forbidden"
    status, body = await ahttp("GET", f"{server}/api/games/{game_id}")
    assert status == 200 and body["state"] == result["state"]


async def test_two_connections_racing_on_one_game_are_serialized(server: str) -> None:
    """Both send every seq; each seq is applied exactly once, the other copy is a duplicate."""
    client, game_id, player = await _start(server)
    other = await Client.connect(server, player["token"])
    rounds = 15
    for seq in range(rounds):
        a, b = await asyncio.gather(
            client.act(game_id, seq, type="draw"), other.act(game_id, seq, type="draw")
        )
        assert {a["type"], b["type"]} == {"result"}
        assert sorted([a["duplicate"], b["duplicate"]]) == [False, True]
    status, body = await ahttp("GET", f"{server}/api/games/{game_id}")
    assert status == 200
    assert body["state"]["moves"] == rounds and body["state"]["seq"] == rounds


async def test_concurrent_different_actions_one_wins(server: str) -> None:
    client, game_id, player = await _start(server)
    other = await Client.connect(server, player["token"])
    a, b = await asyncio.gather(
        client.act(game_id, 0, type="draw"), other.act(game_id, 0, type="touch", at="heart:25")
    )
    kinds = sorted([a.get("code", a["type"]), b.get("code", b["type"])])
    assert kinds == ["result", "stale"]


async def test_resign_ends_the_game(server: str) -> None:
    client, game_id, _ = await _start(server)
    watcher = await Client.connect(server)
    await watcher.request("watch", game_id=game_id)
    await client.act(game_id, 0, type="draw")
    ended = await client.request("resign", game_id=game_id)
    assert ended["role"] == "owner"
    assert ended["game"]["result"] == "resigned" and ended["state"]["status"] == "resigned"
    finished = await watcher.next_push("finished")
    assert finished["state"] == ended["state"] and finished["game"] == ended["game"]
    assert not [m for m in client.pushed if m["type"] == "finished"]  # the resigner has its reply
    assert (await client.act(game_id, 1, type="draw"))["code"] == "game_over"
    status, body = await ahttp("GET", f"{server}/api/games/{game_id}/actions")
    assert status == 200 and [a["action"] for a in body["actions"]] == ["draw"]


async def test_health_and_players_api(server: str) -> None:
    status, body = await ahttp("GET", f"{server}/health")
    assert status == 200 and body["status"] == "ok"
    player = await new_player(server)
    status, body = await ahttp("PATCH", f"{server}/api/players/me", {"name": "Zed"}, player["token"])
    assert status == 200 and body["name"] == "Zed"
    status, body = await ahttp("GET", f"{server}/api/players/{player['id']}")
    assert body["name"] == "Zed" and "token" not in body
    status, body = await ahttp("PATCH", f"{server}/api/players/me", {"name": ""}, player["token"])
    assert status == 400 and body["error"]["code"] == "bad_message"
    status, body = await ahttp("PATCH", f"{server}/api/players/me", {"name": "X"}, "st_wrong")
    assert status == 401


async def test_rename_applies_to_open_connections(server: str) -> None:
    player = await new_player(server, "Before")
    client = await Client.connect(server, player["token"])
    status, _ = await ahttp("PATCH", f"{server}/api/players/me", {"name": "After"}, player["token"])
    assert status == 200
    reply = await client.request("new_game", game="HH")
    assert reply["game"]["owner"]["name"] == "After"


async def test_live_games_list_shows_open_started_games(server: str) -> None:
    client, game_id, owner = await _start(server)
    status, body = await ahttp("GET", f"{server}/api/games?limit=100")
    assert status == 200 and game_id not in [g["id"] for g in body["games"]]  # not started yet
    await client.act(game_id, 0, type="draw")
    status, body = await ahttp("GET", f"{server}/api/games?limit=100")
    listed = {g["id"]: g for g in body["games"]}
    assert listed[game_id]["owner"]["name"] == owner["name"] and listed[game_id]["moves"] == 1
    times = [g["last_action_at"] for g in body["games"]]
    assert times == sorted(times, reverse=True)
    await client.request("resign", game_id=game_id)
    status, body = await ahttp("GET", f"{server}/api/games?limit=100")
    assert game_id not in [g["id"] for g in body["games"]]
    status, body = await ahttp("GET", f"{server}/api/games?limit=abc")
    assert status == 400 and body["error"]["code"] == "bad_message"


async def test_brief_replies_carry_the_fingerprint_of_the_full_state(server: str) -> None:
    """A client that mirrors the board with the engine asks for brief replies and checks them."""
    client, game_id, _ = await _start(server)
    watcher = await Client.connect(server)
    await watcher.request("watch", game_id=game_id)
    local = Game.new("HH1-N-AAAAAAM")
    for seq in range(3):
        action = local.legal_actions()[0]
        reply = await client.request("act", game_id=game_id, seq=seq, action=action.to_json(), reply="brief")
        local = local.apply(action).game
        assert "board" not in reply["state"]
        assert reply["state"]["fingerprint"] == local.fingerprint()
        assert reply["state"]["seq"] == local.seq and reply["state"]["moves"] == local.moves
        update = await watcher.next_push("update")
        assert update["state"]["board"] == local.view()["board"]  # spectators still get it all
    bad = await client.request("act", game_id=game_id, seq=3, action={"type": "draw"}, reply="some")
    assert bad["code"] == "bad_message" and bad["field"] == "reply"
