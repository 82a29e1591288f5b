"""Accounts and sessions over HTTP: ``/api/accounts…`` and ``/api/sessions…`` (docs/protocol.md,
"Accounts and sessions"). Tokens travel as ``Authorization: Bearer TOKEN``, as everywhere."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from server.core.quotas import address_key
from server.edge.inputs import json_body
from server.edge.openapi import route
from server.errors import ProtocolError
from server.features.accounts.model import session_label
from server.features.accounts.service import Accounts
from server.storage.accounts import Identity
from wire import ErrorCode


def bearer(request: Request) -> str:
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("bearer "):
        raise ProtocolError(ErrorCode.BAD_TOKEN, "send Authorization: Bearer TOKEN")
    return header[7:].strip()


def address_of(request: Request) -> str | None:
    return address_key(request.client.host if request.client else None)


class AccountsApi:
    def __init__(self, accounts: Accounts) -> None:
        self.accounts = accounts

    def routes(self) -> list[BaseRoute]:
        return [
            route("/api/accounts", self.create_account, methods=["POST"]),
            route("/api/accounts/me", self.get_account),
            route("/api/accounts/me/password", self.change_password, methods=["POST"]),
            route("/api/sessions", self.log_in, methods=["POST"]),
            route("/api/sessions", self.list_sessions, methods=["GET"]),
            route("/api/sessions/current", self.log_out, methods=["DELETE"]),
            route("/api/sessions/{session_id}", self.revoke, methods=["DELETE"]),
        ]

    async def _who(self, request: Request) -> Identity:
        return await self.accounts.identify(bearer(request))

    async def create_account(self, request: Request) -> Response:
        """A guest claims its player with a username and a password; its games stay its own."""
        who = await self._who(request)
        body = await json_body(request)
        username = await self.accounts.sign_up(who, body["username"], body["password"], address_of(request))
        return JSONResponse({"id": who.player_id, "name": who.name, "username": username}, 201)

    async def get_account(self, request: Request) -> Response:
        """Who the token is: the player, and its account (null for a guest)."""
        who = await self._who(request)
        account = await self.accounts.account_of(who.player_id)
        body = {
            "id": who.player_id,
            "name": who.name,
            "username": account.username if account else None,
            "created_at": account.created_ms if account else None,
            "session_id": who.session_id,
        }
        return JSONResponse(body)

    async def change_password(self, request: Request) -> Response:
        who = await self._who(request)
        body = await json_body(request)
        ended = await self.accounts.change_password(
            who, body["password"], body["new_password"], address_of(request)
        )
        return JSONResponse({"ended_sessions": ended})

    async def log_in(self, request: Request) -> Response:
        """A new session (and token) for the account's player, from any device."""
        body = await json_body(request)
        label = session_label(request.headers.get("user-agent"), body.get("label"))
        done = await self.accounts.log_in(body["username"], body["password"], address_of(request), label)
        answer = {
            "id": done.player_id,
            "name": done.name,
            "username": done.username,
            "token": done.token,
            "session_id": done.session_id,
        }
        return JSONResponse(answer, 201)

    async def list_sessions(self, request: Request) -> Response:
        who = await self._who(request)
        return JSONResponse({"sessions": await self.accounts.sessions(who)})

    async def log_out(self, request: Request) -> Response:
        """End this token's session: it stops working at once, its open sockets included."""
        ended = await self.accounts.log_out(await self._who(request))
        return JSONResponse({"ended_sessions": ended})

    async def revoke(self, request: Request) -> Response:
        """End one of the player's sessions (another device's, or this one)."""
        who = await self._who(request)
        ended = await self.accounts.end(who, session_id=request.path_params["session_id"])
        if not ended:
            raise ProtocolError(ErrorCode.NOT_FOUND, "no such session of this player")
        return JSONResponse({"ended_sessions": ended})
