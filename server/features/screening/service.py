"""The solver's half of the cheat signals, off the action path.

A won ranked result is compared with the line the solver finds from its deal
after the finish has been committed: one solve at a time in the solver's
worker process shared with solutions and dead ends, answers cached per code
(a day's challenge is solved once, however many players win it). The
comparison is evidence for the operators (``GET /api/admin/flagged``), and a
win that replays the solver's exact line with no undo over enough moves is
taken off the board for review (``solver_line``): a script that asked this
solver meets its line whatever its pace, a person almost never does.
"""

from __future__ import annotations

import logging

from engine import parse_code
from engine.vocabulary import Result
from server.core.games import LiveGame
from server.core.services import Services
from server.core.worklist import Worklist
from server.features.screening.model import compare_lines, solver_flag
from server.solver.deals import SOLUTION_BUDGET, Deals
from server.solver.pool import SolverLost
from server.storage import screening as store
from server.storage.db import Tx
from server.storage.leaderboards import set_standing
from server.storage.moderation import entry_of_game
from server.vocabulary import FlagReason
from wire import PlayerKind, Standing

log = logging.getLogger(__name__)
REQUEUE_AT_START = 1000


class SolverComparison:
    """A queue of won ranked results to compare with the solver's line, and its worker."""

    def __init__(self, services: Services, deals: Deals) -> None:
        self.services = services
        self.deals = deals  # on spare cores, sharing the answers of solutions after a game
        self.queue: Worklist[str] = Worklist("solver signals", self._analyse_queued)  # game id -> code

    def on_change(self, live: LiveGame) -> None:
        """A game listener, O(1): a won ranked game is queued once."""
        if live.ranked and live.result == Result.WON:
            self.queue.put_new(live.id, str(live.game.code))

    async def _analyse_queued(self, game_id: str, code: str) -> None:
        await self.analyse(game_id, code)

    async def analyse(self, game_id: str, code: str) -> None:
        """Compare one result's log with the solver's line and store the figures."""
        async with self.services.db.read() as tx:
            row = await store.signals_of(tx, game_id)
            if row is None or row.analysed_ms is not None:
                return
            played = await store.action_texts(tx, game_id)
        try:
            answer = await self.deals.solve(parse_code(code), SOLUTION_BUDGET)
        except SolverLost as lost:  # left unanalysed: queued again at the next start
            log.warning("solver signals of %s wait: %s", game_id, lost)
            return
        line = None if answer.actions is None else [a.to_text() for a in answer.actions]
        found = compare_lines(played, line)
        values = {
            "solver_length": found.solver_length,
            "extra_moves": found.extra_moves,
            "solver_line": found.solver_line,
            "analysed_ms": self.services.clock(),
        }
        held = solver_flag(found, row.undos, row.moves, self.services.settings.screening)
        async with self.services.db.transaction() as tx:
            await store.record_analysis(tx, game_id, values)
            if held:
                await self._hold(tx, game_id, row.reasons)

    async def _hold(self, tx: Tx, game_id: str, reasons: str) -> None:
        """Take a listed entry that replays the solver's line off the board until an operator looks."""
        entry = await entry_of_game(tx, game_id)
        if entry is None or entry.standing != Standing.OK or entry.kind == PlayerKind.BOT:
            return  # replaced by a better result, already flagged or reviewed, or a bot's (not screened)
        await set_standing(tx, entry.code, entry.player_id, Standing.FLAGGED)
        await store.add_reason(tx, game_id, ",".join(filter(None, (reasons, FlagReason.SOLVER_LINE))))

    async def start(self) -> None:
        self.services.games.listeners.append(self.on_change)
        async with self.services.db.read() as tx:
            for game_id, code in await store.unanalysed(tx, REQUEUE_AT_START):
                self.queue.put_new(game_id, code)
        self.queue.start()

    async def stop(self) -> None:
        await self.queue.stop()
