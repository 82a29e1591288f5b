"""The daily challenges over HTTP: ``GET /api/daily`` and ``GET /api/daily/{day}``.

Until a day ends its challenges are sealed: each family shows only its
commitment (``dailies.model.commitment``); once the day is over the code and
salt are published beside it, so anyone can check that the code played all
day is the one committed to.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from server.edge.openapi import route
from server.errors import ProtocolError
from server.features.dailies.service import Challenge, Dailies
from server.rules.days import DAY_MS, day_start_ms, parse_day
from wire import ErrorCode


def challenge_json(challenge: Challenge, sealed: bool) -> dict[str, Any]:
    """One family's challenge: the commitment always, the code and salt once the day is over."""
    body: dict[str, Any] = {"commitment": challenge.commitment}
    if not sealed:
        body["code"] = challenge.code
        body["salt"] = challenge.salt
    return body


class DailiesApi:
    """The feature as the app composes it: the service, its routes, its background sweep."""

    def __init__(self, dailies: Dailies) -> None:
        self.dailies = dailies

    def routes(self) -> list[BaseRoute]:
        return [route("/api/daily", self.get_today), route("/api/daily/{day}", self.get_day)]

    async def day_body(self, day: str) -> dict[str, Any]:
        start = day_start_ms(day)
        today = day == self.dailies.today()
        challenges = await self.dailies.challenges_of_day(day)
        body: dict[str, Any] = {
            "day": day,
            "today": today,
            "sealed": today,
            "challenges": {c.family: challenge_json(c, today) for c in challenges},
            "starts_at": start,
            "ends_at": start + DAY_MS,
            "now": self.dailies.services.clock(),
        }
        if not today:  # the codes, and a solution's length (a hint at the deal): once the day is over
            body["codes"] = {c.family: c.code for c in challenges}
            body["solution_lengths"] = await self.dailies.solution_lengths(day)
        return body

    async def get_today(self, request: Request) -> Response:
        """Today's commitments (sealed: no code) and the next reset (``ends_at``)."""
        return JSONResponse(await self.day_body(self.dailies.today()))

    async def get_day(self, request: Request) -> Response:
        """A past day's codes, salts and commitments, or today's commitments; a future day is 404."""
        day = parse_day(request.path_params["day"])
        if day > self.dailies.today():
            raise ProtocolError(ErrorCode.NOT_FOUND, "that day has not started yet")
        body = await self.day_body(day)
        if not body["challenges"]:
            raise ProtocolError(ErrorCode.NOT_FOUND, "no daily challenge was published that day")
        return JSONResponse(body)
