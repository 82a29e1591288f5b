"""Leaderboards over HTTP (pages, a player's window) and the WebSocket (live subscriptions)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from server.core import topics
from server.core.context import Caller, Handlers
from server.edge.http import int_param, route
from server.errors import ProtocolError, code_or_error
from server.features.leaderboards.model import DEFAULT_LIMIT, DEFAULT_RADIUS, MAX_LIMIT, MAX_RADIUS
from server.storage.leaderboards import around, top
from server.vocabulary import ErrorCode


class LeaderboardsApi:
    """The read side of the boards; counting is :class:`~.service.Leaderboards`' job."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    def routes(self) -> list[BaseRoute]:
        return [
            route("/api/leaderboards/{code}", self.get_leaderboard),
            route("/api/leaderboards/{code}/players/{player_id}", self.get_player_rank),
        ]

    def handlers(self) -> Handlers:
        return {"subscribe_leaderboard": self.subscribe, "unsubscribe_leaderboard": self.unsubscribe}

    async def get_leaderboard(self, request: Request) -> Response:
        """Top entries of one code's board, ``limit`` at a time, continued with ``cursor``."""
        code = str(code_or_error(request.path_params["code"]))
        limit = int_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        cursor = request.query_params.get("cursor") or None
        async with self.engine.connect() as conn:
            window = await top(conn, code, limit, cursor)
        return JSONResponse({"code": code, "entries": window.entries, "next_cursor": window.next_cursor})

    async def get_player_rank(self, request: Request) -> Response:
        """A player's own entry and rank with ``radius`` entries either side."""
        code = str(code_or_error(request.path_params["code"]))
        player_id = request.path_params["player_id"]
        radius = int_param(request, "radius", DEFAULT_RADIUS, 0, MAX_RADIUS)
        async with self.engine.connect() as conn:
            window = await around(conn, code, player_id, radius)
        if window is None or window.me is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, "this player has no entry on this code's leaderboard")
        body = {"code": code, "rank": window.me["rank"], "entry": window.me, "entries": window.entries}
        return JSONResponse(body)

    async def subscribe(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        code = str(code_or_error(fields["code"]))
        limit = fields.get("limit", DEFAULT_LIMIT)
        if not 1 <= limit <= MAX_LIMIT:
            raise ProtocolError(ErrorCode.BAD_MESSAGE, f"limit must be 1 to {MAX_LIMIT}", field="limit")
        caller.follow(topics.leaderboard(code))  # before the read, so no update falls between the two
        async with self.engine.connect() as db:
            window = await top(db, code, limit)
        return {
            "type": "leaderboard",
            "code": code,
            "entries": window.entries,
            "next_cursor": window.next_cursor,
        }

    async def unsubscribe(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        code = str(code_or_error(fields["code"]))
        caller.unfollow(topics.leaderboard(code))
        return {"type": "leaderboard_unsubscribed", "code": code}
