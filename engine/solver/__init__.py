"""Solvers for both games: is a position winnable, and how? Pure Python, no I/O.

:func:`solve` answers for a code (from the deal) or a :class:`~engine.game.Game`
(from its current position) within a node budget:

- ``won``: ``actions`` is a winning list of engine actions from that position
  (``Game.replay(code, actions)`` wins when solving from the deal);
- ``impossible``: every reachable position was searched and none is won;
- ``unknown``: the budget ran out first (``nodes`` > ``node_budget``).

A node is one distinct position the search expanded. The budget, not time,
bounds the work, so an answer is reproducible on any machine. Each game's
module documents why its search is complete (``impossible`` is a proof):
``engine.solver.hearts`` and ``engine.solver.seahaven``.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from engine.api import Action
from engine.codes import GameCode, parse_code
from engine.game import Game
from engine.hearts import HeartState
from engine.seahaven import State
from engine.solver import hearts, seahaven

RESULTS = ("won", "impossible", "unknown")
DEFAULT_BUDGET = 200_000


@dataclass(frozen=True, slots=True)
class SolveResult:
    """One answer: ``result`` in :data:`RESULTS`; ``actions`` only for ``won``."""

    result: str
    actions: list[Action] | None
    nodes: int
    ms: float

    @property
    def length(self) -> int | None:
        """Moves in the solution (draws included): the daily's difficulty figure."""
        return None if self.actions is None else len(self.actions)


def solve(target: Game | GameCode | str, node_budget: int = DEFAULT_BUDGET) -> SolveResult:
    """Solve a deal (code) or a game's current position (Game)."""
    game = target if isinstance(target, Game) else Game.new(parse_code(str(target)))
    return solve_position(game.code.game, game.state, node_budget)


def solve_position(game: str, state: Any, node_budget: int = DEFAULT_BUDGET) -> SolveResult:
    """Solve an engine state of ``game`` (``HH`` or ``SH``)."""
    started = time.perf_counter()
    if game == "HH":
        if not isinstance(state, HeartState):
            raise TypeError("a Heart to Heart position is a HeartState")
        heart = hearts.solve_state(state, node_budget)
        result, nodes = heart.result, heart.nodes
        actions = hearts.expand(state, heart.moves) if heart.moves is not None else None
    elif game == "SH":
        if not isinstance(state, State):
            raise TypeError("a Seahaven position is a seahaven.State")
        sea = seahaven.solve_state(state, node_budget)
        result, nodes = sea.result, sea.nodes
        actions = seahaven.to_actions(state, sea.steps) if sea.steps is not None else None
    else:
        raise ValueError(f"no solver for game {game!r}")
    return SolveResult(result, actions, nodes, (time.perf_counter() - started) * 1000)


def position_key(game: str, state: Any) -> Hashable:
    """The key the search itself uses for a position: equal keys, equal answers.

    Callers cache verdicts on it; it ignores what cannot change the answer
    (column and cell order in Seahaven; pile order and selection in Heart to Heart).
    """
    if game == "HH":
        return ("HH", hearts.position_key(state))
    if game == "SH":
        cols, cells, _ = seahaven.from_state(state)
        return ("SH", len(state.cells), seahaven.position_key(cols, cells))
    raise ValueError(f"no solver for game {game!r}")


__all__ = ["DEFAULT_BUDGET", "RESULTS", "SolveResult", "position_key", "solve", "solve_position"]
