"""A player's home: statistics kept by a finish hook, history pages, and replay steps of any
finished game, computed by the engine (:mod:`engine.replay`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from engine import Action
from engine.replay import steps
from engine.verify import IDLE_GAP_CAP_MS
from engine.vocabulary import Result
from server.core.games import LiveGame
from server.core.services import Services
from server.errors import ProtocolError
from server.features.profiles.model import (
    DAILY_RESULTS,
    HistoryFilter,
    dailies_json,
    decode_cursor,
    encode_cursor,
    games_json,
    variants_json,
)
from server.rules.days import day_of
from server.rules.disclosure import sealed_to_others, shown_code
from server.storage import profiles as store
from server.storage import queries
from server.storage.db import Record, Tx
from server.storage.faults import brief, is_unavailable
from server.storage.replays import stored_game
from wire import ErrorCode

log = logging.getLogger(__name__)


def history_json(row: Record, now_ms: int) -> dict[str, Any]:
    """A history row; a daily's names no code while its day lasts (its player's own included)."""
    return {
        "id": row.id,
        "code": shown_code(row.code, row.daily_day, now_ms),
        "variant": row.code.rsplit("-", 1)[0],
        "status": row.status,
        "result": row.result,
        "moves": row.moves,
        "score": row.score,
        "progress": row.progress,
        "undos": row.undos,
        "elapsed_ms": row.elapsed_ms,
        "created_at": row.created_ms,
        "finished_at": row.finished_ms,
        "daily": row.daily_day,
        "ranked": bool(row.ranked),
        "race_id": row.race_id,
    }


def replay_json(row: Record, actions: Sequence[Record], now_ms: int) -> dict[str, Any]:
    """Every position of a finished game with its action, points, events and information bar,
    and the time of each action: the clock as the player saw it (idle gaps capped as in play).
    CPU only: runs in a worker thread."""
    out = []
    elapsed, last = 0, None
    replayed = steps(row.code, [Action.from_text(a.action) for a in actions])
    for step in replayed:
        body = step.to_json()
        at = None if step.index == 0 else actions[step.index - 1].at_ms
        if at is not None:
            if last is not None:
                elapsed += min(max(0, at - last), IDLE_GAP_CAP_MS)
            last = at
        body["at"] = at
        body["elapsed_ms"] = elapsed
        out.append(body)
    return {
        "game_id": row.id,
        "code": shown_code(row.code, row.daily_day, now_ms),
        "family": row.code.rsplit("-", 1)[0],
        "owner": {"id": row.player_id},
        "result": row.result,
        "status": row.status,
        "moves": row.moves,
        "elapsed_ms": row.elapsed_ms,
        "daily": row.daily_day,
        "created_at": row.created_ms,
        "finished_at": row.finished_ms,
        "steps": out,
    }


class Profiles:
    """Statistics (a finish hook writes, a read never scans), history and replays."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def today(self) -> str:
        return day_of(self.services.clock())

    # -- keeping the statistics ---------------------------------------------------------------

    async def on_finish(self, live: LiveGame, tx: Tx) -> None:
        """Finish hook: in the transaction that ends the game, the player's totals change with it.

        A ranked daily given up before its first move is no day played (no streak, no rank).
        A ranked daily's win is held instead: its figures join the variant's totals when its
        day's rank is fixed, and only if its result is listed then (never while under review).
        """
        won = live.result == Result.WON
        g = live.game
        at = live.finished_ms or self.services.clock()
        # A day counts (days played, the streak, a rank) only for a real attempt: one move at
        # least. A daily opened and given up untouched is not a day played.
        attempted = g.moves > 0
        day = live.daily_day if live.ranked and attempted and live.result in DAILY_RESULTS else None
        new = day is not None and await store.record_daily(tx, live.owner_id, day, str(g.code), live.id, won)
        if new and won:  # a ranked win's figures wait for its day's end
            return
        await store.record_finish(tx, live.owner_id, g.code.family, won, g.moves, live.elapsed_ms, at)

    async def start(self) -> None:
        self.services.games.finish_hooks.append(self.on_finish)

    # -- reading --------------------------------------------------------------------------------

    async def stats(self, player_id: str) -> dict[str, Any]:
        """Two indexed round trips; a third pass only when an ended day's ranks are due."""
        today = self.today()
        async with self.services.db.read() as tx:
            found = await store.home(tx, player_id, today)
        if found is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, "no such player")
        if found.pending:
            await self._fix_ranks(player_id, today)
            async with self.services.db.read() as tx:
                found = await store.home(tx, player_id, today) or found
        per_variant = variants_json(found.variants)
        return {
            "player": {"id": player_id, "name": found.name},
            "games": games_json(per_variant),
            "variants": per_variant,
            "dailies": dailies_json(found.daily, today),
        }

    async def _fix_ranks(self, player_id: str, today: str) -> None:
        """Fix the ended days' ranks in a transaction of their own; a database too busy for it
        (SQLite's one writer) only delays them to a later read, the statistics are still read."""
        try:
            async with self.services.db.transaction() as tx:
                await store.fix_ranks(tx, player_id, today)
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            log.warning(
                "daily ranks of %s not fixed now (%s); a later read fixes them", player_id, brief(exc)
            )

    async def history(
        self, player_id: str, viewer: str | None, narrow: HistoryFilter, cursor: str | None, limit: int
    ) -> dict[str, Any]:
        """A page of games, newest first; another viewer sees finished games only, and a daily
        attempt only once its day has ended."""
        after = decode_cursor(cursor) if cursor else None
        own = viewer == player_id
        async with self.services.db.read() as tx:
            if await store.player_name(tx, player_id) is None:
                raise ProtocolError(ErrorCode.NOT_FOUND, "no such player")
            rows = await store.history(
                tx,
                player_id,
                narrow,
                finished_only=not own,
                sealed_from_day=None if own else self.today(),
                after=after,
                limit=limit + 1,
            )
        more = len(rows) > limit
        rows = rows[:limit]
        last = rows[-1] if rows and more else None
        return {
            "player_id": player_id,
            "games": [history_json(row, self.services.clock()) for row in rows],
            "next_cursor": encode_cursor(last.created_ms, last.id) if last is not None else None,
        }

    async def finished_game(self, game_id: str, viewer: str | None) -> tuple[Record, Sequence[Record]]:
        """A finished game's row and log, or the refusal: the one access rule for watching a
        finished game again (replays, ghost races)."""
        async with self.services.db.read() as tx:
            found = await stored_game(tx, game_id)
        if found is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, f"no game {game_id!r}")
        row, actions, _ = found
        sealed_to_others(row.daily_day, row.player_id, viewer, self.services.clock())  # before all
        if row.result is None:
            raise ProtocolError(
                ErrorCode.CONFLICT, "the game is not finished; it can be watched again once it is"
            )
        return row, actions

    async def replay(self, game_id: str, viewer: str | None) -> dict[str, Any]:
        row, actions = await self.finished_game(game_id, viewer)
        body = await asyncio.to_thread(replay_json, row, actions, self.services.clock())
        async with self.services.db.read() as tx:
            owner = await queries.player_by_id(tx, row.player_id)
        body["owner"]["name"] = owner.name if owner else "?"
        return body
