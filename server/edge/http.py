"""HTTP plumbing shared by every feature: the error envelope, bodies, parameters, the bearer token.

Errors use the same codes as the WebSocket protocol,
``{"error": {"code": …, "message": …}}``, with the status each
:class:`~server.vocabulary.ErrorCode` names; this holds for unknown ``/api``
paths and wrong methods too, never a plain-text page.

Input is checked here, from the published ``openapi.json``, before a handler
sees it: each route's path parameters against their schemas (an id with a NUL
byte never reaches PostgreSQL), a JSON body against its request schema
(:func:`json_body`, with the WebSocket's field checks), whole-number query
parameters by :func:`int_param`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from server.core.hub import encode
from server.core.quotas import Rate, address_key, refusal
from server.edge.protocol import SCHEMA_PATH as ASYNCAPI_PATH
from server.edge.protocol import (
    Field,
    check,
    check_fields,
    compile_field,
    not_text,
    parse_json,
    printable,
    surrogate_in,
)
from server.errors import ProtocolError
from server.storage import queries
from server.storage.db import Database
from server.storage.faults import brief, is_unavailable
from server.storage.writer import GroupWriter
from server.vocabulary import ErrorCode

log = logging.getLogger(__name__)
UNAVAILABLE = ProtocolError(ErrorCode.UNAVAILABLE, "the database is unavailable; try again shortly")
INTERNAL = ProtocolError(ErrorCode.INTERNAL, "the server failed; nothing was changed")
SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schema"
MAX_BODY_BYTES = 4096
TARPIT_MAX_S = 1.0  # a request over its address's budget waits up to this long for its 429
Endpoint = Callable[[Request], Awaitable[Response]]
WHOLE_NUMBER = re.compile(r"-?[0-9]{1,10}\Z", re.ASCII)


@dataclass(frozen=True, slots=True)
class Operation:
    """One documented route and method, compiled: its path parameters and its JSON body's fields."""

    path_params: dict[str, Field]
    body: dict[str, Field] | None = None


def compile_operations(document: dict[str, Any], schemas: dict[str, Any]) -> dict[tuple[str, str], Operation]:
    """(path, METHOD) -> Operation for every operation of the OpenAPI document."""
    table: dict[tuple[str, str], Operation] = {}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            params = [*item.get("parameters", ()), *operation.get("parameters", ())]
            path_params = {
                p["name"]: compile_field(p["schema"], True, schemas) for p in params if p["in"] == "path"
            }
            body = None
            if "requestBody" in operation:
                node = operation["requestBody"]["content"]["application/json"]["schema"]
                while "$ref" in node:
                    node = schemas[node["$ref"].rsplit("/", 1)[1]]
                required = set(node.get("required", ()))
                body = {
                    name: compile_field(sub, name in required, schemas)
                    for name, sub in node["properties"].items()
                }
            table[(path, method.upper())] = Operation(path_params, body)
    return table


def _load_operations() -> dict[tuple[str, str], Operation]:
    """openapi.json compiled; its refs into asyncapi.json (ids, codes) resolve by schema name."""
    openapi = json.loads((SCHEMA_DIR / "openapi.json").read_text(encoding="utf-8"))
    asyncapi = json.loads(ASYNCAPI_PATH.read_text(encoding="utf-8"))
    own, shared = openapi["components"]["schemas"], asyncapi["components"]["schemas"]
    if set(own) & set(shared):
        raise ValueError(f"schema names in both documents: {set(own) & set(shared)}")
    return compile_operations(openapi, {**shared, **own})


# The HTTP shapes are defined once, in the published schema; this is their compiled form.
OPERATIONS: dict[tuple[str, str], Operation] = _load_operations()


class EnvelopeResponse(JSONResponse):
    """The error envelope, rendered by the frames' encoder: always valid UTF-8, whatever it quotes."""

    def render(self, content: Any) -> bytes:
        return encode(content).encode("utf-8")


def error_response(exc: ProtocolError) -> JSONResponse:
    """The envelope with the code's status; a quota's refusal also says when to come back."""
    retry = exc.extra.get("retry_after_s")
    headers = None if retry is None else {"Retry-After": str(retry)}
    return EnvelopeResponse(exc.to_envelope(), status_code=exc.code.http_status, headers=headers)


def check_path_params(request: Request, operation: Operation) -> None:
    """Each path parameter against its schema, or ``bad_message`` naming it."""
    for name, field in operation.path_params.items():
        check("", name, field, request.path_params[name])


def endpoint(fn: Endpoint, operations: dict[str, Operation] | None = None) -> Endpoint:
    """Every answer is JSON: refusals in the envelope, a database outage a 503, a fault a 500.

    ``operations`` (method -> Operation) are the route's documented shapes: path
    parameters are checked before ``fn`` runs, and :func:`json_body` checks the body.
    """
    operations = operations or {}

    async def wrapped(request: Request) -> Response:
        try:
            operation = operations.get(request.method)
            if operation is not None:
                check_path_params(request, operation)
                request.state.operation = operation
            return await fn(request)
        except ProtocolError as exc:
            return error_response(exc)
        except Exception as exc:
            if is_unavailable(exc):
                log.warning(
                    "%s %s: the database is unavailable (%s)", request.method, request.url.path, brief(exc)
                )
                return error_response(UNAVAILABLE)
            log.exception("%s %s failed", request.method, request.url.path)
            return error_response(INTERNAL)

    wrapped.__name__ = getattr(fn, "__name__", "endpoint")
    wrapped.__doc__ = fn.__doc__
    return wrapped


