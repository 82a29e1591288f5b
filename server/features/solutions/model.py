"""Dead ends, pure: which positions the prover looks at, and its budgets.

The solving itself, and the answers kept in the server's process, are the
solver's infrastructure (:mod:`server.solver`); the verdicts the prover keeps
belong to its :class:`~server.features.solutions.service.DeadEnds`.
"""

from __future__ import annotations

from engine import Game
from engine.vocabulary import Status

LOST_BUDGET = 20_000  # nodes per dead-end check
VERDICT_CACHE = 20_000  # (game, position) verdicts kept
LOST_GAMES = ("SH",)  # HH-25: no solver verdict for Heart to Heart during play


def may_be_lost(game: Game) -> bool:
    """Only a Seahaven position still ``playing`` can become ``lost``."""
    return game.code.game in LOST_GAMES and game.status == Status.PLAYING
