"""Hints during play: the next move of a winning line from the current position (``hint``).

The solver searches the position the player is at, in the worker process every request
solve shares (:mod:`server.solver.pool`), bounded by :data:`SOLUTION_BUDGET` nodes, the
solution's own budget. A won line is kept for every position along it (keyed by game and
exact position), so a player who follows the hints, or undoes back onto the line, costs a
lookup, not a solve; only a solve takes from the player's hint quota (``games_per_minute``,
the same limit as a new game, whose "winnable deals only" costs a solve too). A position the
dead-end prover already proved lost (``lost``) answers ``impossible`` without a solve.
Refused (``hint_refused``) for a ranked daily, a race and Heart to Heart
(:func:`~server.features.solutions.model.hint_refusal`).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from engine import Action, Game
from engine.solver import solve_position
from engine.vocabulary import Status
from server.clock import Clock
from server.core.games import LiveGame
from server.core.quotas import Rate
from server.errors import ProtocolError
from server.features.solutions.model import HINT_CACHE, hint_refusal
from server.rules.disclosure import sealed_to_others
from server.solver.cache import BoundedCache
from server.solver.deals import SOLUTION_BUDGET
from server.solver.pool import SolverLost, as_unavailable
from server.solver.runner import Runner
from wire import ErrorCode

Line = tuple[str, tuple[Action, ...], int]  # (result, the winning line from here, nodes searched)


class Hints:
    """The hint answer, solved through ``runner``; ``rate`` is each player's quota of solves."""

    def __init__(self, clock: Clock, runner: Runner, rate: Rate) -> None:
        self.clock = clock
        self.runner = runner
        self.rate = rate
        self.lines: BoundedCache[tuple[str, Hashable], Line] = BoundedCache(HINT_CACHE)

    def check(self, live: LiveGame, player_id: str) -> None:
        """A daily is sealed to others first (nothing of it is told), then: the owner's, open,
        and a game hints are given for."""
        sealed_to_others(live.daily_day, live.owner_id, player_id, self.clock())
        if live.owner_id != player_id:
            raise ProtocolError(ErrorCode.FORBIDDEN, "only the game's owner can ask for a hint")
        if live.finished:
            raise ProtocolError(ErrorCode.GAME_OVER, f"the game is over ({live.result})")
        reason = hint_refusal(live.game.code.game, live.daily_day, live.ranked, live.race_id)
        if reason is not None:
            raise ProtocolError(ErrorCode.HINT_REFUSED, reason)

    async def answer(self, live: LiveGame, player_id: str) -> dict[str, Any]:
        """The next move of a winning line from the game's position, or why there is none."""
        self.check(live, player_id)
        game, seq = live.game, live.game.seq
        result, line, nodes = await self.line(live.id, game, player_id, proven_lost=live.lost_seq == seq)
        return {
            "type": "hint",
            "game_id": live.id,
            "seq": seq,
            "result": result,
            "action": line[0].to_json() if line else None,
            "length": len(line) if result == "won" else None,
            "nodes": nodes,
            "budget": SOLUTION_BUDGET,
        }

    async def line(self, game_id: str, game: Game, player_id: str, proven_lost: bool) -> Line:
        """The cached line of this exact position, or a new solve (from the player's quota)."""
        if game.status != Status.PLAYING or proven_lost:
            return ("impossible", (), 0)  # stuck, or proven lost by the dead-end prover
        found = self.lines.get((game_id, game.state))
        if found is not None:
            return found
        await self.rate.require(player_id)
        try:
            answer = await self.runner.run(solve_position, game.code.game, game.state, SOLUTION_BUDGET)
        except SolverLost as lost:
            raise as_unavailable(lost) from lost
        line = tuple(answer.actions or ())
        self.keep(game_id, game, answer.result, line, answer.nodes)
        return (answer.result, line, answer.nodes)

    def keep(self, game_id: str, game: Game, result: str, line: tuple[Action, ...], nodes: int) -> None:
        """The answer for this position and, for a won line, for each position along it."""
        self.lines.put((game_id, game.state), (result, line, nodes))
        for i in range(len(line) - 1):
            game = game.apply(line[i]).game
            self.lines.put((game_id, game.state), (result, line[i + 1 :], nodes))
