"""Typed errors: one exception class per family of the protocol's error codes.

Catching by family is what a program usually wants (``except StaleError``
to resync, ``except IllegalActionError`` to tell the player why), while the
exact ``code``, the engine's ``rule`` and the server's ``message`` stay
available on every instance.
"""

from __future__ import annotations

from typing import Any

from client.models import GameState
from wire import ErrorCode


class SolitaireError(Exception):
    """An error answer from the server (WebSocket or HTTP), or a lost connection."""

    def __init__(self, code: str, message: str, raw: dict[str, Any] | None = None, status: int | None = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.raw: dict[str, Any] = raw or {}
        self.status = status  # the HTTP status for errors from the HTTP API
        self.rule: str | None = self.raw.get("rule")  # the engine's refusal code (illegal_action)
        self.field: str | None = self.raw.get("field")  # bad_message: the offending field
        self.part: str | None = self.raw.get("part")  # bad_code: the bad part of the code
        state = self.raw.get("state")
        self.state = GameState.from_json(state) if isinstance(state, dict) else None  # stale


class RequestError(SolitaireError):
    """bad_json, unknown_type, bad_message: the client sent something malformed."""


class AuthError(SolitaireError):
    """not_authenticated, bad_token, unsupported_version: the connection was refused."""


class BadCredentialsError(AuthError):
    """bad_credentials: an unknown username or a wrong password (the server never says which)."""


class BadCodeError(SolitaireError):
    """bad_code: a game code that does not parse; ``part`` names the bad part."""


class NotFoundError(SolitaireError):
    """not_found: no such game, player, race or leaderboard."""


class ForbiddenError(SolitaireError):
    """forbidden: acting in someone else's game, or playing while anonymous."""


class SealedError(SolitaireError):
    """sealed: another player's daily challenge game (its moves, board or code) before its day ends."""


class IllegalActionError(SolitaireError):
    """illegal_action: the rules refuse the action; ``rule`` and ``message`` say why."""


class StaleError(SolitaireError):
    """stale: the action's seq is not the game's; ``state`` is the current state."""


class GameOverError(SolitaireError):
    """game_over: the game has ended."""


class ConflictError(SolitaireError):
    """conflict: the request does not fit the resource's current state."""


class RateLimitedError(SolitaireError):
    """rate_limited: too many messages; the request was not processed."""


class ServerError(SolitaireError):
    """internal: a server fault; nothing was changed."""


class ConnectionLostError(SolitaireError):
    """The connection dropped and could not be resumed (or the request cannot be resent safely)."""

    def __init__(self, message: str) -> None:
        super().__init__("connection_lost", message)


ERRORS: dict[str, type[SolitaireError]] = {
    ErrorCode.BAD_JSON: RequestError,
    ErrorCode.UNKNOWN_TYPE: RequestError,
    ErrorCode.BAD_MESSAGE: RequestError,
    ErrorCode.NOT_AUTHENTICATED: AuthError,
    ErrorCode.BAD_TOKEN: AuthError,
    ErrorCode.BAD_CREDENTIALS: BadCredentialsError,
    ErrorCode.UNSUPPORTED_VERSION: AuthError,
    ErrorCode.BAD_CODE: BadCodeError,
    ErrorCode.NOT_FOUND: NotFoundError,
    ErrorCode.FORBIDDEN: ForbiddenError,
    ErrorCode.SEALED: SealedError,
    ErrorCode.ILLEGAL_ACTION: IllegalActionError,
    ErrorCode.STALE: StaleError,
    ErrorCode.GAME_OVER: GameOverError,
    ErrorCode.CONFLICT: ConflictError,
    ErrorCode.RATE_LIMITED: RateLimitedError,
    ErrorCode.INTERNAL: ServerError,
}


def error_from(body: dict[str, Any], status: int | None = None) -> SolitaireError:
    """The typed exception for an ``error`` message or an HTTP error body's ``error`` object."""
    code = str(body.get("code", "internal"))
    cls = ERRORS.get(code, SolitaireError)
    return cls(code, str(body.get("message", "")), body, status)
