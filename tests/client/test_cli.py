"""The ``solitaire`` command as a subprocess against a real server (both databases)."""

from __future__ import annotations

import asyncio
import re
import stat

from client import SolitaireClient
from tests.client.conftest import Run
from tests.support import RECEIVED


async def test_create_a_player_and_play_heart_to_heart(run: Run) -> None:
    code, out = await run("player", "create", "--name", "Cli")
    assert code == 0 and "created player Cli" in out
    assert stat.S_IMODE(run.config.stat().st_mode) == 0o600 and run.token().startswith("st_")
    code, out = await run("play", "--code", "HH1-N-AAAAAC5", stdin="t 25\nt 25\nt 25\nt w\nd\nu\nzz\n?\nq\n")
    assert code == 0, out
    assert "[J♥]" in out  # the selection is bracketed
    assert "pair J♥ + J♥: +10" in out and "score 10" in out
    assert "draw " in out and "undo" in out and "expected t N" in out and "commands:" in out
    assert "the game stays open: solitaire play --game g_" in out
    game_id = out.rsplit("--game ", 1)[1].split()[0]
    code, out = await run("play", "--game", game_id, stdin="p 24 23\nr\nn\nr\ny\n")
    assert "refused: That card is covered (not_free)" in out or "refused:" in out
    assert "not resigned" in out  # resigning asks first
    assert "game over: resigned, score 10" in out
    code, out = await run("verify", game_id)
    assert code == 0 and out.startswith("verified: HH1-N-AAAAAC5")


async def test_seahaven_commands_and_watching(run: Run, server: str) -> None:
    await run("player", "create")
    # A deal of its own: on a random one these two moves leave no card to move 3% of the time.
    code, out = await run("play", "SH", "--code", "SH1-C2-5VFBX2N", stdin="t c1\nm c1 c2\nq\n")
    assert code == 0 and "SH1-C2-5VFBX2N" in out and "cells: x1" in out and "x3" not in out
    game_id = out.rsplit("--game ", 1)[1].split()[0]
    watcher = await run.start("watch", game_id)
    assert watcher.stdout is not None
    first = await asyncio.wait_for(watcher.stdout.readline(), 30)
    assert b"watching" in first
    async with SolitaireClient(server, run.token(), trace=RECEIVED.append) as client:
        game = await client.open_game(game_id)
        await asyncio.sleep(0.3)
        legal = game.state.hints["movable"][0]
        await game.double_tap(legal)
        await game.resign()
    watched, _ = await asyncio.wait_for(watcher.communicate(), 30)
    run.collect()
    assert watcher.returncode == 0 and b"double_tap" in watched and b"finished: resigned" in watched
    assert re.search(rb"#\d+ Guest-[0-9a-f]+: double_tap", watched), watched  # whose move it was (its seq)


async def test_errors_are_reported_without_a_traceback(run: Run) -> None:
    code, out = await run("play", "HH")
    assert code == 2 and "solitaire player create" in out
    await run("player", "create")
    code, out = await run("play", "--code", "SH1-C9-AAAAAAA")
    assert code == 2 and "bad_code" in out and "Traceback" not in out
    code, out = await run("verify", "g_missing")
    assert code == 2 and "not_found" in out


async def test_deal_prints_the_spec_vector(run: Run) -> None:
    code, out = await run("deal", "SH1-C4-AAAAAJ2")
    assert code == 0 and out.startswith("SH1-C4-AAAAAJ2  KD 3S 4C QC 6D | AH 9S AC 8S 9D | KH 2S 5S 5H QD")
    assert "cells 3C 4H - -" in out


async def test_a_player_created_as_a_bot_says_so(run: Run) -> None:
    code, out = await run("player", "create", "--name", "Clanky", "--bot")
    assert code == 0 and "(a bot" in out, out


async def test_daily_and_leaderboard(run: Run) -> None:
    await run("player", "create", "--name", "Daily")
    code, out = await run("daily")
    assert code == 0 and "daily challenges for" in out and "SH1-C2" in out
    code, out = await run("play", "SH", "--daily", "--variant", "C2", stdin="r\ny\n")
    assert code == 0 and "game over: resigned" in out
    assert out.split("\n", 2)[1].split()[:2] == ["SH1-C2", "daily"]  # its code is sealed: not shown
    code, out = await run("leaderboard", "SH1-C2")
    assert code == 0 and "Daily" in out and "your rank: 1" in out and "SH1-C2-" not in out
    assert "rank  player" in out and "moves" in out and "score" in out  # every column labelled
    code, out = await run("leaderboard")  # without a code: today's daily challenges, by family
    assert code == 0 and "SH1-C2 daily" in out and "HH1-N daily" in out and "SH1-C2-" not in out


async def test_race_join_plays_the_race(run: Run, server: str) -> None:
    await run("player", "create", "--name", "Racer")
    host = await SolitaireClient.create_player(server, "Host")
    async with SolitaireClient(server, host.token, trace=RECEIVED.append) as client:
        race = await client.race_open("HH1-N-AAAAAC5")
        joiner = await run.start("race", "join", race.id)
        assert joiner.stdout is not None
        assert b"joined race" in await asyncio.wait_for(joiner.stdout.readline(), 30)
        await race.start(0)
        game = await race.wait_game(timeout=10)
        joiner.stdin.write(b"p 25 w\nr\ny\n")  # type: ignore[union-attr]
        await game.resign()
        out, _ = await asyncio.wait_for(joiner.communicate(), 30)
        run.collect()
        assert joiner.returncode == 0, out
        assert b"race: " in out and b"game over: resigned, score 10" in out
