"""Which rules module plays which game code prefix."""

from __future__ import annotations

import importlib
from typing import Any, TypeAlias

from engine.api import Rules
from engine.codes import CodeError

_MODULES = {"HH": "engine.hearts", "SH": "engine.seahaven"}

# The one place the state type is given up. Each rules module is precise
# (``Rules[HeartState]``, ``Rules[seahaven.State]``), but which one plays a
# game is known only at run time, from the code's prefix, so what this lookup
# returns (and what ``Game`` holds) can only be ``Rules[Any]``. ``Game`` is
# deliberately not made generic: ``Game.new(code)`` could still only return a
# ``Game[Any]``, and without type-parameter defaults (PEP 696, Python 3.13;
# the engine supports 3.11 and uses no ``typing_extensions``) every bare
# ``Game`` annotation in the server, clients and tests would then fail
# ``mypy --strict`` (missing type parameters) for no gain in precision.
AnyRules: TypeAlias = Rules[Any]


def rules_for(game: str) -> AnyRules:
    """The Rules object for a game prefix (``HH`` or ``SH``)."""
    try:
        module = importlib.import_module(_MODULES[game])
    except KeyError:
        raise CodeError("game", f"unknown game {game!r}") from None
    rules: AnyRules = module.RULES
    return rules
