"""The WebSocket endpoint: plumbing between a socket and its sans-I/O :class:`Session`.

Everything the protocol decides (auth, limits, validation, subscriptions'
bookkeeping) is in :mod:`server.edge.session`; this module reads frames,
feeds them in, runs the requests the session hands out (the handlers the app
composed), and writes what comes back. Outgoing frames go through a small
per-connection queue so that fan-out never blocks on a slow reader.

It also holds the connection's place in the server's quotas: one of its
address's ``connections_per_address`` from the start, one of its player's
``connections_per_player`` once authenticated, both given back at the end.
A connection whose frame budget ran out is not read from until it refills.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable

from starlette.types import Message, Scope
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from server import metrics
from server.core.context import Handlers
from server.core.hub import Hub, encode
from server.core.quotas import address_key, rate_limited
from server.core.services import Services
from server.core.timing import sleep_until
from server.edge.disclosure import checked_frame
from server.edge.protocol import REQUESTS
from server.edge.security import BrowserPolicy, arrival_port
from server.edge.session import Authenticate, Call, Session
from server.edge.ws_transport import SEND_NOW
from server.errors import ProtocolError
from server.logs import CONNECTION, REQUEST, next_connection_id
from server.storage import queries
from server.storage.faults import OUTAGE, is_unavailable
from server.vocabulary import ConnectionState
from wire import CloseCode, ErrorCode

log = logging.getLogger(__name__)
MAX_QUEUED_FRAMES = 256  # a watcher this far behind is disconnected
BACKPRESSURE_FRAMES = 32  # a client this far behind on its own replies is not read from
UNAVAILABLE = ProtocolError(ErrorCode.UNAVAILABLE, "the database is unavailable; try again shortly")
AUTH_POLL_S = 0.5  # the auth deadline is checked on the injected clock at least this often


def send_now(websocket: WebSocket) -> Callable[[str], bool] | None:
    """The transport's own frame writer, where it offers one (:data:`server.edge.ws_transport.SEND_NOW`)."""
    extension = (websocket.scope.get("extensions") or {}).get(SEND_NOW)
    return extension["write"] if extension else None


def forget_headers(scope: Scope) -> None:
    """Let go of the upgrade request's headers once the origin is read: nothing reads them
    later, and a browser's (cookies included) would be held for as long as it stays. Emptied
    in place: the scope's one list is shared by everything that looked at it."""
    headers = scope.get("headers")
    if isinstance(headers, list):
        headers.clear()


def text_of(message: Message) -> str:
    """A received ASGI message's text; a binary frame is refused as bad JSON."""
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000))
    text = message.get("text")
    if text is None:
        return "\x00binary"
    return str(text)


