"""Daily challenges: one code per UTC day and variant family, and how games on codes start.

A day's code is derived from the server secret (HMAC-SHA256 over day, family
and a counter), so nobody can compute it before the server publishes it, and
stored in ``daily_challenges`` with INSERT … ON CONFLICT DO NOTHING, so
simultaneous first requests, on one instance or many, all read back the same
row. Which candidate is accepted is decided by :func:`is_acceptable` alone:
that is where the solver's winnability proof plugs in.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import itertools
import logging
import re
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from engine import GameCode, parse_code
from engine.codes import MAX_SEED, make_code
from server import http_api, solutions
from server.games import LiveGame
from server.protocol import ProtocolError
from server.storage.models import DailyChallenge, GameRow

if TYPE_CHECKING:
    from server.app import Services

log = logging.getLogger(__name__)
FAMILIES = ("HH1-N", "SH1-C4", "SH1-C2", "SH1-C1")
DAY_MS = 86_400_000
NO_PROGRESS_STATUSES = ("stalemate", "stuck", "lost")
TICK_S = 0.5  # how often the sweeper looks at the (injectable) clock
SWEEP_EVERY_MS = 60_000  # a sweep also runs this often, for games started right at midnight
DAILY = DailyChallenge.__table__
GAMES = GameRow.__table__
_DAY_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


# -- days ----------------------------------------------------------------------------


def day_of(ms: int) -> str:
    """The UTC date (``YYYY-MM-DD``) of a millisecond timestamp."""
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()


def day_start_ms(day: str) -> int:
    """Midnight UTC at the start of a day, in milliseconds (Unix time has no leap seconds)."""
    return (date.fromisoformat(day) - date(1970, 1, 1)).days * DAY_MS


def parse_day(text: str) -> str:
    """A ``YYYY-MM-DD`` path segment, or ``bad_message``."""
    try:
        if not _DAY_RE.match(text):
            raise ValueError(text)
        return date.fromisoformat(text).isoformat()
    except ValueError:
        raise ProtocolError("bad_message", "a day is written YYYY-MM-DD", field="day") from None


def family_of(text: str) -> str:
    """A daily family (``SH1-C2``) from a request, case-insensitive."""
    family = text.strip().upper()
    if family not in FAMILIES:
        allowed = ", ".join(FAMILIES)
        raise ProtocolError("bad_message", f"daily must be one of {allowed}", field="daily")
    return family


# -- choosing a day's code -----------------------------------------------------------------


def candidate(secret: str, day: str, family: str, n: int) -> GameCode:
    """The ``n``-th candidate code for a day: unpredictable without the server secret."""
    digest = hmac.new(secret.encode(), f"{day}|{family}|{n}".encode(), hashlib.sha256).digest()
    seed = int.from_bytes(digest[:8], "big") & MAX_SEED
    game, variant = family[:2], family.split("-")[1]
    return make_code(game, variant, seed)


async def is_acceptable(conn: AsyncConnection, code: GameCode) -> bool:
    """THE gate for a day's code; the solver's proof of winnability slots in here.

    It refuses a code that an earlier day used (days never repeat), a code
    somebody has already played (a daily's leaderboard starts empty), and a
    code the solver does not prove winnable within its budget (``unknown``
    counts as no: the next candidate is tried); the solution's length is kept
    for :func:`insert_if_absent` (``solutions.proven_length``).
    """
    text = str(code)
    used = await conn.execute(select(DAILY.c.day).where(DAILY.c.code == text).limit(1))
    if used.first() is not None:
        return False
    played = await conn.execute(select(GAMES.c.id).where(GAMES.c.code == text).limit(1))
    if played.first() is not None:
        return False
    return await solutions.daily_length(code) is not None


async def stored_code(conn: AsyncConnection, day: str, family: str) -> str | None:
    query = select(DAILY.c.code).where(DAILY.c.day == day, DAILY.c.family == family)
    return (await conn.execute(query)).scalar_one_or_none()


async def insert_if_absent(conn: AsyncConnection, day: str, family: str, code: str, now: int) -> None:
    """INSERT … ON CONFLICT DO NOTHING on both backends: the first writer wins, nobody fails."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    values = {"day": day, "family": family, "code": code, "created_ms": now}
    values["solution_length"] = solutions.proven_length(code)
    await conn.execute(dialect.insert(DAILY).values(**values).on_conflict_do_nothing())


class Dailies:
    """Today's and past days' codes, cached once stored (a stored day never changes)."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self._codes: dict[tuple[str, str], str] = {}
        self._days_of: dict[str, str] = {}  # code -> day, for the codes seen here

    def today(self) -> str:
        return day_of(self.services.clock())

    async def code_for(self, day: str, family: str) -> str:
        """The day's code for a family, choosing and storing it on first use."""
        cached = self._codes.get((day, family))
        if cached is not None:
            return cached
        engine = self.services.engine
        async with engine.connect() as conn:
            code = await stored_code(conn, day, family)
        for n in itertools.count():
            if code is not None:
                break
            code = await self._try_candidate(day, family, n)
        assert code is not None  # the loop only ends with a stored code
        self._remember(day, family, code)
        return code

    async def _try_candidate(self, day: str, family: str, n: int) -> str | None:
        """Offer candidate ``n``; returns the day's stored code (maybe another instance's), or None."""
        chosen = candidate(self.services.settings.secret, day, family, n)
        async with self.services.engine.begin() as conn:
            if await is_acceptable(conn, chosen):
                await insert_if_absent(conn, day, family, str(chosen), self.services.clock())
        async with self.services.engine.connect() as conn:
            return await stored_code(conn, day, family)

    def _remember(self, day: str, family: str, code: str) -> None:
        self._codes[(day, family)] = code
        self._days_of[code] = day

    async def codes_of_day(self, day: str) -> dict[str, str]:
        """Every family's code for today (created when missing) or a past day (as stored)."""
        if day == self.today():
            return {family: await self.code_for(day, family) for family in FAMILIES}
        async with self.services.engine.connect() as conn:
            rows = await conn.execute(select(DAILY.c.family, DAILY.c.code).where(DAILY.c.day == day))
            found = {row.family: row.code for row in rows}
        for family, code in found.items():
            self._remember(day, family, code)
        return {family: found[family] for family in FAMILIES if family in found}

    async def solution_lengths(self, day: str) -> dict[str, int | None]:
        """Each family's proven solution length that day: a difficulty figure, shown after the day."""
        query = select(DAILY.c.family, DAILY.c.solution_length).where(DAILY.c.day == day)
        async with self.services.engine.connect() as conn:
            return {row.family: row.solution_length for row in await conn.execute(query)}

    async def day_of_code(self, code: str) -> str | None:
        """The day a code was the daily challenge, or None for an ordinary code."""
        if code in self._days_of:
            return self._days_of[code]
        async with self.services.engine.connect() as conn:
            row = (await conn.execute(select(DAILY).where(DAILY.c.code == code))).first()
        if row is None:
            return None
        self._remember(row.day, row.family, row.code)
        return str(row.day)


def dailies(services: Services) -> Dailies:
    found: Dailies = services.extras["dailies"]
    return found


# -- starting games ----------------------------------------------------------------------


async def count_stuck_games(services: Services, player_id: str, code: str) -> None:
    """Starting again on a code resigns the player's games on it that are in stalemate or stuck.

    That is what makes a stuck game count (issue 4, point 3): resigning runs
    the finish hooks, which enter it on the leaderboard.
    """
    query = select(GAMES.c.id).where(
        GAMES.c.player_id == player_id,
        GAMES.c.code == code,
        GAMES.c.result.is_(None),
        GAMES.c.status.in_(NO_PROGRESS_STATUSES),
    )
    async with services.engine.connect() as conn:
        game_ids = list((await conn.execute(query)).scalars())
    for game_id in game_ids:
        live = await services.games.get(game_id)
        if live is not None and not live.finished and live.status in NO_PROGRESS_STATUSES:
            with contextlib.suppress(ProtocolError):  # finished meanwhile: nothing to count
                await services.games.end(game_id, player_id, "resigned")


async def start_on_code(
    services: Services, player_id: str, name: str, code: GameCode, race_id: str | None = None
) -> LiveGame:
    """Every new game on a code goes through here: daily attempts are ranked at most once."""
    text = str(code)
    await count_stuck_games(services, player_id, text)
    games = services.games
    day = await dailies(services).day_of_code(text)
    if day is None:
        return await games.create(player_id, name, code, race_id=race_id)
    ranked = day == dailies(services).today() and not await _has_ranked(services, player_id, text)
    if ranked:
        with contextlib.suppress(IntegrityError):  # another tab or instance got there first
            return await games.create(player_id, name, code, daily_day=day, race_id=race_id)
    return await games.create(player_id, name, code, daily_day=day, ranked=False, race_id=race_id)


async def _has_ranked(services: Services, player_id: str, code: str) -> bool:
    query = select(GAMES.c.id).where(
        GAMES.c.player_id == player_id,
        GAMES.c.code == code,
        GAMES.c.daily_day.is_not(None),
        GAMES.c.ranked.is_(True),
    )
    async with services.engine.connect() as conn:
        return (await conn.execute(query.limit(1))).first() is not None


async def daily_starter(services: Services, player_id: str, name: str, fields: dict[str, Any]) -> LiveGame:
    """``new_game`` with ``daily``: today's challenge of that family."""
    family = family_of(fields["daily"])
    board = dailies(services)
    code = await board.code_for(board.today(), family)
    return await start_on_code(services, player_id, name, parse_code(code))


async def code_starter(services: Services, player_id: str, name: str, code: GameCode) -> LiveGame:
    """``new_game`` with a code or a game and variant."""
    return await start_on_code(services, player_id, name, code)


# -- the end of a day ---------------------------------------------------------------------


async def expire_due(services: Services, today: str | None = None) -> int:
    """End every ranked daily attempt of an earlier day still open, as ``expired``.

    Expiring runs the finish hooks, so each counts with the progress it had.
    Returns how many games were expired. Safe to call at any time.
    """
    today = today or dailies(services).today()
    query = select(GAMES.c.id, GAMES.c.player_id).where(
        GAMES.c.daily_day.is_not(None),
        GAMES.c.ranked.is_(True),
        GAMES.c.result.is_(None),
        GAMES.c.daily_day < today,
    )
    async with services.engine.connect() as conn:
        due = list((await conn.execute(query)).all())
    expired = 0
    for start in range(0, len(due), 50):  # many at once, but a bounded number in flight
        batch = due[start : start + 50]
        results = await asyncio.gather(*(_expire(services, r.id) for r in batch))
        expired += sum(results)
    return expired


async def _expire(services: Services, game_id: str) -> bool:
    try:
        await services.games.end(game_id, None, "expired")
    except ProtocolError:  # finished meanwhile
        return False
    return True


async def sweeper(services: Services) -> None:
    """Periodic task: expire yesterday's open attempts as soon as the clock passes midnight."""
    last_day, last_sweep = "", 0
    while True:
        now = services.clock()
        today = day_of(now)
        if today != last_day or now - last_sweep >= SWEEP_EVERY_MS:
            try:
                await expire_due(services, today)
                last_day, last_sweep = today, now
            except Exception:  # the database may be briefly away; the next tick retries
                log.exception("daily sweep failed")
        await asyncio.sleep(TICK_S)


# -- HTTP ------------------------------------------------------------------------------


async def day_body(services: Services, day: str) -> dict[str, Any]:
    start = day_start_ms(day)
    codes = await dailies(services).codes_of_day(day)
    today = day == dailies(services).today()
    body: dict[str, Any] = {
        "day": day,
        "today": today,
        "codes": codes,
        "starts_at": start,
        "ends_at": start + DAY_MS,
        "now": services.clock(),
    }
    if not today:  # a solution's length would hint at today's deal: shown once the day is over
        body["solution_lengths"] = await dailies(services).solution_lengths(day)
    return body


@http_api.endpoint
async def get_today(request: Request) -> Response:
    """Today's codes and the next reset (``ends_at``)."""
    services = http_api.services_of(request)
    return JSONResponse(await day_body(services, dailies(services).today()))


@http_api.endpoint
async def get_day(request: Request) -> Response:
    """A past day's codes, or today's; a future day is not known yet (404)."""
    services = http_api.services_of(request)
    day = parse_day(request.path_params["day"])
    if day > dailies(services).today():
        raise ProtocolError("not_found", "that day has not started yet")
    body = await day_body(services, day)
    if not body["codes"]:
        raise ProtocolError("not_found", "no daily challenge was published that day")
    return JSONResponse(body)


http_api.EXTRA_ROUTES.extend([Route("/api/daily", get_today), Route("/api/daily/{day}", get_day)])
