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


HINT_GAMES = ("SH",)  # HH-25: no solver during a Heart to Heart game (and its stock is hidden)
HINT_CACHE = 20_000  # (game, position) lines kept


def hint_refusal(game: str, daily_day: str | None, ranked: bool, race_id: str | None) -> str | None:
    """Why a game gets no hint (``hint_refused``), or None when it may have one.

    A ranked daily and a race are competitions: a hint would be the solver playing for the
    player. Heart to Heart has no solver during play (HH-25), and its stock is hidden: a
    hint from a search that knows its order would tell what the player cannot see.
    """
    if game not in HINT_GAMES:
        return "Heart to Heart has no hints: the game never says whether a deal can be won (HH-25)"
    if daily_day is not None and ranked:
        return "a ranked daily challenge has no hints"
    if race_id is not None:
        return "a race has no hints"
    return None