def route(path: str, fn: Endpoint, methods: list[str] | None = None) -> Route:
    """A route whose ProtocolErrors become the JSON error envelope, its input checked as
    ``openapi.json`` documents it."""
    operations = {m: op for (p, m), op in OPERATIONS.items() if p == path}
    return Route(path, endpoint(fn, operations), methods=methods)


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object (no body at all = {}) checked against the route's documented
    body: ``bad_json`` when it is not a JSON object (whitespace alone is no JSON text either),
    ``bad_message`` naming a field that is unknown, missing, of the wrong type or length, or not
    Unicode text (a lone surrogate)."""
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise ProtocolError(ErrorCode.BAD_MESSAGE, f"the body is larger than {MAX_BODY_BYTES} bytes")
    body: Any = {}
    if raw:
        try:
            body = parse_json(raw)
        except (ValueError, RecursionError):  # not JSON (or not UTF-8), or nested past the parser
            raise ProtocolError(ErrorCode.BAD_JSON, "the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ProtocolError(ErrorCode.BAD_JSON, "the body must be a JSON object")
    operation = getattr(request.state, "operation", None)
    if operation is not None and operation.body is not None:
        return check_fields("", operation.body, body)
    for name, value in body.items():  # no documented body: still, every string must be text
        if (found := surrogate_in([name, value])) is not None:
            raise not_text(printable(name), name, found)
    return body


def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    """A whole-number query parameter within [low, high], or ``bad_message`` naming it.

    Only ASCII digits count: ``str.isdigit`` takes ``²`` and ``١`` too, which ``int`` refuses."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if WHOLE_NUMBER.match(raw) is None or not low <= int(raw) <= high:
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE, f"{name} must be a whole number from {low} to {high}", field=name
        )
    return int(raw)


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


Ping = Callable[[], Awaitable[bool]]


def health_routes(db: Database, writer: GroupWriter, redis_ping: Ping | None = None) -> list[BaseRoute]:
    """``/health`` and ``/ready``: 200 while the database answers and takes writes, 503 otherwise.

    With several instances ``/ready`` also asks Redis (``"redis"``): an
    instance that cannot reach it still commits, but its pushes would not
    reach the other instances, so a balancer should send new clients elsewhere.
    The answer names no driver error (that goes to the log): ``{"status",
    "database"}`` with ``ok`` or ``unavailable``.
    """

    async def database_ok() -> bool:
        try:
            await db.ping()
            return writer.healthy or await writer.probe()
        except Exception as exc:
            log.warning("health: the database does not answer (%s)", brief(exc))
            return False

    async def health(request: Request) -> Response:
        if not await database_ok():
            return JSONResponse({"status": "unavailable", "database": "unavailable"}, 503)
        return JSONResponse({"status": "ok", "database": "ok"})

    async def ready(request: Request) -> Response:
        if redis_ping is None:
            return await health(request)
        database, redis = await asyncio.gather(database_ok(), redis_ping())
        body = {
            "status": "ok" if database and redis else "unavailable",
            "database": "ok" if database else "unavailable",
            "redis": "ok" if redis else "unavailable",
        }
        return JSONResponse(body, 200 if database and redis else 503)

    return [Route("/health", health), Route("/ready", ready)]


async def metrics_page(request: Request) -> Response:
    """Every metric of this process in Prometheus' text format (docs/operations.md lists them)."""
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


async def schema_file(request: Request) -> Response:
    name = request.path_params["name"]
    path = SCHEMA_DIR / name
    if name not in ("asyncapi.json", "openapi.json") or not path.is_file():
        return error_response(ProtocolError(ErrorCode.NOT_FOUND, "no such schema"))
    return Response(path.read_bytes(), media_type="application/json")


def basic_routes(db: Database, writer: GroupWriter, redis_ping: Ping | None = None) -> list[BaseRoute]:
    """Health, readiness, metrics and the published schemas."""
    return [
        *health_routes(db, writer, redis_ping),
        Route("/metrics", metrics_page),
        Route("/api/schema/{name}", schema_file),
    ]


class ClientFiles(StaticFiles):
    """The browser client's files, mounted at ``/``; never an answer for an API path.

    Without this, an unknown ``/api/…`` path (or a POST to one) would reach the
    static files and get their plain-text 404 or 405.
    """

    async def get_response(self, path: str, scope: Scope) -> Response:
        if path == "api" or path.startswith("api/"):
            raise HTTPException(status_code=404, detail=f"no such route: /{path}")
        return await super().get_response(path, scope)


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


class AddressRate:
    """ASGI middleware: every HTTP request and WebSocket handshake takes a token from its
    client address's budget (``http_rate_per_s``, ``http_burst``).

    Past it the request is answered ``429 rate_limited`` with ``Retry-After``
    (a handshake: the same 429 where the server can send one, else a 403),
    and nothing of the app runs. The answer comes only after a pause of up to
    :data:`TARPIT_MAX_S`, so a client that hammers the server waits instead of
    having its refusals served flat out. The address is the ASGI scope's
    client: behind a proxy, uvicorn's forwarded headers must be configured.
    """

    def __init__(self, app: ASGIApp, rate: Rate) -> None:
        self.app = app
        self.rate = rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        key = address_key(client[0] if client else None)
        wait_s = 0.0 if key is None else self.rate.take(key)
        if not wait_s:
            await self.app(scope, receive, send)
            return
        # Real time, not the injected clock: this pause slows the sender down, it is no deadline.
        await asyncio.sleep(min(wait_s, TARPIT_MAX_S))
        response = error_response(refusal(f"too many {self.rate.what}", wait_s))
        if scope["type"] == "http":
            await response(scope, receive, send)
        elif "websocket.http.response" in scope.get("extensions", {}):
            headers = response.raw_headers
            await send({"type": "websocket.http.response.start", "status": 429, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": response.body})
        else:
            await send({"type": "websocket.close", "code": 1008})
