"""Which rules module plays which game code prefix."""

from __future__ import annotations

import importlib

from engine.api import Rules
from engine.codes import CodeError

_MODULES = {"HH": "engine.hearts", "SH": "engine.seahaven"}


def rules_for(game: str) -> Rules:
    """The Rules object for a game prefix (``HH`` or ``SH``)."""
    try:
        module = importlib.import_module(_MODULES[game])
    except KeyError:
        raise CodeError("game", f"unknown game {game!r}") from None
    rules: Rules = module.RULES
    return rules
