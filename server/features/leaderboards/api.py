"""Leaderboards over HTTP (pages, a player's window) and the WebSocket (live subscriptions).

A board is reached by its code, or, for a daily challenge, by day and family:
while the day lasts only that way (the code is sealed, and asking by code is
``sealed``), and the answer names no code. ``kind=bot`` reads the bots' board
of a code; ``include=flagged`` adds the flagged entries, marked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from server.core import topics
from server.core.context import Caller, Handlers
from server.edge.inputs import int_param
from server.edge.openapi import route
from server.errors import ProtocolError, code_or_error
from server.features.leaderboards.model import DEFAULT_LIMIT, DEFAULT_RADIUS, MAX_LIMIT, MAX_RADIUS
from server.rules.days import family_of, parse_day
from server.storage.db import Database
from server.storage.leaderboards import around, top, with_flagged
from wire import ErrorCode, PlayerKind

INCLUDES = ("flagged",)


class DailyChallenge(Protocol):
    """One family's challenge of a day, as the boards read it."""

    @property
    def family(self) -> str: ...

    @property
    def code(self) -> str: ...


class DailyCodes(Protocol):
    """What the boards need of the daily challenges (the dailies' service answers it)."""

    def today(self) -> str: ...

    async def sealed_code(self, code: str) -> bool: ...

    async def code_for(self, day: str, family: str) -> str: ...

    async def challenges_of_day(self, day: str) -> Sequence[DailyChallenge]: ...


@dataclass(frozen=True)
class Named:
    """Which board a request asked for, and how the answer names it."""

    code: str
    name: dict[str, Any]  # {"code": ...} or {"code": None|code, "day": ..., "family": ...}


def kind_param(value: str | None) -> str:
    """``kind``: ``human`` (the default: people's board) or ``bot``."""
    if value is None:
        return PlayerKind.HUMAN
    if value not in tuple(PlayerKind):
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "kind must be human or bot", field="kind")
    return value


def include_param(value: str | None) -> bool:
    if value is None:
        return False
    if value not in INCLUDES:
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "include must be flagged", field="include")
    return True


class LeaderboardsApi:
    """The read side of the boards; counting is :class:`~.service.Leaderboards`' job."""

    def __init__(self, db: Database, dailies: DailyCodes) -> None:
        self.db = db
        self.dailies = dailies

    def routes(self) -> list[BaseRoute]:
        return [
            route("/api/leaderboards/{code}", self.get_leaderboard),
            route("/api/leaderboards/{code}/players/{player_id}", self.get_player_rank),
            route("/api/daily/{day}/{family}/leaderboard", self.get_daily_leaderboard),
            route("/api/daily/{day}/{family}/leaderboard/players/{player_id}", self.get_daily_player_rank),
        ]

    def handlers(self) -> Handlers:
        return {"subscribe_leaderboard": self.subscribe, "unsubscribe_leaderboard": self.unsubscribe}

    async def by_code(self, text: str) -> Named:
        """A board asked for by code: a sealed daily's is refused."""
        code = str(code_or_error(text))
        if await self.dailies.sealed_code(code):
            raise ProtocolError(
                ErrorCode.SEALED, "a daily challenge's board is reached by day and family until its day ends"
            )
        return Named(code, {"code": code})

    async def by_day(self, day_text: str, family_text: str) -> Named:
        """A daily's board asked for by day and family; the code is named once the day is over."""
        day, family = parse_day(day_text), family_of(family_text)
        today = self.dailies.today()
        if day > today:
            raise ProtocolError(ErrorCode.NOT_FOUND, "that day has not started yet")
        if day == today:
            code = await self.dailies.code_for(day, family)
        else:
            found = {c.family: c.code for c in await self.dailies.challenges_of_day(day)}
            if family not in found:
                raise ProtocolError(ErrorCode.NOT_FOUND, "no daily challenge of that family that day")
            code = found[family]
        return Named(code, {"code": None if day == today else code, "day": day, "family": family})

    async def page(self, request: Request, named: Named) -> Response:
        limit = int_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        cursor = request.query_params.get("cursor") or None
        kind = kind_param(request.query_params.get("kind"))
        read = with_flagged if include_param(request.query_params.get("include")) else top
        async with self.db.read() as tx:
            window = await read(tx, named.code, limit, cursor, kind)
        return JSONResponse({**named.name, "entries": window.entries, "next_cursor": window.next_cursor})

    async def rank(self, request: Request, named: Named) -> Response:
        player_id = request.path_params["player_id"]
        radius = int_param(request, "radius", DEFAULT_RADIUS, 0, MAX_RADIUS)
        kind = kind_param(request.query_params.get("kind"))
        async with self.db.read() as tx:
            window = await around(tx, named.code, player_id, radius, kind)
        if window is None or window.me is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, "this player has no listed entry on this leaderboard")
        body = {**named.name, "rank": window.me["rank"], "entry": window.me, "entries": window.entries}
        return JSONResponse(body)

    async def get_leaderboard(self, request: Request) -> Response:
        """Top entries of one code's board, ``limit`` at a time, continued with ``cursor``."""
        return await self.page(request, await self.by_code(request.path_params["code"]))

    async def get_player_rank(self, request: Request) -> Response:
        """A player's own entry and rank with ``radius`` entries either side."""
        return await self.rank(request, await self.by_code(request.path_params["code"]))

    async def get_daily_leaderboard(self, request: Request) -> Response:
        """A daily challenge's board by day and family (the only way while the day lasts)."""
        named = await self.by_day(request.path_params["day"], request.path_params["family"])
        return await self.page(request, named)

    async def get_daily_player_rank(self, request: Request) -> Response:
        """A player's entry and rank on a daily challenge's board, by day and family."""
        named = await self.by_day(request.path_params["day"], request.path_params["family"])
        return await self.rank(request, named)

    async def named(self, fields: dict[str, Any]) -> Named:
        if "code" in fields:
            return await self.by_code(fields["code"])
        if "day" in fields and "family" in fields:
            return await self.by_day(fields["day"], fields["family"])
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "give a code, or a daily's day and family", field="code")

    async def subscribe(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        named = await self.named(fields)
        limit = fields.get("limit", DEFAULT_LIMIT)  # the schema bounds it
        caller.follow(topics.leaderboard(named.code))  # before the read, so no update falls between the two
        async with self.db.read() as tx:
            window = await top(tx, named.code, limit)
        return {
            "type": "leaderboard",
            **named.name,
            "entries": window.entries,
            "next_cursor": window.next_cursor,
        }

    async def unsubscribe(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        named = await self.named(fields)
        caller.unfollow(topics.leaderboard(named.code))
        return {"type": "leaderboard_unsubscribed", **named.name}
