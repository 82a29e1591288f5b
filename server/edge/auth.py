"""Who an HTTP request comes from: the player of its ``Authorization: Bearer TOKEN`` header."""

from __future__ import annotations

from starlette.requests import Request

from server.errors import ProtocolError
from server.storage import queries
from server.storage.db import Database
from wire import ErrorCode


async def player_from_header(request: Request, db: Database) -> str:
    """The player id for an ``Authorization: Bearer TOKEN`` header."""
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("bearer "):
        raise ProtocolError(ErrorCode.BAD_TOKEN, "send Authorization: Bearer TOKEN")
    async with db.read() as tx:
        player = await queries.player_by_token(tx, header[7:].strip())
    if player is None:
        raise ProtocolError(ErrorCode.BAD_TOKEN, "unknown token")
    return player.id


async def viewer_from_header(request: Request, db: Database) -> str | None:
    """The player asking, when the request carries ``Authorization: Bearer TOKEN`` (else None).

    Public reads take it to tell a sealed daily's own player from everyone else;
    a header with an unknown token is refused (``bad_token``) rather than ignored.
    """
    if "authorization" not in request.headers:
        return None
    return await player_from_header(request, db)
