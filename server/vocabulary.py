"""The server's words, defined once: error codes, close codes, connection and race states.

The game's own words (statuses, results, refusals) are the engine's, in
:mod:`engine.vocabulary`; these are the protocol's. Every value is a
``StrEnum`` (or ``IntEnum``) member, so it is its wire form: ``json.dumps``
writes ``ErrorCode.STALE`` as ``"stale"``. Clients import them from here.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


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
    CONFLICT = "conflict"
    SEALED = "sealed"  # a daily's moves, boards and code, asked for by another player during its day
    RATE_LIMITED = "rate_limited"
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
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.CONFLICT: 409,
    ErrorCode.GAME_OVER: 409,
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


class ConnectionState(StrEnum):
    """Where a WebSocket session stands; it only moves forward."""

    CONNECTED = "connected"  # hello sent, waiting for auth
    AUTHENTICATED = "authenticated"  # serving requests
    CLOSING = "closing"  # a close was decided; nothing more is read
    CLOSED = "closed"


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


class FlagReason(StrEnum):
    """Why a result was flagged (docs/competing.md gives the thresholds)."""

    FAST = "fast"  # median think time under the threshold over enough moves
    EVEN = "even"  # think times without variance: a metronome, not a person
    INHUMAN = "inhuman"  # too many gaps under what a person can do
    STREAK = "streak"  # a long run of quick moves in a row
    FLAT = "flat"  # think times without the long thinks of a person's play: drawn from a range
    SOLVER_LINE = "solver_line"  # exactly the solver's line, no undo (found after the finish)
    REPEAT = "repeat"  # the player had a flag confirmed recently: every result waits for a look


class AuditAction(StrEnum):
    """What an operator did, as the audit log writes it."""

    CONFIRM_FLAG = "confirm_flag"
    CLEAR_FLAG = "clear_flag"
    REMOVE_ENTRY = "remove_entry"
    BAN_PLAYER = "ban_player"
    RENAME_PLAYER = "rename_player"
    CREATE_TOKEN = "create_token"


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
