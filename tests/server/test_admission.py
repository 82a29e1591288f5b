"""WebSocket admission: the middleware decides, and an admitted connection runs above it."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.routing import WebSocketRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from server.edge.admission import AdmitThenRun, admitted

ACTIVE: list[str] = []  # the middleware whose frames are under way


class Marks:
    """A middleware that says when it is under way (its frame suspended beneath the app)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        ACTIVE.append("marks")
        try:
            await self.app(scope, receive, send)
        finally:
            ACTIVE.remove("marks")


async def serve(websocket: WebSocket) -> None:
    await websocket.accept()
    frames = [frame.function for frame in inspect.stack()]
    await websocket.send_json({"active": list(ACTIVE), "frames": frames})
    await websocket.receive_text()


def app(*, door: bool) -> Starlette:
    middleware = [Middleware(AdmitThenRun)] if door else []
    middleware += [Middleware(Marks), Middleware(TrustedHostMiddleware, allowed_hosts=["testserver"])]
    return Starlette(routes=[WebSocketRoute("/ws", admitted(serve))], middleware=middleware)


async def upgrade(asgi: ASGIApp, host: str = "testserver") -> list[Message]:
    """Drive one upgrade through ``asgi`` as a server would; what the app sent."""
    inbox: asyncio.Queue[Message] = asyncio.Queue()
    for message in ({"type": "websocket.connect"}, {"type": "websocket.receive", "text": "bye"}):
        inbox.put_nowait(message)
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    scope: dict[str, Any] = {
        "type": "websocket",
        "path": "/ws",
        "raw_path": b"/ws",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", host.encode())],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 80),
        "scheme": "ws",
        "subprotocols": [],
        "extensions": {},
    }
    await asyncio.wait_for(asgi(scope, inbox.get, send), 5)
    return sent


def seen(sent: list[Message]) -> dict[str, Any]:
    texts = [m["text"] for m in sent if m["type"] == "websocket.send"]
    assert len(texts) == 1, sent
    found: dict[str, Any] = json.loads(texts[0])
    return found


async def test_an_admitted_connection_runs_after_the_middleware_returned() -> None:
    found = seen(await upgrade(app(door=True)))
    assert found["active"] == []
    below = found["frames"][found["frames"].index("serve") + 1 :]
    assert "wrapped_app" not in below  # Starlette's routing and middleware have returned


async def test_without_the_door_the_endpoint_runs_in_place() -> None:
    found = seen(await upgrade(app(door=False)))
    assert found["active"] == ["marks"]
    assert "wrapped_app" in found["frames"]


async def test_a_refused_upgrade_never_runs_the_connection() -> None:
    sent = await upgrade(app(door=True), host="evil.example")
    assert not [m for m in sent if m["type"] in ("websocket.accept", "websocket.send")]
