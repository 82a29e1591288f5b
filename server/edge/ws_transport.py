"""The WebSocket transport under uvicorn: sans-I/O framing with buffered reads.

uvicorn's ``websockets-sansio`` protocol parses and writes frames without
extra tasks (a frame out is one ``transport.write``), but it stops reading
the socket after every message and starts again once the app took it: two
``epoll_ctl`` calls per message, about an eighth of the server's time under
load. This protocol keeps everything else and applies ordinary flow control
instead: reading stops only when ``READ_HIGH_WATER`` messages wait for the
app, and starts again when it has taken them down to ``READ_LOW_WATER``. A
client that floods is still held back by TCP once that small buffer is
full, and its messages are still refused one by one by the rate limiter.

One read can bring a quarter of a megabyte: sixteen thousand tiny frames
from a flooding client, which parsed at once would hold the event loop for
tens of milliseconds and queue them all. So a read is parsed
``FEED_BYTES`` at a time, and once ``READ_HIGH_WATER`` messages wait, the
rest of it is held unparsed until the app has taken them down to
``READ_LOW_WATER``: parsing keeps pace with what the app takes.

Sending: through ASGI a frame out is an awaited ``send`` under every
middleware, so a push had to start a task to make it. This protocol also
offers, in the scope's extensions under :data:`SEND_NOW`, a plain function
that writes a text frame at once and says whether it could (not before the
handshake, after a close, or while the transport asks writers to wait); the
app falls back to ``send`` when it could not or when the extension is absent
(uvicorn's own implementations).

Memory: an idle connection is mostly this protocol's objects, so its inbox
and its "writable" flag are small slotted stand-ins for the
``asyncio.Queue`` and ``asyncio.Event`` uvicorn makes (four deques, 4 KiB
together, against a few hundred bytes), and the upgrade's request and
response are let go once the handshake is done (the request's headers are
emptied: websockets' parser keeps the request itself).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from uvicorn._types import ASGIReceiveEvent, ASGISendEvent
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.http11 import Request

# uvicorn's sans-I/O protocol is private API: the range of uvicorn releases this module was
# tested with (pyproject.toml pins the same), and what of it is used beyond its public methods.
TESTED_UVICORN = (">=0.35", "<0.55")
UVICORN_PRIVATE_NAMES = (
    "uvicorn._types.ASGIReceiveEvent",
    "uvicorn.protocols.websockets.websockets_sansio_impl.WebSocketsSansIOProtocol",
)
UVICORN_PROTOCOL_ATTRIBUTES = (  # of a WebSocketsSansIOProtocol instance
    "frames",
    "curr_msg_data_type",
    "close_sent",
    "read_paused",
    "transport",
    "conn",
    "logger",
    "client",
    "handle_parser_exception",
    "send_receive_event_to_app",  # overridden: called by handle_text/bytes/cont
    "receive",  # overridden: the ASGI receive callable
    "data_received",  # overridden: fed in slices
    "connection_lost",  # overridden: drops what was held
    "handle_connect",  # extended: offers SEND_NOW in the scope (which it makes)
    "handshake_complete",
    "disconnected",
    "writable",  # replaced: a Gate
    "queue",  # replaced: an Inbox
    "handshake_initiated",
    "send",  # extended: lets go of the handshake's response (set, like request, by handle_connect)
)
SEND_NOW = "solitaire.send_text_now"  # scope["extensions"][SEND_NOW]["write"](text) -> bool

READ_HIGH_WATER = 16  # messages waiting for the app before the socket is no longer read
READ_LOW_WATER = 4  # reading resumes once no more than this many wait
FEED_BYTES = 4096  # parsed at a time; the rest of a read waits while the app is behind

IMPL_NAME = "buffered"
IMPL_PATH = "server.edge.ws_transport:BufferedWebSocketProtocol"
IMPL_CHOICES = (IMPL_NAME, "websockets", "websockets-sansio")  # the last two: uvicorn's own


class Inbox:
    """What uvicorn's protocol uses of an ``asyncio.Queue`` (``put_nowait``, ``get``,
    ``qsize``) for its one reader, the app; holds no container while empty."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[ASGIReceiveEvent] | None = None
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: ASGIReceiveEvent) -> None:
        if self._items is None:
            self._items = deque()
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self) -> ASGIReceiveEvent:
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        item = self._items.popleft()
        if not self._items:
            self._items = None
        return item

    def qsize(self) -> int:
        return len(self._items) if self._items else 0


