"""The solver's half of the cheat signals, off the action path.

A won ranked result is compared with the line the solver finds from its deal
after the finish has been committed: one solve at a time through the solver
slot shared with solutions and dead ends, answers cached per code (a day's
challenge is solved once, however many players win it). The comparison is a
signal for the operators (``GET /api/admin/flagged``); it flags nothing by
itself, since a careful person can find a solver's line on a short deal too.
Flags come from the think-time thresholds, applied at the finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from engine import parse_code
from engine.vocabulary import Result
from server.core.games import LiveGame
from server.core.services import Services
from server.features.screening.model import compare_lines
from server.features.solutions.model import SOLUTION_BUDGET, solve_deal
from server.storage import screening as store
from server.storage.faults import brief, is_away

log = logging.getLogger(__name__)
REQUEUE_AT_START = 1000


class SolverSignals:
    """A queue of won ranked results to compare with the solver's line, and its worker."""

    def __init__(self, services: Services, gate: asyncio.Semaphore) -> None:
        self.services = services
        self.gate = gate
        self.pending: dict[str, str] = {}  # game id -> code, in arrival order
        self.wake = asyncio.Event()
        self.idle = asyncio.Event()
        self.idle.set()
        self.task: asyncio.Task[None] | None = None

    def on_change(self, live: LiveGame) -> None:
        """A game listener, O(1): a won ranked game is queued once."""
        if live.ranked and live.result == Result.WON and live.id not in self.pending:
            self.pending[live.id] = str(live.game.code)
            self.idle.clear()
            self.wake.set()

    async def run(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            while self.pending:
                game_id = next(iter(self.pending))
                code = self.pending[game_id]
                try:
                    await self.analyse(game_id, code)
                except Exception as exc:  # one failed comparison must not stop the worker
                    if is_away(exc):
                        log.warning(
                            "solver signals of %s not stored: the database is away (%s)", game_id, brief(exc)
                        )
                    else:
                        log.exception("solver signals of %s failed", game_id)
                finally:
                    self.pending.pop(game_id, None)
            self.idle.set()

    async def analyse(self, game_id: str, code: str) -> None:
        """Compare one result's log with the solver's line and store the figures."""
        async with self.services.engine.connect() as conn:
            row = await store.signals_of(conn, game_id)
            if row is None or row.analysed_ms is not None:
                return
            played = await store.action_texts(conn, game_id)
        async with self.gate:
            answer = await solve_deal(parse_code(code), SOLUTION_BUDGET)
        line = None if answer.actions is None else [a.to_text() for a in answer.actions]
        found = compare_lines(played, line)
        values = {
            "solver_length": found.solver_length,
            "extra_moves": found.extra_moves,
            "solver_line": found.solver_line,
            "analysed_ms": self.services.clock(),
        }
        async with self.services.engine.begin() as conn:
            await store.record_analysis(conn, game_id, values)

    async def start(self) -> None:
        self.services.games.listeners.append(self.on_change)
        async with self.services.engine.connect() as conn:
            for game_id, code in await store.unanalysed(conn, REQUEUE_AT_START):
                self.pending.setdefault(game_id, code)
        if self.pending:
            self.idle.clear()
            self.wake.set()
        self.task = asyncio.create_task(self.run(), name="solver-signals")

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
