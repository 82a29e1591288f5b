"""The bot example plays a daily challenge to a finished game, as a subprocess against a real server."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from client import SolitaireClient, verify_game
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
    assert found, text
    client = SolitaireClient(server)
    info, _ = await client.http.game(found.group(2))
    today = await client.daily()
    assert info.finished and info.daily == today["day"] and info.code == today["codes"]["SH1-C1"]
    assert (await verify_game(client.http, info.id)).ok
