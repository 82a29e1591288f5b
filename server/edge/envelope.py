"""The HTTP error envelope: ``{"error": {"code": …, "message": …}}``, as on the WebSocket.

Each :class:`~wire.ErrorCode` names its status; unknown ``/api``
paths and wrong methods get the envelope too, never a plain-text page.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from server.core.hub import encode
from server.errors import ProtocolError
from wire import ErrorCode

UNAVAILABLE = ProtocolError(ErrorCode.UNAVAILABLE, "the database is unavailable; try again shortly")
INTERNAL = ProtocolError(ErrorCode.INTERNAL, "the server failed; nothing was changed")


class EnvelopeResponse(JSONResponse):
    """The error envelope, rendered by the frames' encoder: always valid UTF-8, whatever it quotes."""

    def render(self, content: Any) -> bytes:
        return encode(content).encode("utf-8")


def error_response(exc: ProtocolError) -> JSONResponse:
    """The envelope with the code's status; a quota's refusal also says when to come back."""
    retry = exc.extra.get("retry_after_s")
    headers = None if retry is None else {"Retry-After": str(retry)}
    return EnvelopeResponse(exc.to_envelope(), status_code=exc.code.http_status, headers=headers)


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own HTTP errors (an unknown path, a wrong method): JSON under /api, plain elsewhere."""
    if not isinstance(exc, HTTPException):
        raise exc
    if request.url.path.startswith("/api/") or request.url.path == "/health":
        code = {404: ErrorCode.NOT_FOUND, 405: ErrorCode.BAD_MESSAGE}.get(
            exc.status_code, ErrorCode.BAD_MESSAGE
        )
        body = ProtocolError(code, str(exc.detail)).to_envelope()
        return JSONResponse(body, status_code=exc.status_code, headers=getattr(exc, "headers", None))
    return PlainTextResponse(str(exc.detail), status_code=exc.status_code)
