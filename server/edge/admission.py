"""WebSocket admission: the middleware decides, then the connection runs above all of it.

A WebSocket connection lives for hours, and an ASGI app serves it from one
coroutine chain: every middleware's frame stays suspended beneath the
connection for its whole life, with its locals (Starlette's host check keeps a
copy of the upgrade's headers, cookies included). At ten thousand idle
connections those fifteen frames were about 7 KiB of each one's 22.

So the WebSocket endpoint is split in two. Inside the middleware it only
*admits*: the host check, the address rate and everything else that may refuse
an upgrade have run by the time it is reached, and it hands the connection's
runner to the :class:`Admission` the outermost middleware, :class:`AdmitThenRun`,
put in the scope. The chain then returns, its frames go, and :class:`AdmitThenRun`
runs the connection with the scope, ``receive`` and ``send`` the endpoint was
given. A refusal never reaches the endpoint, so nothing runs. Without
:class:`AdmitThenRun` (an app composed differently) the endpoint runs the
connection where it stands, as any endpoint would.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

ADMISSION = "solitaire.admission"  # the scope key of the current upgrade's Admission

Runner = Callable[[], Awaitable[None]]


class Admission:
    """One upgrade's ticket: empty until the endpoint is reached, then the connection to run."""

    __slots__ = ("runner",)

    def __init__(self) -> None:
        self.runner: Runner | None = None


class AdmitThenRun:
    """Outermost ASGI middleware: run an admitted WebSocket connection once the chain returned."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        admission = scope[ADMISSION] = Admission()
        await self.app(scope, receive, send)
        runner, admission.runner = admission.runner, None
        if runner is not None:
            await runner()


def admitted(serve: Callable[[WebSocket], Awaitable[None]]) -> Callable[[WebSocket], Awaitable[None]]:
    """A WebSocket endpoint that hands ``serve`` to the upgrade's :class:`Admission`, if any."""

    async def admit(websocket: WebSocket) -> None:
        admission = websocket.scope.get(ADMISSION)
        if not isinstance(admission, Admission):
            await serve(websocket)
            return

        admission.runner = functools.partial(serve, websocket)

    return admit
