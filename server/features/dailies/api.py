"""The daily challenges over HTTP: ``GET /api/daily`` and ``GET /api/daily/{day}``."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from server.edge.http import route
from server.errors import ProtocolError
from server.features.dailies.model import DAY_MS, day_start_ms, parse_day
from server.features.dailies.service import Dailies
from server.vocabulary import ErrorCode


class DailiesApi:
    """The feature as the app composes it: the service, its routes, its background sweep."""

    def __init__(self, dailies: Dailies) -> None:
        self.dailies = dailies

    def routes(self) -> list[BaseRoute]:
        return [route("/api/daily", self.get_today), route("/api/daily/{day}", self.get_day)]

    async def day_body(self, day: str) -> dict[str, Any]:
        start = day_start_ms(day)
        today = day == self.dailies.today()
        body: dict[str, Any] = {
            "day": day,
            "today": today,
            "codes": await self.dailies.codes_of_day(day),
            "starts_at": start,
            "ends_at": start + DAY_MS,
            "now": self.dailies.services.clock(),
        }
        if not today:  # a solution's length would hint at today's deal: shown once the day is over
            body["solution_lengths"] = await self.dailies.solution_lengths(day)
        return body

    async def get_today(self, request: Request) -> Response:
        """Today's codes and the next reset (``ends_at``)."""
        return JSONResponse(await self.day_body(self.dailies.today()))

    async def get_day(self, request: Request) -> Response:
        """A past day's codes, or today's; a future day is not known yet (404)."""
        day = parse_day(request.path_params["day"])
        if day > self.dailies.today():
            raise ProtocolError(ErrorCode.NOT_FOUND, "that day has not started yet")
        body = await self.day_body(day)
        if not body["codes"]:
            raise ProtocolError(ErrorCode.NOT_FOUND, "no daily challenge was published that day")
        return JSONResponse(body)
