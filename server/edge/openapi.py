"""Routes checked against the published ``openapi.json`` before a handler sees them.

The document is compiled at import into :data:`OPERATIONS`. :func:`route`
checks each path parameter against its schema (an id with a NUL byte never
reaches PostgreSQL) and turns what the handler raises into the error envelope;
:func:`server.edge.inputs.json_body` checks the body against the operation
found here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from server.edge.envelope import INTERNAL, UNAVAILABLE, error_response
from server.edge.protocol import SCHEMA_PATH as ASYNCAPI_PATH
from server.edge.protocol import Field, check, compile_field
from server.errors import ProtocolError
from server.storage.faults import OUTAGE, is_unavailable

log = logging.getLogger(__name__)
SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schema"
Endpoint = Callable[[Request], Awaitable[Response]]


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


def check_path_params(request: Request, operation: Operation) -> None:
    """Each path parameter against its schema, or ``bad_message`` naming it."""
    for name, field in operation.path_params.items():
        check("", name, field, request.path_params[name])


def checked_endpoint(fn: Endpoint, operations: dict[str, Operation] | None = None) -> Endpoint:
    """Every answer is JSON: refusals in the envelope, a database outage a 503, a fault a 500.

    ``operations`` (method -> Operation) are the route's documented shapes: path
    parameters are checked before ``fn`` runs, and ``json_body`` checks the body.
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
                OUTAGE.failed(log, f"{request.method} {request.url.path}", exc)
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
    return Route(path, checked_endpoint(fn, operations), methods=methods)
