"""``GET /api/games/{id}/verify``: replay a finished game from its code and log, compare with storage."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from server.clock import Clock
from server.edge.auth import viewer_from_header
from server.edge.openapi import route
from server.errors import ProtocolError
from server.features.replays.model import report
from server.rules.disclosure import is_sealed, sealed_to_others
from server.storage.db import Database
from server.storage.replays import stored_game
from wire import ErrorCode


class ReplaysApi:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def routes(self) -> list[BaseRoute]:
        return [route("/api/games/{game_id}/verify", self.verify_game)]

    async def verify_game(self, request: Request) -> Response:
        """Replay a finished game from its code and log; compare with what the server stored."""
        game_id = request.path_params["game_id"]
        async with self.db.read() as tx:
            found = await stored_game(tx, game_id)
        if found is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, f"no game {game_id!r}")
        row, actions, entry = found
        sealed = is_sealed(row.daily_day, self.clock())
        if sealed:  # a daily's game: its player's only until the day is over, and named without code
            sealed_to_others(
                row.daily_day, row.player_id, await viewer_from_header(request, self.db), self.clock()
            )
        if row.result is None:
            raise ProtocolError(
                ErrorCode.CONFLICT, "the game is not finished; its moves are public once it is"
            )
        body = await asyncio.to_thread(report, row, actions, entry)
        if sealed:
            body["code"] = None
        return JSONResponse(body)
