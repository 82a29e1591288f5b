"""Counting finished games on their code's board, and pushing each change to its subscribers."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from engine.vocabulary import FINAL_RESULTS, Result
from server.core import topics
from server.core.games import LiveGame
from server.core.services import Services
from server.features.leaderboards.model import sort_key
from server.storage.leaderboards import around, record


def counts(live: LiveGame) -> bool:
    """Whether a finished game enters its code's leaderboard (a daily: only the ranked attempt)."""
    return live.ranked and live.result in FINAL_RESULTS


def entry_values(live: LiveGame) -> dict[str, Any]:
    """The leaderboard row a finished game would make."""
    g = live.game
    won = live.result == Result.WON
    return {
        "code": str(g.code),
        "player_id": live.owner_id,
        "game_id": live.id,
        "won": won,
        "progress": g.progress,
        "moves": g.moves,
        "elapsed_ms": live.elapsed_ms,
        "score": g.score,
        "undos": live.undos,
        "result": live.result or "",
        "finished_ms": live.finished_ms or 0,
        "sort_key": sort_key(won, g.progress, g.moves, live.elapsed_ms),
    }


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
