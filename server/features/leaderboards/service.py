"""Counting finished games on their code's board, and pushing each change to its subscribers.

At the finish, in the finishing transaction, the result's think-time signals
are taken from the server's own timestamps and the screening thresholds
applied: a flagged result is stored but not listed, so it never shows in the
default view before a person has looked at it. A bot's result goes on its
code's bots' board; a banned player's does not count at all.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from engine.vocabulary import FINAL_RESULTS, Result
from server.core import topics
from server.core.games import LiveGame
from server.core.services import Services
from server.rules.days import DAY_MS
from server.rules.disclosure import is_sealed
from server.rules.ranking import sort_key
from server.rules.think_time import TimeSignals, flag_reasons, time_signals
from server.storage.db import Tx
from server.storage.faults import OUTAGE, is_away
from server.storage.leaderboards import around, record
from server.storage.screening import confirmed_since, insert_signals, player_kind
from server.vocabulary import FlagReason
from wire import PlayerKind, Standing

log = logging.getLogger(__name__)


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

    async def on_finish(self, live: LiveGame, tx: Tx) -> None:
        """Finish hook: runs inside the transaction that ends the game, so no result is lost."""
        if not counts(live):
            return
        kind, banned = await player_kind(tx, live.owner_id)
        if banned:  # a banned player's games stop counting
            return
        screening = self.services.settings.screening
        signals = time_signals(live.gaps, live.game.seq, live.game.moves, live.undos, screening)
        reasons = [] if kind == PlayerKind.BOT else await self._reasons(tx, live, signals)
        standing = Standing.FLAGGED if reasons else Standing.OK
        values = {**entry_values(live), "kind": kind, "standing": standing, "listed": not reasons}
        await insert_signals(
            tx,
            {
                "game_id": live.id,
                "code": str(live.game.code),
                "player_id": live.owner_id,
                "finished_ms": live.finished_ms or 0,
                "actions": signals.actions,
                "moves": signals.moves,
                "median_gap_ms": signals.median_gap_ms,
                "min_gap_ms": signals.min_gap_ms,
                "gap_spread_ms": signals.gap_spread_ms,
                "undos": signals.undos,
                "reasons": ",".join(reasons),
                "evidence": json.dumps(signals.evidence()),
                # Only a win is compared with the solver's line (the screening feature's SolverComparison).
                "analysed_ms": None if live.result == Result.WON else live.finished_ms or 0,
            },
        )
        if await record(tx, values) and kind == PlayerKind.HUMAN and not reasons:
            self._changed[live.id] = str(live.game.code)

    async def _reasons(self, tx: Tx, live: LiveGame, signals: TimeSignals) -> list[FlagReason]:
        """The thresholds a human's result crosses, the player's recent confirmed flags included."""
        screening = self.services.settings.screening
        since = self.services.clock() - screening.repeat_days * DAY_MS
        repeat = await confirmed_since(tx, live.owner_id, since) > 0
        return flag_reasons(signals, screening, repeat)

    def on_change(self, live: LiveGame) -> None:
        """Listener: after the commit, push the changed entry to the code's subscribers."""
        code = self._changed.pop(live.id, None)
        if code is None or not self.services.hub.subscriber_count(topics.leaderboard(code)):
            return
        daily = None
        if is_sealed(live.daily_day, self.services.clock()):
            daily = {"day": live.daily_day, "family": live.game.code.family}
        task = asyncio.get_running_loop().create_task(self._push(code, live.owner_id, daily))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _push(self, code: str, player_id: str, daily: dict[str, Any] | None) -> None:
        """The changed entry to the board's subscribers; a sealed daily's board names no code."""
        lock, users = self._locks.setdefault(code, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:  # one code's updates go out in the order results landed
                try:
                    async with self.services.db.read() as tx:
                        window = await around(tx, code, player_id, 0)
                except Exception as exc:  # a task of its own: nobody else would see it
                    if not is_away(exc):
                        raise
                    OUTAGE.failed(log, "leaderboard push", exc)  # the next result pushes the board again
                    return
                if window is not None and window.me is not None:
                    named: dict[str, Any] = {"code": code} if daily is None else {"code": None, **daily}
                    message = {"type": "leaderboard_update", **named, "entry": window.me}
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
