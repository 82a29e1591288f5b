"""A game's code from a request, pure: plain play and races start games on codes alike."""

from __future__ import annotations

from typing import Any

from engine import GameCode, random_code
from engine.codes import VARIANTS
from server.errors import ProtocolError, code_or_error
from wire import ErrorCode


def code_from_fields(fields: dict[str, Any]) -> GameCode:
    """A code from ``code``, or a random one from ``game`` and ``variant``."""
    if "code" in fields:
        return code_or_error(fields["code"])
    game = str(fields.get("game", "")).upper()
    if game not in VARIANTS:
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "give a code, or a game (HH or SH)", field="game")
    variant = str(fields.get("variant", VARIANTS[game][0])).upper()
    if variant not in VARIANTS[game]:
        allowed = ", ".join(VARIANTS[game])
        raise ProtocolError(ErrorCode.BAD_CODE, f"variant must be one of {allowed}", part="variant")
    return random_code(game, variant)
