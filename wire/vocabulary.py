"""The protocol's words, defined once: its version, error and close codes, and the states it reports.

Every value is a ``StrEnum`` (or ``IntEnum``) member, so it is its wire form:
``json.dumps`` writes ``ErrorCode.STALE`` as ``"stale"``. Only what a client
sees lives here; the server's own states (connections, audit actions, flag
reasons) stay in :mod:`server.vocabulary`.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum

PROTOCOL_VERSION = 1  # what ``hello`` offers and ``auth`` asks for by default


class ErrorCode(StrEnum):
    """The ``code`` of an ``error`` message and of the HTTP error envelope."""

    BAD_JSON = "bad_json"
    UNKNOWN_TYPE = "unknown_type"
    BAD_MESSAGE = "bad_message"
    NOT_AUTHENTICATED = "not_authenticated"
    BAD_TOKEN = "bad_token"
    BAD_CREDENTIALS = "bad_credentials"
    UNSUPPORTED_VERSION = "unsupported_version"
    BAD_CODE = "bad_code"
    NOT_FOUND = "not_found"
    FORBIDDEN = "forbidden"
    ILLEGAL_ACTION = "illegal_action"
    STALE = "stale"
    GAME_OVER = "game_over"
    DAY_OVER = "day_over"  # a change of a ranked daily attempt after its day ended
    CONFLICT = "conflict"
    SEALED = "sealed"  # a daily's moves, boards and code, asked for by another player during its day
    RATE_LIMITED = "rate_limited"
    HINT_REFUSED = "hint_refused"  # no hint for this game: a ranked daily, a race, Heart to Heart (HH-25)
    UNAVAILABLE = "unavailable"
    INTERNAL = "internal"

    @property
    def http_status(self) -> int:
        """The HTTP status this error is answered with."""
        return _HTTP_STATUS.get(self, 400)


_HTTP_STATUS = {
    ErrorCode.BAD_JSON: 400,
    ErrorCode.BAD_MESSAGE: 400,
    ErrorCode.BAD_CODE: 400,
    ErrorCode.BAD_TOKEN: 401,
    ErrorCode.BAD_CREDENTIALS: 401,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.SEALED: 403,
    ErrorCode.HINT_REFUSED: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.CONFLICT: 409,
    ErrorCode.GAME_OVER: 409,
    ErrorCode.DAY_OVER: 409,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.INTERNAL: 500,
    ErrorCode.UNAVAILABLE: 503,
}


class CloseCode(IntEnum):
    """WebSocket close codes the server sends (docs/protocol.md)."""

    GOING_AWAY = 1001
    TOO_BIG = 1009
    TRY_AGAIN_LATER = 1013  # the database could not check the token
    BAD_VERSION = 4400
    AUTH = 4401
    ORIGIN = 4403
    AUTH_TIMEOUT = 4408
    TOO_SLOW = 4429  # a watcher that does not read its pushed updates


class PlayerKind(StrEnum):
    """Who plays: a person, or a program that said so when it was created (ranked apart)."""

    HUMAN = "human"
    BOT = "bot"


class Standing(StrEnum):
    """A leaderboard entry's review standing; ``ok`` and ``cleared`` are in the default view."""

    OK = "ok"  # no threshold crossed
    FLAGGED = "flagged"  # a threshold crossed, waiting for an operator
    CLEARED = "cleared"  # an operator looked and kept it
    CONFIRMED = "confirmed"  # an operator looked and agreed: kept out of the default view
    REMOVED = "removed"  # an operator took it off the board


LISTED_STANDINGS = (Standing.OK, Standing.CLEARED)


class RaceStatus(StrEnum):
    """A race's life: open → countdown → running → finished (or cancelled before running)."""

    OPEN = "open"
    COUNTDOWN = "countdown"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class RaceEvent(StrEnum):
    """The ``event`` of a ``race_update`` push."""

    JOINED = "joined"
    LEFT = "left"
    COUNTDOWN = "countdown"
    STARTED = "started"
    FINISHED = "finished"
    CANCELLED = "cancelled"
