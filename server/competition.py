"""Wiring for competing on shared codes: dailies, leaderboards, races and verified replays.

Importing this module registers the WebSocket handlers and HTTP routes of
``daily``, ``leaderboard``, ``races`` and ``replays``; :func:`setup` (a
``SETUP_HOOKS`` entry) attaches their state to the running app, installs the
leaderboard's finish hook, the game listeners and the daily starters, and
starts the day-end sweeper.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from server import daily, leaderboard, races, replays

if TYPE_CHECKING:
    from server.app import Services

__all__ = ["daily", "leaderboard", "races", "replays", "setup", "teardown"]


async def setup(services: Services) -> None:
    boards = leaderboard.Leaderboards(services)
    running = races.Races(services)
    services.extras.update(dailies=daily.Dailies(services), leaderboards=boards, races=running)
    services.games.finish_hooks.append(boards.on_finish)
    services.games.listeners.extend([boards.on_change, running.on_change])
    services.daily_starter = daily.daily_starter
    services.code_starter = daily.code_starter
    services.extras["sweeper"] = asyncio.create_task(daily.sweeper(services), name="daily-sweeper")


async def teardown(services: Services) -> None:
    sweeper: asyncio.Task[None] | None = services.extras.pop("sweeper", None)
    if sweeper is not None:
        sweeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeper
    await races.races(services).close()
    await leaderboard.leaderboards(services).close()
