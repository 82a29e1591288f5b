"""A player's home over HTTP: statistics, history and replays (docs/protocol.md, "A player's home")."""

from __future__ import annotations

import re
from typing import Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from server.edge.inputs import int_param
from server.edge.openapi import route
from server.errors import ProtocolError
from server.features.profiles.model import HISTORY_RESULTS, HistoryFilter
from server.features.profiles.service import Profiles
from server.storage.accounts import Identity
from wire import ErrorCode

VARIANT = re.compile(r"\A(HH|SH)1-[A-Z0-9]{1,4}\Z")
GAMES = {"HH": "HH", "SH": "SH", "HEART_TO_HEART": "HH", "SEAHAVEN": "SH"}
FLAGS = {"true": True, "1": True, "false": False, "0": False}


class Identify(Protocol):
    """Who a bearer token belongs to (the accounts' service answers it; an unknown one is refused)."""

    async def identify(self, token: str) -> Identity: ...


def history_filter(request: Request) -> HistoryFilter:
    """The page's narrowing from the query, or ``bad_message`` naming the parameter."""
    q = request.query_params
    game = variant = result = None
    if (raw := q.get("game")) is not None:
        game = GAMES.get(raw.upper())
        if game is None:
            raise ProtocolError(ErrorCode.BAD_MESSAGE, "game must be HH or SH", field="game")
    if (raw := q.get("variant")) is not None:
        if VARIANT.match(raw.upper()) is None:
            raise ProtocolError(
                ErrorCode.BAD_MESSAGE, "variant is a code's family, such as SH1-C4", field="variant"
            )
        variant = raw.upper()
    if (raw := q.get("result")) is not None:
        if raw not in HISTORY_RESULTS:
            raise ProtocolError(
                ErrorCode.BAD_MESSAGE, f"result must be one of {', '.join(HISTORY_RESULTS)}", field="result"
            )
        result = raw
    daily = FLAGS.get(q.get("daily", "false").lower())
    if daily is None:
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "daily must be true or false", field="daily")
    return HistoryFilter(game, variant, result, daily)


class ProfilesApi:
    def __init__(self, profiles: Profiles, accounts: Identify) -> None:
        self.profiles = profiles
        self.accounts = accounts

    def routes(self) -> list[BaseRoute]:
        return [
            route("/api/players/{player_id}/stats", self.stats),
            route("/api/players/{player_id}/games", self.history),
            route("/api/games/{game_id}/replay", self.replay),
        ]

    async def viewer(self, request: Request) -> str | None:
        """The player a request comes from, if it sends a token; an unknown token is refused."""
        header = request.headers.get("authorization", "")
        if not header.lower().startswith("bearer "):
            return None
        return (await self.accounts.identify(header[7:].strip())).player_id

    async def stats(self, request: Request) -> Response:
        """Public: per variant and for the dailies, kept as games finish."""
        return JSONResponse(await self.profiles.stats(request.path_params["player_id"]))

    async def history(self, request: Request) -> Response:
        narrow = history_filter(request)
        limit = int_param(request, "limit", 20, 1, 100)
        cursor = request.query_params.get("cursor") or None
        viewer = await self.viewer(request)
        page = await self.profiles.history(request.path_params["player_id"], viewer, narrow, cursor, limit)
        return JSONResponse(page)

    async def replay(self, request: Request) -> Response:
        """Every position of a finished game, as the engine computes it, with its times."""
        viewer = await self.viewer(request)
        return JSONResponse(await self.profiles.replay(request.path_params["game_id"], viewer))