class Gate:
    """What uvicorn's protocol uses of an ``asyncio.Event`` (``set``, ``clear``, ``is_set``,
    ``wait``) for "the transport takes writes"; waiters are listed only while there are some."""

    __slots__ = ("_open", "_waiters")

    def __init__(self) -> None:
        self._open = True
        self._waiters: list[asyncio.Future[None]] | None = None

    def is_set(self) -> bool:
        return self._open

    def set(self) -> None:
        self._open = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        self._open = False

    async def wait(self) -> None:
        if self._open:
            return
        waiter = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if self._waiters is not None and waiter in self._waiters:
                self._waiters.remove(waiter)


class BufferedWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O WebSocket protocol with high/low-water read flow control."""

    _held: bytes = b""  # read but not parsed yet: the app is behind

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queue: Inbox = Inbox()  # type: ignore[assignment]
        self.writable: Gate = Gate()  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self._held:  # the read that was under way when reading stopped
            self._held += data
        elif len(data) <= FEED_BYTES:  # the usual read: a frame or a few, parsed at once
            super().data_received(data)
        else:
            self._feed(data)

    def _feed(self, data: bytes) -> None:
        """Parse ``FEED_BYTES`` at a time; hold the rest once ``READ_HIGH_WATER`` messages wait."""
        for start in range(0, len(data), FEED_BYTES):
            if self.transport.is_closing():
                return
            if start and self.queue.qsize() >= READ_HIGH_WATER:
                self._held = data[start:]
                return
            super().data_received(data[start : start + FEED_BYTES] if len(data) > FEED_BYTES else data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._held = b""
        super().connection_lost(exc)

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        self.request = None  # type: ignore[assignment]  # the scope has what the app needs of it
        event.headers.clear()  # the parser's frame keeps the request for the connection's life
        if self.handshake_initiated and not self.close_sent:  # a 101 to come: the app runs
            self.scope["extensions"][SEND_NOW] = {"write": self.send_text_now}

    async def send(self, message: ASGISendEvent) -> None:
        await super().send(message)
        if self.handshake_complete and self.response is not None:
            self.response = None  # type: ignore[assignment]  # sent (or refused): not needed again

    def send_text_now(self, text: str) -> bool:
        """Write a text frame at once, if nothing stands in the way; False: use ``send``."""
        if (
            not self.handshake_complete
            or self.close_sent
            or self.disconnected
            or not self.writable.is_set()
            or self.transport.is_closing()
        ):
            return False
        self.conn.send_text(text.encode())
        self.transport.write(b"".join(self.conn.data_to_send()))
        return True

    def send_receive_event_to_app(self) -> None:
        data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
        self.frames = []
        if self.close_sent:  # past websocket.close: drop it, keep reading for the peer's close
            return
        if self.curr_msg_data_type == "text":
            try:
                self.queue.put_nowait({"type": "websocket.receive", "text": data.decode()})
            except UnicodeDecodeError:
                self.logger.info("invalid UTF-8 in a text frame from %s", self.client)
                self.conn.send_close(1007)
                self.handle_parser_exception()
                return
        else:
            self.queue.put_nowait({"type": "websocket.receive", "bytes": data})
        if not self.read_paused and self.queue.qsize() >= READ_HIGH_WATER:
            self.read_paused = True
            self.transport.pause_reading()

    async def receive(self) -> ASGIReceiveEvent:
        message = await self.queue.get()
        if self.read_paused and self.queue.qsize() <= READ_LOW_WATER:
            if self._held:
                held, self._held = self._held, b""
                self._feed(held)  # may hold some of it again
            if not self._held and self.queue.qsize() < READ_HIGH_WATER:
                self.read_paused = False
                self.transport.resume_reading()
        return message


def uvicorn_ws(name: str) -> str:
    """The value for uvicorn's ``ws`` option: ours by name, or one of uvicorn's own."""
    if name not in IMPL_CHOICES:
        raise ValueError(
            f"unknown WebSocket implementation {name!r}: choose one of {', '.join(IMPL_CHOICES)}"
        )
    return IMPL_PATH if name == IMPL_NAME else name
