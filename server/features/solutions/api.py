"""Solutions over HTTP (``GET /api/games/{id}/solution``) and the WebSocket (``solution``), and
hints during play (``hint``, WebSocket only)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from server.core.context import Caller, Handlers
from server.core.games import GameService
from server.edge.auth import viewer_from_header
from server.edge.openapi import route
from server.features.solutions.hints import Hints
from server.features.solutions.service import Solutions
from server.storage.db import Database


class SolutionsApi:
    def __init__(self, games: GameService, solutions: Solutions, hints: Hints, db: Database) -> None:
        self.games = games
        self.solutions = solutions
        self.hints = hints
        self.db = db

    def routes(self) -> list[BaseRoute]:
        return [route("/api/games/{game_id}/solution", self.get_solution)]

    def handlers(self) -> Handlers:
        return {"solution": self.solution, "hint": self.hint}

    async def get_solution(self, request: Request) -> Response:
        """409 while the game is open; a daily's is sealed (403) to others until its day ends."""
        live = await self.games.require(request.path_params["game_id"])
        viewer = await viewer_from_header(request, self.db)
        return JSONResponse(await self.solutions.body(live, viewer))

    async def solution(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        live = await self.games.require(fields["game_id"])
        return {"type": "solution", **await self.solutions.body(live, caller.player_id)}

    async def hint(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        player_id = caller.require_player()
        live = await self.games.require(fields["game_id"])
        return await self.hints.answer(live, player_id)
