"""Basic play over a real WebSocket on both databases."""

from __future__ import annotations

from tests.support import Client, new_player


async def test_new_game_and_act(server: str) -> None:
    player = await new_player(server, "Ada")
    client = await Client.connect(server, player["token"])
    reply = await client.request("new_game", code="HH1-N-AAAAAAA")
    assert reply["type"] == "game", reply
    game_id = reply["game"]["id"]
    assert reply["state"]["seq"] == 0
    result = await client.act(game_id, 0, type="draw")
    assert result["type"] == "result", result
    assert result["state"]["moves"] == 1
    await client.close()
