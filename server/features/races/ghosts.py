"""Ghost races: race against a finished game's replay (your own best, a friend's, the day's
winner once the day is over).

``ghost_race`` starts a new game on the recorded game's code for the caller and
follows a ghost topic. The ghost's clock starts with the racer's first action
(as a game's own clock does) and its progress is pushed as a racer's is
(``ghost_progress``, a ``Racer``), each step at the time it was played in the
recorded game (idle gaps capped as the game clock caps them). When the racer's
game ends, ``ghost_finished`` says who won: a win beats no win, two wins go to
the shorter game clock, otherwise the higher progress. A ghost race lives in
memory only: after a restart the game goes on as an ordinary game.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine import Action, Game, parse_code
from engine.verify import IDLE_GAP_CAP_MS
from engine.vocabulary import DECLARED_RESULTS, Result, Status
from server.core import topics
from server.core.context import Caller, Handlers, Starter
from server.core.games import LiveGame
from server.core.quotas import Rate
from server.core.services import Services
from server.core.timing import sleep_until
from server.errors import ProtocolError
from server.rules.disclosure import is_sealed, opens_at
from server.storage import queries
from server.storage.db import Record
from wire import ErrorCode

MAX_RUNS = 10_000  # ghost races held at once by this server; the oldest finished first go


class FinishedGames(Protocol):
    """The one access rule for watching a finished game again (the profiles' service answers it)."""

    async def finished_game(self, game_id: str, viewer: str | None) -> tuple[Record, Sequence[Record]]: ...


@dataclass(frozen=True, slots=True)
class GhostStep:
    """The recorded game after one action, at its time on the game clock."""

    at_ms: int
    status: str
    progress: int
    moves: int


def timeline(code: str, actions: Sequence[Record], result: str) -> tuple[list[GhostStep], int]:
    """Each recorded action's position and time (CPU only: runs in a thread); and progress_total."""
    game = Game.new(code)
    out: list[GhostStep] = []
    elapsed, last = 0, None
    for row in actions:
        game = game.apply(Action.from_text(row.action)).game
        if last is not None:
            elapsed += min(max(0, row.at_ms - last), IDLE_GAP_CAP_MS)
        last = row.at_ms
        out.append(GhostStep(elapsed, str(game.status), game.progress, game.moves))
    if out and result in DECLARED_RESULTS:  # resigned or expired: the last position says so
        final = out[-1]
        out[-1] = GhostStep(final.at_ms, result, final.progress, final.moves)
    return out, int(game.view()["progress_total"])


@dataclass
class GhostRun:
    id: str
    game_id: str  # the racer's game
    player: dict[str, Any]  # the racer
    ghost: dict[str, Any]  # the recorded game's owner and id
    steps: list[GhostStep]
    progress_total: int
    started_ms: int | None = None
    shown: int = 0  # ghost steps pushed so far
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    def ghost_racer(self) -> dict[str, Any]:
        """The ghost as a ``Racer``: where the recorded game stood at this point of its clock."""
        step = self.steps[self.shown - 1] if self.shown else None
        done = self.shown == len(self.steps)
        return {
            "player": self.ghost["player"],
            "game_id": self.ghost["game_id"],
            "status": step.status if step else (Status.PLAYING if self.started_ms else "waiting"),
            "progress": step.progress if step else 0,
            "progress_total": self.progress_total,
            "moves": step.moves if step else 0,
            "elapsed_ms": step.at_ms if step else 0,
            "finished": done,
            "finished_at": None
            if not done or self.started_ms is None
            else self.started_ms + self.steps[-1].at_ms,
            "place": None,
        }


def racer_json(run: GhostRun, live: LiveGame) -> dict[str, Any]:
    game = live.game
    return {
        "player": run.player,
        "game_id": live.id,
        "status": live.status,
        "progress": game.progress,
        "progress_total": run.progress_total,
        "moves": game.moves,
        "elapsed_ms": live.elapsed_ms,
        "finished": live.finished,
        "finished_at": live.finished_ms,
        "place": None,
    }


def winner(run: GhostRun, live: LiveGame) -> str:
    """``racer``, ``ghost`` or ``tie``: a win beats no win; two wins, the shorter clock; else progress."""
    last = run.steps[-1] if run.steps else None
    ghost_won = last is not None and last.status == Status.WON
    racer_won = live.result == Result.WON
    if racer_won != ghost_won:
        return "racer" if racer_won else "ghost"
    if racer_won and last is not None:
        mine, theirs = live.elapsed_ms, last.at_ms
    else:
        mine, theirs = -live.game.progress, -(last.progress if last else 0)
    return "tie" if mine == theirs else ("racer" if mine < theirs else "ghost")


class GhostRaces:
    """Ghost races of this server; the racer's game starts through the ``starter``."""

    def __init__(self, services: Services, starter: Starter, profiles: FinishedGames, opened: Rate) -> None:
        self.services = services
        self.starter = starter
        self.profiles = profiles
        self.opened = opened  # races_per_minute, shared with race_open
        self.runs: dict[str, GhostRun] = {}  # by the racer's game id

    def handlers(self) -> Handlers:
        return {"ghost_race": self.ghost_race, "ghost_watch": self.ghost_watch}

    async def ghost_race(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        """Race the replay of a finished game on a new game of the same deal."""
        player_id = caller.require_player()
        row, actions = await self.profiles.finished_game(fields["game_id"], player_id)
        if is_sealed(row.daily_day, self.services.clock()):  # its player's own: the new game names the code
            raise ProtocolError(
                ErrorCode.SEALED,
                "a ghost race on a daily would show its code: race it once the day ends",
                opens_at=opens_at(str(row.daily_day)),
            )
        await self.opened.require(player_id)
        steps, total = await asyncio.to_thread(timeline, row.code, actions, row.result)
        async with self.services.db.read() as tx:
            owner = await queries.player_by_id(tx, row.player_id)
        live = await self.starter.start_on_code(player_id, caller.player_name, parse_code(row.code))
        ghost = {"player": {"id": row.player_id, "name": owner.name if owner else "?"}, "game_id": row.id}
        run = GhostRun(
            queries.new_id("h"), live.id, {"id": player_id, "name": caller.player_name}, ghost, steps, total
        )
        self._keep(run)
        caller.follow_own(topics.game(live.id))
        caller.follow_own(topics.ghost(run.id))
        return {
            "type": "ghost_race",
            "race_id": run.id,
            "ghost": run.ghost_racer(),
            "recorded": self._final(run),
            "game": live.info(),
            "state": live.state(),
        }

    async def ghost_watch(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        """Follow your own ghost race again on this connection (after a reconnect: its pushes
        went to the connection that started it); a finished or unknown one is ``not_found``."""
        player_id = caller.require_player()
        run = next((r for r in self.runs.values() if r.id == fields["race_id"]), None)
        if run is None or run.player["id"] != player_id:
            raise ProtocolError(ErrorCode.NOT_FOUND, "no ghost race of yours is running with that id")
        caller.follow_own(topics.ghost(run.id))
        return {
            "type": "ghost_watch",
            "race_id": run.id,
            "game_id": run.game_id,
            "ghost": run.ghost_racer(),
            "recorded": self._final(run),
        }

    def _keep(self, run: GhostRun) -> None:
        self.runs[run.game_id] = run
        while len(self.runs) > MAX_RUNS:
            oldest = next(iter(self.runs))
            self._drop(self.runs[oldest])

    def _drop(self, run: GhostRun) -> None:
        self.runs.pop(run.game_id, None)
        if run.task is not None:
            run.task.cancel()
        self.services.hub.close(topics.ghost(run.id))

    def on_change(self, live: LiveGame) -> None:
        """Game listener: the racer's first action starts the ghost's clock; the end decides."""
        run = self.runs.get(live.id)
        if run is None:
            return
        if run.started_ms is None and live.game.seq > 0:
            run.started_ms = self.services.clock()
            run.task = asyncio.get_running_loop().create_task(self._haunt(run))
        if live.finished:
            self._finish(run, live)

    async def _haunt(self, run: GhostRun) -> None:
        """Push each recorded step when its time on the ghost's clock comes."""
        assert run.started_ms is not None
        for index, step in enumerate(run.steps, start=1):
            await sleep_until(self.services.clock, run.started_ms + step.at_ms)
            run.shown = index
            message = {"type": "ghost_progress", "race_id": run.id, "racer": run.ghost_racer()}
            self.services.hub.publish(topics.ghost(run.id), message)

    def _finish(self, run: GhostRun, live: LiveGame) -> None:
        message = {
            "type": "ghost_finished",
            "race_id": run.id,
            "winner": winner(run, live),
            "racer": racer_json(run, live),
            "ghost": run.ghost_racer(),
            "recorded": self._final(run),
        }
        self.services.hub.publish(topics.ghost(run.id), message)
        self._drop(run)

    @staticmethod
    def _final(run: GhostRun) -> dict[str, Any] | None:
        last = run.steps[-1] if run.steps else None
        if last is None:
            return None
        return {
            "status": last.status,
            "progress": last.progress,
            "moves": last.moves,
            "elapsed_ms": last.at_ms,
        }

    async def start(self) -> None:
        self.services.games.listeners.append(self.on_change)

    async def stop(self) -> None:
        for run in list(self.runs.values()):
            if run.task is not None:
                run.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await run.task
        self.runs.clear()
