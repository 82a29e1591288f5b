"""Today's and past days' codes, how games on codes start, and the day-end sweep.

A day's code is stored in ``daily_challenges`` with INSERT … ON CONFLICT DO
NOTHING, so simultaneous first requests, on one instance or many, all read
back the same row. Which candidate is accepted is decided by
:meth:`Dailies.is_acceptable` alone: that is where the solver's proof of
winnability plugs in.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging

from sqlalchemy.exc import IntegrityError

from engine import GameCode, parse_code
from engine.vocabulary import Result
from server.core.games import LiveGame
from server.core.services import Services
from server.errors import ProtocolError
from server.features.dailies.model import FAMILIES, NO_PROGRESS_STATUSES, candidate, day_of, family_of
from server.features.solutions.model import daily_length, proven_length
from server.storage import dailies as store

log = logging.getLogger(__name__)
TICK_S = 0.5  # how often the sweeper looks at the (injectable) clock
SWEEP_EVERY_MS = 60_000  # a sweep also runs this often, for games started right at midnight
EXPIRE_IN_FLIGHT = 50


class Dailies:
    """The daily challenges: codes (cached once stored: a stored day never changes) and starts."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.games = services.games
        self._codes: dict[tuple[str, str], str] = {}
        self._days_of: dict[str, str] = {}  # code -> day, for the codes seen here
        self._sweeper: asyncio.Task[None] | None = None

    def today(self) -> str:
        return day_of(self.services.clock())

    # -- codes -----------------------------------------------------------------------

    async def code_for(self, day: str, family: str) -> str:
        """The day's code for a family, choosing and storing it on first use."""
        cached = self._codes.get((day, family))
        if cached is not None:
            return cached
        async with self.services.engine.connect() as conn:
            code = await store.stored_code(conn, day, family)
        candidates = itertools.count()
        while code is None:
            code = await self._try_candidate(day, family, next(candidates))
        self._remember(day, family, code)
        return code

    @staticmethod
    async def is_acceptable(used: bool, code: GameCode) -> bool:
        """THE gate for a day's code; the solver's proof of winnability slots in here.

        It refuses a code that an earlier day used (days never repeat) or that
        somebody has already played (a daily's leaderboard starts empty), and a
        code the solver does not prove winnable within its budget (``unknown``
        counts as no: the next candidate is tried).
        """
        return not used and await daily_length(code) is not None

    async def _try_candidate(self, day: str, family: str, n: int) -> str | None:
        """Offer candidate ``n``; returns the day's stored code (maybe another instance's), or None."""
        chosen = candidate(self.services.settings.secret, day, family, n)
        text = str(chosen)
        async with self.services.engine.begin() as conn:
            if await self.is_acceptable(await store.code_used(conn, text), chosen):
                now = self.services.clock()
                await store.insert_if_absent(conn, day, family, text, now, proven_length(text))
        async with self.services.engine.connect() as conn:
            return await store.stored_code(conn, day, family)

    def _remember(self, day: str, family: str, code: str) -> None:
        self._codes[(day, family)] = code
        self._days_of[code] = day

    async def codes_of_day(self, day: str) -> dict[str, str]:
        """Every family's code for today (created when missing) or a past day (as stored)."""
        if day == self.today():
            return {family: await self.code_for(day, family) for family in FAMILIES}
        async with self.services.engine.connect() as conn:
            found = await store.codes_of_day(conn, day)
        for family, code in found.items():
            self._remember(day, family, code)
        return {family: found[family] for family in FAMILIES if family in found}

    async def solution_lengths(self, day: str) -> dict[str, int | None]:
        """Each family's proven solution length that day: a difficulty figure, shown after the day."""
        async with self.services.engine.connect() as conn:
            return await store.solution_lengths(conn, day)

    async def day_of_code(self, code: str) -> str | None:
        """The day a code was the daily challenge, or None for an ordinary code."""
        if code in self._days_of:
            return self._days_of[code]
        async with self.services.engine.connect() as conn:
            found = await store.day_of_code(conn, code)
        if found is None:
            return None
        self._remember(found[0], found[1], code)
        return found[0]

    # -- starting games (server.core.context.Starter) --------------------------------------

    async def start_on_code(
        self, player_id: str, name: str, code: GameCode, race_id: str | None = None
    ) -> LiveGame:
        """Every new game on a code goes through here: daily attempts are ranked at most once."""
        text = str(code)
        await self.count_stuck_games(player_id, text)
        day = await self.day_of_code(text)
        if day is None:
            return await self.games.create(player_id, name, code, race_id=race_id)
        if day == self.today() and not await self._has_ranked(player_id, text):
            with contextlib.suppress(IntegrityError):  # another tab or instance got there first
                return await self.games.create(player_id, name, code, daily_day=day, race_id=race_id)
        return await self.games.create(player_id, name, code, daily_day=day, ranked=False, race_id=race_id)

    async def start_daily(self, player_id: str, name: str, family: str) -> LiveGame:
        """``new_game`` with ``daily``: today's challenge of that family."""
        code = await self.code_for(self.today(), family_of(family))
        return await self.start_on_code(player_id, name, parse_code(code))

    async def count_stuck_games(self, player_id: str, code: str) -> None:
        """Starting again on a code resigns the player's games on it that are in stalemate or stuck.

        That is what makes a stuck game count: resigning runs the finish
        hooks, which enter it on the leaderboard.
        """
        async with self.services.engine.connect() as conn:
            game_ids = await store.open_games_in(conn, player_id, code, NO_PROGRESS_STATUSES)
        for game_id in game_ids:
            live = await self.games.get(game_id)
            if live is not None and not live.finished and live.status in NO_PROGRESS_STATUSES:
                with contextlib.suppress(ProtocolError):  # finished meanwhile: nothing to count
                    await self.games.end(game_id, player_id, Result.RESIGNED)

    async def _has_ranked(self, player_id: str, code: str) -> bool:
        async with self.services.engine.connect() as conn:
            return await store.has_ranked(conn, player_id, code)

    # -- the end of a day ------------------------------------------------------------------

    async def expire_due(self, today: str | None = None) -> int:
        """End every ranked daily attempt of an earlier day still open, as ``expired``.

        Expiring runs the finish hooks, so each counts with the progress it had.
        Returns how many games were expired. Safe to call at any time.
        """
        async with self.services.engine.connect() as conn:
            due = await store.open_ranked_before(conn, today or self.today())
        expired = 0
        for start in range(0, len(due), EXPIRE_IN_FLIGHT):  # many at once, a bounded number in flight
            batch = due[start : start + EXPIRE_IN_FLIGHT]
            expired += sum(await asyncio.gather(*(self._expire(game_id) for game_id in batch)))
        return expired

    async def _expire(self, game_id: str) -> bool:
        try:
            await self.games.end(game_id, None, Result.EXPIRED)
        except ProtocolError:  # finished meanwhile
            return False
        return True

    async def sweep(self) -> None:
        """Periodic task: expire yesterday's open attempts as soon as the clock passes midnight."""
        last_day, last_sweep = "", 0
        while True:
            now = self.services.clock()
            today = day_of(now)
            due = today != last_day or now - last_sweep >= SWEEP_EVERY_MS
            if due and self.services.leader.leading:  # once per cluster: the leader sweeps
                try:
                    await self.expire_due(today)
                    last_day, last_sweep = today, now
                except Exception:  # the database may be briefly away; the next tick retries
                    log.exception("daily sweep failed")
            await asyncio.sleep(TICK_S)

    async def start(self) -> None:
        self._sweeper = asyncio.create_task(self.sweep(), name="daily-sweeper")

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
