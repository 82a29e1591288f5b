"""Every request and handshake from one client address draws on that address's budget."""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Receive, Scope, Send

from server.core.quotas import Rate, address_key, rate_limited
from server.edge.envelope import error_response

TARPIT_MAX_S = 1.0  # a request over its address's budget waits up to this long for its 429


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
        response = error_response(rate_limited(f"too many {self.rate.what}", wait_s))
        if scope["type"] == "http":
            await response(scope, receive, send)
        elif "websocket.http.response" in scope.get("extensions", {}):
            headers = response.raw_headers
            await send({"type": "websocket.http.response.start", "status": 429, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": response.body})
        else:
            await send({"type": "websocket.close", "code": 1008})
