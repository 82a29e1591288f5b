"""Accounts and the player's home through the library and the ``solitaire`` command, against a
real server (both databases): claim, log in on a second device, stats, history, replay, log out."""

from __future__ import annotations

import re
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from client import BadCredentialsError, HttpApi, SolitaireClient
from engine import Game
from tests.client.conftest import Run
from tests.server.competing import winnable_hh
from tests.support import RECEIVED

PASSWORD = "correct horse battery"


@pytest.fixture
async def second(server: str, tmp_path: Path) -> AsyncIterator[Run]:
    """Another device: its own config file."""
    home = tmp_path / "second"
    home.mkdir()
    runner = Run(server, home)
    try:
        yield runner
    finally:
        await runner.end_all()


async def test_library_accounts_stats_history_and_replay(server: str) -> None:
    me = await SolitaireClient.create_player(server)
    username = f"lib{secrets.token_hex(3)}"
    account = await HttpApi(server, me.token).create_account(username, PASSWORD)
    assert account.username == username and account.id == me.id
    elsewhere = HttpApi(server)
    with pytest.raises(BadCredentialsError):
        await elsewhere.log_in(username, "not the right one")
    session = await elsewhere.log_in(username, PASSWORD, label="laptop")
    assert session.id == me.id and elsewhere.token == session.token
    assert [s.label for s in await elsewhere.sessions()][-1] == "laptop"
    code, line = winnable_hh()
    async with SolitaireClient(server, session.token, trace=RECEIVED.append) as client:
        game = await client.new_game(code)
        for action in line:
            await game.act(action)
        assert game.finished
    stats = await elsewhere.stats(me.id)
    assert stats.variant("HH1-N").won == 1 and stats.variant("HH1-N").best_moves == game.state.moves
    page = await elsewhere.history(me.id, game="HH", result="won")
    assert [g.id for g in page.games] == [game.id] and page.next_cursor is None
    replay = await elsewhere.replay(game.id)
    assert len(replay.steps) == len(line) + 1 and replay.steps[-1].status == "won"
    assert replay.steps[-1].view["fingerprint"] == Game.replay(code, line).fingerprint()
    async with SolitaireClient(server, session.token, trace=RECEIVED.append) as racer:
        ghost = await racer.ghost_race(game.id)
        assert ghost.ghost["status"] == "waiting" and ghost.game.info.code == code
        await ghost.game.resign()
        assert await ghost.wait_finished(timeout=10) == "ghost"
    assert await elsewhere.log_out() == 1


async def test_cli_login_stats_history_replay_and_logout(run: Run, second: Run, server: str) -> None:
    code, out = await run("player", "create", "--name", f"Home{secrets.token_hex(2)}")
    assert code == 0, out
    username = f"cli{secrets.token_hex(3)}"
    code, out = await run("account", "create", username, stdin=PASSWORD + "\n")
    assert code == 0 and f"solitaire login {username}" in out, out
    code, out = await second("login", username, "--label", "second device", stdin="wrong password!!\n")
    assert code == 2 and "bad_credentials" in out and "Traceback" not in out
    code, out = await second("login", username, "--label", "second device", stdin=PASSWORD + "\n")
    assert code == 0 and f"logged in as {username}" in out, out
    code, out = await second("play", "--code", "HH1-N-AAAAAC5", stdin="t 25\nt 25\nr\ny\n")
    assert code == 0 and "game over: resigned" in out, out
    code, out = await run("stats")  # the first device sees the second's game: one player
    assert code == 0, out
    header = out.splitlines()[1]
    for label in ("variant", "played", "won", "win rate", "best moves", "avg time"):
        assert label in header
    hh = next(line for line in out.splitlines() if line.startswith("HH1-N"))
    assert hh.split()[1:3] == ["1", "0"]
    assert "dailies: 0 days played" in out
    code, out = await run("history")
    assert code == 0 and "started (UTC)" in out and "HH1-N-AAAAAC5" in out and "resigned" in out, out
    game_id = next(word for word in out.split() if word.startswith("g_"))
    code, out = await run("replay", game_id, "--move", "0")
    assert code == 0 and "move 0 of" in out and "the deal" in out, out
    code, out = await run("replay", game_id, stdin="n\nl\n99\nzz\np\nm\nq\n")
    assert code == 0, out
    assert re.search(r"> +1 +0:00 +touch heart:25", out), out  # the move list marks the current move
    assert (
        "move 1 of" in out and "moves go from 0 (the deal) to" in out and "type ? for the replay keys" in out
    )
    assert "RESIGNED" in out  # the last position shows how the game ended
    code, out = await second("account", "show")
    assert code == 0 and "second device" in out and "this device" in out
    first_session = re.findall(r"session (s_[0-9a-f]+)", out)[0]  # the device the account was made on
    code, out = await second("account", "revoke", first_session)
    assert code == 0 and "ended" in out
    code, out = await run("account", "show")
    assert code == 2 and "bad_token" in out  # the first device's token stopped working
    new = "a brand new passphrase"
    code, out = await second("account", "password", stdin=f"{PASSWORD}\n{new}\n")
    assert code == 0 and "password changed; 0 other sessions ended" in out, out
    code, out = await second("logout")
    assert code == 0 and "logged out" in out
    code, out = await second("stats")
    assert code == 2 and "no player" in out
