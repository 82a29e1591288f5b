"""The edge's last check on what it writes: no sealed daily's code, seed or salt leaves.

Every view is built through :mod:`server.rules.disclosure`; this is the tripwire behind it. An
HTTP body or a WebSocket frame that still holds a sealed secret is not sent: the client gets
``internal`` (500) and the log names the path, so a view that forgot the rule fails its tests
instead of leaking. Searching a frame for a few short strings costs about a microsecond.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.clock import Clock
from server.core.hub import encode
from server.errors import ProtocolError
from server.rules.disclosure import SealedLeak, Tripwire
from wire import ErrorCode

log = logging.getLogger(__name__)
WITHHELD = ProtocolError(ErrorCode.INTERNAL, "the server could not build that answer")


def checked_frame(tripwire: Tripwire, clock: Clock, frame: str) -> str:
    """The frame, or an ``internal`` error in its place (same request id) if it holds a secret."""
    if not tripwire.armed:  # nothing sealed: not even the clock is read
        return frame
    try:
        tripwire.check(frame, clock())
    except SealedLeak as leak:
        kind = _field(frame, "type")
        log.error("withheld a WebSocket %s frame: %s", kind, leak)
        return encode(WITHHELD.to_message(_field(frame, "id")))
    return frame


def _field(frame: str, name: str) -> Any:
    try:
        return orjson.loads(frame).get(name)
    except (orjson.JSONDecodeError, AttributeError):
        return None


class Withhold:
    """ASGI middleware: an HTTP answer holding a sealed secret becomes a 500 ``internal``."""

    def __init__(self, app: ASGIApp, tripwire: Tripwire, clock: Clock) -> None:
        self.app = app
        self.tripwire = tripwire
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: Message | None = None

        async def checked(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message  # held until the first body: it may yet be replaced
                return
            if message["type"] == "http.response.body":
                body = message.get("body", b"")
                try:
                    self.tripwire.check(body, self.clock())
                except SealedLeak as leak:
                    if start is None:
                        raise
                    log.error("withheld the answer to %s %s: %s", scope["method"], scope["path"], leak)
                    await self._refuse(send)
                    start = None
                    raise
                if start is not None:
                    await send(start)
                    start = None
            await send(message)

        try:
            await self.app(scope, receive, checked)
        except SealedLeak:
            return

    async def _refuse(self, send: Send) -> None:
        body = orjson.dumps(WITHHELD.to_envelope())
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 500, "headers": headers})
        await send({"type": "http.response.body", "body": body})
