"""Files served as they are: the browser client at ``/``, the published schemas under ``/api/schema``."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from server.edge.envelope import error_response
from server.edge.openapi import SCHEMA_DIR
from server.errors import ProtocolError
from wire import ErrorCode

PUBLISHED_SCHEMAS = ("asyncapi.json", "openapi.json")


async def schema_file(request: Request) -> Response:
    """One of the published schema documents, byte for byte."""
    name = request.path_params["name"]
    path = SCHEMA_DIR / name
    if name not in PUBLISHED_SCHEMAS or not path.is_file():
        return error_response(ProtocolError(ErrorCode.NOT_FOUND, "no such schema"))
    return Response(path.read_bytes(), media_type="application/json")


class ClientFiles(StaticFiles):
    """The browser client's files, mounted at ``/``; never an answer for an API path.

    Without this, an unknown ``/api/…`` path (or a POST to one) would reach the
    static files and get their plain-text 404 or 405.
    """

    async def get_response(self, path: str, scope: Scope) -> Response:
        if path == "api" or path.startswith("api/"):
            raise HTTPException(status_code=404, detail=f"no such route: /{path}")
        return await super().get_response(path, scope)
