"""The solver on the server: winnable dailies, proven dead ends (``lost``), solutions after a game.

Every solve runs in a worker thread (``asyncio.to_thread``) and is bounded by
a node budget, never by time, so the same code gets the same answer on every
instance (two instances choosing a day's code agree).

- **Dailies**: :func:`daily_length` is what ``daily.is_acceptable`` asks; a
  candidate is accepted only when the solver proves it winnable within
  :data:`DAILY_BUDGET` (``unknown`` moves on to the next candidate, so choosing
  stays fast), and the solution's length is kept for ``insert_if_absent``
  (:func:`proven_length`).
- **Dead ends** (Seahaven only): after every action, :class:`DeadEnds` checks
  the new position in the background, off the action's path: one solve at a
  time, :data:`LOST_BUDGET` nodes, at most :data:`DUTY` of the time, the
  latest position per game only, verdicts cached by canonical position (an
  undo back to a known position costs a lookup). A proof that no win remains
  sets ``LiveGame.lost_seq``: the status reads ``lost`` until the next action
  (undo stays allowed), the game row is rewritten and subscribers get a
  ``status`` push (shaped like ``finished``: ``game`` and ``state``). Heart
  to Heart never gets ``lost``: HH-25 forbids telling the player during play
  whether the deal can still be won (its stalemate, HH-21, is the rules' own).
- **After a game**: ``GET /api/games/{id}/solution`` and the WebSocket request
  ``solution`` answer whether the deal was winnable, with a solution from the
  deal; refused (``conflict``) while the game is open (HH-25), and for a daily
  challenge until its day is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from engine import Game, GameCode
from engine.solver import SolveResult, position_key, solve, solve_position
from server import http_api
from server.games import LiveGame
from server.protocol import ProtocolError
from server.storage.writer import Write
from server.ws import Connection, handler

if TYPE_CHECKING:
    from server.app import Services

log = logging.getLogger(__name__)
DAILY_BUDGET = 50_000  # nodes per daily candidate: a winnable deal is nearly always proven well within
SOLUTION_BUDGET = 200_000  # nodes for the after-game answer (cached per code)
LOST_BUDGET = 20_000  # nodes per dead-end check
DUTY = 0.25  # the dead-end worker solves at most this share of the time (the GIL is shared)
DEAL_CACHE = 512
VERDICT_CACHE = 20_000
LOST_GAMES = ("SH",)  # HH-25: no solver verdict for Heart to Heart during play

# Answers depend only on (code, budget), so these caches are shared by every app in the
# process (tests run several servers in threads: hence the lock).
_deals: OrderedDict[str, tuple[int, SolveResult]] = OrderedDict()  # code -> (budget, answer)
_daily_lengths: OrderedDict[str, int] = OrderedDict()
_cache_lock = threading.Lock()


# -- deals -----------------------------------------------------------------------------


def _remember(cache: OrderedDict[Any, Any], key: Any, value: Any, size: int) -> None:
    with _cache_lock:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > size:
            cache.popitem(last=False)


async def solve_deal(code: GameCode, budget: int) -> SolveResult:
    """The answer for a deal, cached: ``won`` and ``impossible`` hold whatever the budget."""
    text = str(code)
    cached = _deals.get(text)
    if cached is not None and (cached[1].result != "unknown" or cached[0] >= budget):
        return cached[1]
    answer = await asyncio.to_thread(solve, code, budget)
    _remember(_deals, text, (budget, answer), DEAL_CACHE)
    return answer


async def daily_length(code: GameCode) -> int | None:
    """The solution length when the solver proves the deal winnable within DAILY_BUDGET, else None."""
    answer = await solve_deal(code, DAILY_BUDGET)
    if answer.length is None:
        return None
    _remember(_daily_lengths, str(code), answer.length, DEAL_CACHE)
    return answer.length


def proven_length(code: GameCode | str) -> int | None:
    """The length :func:`daily_length` found for a code (None if it never proved it)."""
    return _daily_lengths.get(str(code))


# -- after a game ------------------------------------------------------------------------


def _day_of(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()


def check_over(services: Services, live: LiveGame) -> None:
    """HH-25: nothing while the game is open; a daily's solution waits for the day's end."""
    if not live.finished:
        raise ProtocolError("conflict", "the solution is shown once the game is over")
    if live.daily_day is not None and live.daily_day >= _day_of(services.clock()):
        raise ProtocolError("conflict", "a daily challenge's solution is shown after its day ends")


async def solution_body(services: Services, live: LiveGame) -> dict[str, Any]:
    """Was the deal winnable, and how: a solution from the deal, to replay step by step."""
    check_over(services, live)
    async with dead_ends(services).gate:  # one long solve at a time per server
        answer = await solve_deal(live.game.code, SOLUTION_BUDGET)
    return {
        "game_id": live.id,
        "code": str(live.game.code),
        "winnable": {"won": True, "impossible": False}.get(answer.result),
        "result": answer.result,
        "length": answer.length,
        "actions": None if answer.actions is None else [a.to_json() for a in answer.actions],
        "nodes": answer.nodes,
        "budget": SOLUTION_BUDGET,
    }


@http_api.endpoint
async def get_solution(request: Request) -> Response:
    """``GET /api/games/{id}/solution``: 409 while the game is open."""
    services = http_api.services_of(request)
    live = await services.games.require(request.path_params["game_id"])
    return JSONResponse(await solution_body(services, live))


@handler("solution")
async def _solution(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    live = await conn.services.games.require(fields["game_id"])
    return {"type": "solution", **await solution_body(conn.services, live)}


http_api.EXTRA_ROUTES.append(Route("/api/games/{game_id}/solution", get_solution))


# -- dead ends ---------------------------------------------------------------------------


def may_be_lost(game: Game) -> bool:
    """Only a Seahaven position still ``playing`` can become ``lost``."""
    return game.code.game in LOST_GAMES and game.status == "playing"


class DeadEnds:
    """Background prover of dead ends: see the module docstring for the rules it keeps."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.pending: dict[str, tuple[LiveGame, int]] = {}
        self.verdicts: OrderedDict[Hashable, str] = OrderedDict()
        self.wake = asyncio.Event()
        self.gate = asyncio.Semaphore(1)  # shared with the solution route: one solve at a time
        self.task: asyncio.Task[None] | None = None
        self.checks = 0  # solves run (cache misses), for tests and logs

    def start(self) -> None:
        self.services.games.listeners.append(self.on_change)
        self.task = asyncio.create_task(self.run(), name="dead-ends")

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    def on_change(self, live: LiveGame) -> None:
        """A game listener: O(1), so the action's path stays as fast as before."""
        if not live.finished and live.lost_seq != live.game.seq and may_be_lost(live.game):
            self.pending[live.id] = (live, live.game.seq)
            self.wake.set()

    async def run(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            while self.pending:
                game_id = next(iter(self.pending))
                live, seq = self.pending.pop(game_id)
                try:
                    await self.check(live, seq)
                except Exception:  # one bad check must not stop the worker
                    log.exception("dead-end check of %s failed", game_id)

    async def verdict(self, game: Game) -> str:
        """The solver's answer for a position, cached by canonical position."""
        key = position_key(game.code.game, game.state)
        found = self.verdicts.get(key)
        if found is not None:
            self.verdicts.move_to_end(key)
            return found
        async with self.gate:
            started = time.perf_counter()
            answer = await asyncio.to_thread(solve_position, game.code.game, game.state, LOST_BUDGET)
            spent = time.perf_counter() - started
        self.checks += 1
        _remember(self.verdicts, key, answer.result, VERDICT_CACHE)
        await asyncio.sleep(spent * (1 - DUTY) / DUTY)  # leave the loop the rest of the time
        return answer.result

    async def check(self, live: LiveGame, seq: int) -> None:
        if not self._current(live, seq):
            return
        if await self.verdict(live.game) != "impossible":
            return
        async with live.lock:
            if not self._current(live, seq):
                return
            live.lost_seq = seq
            live.invalidate()
            await self.services.writer.submit(Write(None, live.row_values()))
        push = {"type": "status", "game": live.info(), "state": live.state_json()}
        self.services.hub.publish(f"game:{live.id}", push)
        for listener in self.services.games.listeners:
            listener(live)

    @staticmethod
    def _current(live: LiveGame, seq: int) -> bool:
        """Still the position that was queued, still open and playing."""
        return not live.evicted and not live.finished and live.game.seq == seq and may_be_lost(live.game)


def dead_ends(services: Services) -> DeadEnds:
    found: DeadEnds = services.extras["dead_ends"]
    return found


async def setup(services: Services) -> None:
    checker = DeadEnds(services)
    services.extras["dead_ends"] = checker
    checker.start()


async def teardown(services: Services) -> None:
    checker: DeadEnds | None = services.extras.pop("dead_ends", None)
    if checker is not None:
        await checker.stop()