class Connection:
    """One client connection: a session, its socket and its outgoing queue."""

    __slots__ = (
        "_address",
        "_held_address",
        "_held_player",
        "_outbox",
        "_sender",
        "_token_hash",
        "_write_now",
        "close_code",
        "closed",
        "handlers",
        "hub",
        "policy",
        "quotas",
        "services",
        "session",
        "ws",
    )

    def __init__(
        self, websocket: WebSocket, services: Services, handlers: Handlers, policy: BrowserPolicy
    ) -> None:
        self.ws = websocket
        self.services = services
        self.handlers = handlers
        self.policy = policy
        self.hub: Hub = services.hub
        self.session = Session(services.settings.limits, services.clock)
        self.quotas = services.quotas
        self._outbox: deque[str] | None = None  # made when a frame must wait, dropped when drained
        self._sender: asyncio.Task[None] | None = None
        self._write_now = send_now(websocket)
        self.closed = False
        self._address = address_key(websocket.client.host if websocket.client else None)
        self._held_address: str | None = None  # the quota slots this connection holds
        self._held_player: str | None = None
        self._token_hash: str | None = None  # the session this connection runs on
        self.close_code: int | None = None  # how the socket closed, either side (for the metrics)

    # -- what handlers see (server.core.context.Caller) -------------------------------

    @property
    def player_id(self) -> str | None:
        return self.session.player_id

    @property
    def player_name(self) -> str:
        return self.session.player_name or "?"

    def require_player(self) -> str:
        return self.session.require_player()

    def check_follow(self, topic: str | None = None) -> None:
        self.session.check_follow(topic)

    def follow(self, topic: str) -> None:
        if self.session.follow(topic):
            self.hub.subscribe(topic, self)

    def follow_own(self, topic: str) -> None:
        """Follow a game this connection started (see :meth:`Session.follow_own`)."""
        for dropped in self.session.follow_own(topic):
            self.hub.unsubscribe(dropped, self)
        self.hub.subscribe(topic, self)

    def unfollow(self, topic: str) -> None:
        self.session.unfollow(topic)
        self.hub.unsubscribe(topic, self)

    def topic_closed(self, topic: str) -> None:
        """The hub closed a topic (a finished game): it no longer counts for this connection."""
        self.session.unfollow(topic)

    def rename(self, name: str) -> None:
        self.session.player_name = name

    @property
    def token_hash(self) -> str | None:
        return self._token_hash

    async def session_ended(self) -> None:
        """Logged out or revoked: the token no longer works, so neither does this socket."""
        if self.closed:
            return
        await self.flush()
        await self._close(CloseCode.AUTH, "session ended")

    # -- outgoing ------------------------------------------------------------------------

    def push(self, frame: str) -> None:
        """Queue a frame; a reader that falls too far behind is dropped, not waited for."""
        if self.closed:
            return
        frame = checked_frame(self.services.tripwire, self.services.clock, frame)
        outbox = self._outbox
        if outbox is not None and len(outbox) >= MAX_QUEUED_FRAMES:
            outbox.clear()
            self.closed = True
            asyncio.get_running_loop().create_task(self._close(CloseCode.TOO_SLOW, "too slow"))
            return
        idle = not outbox and self._sender is None  # nothing queued before it: order is kept
        if idle and self._write_now is not None and self._write_now(frame):
            return
        if outbox is None:
            outbox = self._outbox = deque()
        outbox.append(frame)
        if self._sender is None:
            self._sender = asyncio.get_running_loop().create_task(self._drain())

    def _send_pending(self) -> None:
        for frame in self.session.data_to_send():
            self.push(frame)

    async def _drain(self) -> None:
        try:
            while self._outbox and not self.closed:
                await self.ws.send_text(self._outbox.popleft())
        except Exception:  # the peer went away; the receive loop notices and cleans up
            self.closed = True
        finally:
            self._sender = None
            if not self._outbox:
                self._outbox = None

    async def flush(self) -> None:
        sender = self._sender
        if sender is not None:
            with contextlib.suppress(Exception):
                await sender

    async def _close(self, code: int, reason: str = "") -> None:
        self.closed = True
        if self.close_code is None:
            self.close_code = code
        with contextlib.suppress(Exception):
            if self.ws.application_state == WebSocketState.CONNECTED:
                await self.ws.close(code, reason)

    async def goodbye(self, reason: str) -> None:
        """Tell the client the server is going away, then close with 1001."""
        if self.closed:
            return
        self.push(encode({"type": "bye", "reason": reason}))
        await self.flush()
        await self._close(CloseCode.GOING_AWAY, reason)

    # -- the connection's life -----------------------------------------------------------

    async def run(self) -> None:
        await self.ws.accept()
        origin = self.ws.headers.get("origin")
        forget_headers(self.ws.scope)
        if not self.policy.origin_allowed(origin, arrival_port(self.ws.scope)):
            await self._close(CloseCode.ORIGIN, "origin not allowed")
            metrics.ws_closed(self.close_code)
            return
        self.services.peers.add(self)
        CONNECTION.set(next_connection_id())  # this task's log lines name the connection
        metrics.CONNECTIONS.inc()
        try:
            await self._take_address_slot()
            self._send_pending()  # hello
            while self.session.reading and not self.closed:
                # Awaited here, not in a helper, once authenticated: an idle connection's
                # task holds one frame fewer for hours (server.edge.admission says why).
                if self.session.state is ConnectionState.CONNECTED:
                    text = await self._receive_before_auth()
                else:
                    text = text_of(await self.ws.receive())
                received = time.perf_counter()
                kind = await self._handle(text) if text is not None else None
                self._send_pending()
                if kind == "act":  # end to end: from the frame read to its answer written
                    metrics.ACTION_SECONDS.observe(time.perf_counter() - received)
                if len(self._outbox or ()) > BACKPRESSURE_FRAMES:  # stop reading until the peer reads
                    await self.flush()
                if (until := self.session.paused_until_ms) is not None:  # over budget: stop reading
                    await sleep_until(self.services.clock, until)
            if self.session.close_code is not None:
                await self.flush()
                await self._close(self.session.close_code, self.session.close_reason)
        except WebSocketDisconnect as exc:
            if self.close_code is None:
                self.close_code = exc.code
        finally:
            self.closed = True
            metrics.CONNECTIONS.dec()
            metrics.ws_closed(self.close_code)
            self.session.closed()
            self.services.peers.discard(self)
            self._release_slots()
            for topic in self.session.topics:
                self.unfollow(topic)

    async def _take_address_slot(self) -> None:
        if self._address is None:  # an unknown address (a Unix socket) is not counted
            return
        if await self.quotas.address_connections.acquire(self._address):
            self._held_address = self._address
            return
        cap = self.quotas.limits.connections_per_address
        self.session.refuse_connection(rate_limited(f"more than {cap} connections from this address", 1))

    def _release_slots(self) -> None:
        if self._held_address is not None:
            self.quotas.address_connections.release(self._held_address)
            self._held_address = None
        if self._held_player is not None:
            self.quotas.player_connections.release(self._held_player)
            self._held_player = None

    async def _receive_before_auth(self) -> str | None:
        """The next text frame; None when the auth deadline was checked instead."""
        remaining_s = (self.session.auth_deadline_ms - self.services.clock()) / 1000
        try:
            message = await asyncio.wait_for(self.ws.receive(), max(0.0, min(remaining_s, AUTH_POLL_S)))
        except TimeoutError:
            self.session.check_time()
            return None
        return text_of(message)

    async def _handle(self, text: str) -> str | None:
        """Run what the frame asks; returns the request's type (None: no request was run)."""
        request = self.session.receive(text)
        if isinstance(request, Authenticate):
            await self._authenticate(request)
            return "auth"
        if isinstance(request, Call):
            await self._call(request)
            return request.kind
        return None

    async def _authenticate(self, request: Authenticate) -> None:
        if request.token is None:
            self.session.authenticated(request, None)
            return
        # Known before the look-up: a logout that lands while it runs closes this socket too.
        self._token_hash = queries.hash_token(request.token)
        try:
            async with self.services.db.read() as tx:
                player = await queries.player_by_token(tx, request.token)
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            OUTAGE.failed(log, "auth", exc)
            self.session.unavailable(request)
            return
        if player is None:
            self.session.bad_token(request)
        elif not await self.quotas.player_connections.acquire(player.id):
            cap = self.quotas.limits.connections_per_player
            error = rate_limited(f"more than {cap} connections of this player", 1)
            self.session.refuse_connection(error, request.request_id)
        else:
            self._held_player = player.id
            self.session.authenticated(request, (player.id, player.name))

    async def _call(self, call: Call) -> None:
        token = REQUEST.set(call.request_id)  # every line logged meanwhile names the request
        try:
            reply = await self.handlers[call.kind](self, call.fields)
        except ProtocolError as exc:
            metrics.refusals_of(exc.code).inc()
            self.session.refuse(call.request_id, exc)
            return
        except Exception as exc:
            if is_unavailable(exc):
                OUTAGE.failed(log, f"request {call.kind!r}", exc)
                metrics.refusals_of(UNAVAILABLE.code).inc()
                self.session.refuse(call.request_id, UNAVAILABLE)
                return
            log.exception("request %r failed", call.kind)
            error = ProtocolError(ErrorCode.INTERNAL, "the server failed; nothing was changed")
            metrics.refusals_of(error.code).inc()
            self.session.refuse(call.request_id, error)
            return
        finally:
            REQUEST.reset(token)
        metrics.requests_of(call.kind).inc()
        self.session.answer(call.request_id, reply)


def endpoint(
    services: Services, handlers: Handlers, policy: BrowserPolicy
) -> Callable[[WebSocket], Awaitable[None]]:
    """The ``/ws`` endpoint serving the composed request handlers to the origins ``policy`` allows."""
    missing = set(handlers) ^ set(REQUEST_KINDS)
    if missing:
        raise ValueError(f"request types without a handler, or handlers without a request: {missing}")

    async def websocket_endpoint(websocket: WebSocket) -> None:
        await Connection(websocket, services, handlers, policy).run()

    return websocket_endpoint


REQUEST_KINDS = frozenset(kind for kind in REQUESTS if kind != "auth")
