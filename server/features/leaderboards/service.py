"""Counting finished games on their code's board, and pushing each change to its subscribers."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncConnection

from server.core import topics
from server.core.games import LiveGame
from server.core.services import Services
from server.features.leaderboards.model import counts, entry_values
from server.storage.leaderboards import around, record


class Leaderboards:
    """A finish hook (in the finishing transaction) and a game listener (after the commit)."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self._changed: dict[str, str] = {}  # game id -> code, set in the commit
        self._locks: dict[str, tuple[asyncio.Lock, list[int]]] = {}  # code -> (lock, users)
        self._tasks: set[asyncio.Task[None]] = set()

    async def on_finish(self, live: LiveGame, conn: AsyncConnection) -> None:
        """Finish hook: runs inside the transaction that ends the game, so no result is lost."""
        if counts(live) and await record(conn, entry_values(live)):
            self._changed[live.id] = str(live.game.code)

    def on_change(self, live: LiveGame) -> None:
        """Listener: after the commit, push the changed entry to the code's subscribers."""
        code = self._changed.pop(live.id, None)
        if code is None or not self.services.hub.subscriber_count(topics.leaderboard(code)):
            return
        task = asyncio.get_running_loop().create_task(self._push(code, live.owner_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _push(self, code: str, player_id: str) -> None:
        lock, users = self._locks.setdefault(code, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:  # one code's updates go out in the order results landed
                async with self.services.engine.connect() as conn:
                    window = await around(conn, code, player_id, 0)
                if window is not None and window.me is not None:
                    message = {"type": "leaderboard_update", "code": code, "entry": window.me}
                    self.services.hub.publish(topics.leaderboard(code), message)
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[code]

    async def start(self) -> None:
        self.services.games.finish_hooks.append(self.on_finish)
        self.services.games.listeners.append(self.on_change)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
