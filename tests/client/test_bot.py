"""The bot example plays a daily challenge to a finished game, as a subprocess against a real server."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

from client import SolitaireClient
from client.errors import SealedError
from tests import processes

BOT = Path(__file__).resolve().parents[2] / "client" / "examples" / "bot.py"


async def test_the_bot_finishes_a_daily_challenge(server: str) -> None:
    assert len(BOT.read_text().splitlines()) < 100
    async with processes.async_started(
        sys.executable, str(BOT), "--server", server, "--daily", "SH1-C1", "--budget", "60",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    ) as process:  # fmt: skip
        text = (await processes.communicate(process, 90)).decode()
    assert process.returncode == 0, text
    found = re.search(r"finished: (won|resigned) .* game (g_\w+)", text)
    created = re.search(r"created player (p_\w+) \(a bot\)", text)
    assert found and created, text
    client = SolitaireClient(server)
    assert (await client.http.player(created.group(1)))["bot"] is True  # the bot said so
    with pytest.raises(SealedError):  # another's daily game stays sealed until the day ends
        await client.http.game(found.group(2))
    today = await client.daily()
    bots = await client.http.daily_leaderboard(today["day"], "SH1-C1", kind="bot")
    assert found.group(2) in [e["game_id"] for e in bots["entries"]]  # ranked among bots
    people = await client.http.daily_leaderboard(today["day"], "SH1-C1")
    assert found.group(2) not in [e["game_id"] for e in people["entries"]]
