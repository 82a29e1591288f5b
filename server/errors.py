"""The one exception a request is refused with, on the WebSocket and over HTTP alike."""

from __future__ import annotations

from typing import Any

from engine import CodeError, GameCode, parse_code
from wire import ErrorCode


class ProtocolError(Exception):
    """A request the server refuses; becomes an ``error`` message or an HTTP error envelope.

    ``code`` is an :class:`ErrorCode` (a plain string naming one is converted,
    and an unknown one raises ``ValueError`` at once, under ``python -O`` too);
    ``extra`` fields (``field``, ``part``, ``rule``, ``state``…) travel with it.
    """

    def __init__(self, code: ErrorCode | str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message
        self.extra = extra

    def to_message(self, request_id: Any = None) -> dict[str, Any]:
        msg: dict[str, Any] = {"type": "error", "code": self.code, "message": self.message}
        msg.update(self.extra)
        if request_id is not None:
            msg["id"] = request_id
        return msg

    def to_envelope(self) -> dict[str, Any]:
        """The HTTP body: ``{"error": {"code", "message", ...extra}}``."""
        return {"error": {"code": self.code, "message": self.message, **self.extra}}


def code_or_error(text: str) -> GameCode:
    """Parse a code for the protocol: a bad one becomes ``bad_code`` naming the part."""
    try:
        return parse_code(text)
    except CodeError as exc:
        raise ProtocolError(ErrorCode.BAD_CODE, str(exc), part=exc.part) from None
