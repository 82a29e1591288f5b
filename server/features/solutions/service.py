"""Solutions after a game, and the background prover of dead ends (``lost``, Seahaven only).

- **After a game**: :meth:`Solutions.body` answers whether the deal was
  winnable, with a solution from the deal and each of its positions (drawn by
  clients, decided by the engine); refused (``conflict``) while the game is
  open (HH-25), and for a daily challenge until its day is over; ``unavailable``
  when the solver's worker process was lost during the solve.
- **Dead ends**: after every action, :class:`DeadEnds` checks the new
  position in the background, off the action's path, in the solver's worker
  process (:mod:`server.solver.pool`): one solve at a time,
  :data:`LOST_BUDGET` nodes, at most :data:`DUTY` of the time, the latest
  position per game only, verdicts cached per game by canonical position (an
  undo back to a known position costs a lookup). The cache is keyed by game:
  a position another game reached is solved again, so no game's answer, nor
  its timing, tells anything of the others'. A proof that no win remains is
  recorded through :meth:`GameService.mark_lost` (the one writer of game
  state): the status reads ``lost`` until the next action (undo stays
  allowed) and subscribers get a ``status`` push. Heart to Heart never gets
  ``lost``: HH-25 forbids telling the player during play whether the deal can
  still be won (its stalemate, HH-21, is the rules' own).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable
from typing import Any

from engine import Game
from engine.replay import steps_json
from engine.solver import position_key, solve_position
from server import metrics
from server.clock import Clock
from server.core.games import GameService, LiveGame
from server.core.worklist import Worklist
from server.errors import ProtocolError
from server.features.solutions.model import LOST_BUDGET, VERDICT_CACHE, may_be_lost
from server.rules.disclosure import sealed_to_others
from server.solver.cache import BoundedCache
from server.solver.deals import SOLUTION_BUDGET, Deals
from server.solver.pool import SolverLost, as_unavailable
from server.solver.runner import Runner
from wire import ErrorCode

log = logging.getLogger(__name__)
DUTY = 0.25  # the dead-end prover solves at most this share of the time (its process shares the cores)


class Solutions:
    """The after-game answer, solved in the worker process shared with the dead-end prover."""

    def __init__(self, clock: Clock, deals: Deals) -> None:
        self.clock = clock
        self.deals = deals

    def check_over(self, live: LiveGame, viewer: str | None) -> None:
        """HH-25: nothing while the game is open; a daily's solution waits for the day's end
        (``sealed`` to anyone but its player, ``conflict`` to the player)."""
        sealed = sealed_to_others(live.daily_day, live.owner_id, viewer, self.clock())
        if not live.finished:
            raise ProtocolError(ErrorCode.CONFLICT, "the solution is shown once the game is over")
        if sealed:
            raise ProtocolError(
                ErrorCode.CONFLICT, "a daily challenge's solution is shown after its day ends"
            )

    async def body(self, live: LiveGame, viewer: str | None) -> dict[str, Any]:
        """Was the deal winnable, and how: a solution from the deal, with every position."""
        self.check_over(live, viewer)
        try:
            answer = await self.deals.solve(live.game.code, SOLUTION_BUDGET)
        except SolverLost as lost:
            raise as_unavailable(lost) from lost
        actions = answer.actions
        # The deal and each position of the solution, drawn by clients (engine.replay).
        steps = None if actions is None else await asyncio.to_thread(steps_json, live.game.code, actions)
        return {
            "game_id": live.id,
            "code": str(live.game.code),
            "winnable": {"won": True, "impossible": False}.get(answer.result),
            "result": answer.result,
            "length": answer.length,
            "actions": None if actions is None else [a.to_json() for a in actions],
            "nodes": answer.nodes,
            "budget": SOLUTION_BUDGET,
            "steps": steps,
        }


class DeadEnds:
    """Background prover of dead ends: see the module docstring for the rules it keeps."""

    def __init__(self, games: GameService, pool: Runner) -> None:
        self.games = games
        self.pool = pool  # the worker shared with the solution answer, on spare cores
        self.verdicts: BoundedCache[tuple[str, Hashable], str] = BoundedCache(VERDICT_CACHE)
        self.queue: Worklist[tuple[LiveGame, int]] = Worklist("dead end", self._check_queued)
        self.checks = 0  # solves run (cache misses), for tests and logs

    async def start(self) -> None:
        self.games.listeners.append(self.on_change)
        self.queue.start()

    async def stop(self) -> None:
        await self.queue.stop()

    def on_change(self, live: LiveGame) -> None:
        """A game listener: O(1), so the action's path stays as fast as before. A game that
        changes again while it waits is checked once, at its newest position."""
        if not live.finished and live.lost_seq != live.game.seq and may_be_lost(live.game):
            self.queue.put(live.id, (live, live.game.seq))

    async def _check_queued(self, game_id: str, item: tuple[LiveGame, int]) -> None:
        await self.check(*item)

    async def verdict(self, game_id: str, game: Game) -> str:
        """The solver's answer for a position of one game, cached by (game, canonical position)."""
        key = (game_id, position_key(game.code.game, game.state))
        found = self.verdicts.get(key)
        if found is not None:
            return found
        answer = await self.pool.run(solve_position, game.code.game, game.state, LOST_BUDGET)
        spent = answer.ms / 1000  # the worker's time, not the wait for its slot
        self.checks += 1
        metrics.SOLVES.inc()
        metrics.SOLVER_SECONDS.inc(spent)
        self.verdicts.put(key, answer.result)
        await asyncio.sleep(spent * (1 - DUTY) / DUTY)  # leave the loop the rest of the time
        return answer.result

    async def check(self, live: LiveGame, seq: int) -> None:
        if not self._current(live, seq):
            return
        try:
            verdict = await self.verdict(live.id, live.game)
        except SolverLost as lost:  # an operational event (a kill, a shutdown), not a bug
            log.warning("dead end of %s not checked: %s; its next position is", live.id, lost)
            return
        if verdict == "impossible":
            await self.games.mark_lost(live.id, seq)

    @staticmethod
    def _current(live: LiveGame, seq: int) -> bool:
        """Still the position that was queued, still open and playing."""
        return not live.evicted and not live.finished and live.game.seq == seq and may_be_lost(live.game)
