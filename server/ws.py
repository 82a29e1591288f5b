"""The WebSocket endpoint: handshake, authentication, limits and request dispatch.

Each connection is one :class:`Connection`. Requests are validated by
``protocol.validate`` and routed through ``HANDLERS``; other modules (for
example ``competition``) add their request types with :func:`handler`.
Outgoing frames go through a small per-connection queue so that fan-out never
blocks on a slow reader.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, NoReturn

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from server import __version__
from server.live import encode
from server.protocol import (
    CLOSE_AUTH,
    CLOSE_AUTH_TIMEOUT,
    CLOSE_BAD_VERSION,
    CLOSE_GOING_AWAY,
    CLOSE_ORIGIN,
    CLOSE_TOO_SLOW,
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    ProtocolError,
    request_id,
    validate,
)
from server.storage import queries

if TYPE_CHECKING:
    from server.app import Services

log = logging.getLogger(__name__)
MAX_QUEUED_FRAMES = 256  # a watcher this far behind is disconnected
BACKPRESSURE_FRAMES = 32  # a client this far behind on its own replies is not read from

Handler = Callable[["Connection", dict[str, Any]], Awaitable[dict[str, Any] | None]]
HANDLERS: dict[str, Handler] = {}


def handler(kind: str) -> Callable[[Handler], Handler]:
    """Register the coroutine that answers one request type."""

    def register(fn: Handler) -> Handler:
        HANDLERS[kind] = fn
        return fn

    return register


class CloseConnection(Exception):
    def __init__(self, code: int, reason: str = "") -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class TokenBucket:
    """Rate limit: ``rate`` per second sustained, ``burst`` at once."""

    __slots__ = ("burst", "last", "rate", "tokens")

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst, self.tokens, self.last = rate, burst, burst, time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Connection:
    """One client connection: its player, its subscriptions and its outgoing queue."""

    def __init__(self, websocket: WebSocket, services: Services) -> None:
        self.ws = websocket
        self.services = services
        limits = services.settings.limits
        self.player_id: str | None = None
        self.player_name: str | None = None
        self.topics: set[str] = set()
        self._outbox: deque[str] = deque()
        self._sender: asyncio.Task[None] | None = None
        self._rate = TokenBucket(limits.rate_per_s, limits.burst)
        self._last_refusal = 0.0
        self.closed = False

    # -- outgoing --------------------------------------------------------------

    def push(self, frame: str) -> None:
        """Queue a frame; a reader that falls too far behind is dropped, not waited for."""
        if self.closed:
            return
        if len(self._outbox) >= MAX_QUEUED_FRAMES:
            self._outbox.clear()
            self.closed = True
            asyncio.get_running_loop().create_task(self._close(CLOSE_TOO_SLOW, "too slow"))
            return
        self._outbox.append(frame)
        if self._sender is None:
            self._sender = asyncio.get_running_loop().create_task(self._drain())

    def send(self, message: dict[str, Any]) -> None:
        self.push(encode(message))

    async def _drain(self) -> None:
        try:
            while self._outbox and not self.closed:
                await self.ws.send_text(self._outbox.popleft())
        except Exception:  # the peer went away; the receive loop notices and cleans up
            self.closed = True
        finally:
            self._sender = None

    async def flush(self) -> None:
        sender = self._sender
        if sender is not None:
            with contextlib.suppress(Exception):
                await sender

    async def _close(self, code: int, reason: str = "") -> None:
        self.closed = True
        with contextlib.suppress(Exception):
            if self.ws.application_state == WebSocketState.CONNECTED:
                await self.ws.close(code, reason)

    async def goodbye(self, reason: str) -> None:
        """Tell the client the server is going away, then close with 1001."""
        if self.closed:
            return
        self.send({"type": "bye", "reason": reason})
        await self.flush()
        await self._close(CLOSE_GOING_AWAY, reason)

    # -- subscriptions -------------------------------------------------------------

    def subscribe(self, topic: str) -> None:
        if topic in self.topics:
            return
        if len(self.topics) >= self.services.settings.limits.max_watches:
            raise ProtocolError("rate_limited", "too many subscriptions on one connection")
        self.topics.add(topic)
        self.services.hub.subscribe(topic, self)

    def unsubscribe(self, topic: str) -> None:
        self.topics.discard(topic)
        self.services.hub.unsubscribe(topic, self)

    def require_player(self) -> str:
        if self.player_id is None:
            raise ProtocolError("forbidden", "anonymous connections may watch but not play")
        return self.player_id

    # -- the connection's life -----------------------------------------------------

    async def run(self) -> None:
        if not self._origin_allowed():
            await self.ws.accept()
            await self._close(CLOSE_ORIGIN, "origin not allowed")
            return
        await self.ws.accept()
        self.services.connections.add(self)
        try:
            self.send(self._hello())
            await self._authenticate()
            await self._serve()
        except CloseConnection as exc:
            await self.flush()
            await self._close(exc.code, exc.reason)
        except WebSocketDisconnect:
            pass
        finally:
            self.closed = True
            self.services.connections.discard(self)
            for topic in list(self.topics):
                self.unsubscribe(topic)

    def _origin_allowed(self) -> bool:
        origin = self.ws.headers.get("origin")
        if origin is None:  # not a browser: origins protect browsers, not programs
            return True
        allowed = self.services.settings.allowed_origins
        if allowed:
            return origin in allowed or "*" in allowed
        host = self.ws.headers.get("host", "")
        return origin in (f"http://{host}", f"https://{host}")

    def _hello(self) -> dict[str, Any]:
        return {
            "type": "hello",
            "protocol": PROTOCOL_VERSION,
            "versions": list(SUPPORTED_VERSIONS),
            "server": f"solitaire-server {__version__}",
            "limits": self.services.settings.limits.as_json(),
        }

    async def _authenticate(self) -> None:
        timeout = self.services.settings.limits.auth_timeout_s
        try:
            text = await asyncio.wait_for(self._receive_text(), timeout)
        except TimeoutError:
            raise CloseConnection(CLOSE_AUTH_TIMEOUT, "no auth in time") from None
        try:
            message = json.loads(text)
            kind, fields = validate(message)
        except (ValueError, ProtocolError) as exc:
            detail = f" ({exc.message})" if isinstance(exc, ProtocolError) else ""
            self._refuse_auth(detail)
        if kind != "auth":
            self._refuse_auth("")
        await self._auth(fields, request_id(message))

    def _refuse_auth(self, detail: str) -> NoReturn:
        error = ProtocolError("not_authenticated", "the first message must be auth" + detail)
        self.send(error.to_message())
        raise CloseConnection(CLOSE_AUTH, "not authenticated")

    async def _auth(self, fields: dict[str, Any], rid: Any) -> None:
        version = fields.get("protocol", PROTOCOL_VERSION)
        if version not in SUPPORTED_VERSIONS:
            error = ProtocolError(
                "unsupported_version",
                f"protocol {version} is not supported; this server speaks {list(SUPPORTED_VERSIONS)}",
            )
            self.send(error.to_message(rid))
            raise CloseConnection(CLOSE_BAD_VERSION, "unsupported protocol version")
        player = None
        if "token" in fields:
            async with self.services.sessions() as session:
                player = await queries.player_by_token(session, fields["token"])
            if player is None:
                self.send(ProtocolError("bad_token", "unknown token").to_message(rid))
                raise CloseConnection(CLOSE_AUTH, "bad token")
            self.player_id, self.player_name = player.id, player.name
        who = {"id": player.id, "name": player.name} if player else None
        welcome = {"type": "welcome", "protocol": version, "player": who}
        self.send(welcome if rid is None else {**welcome, "id": rid})

    async def _receive_text(self) -> str:
        message = await self.ws.receive()
        if message["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(message.get("code", 1000))
        text = message.get("text")
        if text is None:
            return "\x00binary"  # binary frames are refused as bad JSON
        return str(text)

    async def _serve(self) -> None:
        while not self.closed:
            text = await self._receive_text()
            if not self._rate.take():
                self._refuse_flood(text)
                continue
            reply = await self._handle(text)
            if reply is not None:
                self.send(reply)
            if len(self._outbox) > BACKPRESSURE_FRAMES:  # stop reading until the peer reads
                await self.flush()

    def _refuse_flood(self, text: str) -> None:
        """Drop the message unprocessed and say so: always for a request with an id (its
        caller is waiting), otherwise at most ten times a second, so a flood is not amplified."""
        rid = _cheap_request_id(text)
        now = time.monotonic()
        if rid is None and now - self._last_refusal < 0.1:
            return
        self._last_refusal = now
        error = ProtocolError("rate_limited", "too many messages; slow down")
        self.send(error.to_message(rid))

    async def _handle(self, text: str) -> dict[str, Any] | None:
        try:
            message = json.loads(text)
        except ValueError:
            return ProtocolError("bad_json", "the frame is not valid JSON").to_message()
        rid = request_id(message) if isinstance(message, dict) else None
        try:
            kind, fields = validate(message)
            if kind == "auth":
                raise ProtocolError("bad_message", "already authenticated")
            reply = await HANDLERS[kind](self, fields)
        except ProtocolError as exc:
            return exc.to_message(rid)
        except CloseConnection:
            raise
        except Exception:
            log.exception("request %r failed", message.get("type"))
            return ProtocolError("internal", "the server failed; nothing was changed").to_message(rid)
        if reply is not None and rid is not None:
            reply["id"] = rid
        return reply


def _cheap_request_id(text: str) -> Any:
    """The id of a dropped request, if it has a valid one (frames are small: parsing is cheap)."""
    try:
        message = json.loads(text)
    except ValueError:
        return None
    return request_id(message) if isinstance(message, dict) else None


async def websocket_endpoint(websocket: WebSocket) -> None:
    services: Services = websocket.app.state.services
    await Connection(websocket, services).run()


# -- request handlers --------------------------------------------------------------


@handler("ping")
async def _ping(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "pong"}


@handler("new_game")
async def _new_game(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    player_id = conn.require_player()
    live = await conn.services.start_game(player_id, conn.player_name or "?", fields)
    conn.subscribe(f"game:{live.id}")
    return {"type": "game", "game": live.info(), "state": live.state(), "role": "owner"}


@handler("open_game")
async def _open_game(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    live = await conn.services.games.require(fields["game_id"])
    conn.subscribe(f"game:{live.id}")
    role = "owner" if live.owner_id == conn.player_id else "spectator"
    return {"type": "game", "game": live.info(), "state": live.state(), "role": role}


@handler("watch")
async def _watch(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    live = await conn.services.games.require(fields["game_id"])
    conn.subscribe(f"game:{live.id}")
    return {"type": "game", "game": live.info(), "state": live.state(), "role": "spectator"}


@handler("unwatch")
async def _unwatch(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    conn.unsubscribe(f"game:{fields['game_id']}")
    return {"type": "unwatched", "game_id": fields["game_id"]}


@handler("act")
async def _act(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    player_id = conn.require_player()
    games = conn.services.games
    reply = fields.get("reply", "full")
    if reply not in ("full", "brief"):
        raise ProtocolError("bad_message", "act.reply must be 'full' or 'brief'", field="reply")
    game_id, seq, action = fields["game_id"], fields["seq"], fields["action"]
    return await games.act(game_id, player_id, seq, action, conn, brief=reply == "brief")


@handler("resign")
async def _resign(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    player_id = conn.require_player()
    live = await conn.services.games.end(fields["game_id"], player_id, "resigned", conn)
    return {"type": "game", "game": live.info(), "state": live.state(), "role": "owner"}
