"""Every HTTP request gets an id and is counted by the route it matched.

The id is the caller's ``X-Request-ID`` when it is a sane one (a balancer's
or a proxy's, :data:`SANE_ID`), else one made here; it is returned in the
response's ``X-Request-ID`` and set in :data:`server.logs.HTTP_REQUEST` while
the request runs, so each line logged for it (uvicorn's access line too) names
it. The count and the time (``solitaire_http_requests_total``,
``solitaire_http_request_seconds``) are labelled with the route's path
TEMPLATE (``/api/players/{player_id}``), never the path asked for, so a
client making up paths cannot make up series: a path no route matches counts
as ``unmatched``.

This is the outermost middleware: a request refused by the Host check or the
address rate is counted and carries an id too.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable

from starlette.routing import BaseRoute, Match, Mount, Route, WebSocketRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server import metrics
from server.logs import HTTP_REQUEST

HEADER = b"x-request-id"
SANE_ID = re.compile(rb"[A-Za-z0-9._:@/+=-]{1,128}")
UNMATCHED = "unmatched"


def request_id(headers: Iterable[tuple[bytes, bytes]]) -> str:
    """The incoming ``X-Request-ID`` if it is sane, else a new random one (16 hex digits)."""
    for name, value in headers:
        if name.lower() == HEADER and SANE_ID.fullmatch(value):
            return value.decode("ascii")
    return os.urandom(8).hex()


def route_template(routes: Iterable[BaseRoute], scope: Scope) -> str:
    """The path template of the first route matching ``scope`` (its method aside), or ``unmatched``."""
    for candidate in routes:
        if isinstance(candidate, WebSocketRoute):
            continue
        match, child = candidate.matches(scope)
        if match is Match.NONE:
            continue
        if isinstance(candidate, Mount):
            inner = route_template(candidate.routes, {**scope, **child}) if candidate.routes else UNMATCHED
            return candidate.path + inner if inner != UNMATCHED else f"{candidate.path}/{{path}}"
        if isinstance(candidate, Route):
            return candidate.path
        return UNMATCHED
    return UNMATCHED


class RequestIds:
    """ASGI middleware: the request id (header and log context) and the HTTP metrics."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id(scope.get("headers") or ())
        token = HTTP_REQUEST.set(rid)
        started = time.perf_counter()
        status = 0

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message = {**message, "headers": [*message.get("headers", ()), (HEADER, rid.encode())]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except BaseException:
            status = status or 500
            raise
        finally:
            HTTP_REQUEST.reset(token)
            self._observe(scope, status, time.perf_counter() - started)

    def _observe(self, scope: Scope, status: int, seconds: float) -> None:
        app = scope.get("app")
        router = getattr(app, "router", None)
        template = route_template(getattr(router, "routes", ()), scope)
        method = metrics.http_method(str(scope.get("method", "")))
        metrics.http_of(template, method, metrics.status_class(status)).inc()
        metrics.http_seconds_of(template, method).observe(seconds)
