"""The WebSocket session without I/O: text frames in, frames to send and requests to run out.

Modelled on the websockets library's sans-I/O ``Protocol``: the plumbing in
:mod:`server.edge.ws` feeds each received text to :meth:`Session.receive`,
runs the :class:`Authenticate` or :class:`Call` it returns (the only parts
that touch the database or a game), hands the answer back
(:meth:`Session.authenticated`, :meth:`Session.answer`…) and writes whatever
:meth:`Session.data_to_send` gives. Time comes from an injected clock, so the
rate limit and the auth deadline are tested by moving a number, not by
sleeping.

Every frame an authenticated client sends costs it a token of its budget
(``rate_per_s``, ``burst``): pings, malformed frames and binary frames too.
A frame past the budget is refused without being parsed (its id, if it has
one, is the only thing looked for) and the plumbing then stops reading the
connection until the budget has a token again (:attr:`Session.paused_until_ms`),
so a flood waits in the sender's socket instead of costing the server.

States only move forward: ``connected`` (hello sent, waiting for auth) →
``authenticated`` → ``closing`` (a close code is decided; nothing more is
read) → ``closed``.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from server.clock import Clock
from server.config import Limits
from server.core.hub import encode
from server.core.quotas import TokenBucket
from server.edge.protocol import SUPPORTED_VERSIONS, parse_json, request_id, validate
from server.errors import ProtocolError
from server.metrics import BUILD
from server.vocabulary import ConnectionState
from wire import PROTOCOL_VERSION, CloseCode, ErrorCode

MUST_AUTH = "; the first message must be auth"
FLOOD_REFUSAL_GAP_MS = 100  # id-less refused frames are answered at most this often
MAX_OWN_GAMES = 32  # games a connection started and follows, besides its watches


@dataclass(frozen=True, slots=True)
class Authenticate:
    """Look up ``token`` (None: anonymous) and answer with :meth:`Session.authenticated`."""

    token: str | None
    version: int
    request_id: Any


@dataclass(frozen=True, slots=True)
class Call:
    """Run the handler of ``kind`` and answer with :meth:`Session.answer` or :meth:`Session.refuse`."""

    kind: str
    fields: dict[str, Any]
    request_id: Any


Request = Authenticate | Call


class Session:
    """One client's protocol state: who it is, its limits, its subscriptions, its outgoing frames."""

    __slots__ = (  # one per connection: no instance dict
        "_last_refusal_ms",
        "_opened_ms",
        "_out",
        "_rate",
        "_throttled",
        "clock",
        "close_code",
        "close_reason",
        "limits",
        "own_games",
        "player_id",
        "player_name",
        "state",
        "watches",
    )

    def __init__(self, limits: Limits, clock: Clock) -> None:
        self.limits = limits
        self.clock = clock
        self.state = ConnectionState.CONNECTED
        self.player_id: str | None = None
        self.player_name: str | None = None
        self.close_code: CloseCode | None = None
        self.close_reason = ""
        self.watches: set[str] = set()  # topics that count against limits.max_watches
        self.own_games: OrderedDict[str, None] = OrderedDict()  # own games' topics, oldest first
        self._out: list[str] = []
        self._opened_ms = clock()
        self._rate = TokenBucket(limits.rate_per_s, limits.burst, self._opened_ms)
        self._last_refusal_ms: int | None = None
        self._throttled = False
        self.send(self._hello())

    # -- outgoing ------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self._out.append(encode(message))

    def data_to_send(self) -> list[str]:
        """The frames to write, in order; each is returned once."""
        out, self._out = self._out, []
        return out

    def close(self, code: CloseCode, reason: str) -> None:
        """Decide to close: what is queued is still sent, nothing more is read."""
        if self.state in (ConnectionState.CONNECTED, ConnectionState.AUTHENTICATED):
            self.state = ConnectionState.CLOSING
            self.close_code, self.close_reason = code, reason

    def closed(self) -> None:
        self.state = ConnectionState.CLOSED

    @property
    def reading(self) -> bool:
        return self.state in (ConnectionState.CONNECTED, ConnectionState.AUTHENTICATED)

    # -- time --------------------------------------------------------------------------

    @property
    def auth_deadline_ms(self) -> int:
        return self._opened_ms + int(self.limits.auth_timeout_s * 1000)

    def check_time(self) -> None:
        """Close an unauthenticated session whose auth deadline has passed."""
        if self.state is ConnectionState.CONNECTED and self.clock() >= self.auth_deadline_ms:
            self.close(CloseCode.AUTH_TIMEOUT, "no auth in time")

    # -- incoming ------------------------------------------------------------------------

    def receive(self, text: str) -> Request | None:
        """One received text frame; returns the request to run, if any."""
        if self.state is ConnectionState.CONNECTED:
            return self._receive_auth(text)
        if self.state is not ConnectionState.AUTHENTICATED:
            return None
        if not self._rate.take(self.clock()):
            self._refuse_flood(text)
            return None
        self._throttled = False
        try:
            message = parse_json(text)
        except (ValueError, RecursionError):
            self.send(ProtocolError(ErrorCode.BAD_JSON, "the frame is not valid JSON").to_message())
            return None
        rid = request_id(message) if isinstance(message, dict) else None
        try:
            kind, fields = validate(message)
            if kind == "auth":
                raise ProtocolError(ErrorCode.BAD_MESSAGE, "already authenticated")
        except ProtocolError as exc:
            self.refuse(rid, exc)
            return None
        return Call(kind, fields, rid)

    def _receive_auth(self, text: str) -> Authenticate | None:
        self.check_time()
        if self.state is not ConnectionState.CONNECTED:
            return None
        try:
            message = parse_json(text)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
            self._refuse_auth(ProtocolError(ErrorCode.BAD_JSON, "the frame is not valid JSON" + MUST_AUTH))
            return None
        rid = request_id(message) if isinstance(message, dict) else None
        try:
            kind, fields = validate(message)
        except ProtocolError as exc:
            if exc.code is ErrorCode.BAD_JSON:
                self._refuse_auth(ProtocolError(ErrorCode.BAD_JSON, exc.message + MUST_AUTH), rid)
            else:
                self._refuse_auth(not_authenticated(f" ({exc.message})"), rid)
            return None
        if kind != "auth":
            self._refuse_auth(not_authenticated(), rid)
            return None
        version = fields.get("protocol", PROTOCOL_VERSION)
        if version not in SUPPORTED_VERSIONS:
            error = ProtocolError(
                ErrorCode.UNSUPPORTED_VERSION,
                f"protocol {version} is not supported; this server speaks {list(SUPPORTED_VERSIONS)}",
            )
            self.send(error.to_message(rid))
            self.close(CloseCode.BAD_VERSION, "unsupported protocol version")
            return None
        return Authenticate(fields.get("token"), version, rid)

    def _refuse_auth(self, error: ProtocolError, rid: Any = None) -> None:
        """Before auth every refusal closes (4401): unauthenticated frames are not rate limited."""
        self.send(error.to_message(rid))
        self.close(CloseCode.AUTH, "not authenticated")

    @property
    def paused_until_ms(self) -> int | None:
        """After a refused frame: when the budget has a token again. The plumbing reads
        nothing more until then, so the rest of a flood waits in the sender's socket."""
        if not self._throttled:
            return None
        now = self.clock()
        return now + self._rate.wait_ms(now)

    def _refuse_flood(self, text: str) -> None:
        """Drop the frame unprocessed and say so: always for a request with an id (its
        caller is waiting), otherwise at most ten times a second, so a flood is not amplified."""
        self._throttled = True
        rid = _cheap_request_id(text)
        now = self.clock()
        last = self._last_refusal_ms
        if rid is None and last is not None and now - last < FLOOD_REFUSAL_GAP_MS:
            return
        self._last_refusal_ms = now
        self.refuse(rid, ProtocolError(ErrorCode.RATE_LIMITED, "too many messages; slow down"))

    # -- answers -------------------------------------------------------------------------

    def authenticated(self, request: Authenticate, player: tuple[str, str] | None) -> None:
        """The token named ``player`` (id, name), or no token was given (``None``: anonymous)."""
        if self.state is not ConnectionState.CONNECTED:
            return
        if player is not None:
            self.player_id, self.player_name = player
        who = {"id": player[0], "name": player[1]} if player else None
        self.state = ConnectionState.AUTHENTICATED
        self.answer(request.request_id, {"type": "welcome", "protocol": request.version, "player": who})

    def bad_token(self, request: Authenticate) -> None:
        self.send(ProtocolError(ErrorCode.BAD_TOKEN, "unknown token").to_message(request.request_id))
        self.close(CloseCode.AUTH, "bad token")

    def unavailable(self, request: Authenticate) -> None:
        """The token could not be checked (the database is away): try again later."""
        error = ProtocolError(ErrorCode.UNAVAILABLE, "the database is unavailable; try again shortly")
        self.send(error.to_message(request.request_id))
        self.close(CloseCode.TRY_AGAIN_LATER, "database unavailable")

    def answer(self, rid: Any, reply: dict[str, Any] | None) -> None:
        """Send a handler's reply with the request's id (the reply is the handler's own new dict)."""
        if reply is None:
            return
        if rid is not None:
            reply["id"] = rid
        self.send(reply)

    def refuse(self, rid: Any, error: ProtocolError) -> None:
        self.send(error.to_message(rid))

    def refuse_connection(self, error: ProtocolError, rid: Any = None) -> None:
        """Too many connections (of this address, or of the player): say so, then close
        with 1013 (try again later)."""
        self.send(error.to_message(rid))
        self.close(CloseCode.TRY_AGAIN_LATER, "too many connections")

    # -- who and what ----------------------------------------------------------------------

    def require_player(self) -> str:
        if self.player_id is None:
            raise ProtocolError(ErrorCode.FORBIDDEN, "anonymous connections may watch but not play")
        return self.player_id

    def check_follow(self, topic: str | None = None) -> None:
        """Refuse (``rate_limited``) if following ``topic`` (None: one not followed yet) would
        pass ``max_watches``: asked before a request stores anything, so it then stores nothing."""
        if topic is not None and (topic in self.watches or topic in self.own_games):
            return
        if len(self.watches) >= self.limits.max_watches:
            raise ProtocolError(ErrorCode.RATE_LIMITED, "too many subscriptions on one connection")

    def follow(self, topic: str) -> bool:
        """Count a watched topic against ``max_watches``; returns whether it is new."""
        self.check_follow(topic)
        if topic in self.watches or topic in self.own_games:
            return False
        self.watches.add(topic)
        return True

    def follow_own(self, topic: str) -> list[str]:
        """Follow a game this connection started (not a watch); returns topics to let go.

        Only the newest :data:`MAX_OWN_GAMES` are followed, so starting games
        never runs into the watch limit and finished ones do not pile up.
        """
        self.watches.discard(topic)
        self.own_games[topic] = None
        self.own_games.move_to_end(topic)
        dropped: list[str] = []
        while len(self.own_games) > MAX_OWN_GAMES:
            dropped.append(self.own_games.popitem(last=False)[0])
        return dropped

    def unfollow(self, topic: str) -> bool:
        """Forget a topic; returns whether it was followed."""
        known = topic in self.watches or topic in self.own_games
        self.watches.discard(topic)
        self.own_games.pop(topic, None)
        return known

    @property
    def topics(self) -> list[str]:
        return [*self.watches, *self.own_games]

    def _hello(self) -> dict[str, Any]:
        return {
            "type": "hello",
            "protocol": PROTOCOL_VERSION,
            "versions": list(SUPPORTED_VERSIONS),
            "server": f"solitaire-server {BUILD.version}",
            "revision": BUILD.revision,
            "limits": self.limits.as_json(),
        }


def not_authenticated(detail: str = "") -> ProtocolError:
    return ProtocolError(ErrorCode.NOT_AUTHENTICATED, "the first message must be auth" + detail)


def _cheap_request_id(text: str) -> Any:
    """The id of a dropped request, if it has a valid one: a frame without the text
    ``"id"`` is not parsed at all (a flood of id-less pings costs a substring search)."""
    if '"id"' not in text:
        return None
    try:
        message = parse_json(text)
    except (ValueError, RecursionError):
        return None
    return request_id(message) if isinstance(message, dict) else None
