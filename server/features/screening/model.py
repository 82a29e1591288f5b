"""The solver's signal of a ranked result, pure: the player's line against the solver's.

The think-time signals and thresholds, applied at the finish, are
:mod:`server.rules.think_time`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from server.config import Screening


@dataclass(frozen=True)
class SolverSignals:
    """The player's line against the line the solver finds from the deal."""

    solver_length: int | None  # None: the solver found no line within its budget
    extra_moves: int | None  # the player's actions beyond the solver's line's length
    solver_line: bool | None  # the player's actions are exactly the solver's line


def compare_lines(player: Sequence[str], solver: Sequence[str] | None) -> SolverSignals:
    """Compare action texts (``engine.Action.to_text``) of the player's log and the solver's line."""
    if solver is None:
        return SolverSignals(None, None, None)
    return SolverSignals(len(solver), len(player) - len(solver), list(player) == list(solver))


def solver_flag(found: SolverSignals, undos: int, moves: int, screening: Screening) -> bool:
    """Whether a win replays the solver's own line, with no undo, over enough moves to mean it.

    Among the many orders in which a deal's moves can be played, a person
    meets the solver's exact one only on the shortest deals; a script that
    asked this server's solver meets it every time, at whatever pace.
    """
    return screening.enabled and bool(found.solver_line) and undos == 0 and moves >= screening.min_moves
