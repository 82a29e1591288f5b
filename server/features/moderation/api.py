"""The admin HTTP API: only with an operator's token (``solitaire-server admin create-token``).

A request without one, or with a player's, is ``bad_token`` (401). Every
change takes a ``reason`` and is written to the audit log, readable at
``GET /api/admin/audit``.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from server.edge.inputs import int_param, json_body
from server.edge.openapi import route
from server.errors import ProtocolError
from server.features.moderation.service import Admin, Moderation
from server.rules.names import clean_name
from wire import ErrorCode, Standing

MAX_PAGE = 200


class ModerationApi:
    def __init__(self, moderation: Moderation) -> None:
        self.moderation = moderation

    def routes(self) -> list[BaseRoute]:
        return [
            route("/api/admin/flagged", self.list_flagged),
            route("/api/admin/results/{game_id}/{decision}", self.review, methods=["POST"]),
            route("/api/admin/players/{player_id}/ban", self.ban, methods=["POST"]),
            route("/api/admin/players/{player_id}/rename", self.rename, methods=["POST"]),
            route("/api/admin/audit", self.audit),
        ]

    async def operator(self, request: Request) -> Admin:
        """The operator a request's ``Authorization: Bearer sa_…`` names, or ``bad_token``."""
        header = request.headers.get("authorization", "")
        admin = None
        if header.lower().startswith("bearer "):
            admin = await self.moderation.admin(header[7:].strip())
        if admin is None:
            raise ProtocolError(
                ErrorCode.BAD_TOKEN, "an operator's token is needed: Authorization: Bearer sa_…"
            )
        return admin

    async def list_flagged(self, request: Request) -> Response:
        """Results waiting for review (``standing=flagged``), or those of another standing."""
        await self.operator(request)
        limit = int_param(request, "limit", 50, 1, MAX_PAGE)
        raw = request.query_params.get("standing", Standing.FLAGGED)
        if raw not in tuple(Standing):
            raise ProtocolError(
                ErrorCode.BAD_MESSAGE, "standing is not one of the documented ones", field="standing"
            )
        return JSONResponse({"results": await self.moderation.flagged(limit, Standing(raw))})

    async def review(self, request: Request) -> Response:
        """Confirm or clear a flag, or remove the entry a game made."""
        admin = await self.operator(request)
        body = await json_body(request)
        game_id, decision = request.path_params["game_id"], request.path_params["decision"]
        return JSONResponse(await self.moderation.review(admin, game_id, decision, body["reason"]))

    async def ban(self, request: Request) -> Response:
        admin = await self.operator(request)
        body = await json_body(request)
        return JSONResponse(
            await self.moderation.ban(admin, request.path_params["player_id"], body["reason"])
        )

    async def rename(self, request: Request) -> Response:
        admin = await self.operator(request)
        body = await json_body(request)
        name = clean_name(body["name"])
        result = await self.moderation.rename(admin, request.path_params["player_id"], name, body["reason"])
        return JSONResponse(result)

    async def audit(self, request: Request) -> Response:
        """The audit log, newest first; ``before`` (an entry's id) pages back."""
        await self.operator(request)
        limit = int_param(request, "limit", 50, 1, MAX_PAGE)
        before = int_param(request, "before", 0, 0, 2**31 - 1) or None
        return JSONResponse({"entries": await self.moderation.audit_log(limit, before)})
