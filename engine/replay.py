"""A game replayed from its code, one step per position: what a client draws to show a line.

:func:`steps` deals the code and applies the actions in order with the rules
(:class:`~engine.game.Game`), keeping every position: step 0 is the deal,
step ``n`` the position after the ``n``-th action. A client that shows a
solution (or any action log) draws these positions and needs no copy of the
rules: the deal, the moves and the cards they move all come from here.

The JSON form of a step (:meth:`ReplayStep.to_json`)::

    {"index": 1,                       # 0: the deal; n: after the n-th action
     "action": {"type": "move", ...},  # Action.to_json(); null for the deal
     "points": 10,                     # the action's points (0 for the deal)
     "events": [{"kind": "move", ...}],# the action's events ([] for the deal)
     "status": "playing", "score": 10, "moves": 1,
     "progress": 1, "progress_total": 52,  # the information bar
     "view": {"board": {...}, "hints": {...}, "fingerprint": "0123456789abcdef"}}

``view`` is the public part of :meth:`Game.view` (the board a client draws,
its placement hints and the fingerprint), so it never holds what the rules
hide, such as the Heart to Heart stock's cards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.api import Action
from engine.codes import GameCode
from engine.game import Game

VIEW_FIELDS = ("board", "hints", "fingerprint")  # the parts of Game.view a step carries
BAR_FIELDS = ("status", "score", "moves", "progress", "progress_total")  # the information bar


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One position of a replay and the action that led to it (none for the deal)."""

    index: int
    game: Game
    action: Action | None = None
    points: int = 0
    events: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The JSON-ready step (see the module docstring): one ``Game.view`` per step."""
        view = self.game.view()
        return {
            "index": self.index,
            "action": None if self.action is None else self.action.to_json(),
            "points": self.points,
            "events": [dict(event) for event in self.events],
            **{name: view[name] for name in BAR_FIELDS},
            "view": {name: view[name] for name in VIEW_FIELDS},
        }


def steps(code: GameCode | str, actions: Sequence[Action]) -> list[ReplayStep]:
    """The deal and the position after each action; raises IllegalAction on a bad log."""
    game = Game.new(code)
    out = [ReplayStep(0, game)]
    for index, action in enumerate(actions, start=1):
        outcome = game.apply(action)
        game = outcome.game
        out.append(ReplayStep(index, game, outcome.action, outcome.points, outcome.events))
    return out


def steps_json(code: GameCode | str, actions: Sequence[Action]) -> list[dict[str, Any]]:
    """:func:`steps` in JSON form, as the server sends a solution's ``steps``."""
    return [step.to_json() for step in steps(code, actions)]
