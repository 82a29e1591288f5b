"""The running races of this server and their fan-out.

A race lives in memory while it runs (and in ``races``/``race_entries`` so a
restarted server, or a reconnecting racer, finds it again). Each racer plays an
ordinary game (``race_id`` set) through the normal ``act``; a game listener
turns every committed change into a small ``race_progress`` push with no board
in it. The countdown waits on the injected clock (:func:`sleep_until`).

With several instances (``--redis-url``) each instance's copy of a race may
be behind the others': a race request reads the race again from storage, a
racer's change that this copy cannot place (a game it does not know yet, a
finish) reads it again before pushing, and launching and finishing are each
claimed in storage, so exactly one instance launches a race and one ends it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from engine import GameCode, parse_code
from engine.vocabulary import Result, Status
from server.core import topics
from server.core.context import Starter
from server.core.games import LiveGame
from server.core.services import Services
from server.core.timing import sleep_until
from server.errors import ProtocolError
from server.features.races.model import JOINABLE, MAX_RACERS, Progress, Racer, RaceState
from server.storage import queries
from server.storage import races as store
from wire import ErrorCode, RaceEvent, RaceStatus

RETAIN_FINISHED_MS = 600_000  # a finished race stays in memory this long (then it is read back)


def progress_of(live: LiveGame) -> Progress:
    game = live.game
    return Progress(live.status, game.progress, game.moves, live.elapsed_ms, live.finished_ms)


class Races:
    """Opens, starts and follows races; racers' games start through the ``starter``."""

    def __init__(
        self,
        services: Services,
        starter: Starter,
        sealed: Callable[[str], Awaitable[bool]] | None = None,
        shared: bool = False,
    ) -> None:
        self.services = services
        self.starter = starter
        self.sealed = sealed  # whether a code is a daily challenge whose day has not ended
        self.races: dict[str, RaceState] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.shared = shared  # other instances change races too (several instances on one database)
        self._timers: set[str] = set()  # races whose countdown this instance waits on
        self._finished: deque[tuple[int, str]] = deque()  # (forget at ms, race id), oldest first
        self._forgetting = False  # the one task forgetting finished races runs

    # -- lifecycle ---------------------------------------------------------------------

    async def check_unsealed(self, code: GameCode) -> None:
        """A sealed daily's code is nobody's to race on, or to see raced, until its day ends."""
        if self.sealed is not None and await self.sealed(str(code)):
            raise ProtocolError(
                ErrorCode.SEALED, "that code is a daily challenge's: sealed until its day ends"
            )

    async def open(self, player_id: str, name: str, code: GameCode) -> RaceState:
        await self.check_unsealed(code)
        now = self.services.clock()
        race = RaceState(queries.new_id("r"), code, player_id, name, now)
        race.racers[player_id] = Racer(player_id, name, now)
        async with self.services.db.transaction() as tx:
            await store.insert_race(tx, race.id, str(code), player_id, now)
        self.races[race.id] = race
        return race

    async def get(self, race_id: str) -> RaceState:
        if self.shared:  # another instance may have changed it: read it again
            fresh = await self._load(race_id)
            self.races[race_id] = fresh
            return fresh
        race = self.races.get(race_id)
        if race is None:
            race = await self._load(race_id)
            race = self.races.setdefault(race_id, race)
        return race

    async def join(self, race: RaceState, player_id: str, name: str) -> None:
        if race.status not in JOINABLE:
            raise ProtocolError(ErrorCode.CONFLICT, f"the race is {race.status}; watch it instead")
        if len(race.racers) >= MAX_RACERS:
            raise ProtocolError(ErrorCode.CONFLICT, f"the race is full ({MAX_RACERS} racers)")
        now = self.services.clock()
        race.racers[player_id] = Racer(player_id, name, now)
        async with self.services.db.transaction() as tx:
            await store.insert_entry(tx, race.id, player_id, now)
        self.broadcast(race, RaceEvent.JOINED)

    async def leave(self, race: RaceState, player_id: str) -> None:
        """Before the start a racer just leaves (the owner leaving cancels); once running, resigns."""
        racer = race.racers[player_id]
        if race.status is RaceStatus.RUNNING and racer.game_id is not None and not racer.finished:
            with contextlib.suppress(ProtocolError):
                await self.services.games.end(racer.game_id, player_id, Result.RESIGNED)
            return
        if race.status not in JOINABLE:
            return
        if player_id == race.owner_id:
            await self._set_status(race, RaceStatus.CANCELLED)
            self.broadcast(race, RaceEvent.CANCELLED)
            self._close_topics(race)
            return
        del race.racers[player_id]
        async with self.services.db.transaction() as tx:
            await store.delete_entry(tx, race.id, player_id)
        self.broadcast(race, RaceEvent.LEFT)

    async def start(self, race: RaceState, player_id: str, countdown_s: int) -> None:
        if player_id != race.owner_id:
            raise ProtocolError(ErrorCode.FORBIDDEN, "only the player who opened the race can start it")
        if race.status is not RaceStatus.OPEN:
            raise ProtocolError(ErrorCode.CONFLICT, f"the race is already {race.status}")
        race.starts_ms = self.services.clock() + countdown_s * 1000
        await self._set_status(race, RaceStatus.COUNTDOWN)
        self.broadcast(race, RaceEvent.COUNTDOWN)
        self._timers.add(race.id)
        self._spawn(self._launch_at(race, race.starts_ms))

    async def _launch_at(self, race: RaceState, when_ms: int) -> None:
        try:
            await sleep_until(self.services.clock, when_ms)
            if race.status is RaceStatus.COUNTDOWN:
                await self._launch(race)
        finally:
            self._timers.discard(race.id)

    async def _launch(self, race: RaceState) -> None:
        """Create every racer's game on the race's code, all at once, then tell everyone."""
        if self.shared:  # one instance launches, with every racer that joined anywhere
            async with self.services.db.transaction() as tx:
                if not await store.claim_status(tx, race.id, RaceStatus.COUNTDOWN, RaceStatus.RUNNING):
                    return
            race = await self._load(race.id)
            self.races[race.id] = race
        racers = list(race.racers.values())
        games = await asyncio.gather(
            *(self.starter.start_on_code(r.player_id, r.name, race.code, race.id) for r in racers)
        )
        for racer, live in zip(racers, games, strict=True):
            racer.game_id = live.id
            racer.take(progress_of(live))
        async with self.services.db.transaction() as tx:
            for racer in racers:
                await store.set_game(tx, race.id, racer.player_id, racer.game_id)
            await store.set_status(tx, race.id, RaceStatus.RUNNING, race.starts_ms)
        race.status = RaceStatus.RUNNING
        self.broadcast(race, RaceEvent.STARTED)
        hub = self.services.hub
        for live in games:
            own = topics.racer(race.id, live.owner_id)
            hub.forward(own, topics.game(live.id))  # a racer's connections follow their game
            message = {"type": "race_started", "race_id": race.id, "game": live.info(), "state": live.state()}
            hub.publish(own, message)

    # -- progress ----------------------------------------------------------------------

    def on_change(self, live: LiveGame) -> None:
        """Game listener: a racer's game changed (committed); push their progress."""
        if live.race_id is None:
            return
        race = self.races.get(live.race_id)
        racer = race.racers.get(live.owner_id) if race else None
        if self.shared and (racer is None or racer.game_id != live.id or live.finished):
            self._spawn(self._reread_and_push(live))  # a copy behind the others', or a finish
            return
        if race is None or racer is None or racer.game_id != live.id or race.status is not RaceStatus.RUNNING:
            return
        if not racer.take(progress_of(live)):
            return
        if racer.status == Status.WON and racer.place is None:
            race.place_winner(racer)
        progress = {"type": "race_progress", "race_id": race.id, "racer": racer.json(race.progress_total)}
        self.services.hub.publish(topics.race(race.id), progress)
        if all(r.finished for r in race.racers.values()):
            self._finish(race)

    async def _reread_and_push(self, live: LiveGame) -> None:
        """Several instances: read the race again (every racer's progress from storage), then push
        this racer's progress, and end the race if this was the last finish (claimed: once)."""
        assert live.race_id is not None
        try:
            race = await self._load(live.race_id)
        except ProtocolError:
            return
        self.races[race.id] = race
        racer = race.racers.get(live.owner_id)
        if racer is None or racer.game_id != live.id or race.status is not RaceStatus.RUNNING:
            return
        racer.take(progress_of(live))
        progress = {"type": "race_progress", "race_id": race.id, "racer": racer.json(race.progress_total)}
        self.services.hub.publish(topics.race(race.id), progress)
        if all(r.finished for r in race.racers.values()):
            async with self.services.db.transaction() as tx:
                if not await store.claim_status(tx, race.id, RaceStatus.RUNNING, RaceStatus.FINISHED):
                    return
            self._finish(race)

    def _finish(self, race: RaceState) -> None:
        race.place_the_rest()
        race.status, race.finished_ms = RaceStatus.FINISHED, self.services.clock()
        self.broadcast(race, RaceEvent.FINISHED)
        self._close_topics(race)
        self._spawn(self._set_status(race, RaceStatus.FINISHED))
        self._forget_later(race.id, race.finished_ms + RETAIN_FINISHED_MS)

    def _forget_later(self, race_id: str, when_ms: int) -> None:
        """Keep a finished race a while, on one timer for all of them (races finish in the
        order of the clock): a sleeping task per race piled up with every race played."""
        self._finished.append((when_ms, race_id))
        if not self._forgetting:
            self._forgetting = True
            self._spawn(self._forget_finished())

    async def _forget_finished(self) -> None:
        try:
            while self._finished:
                when_ms, race_id = self._finished[0]
                await sleep_until(self.services.clock, when_ms, tick_s=1.0)
                self._finished.popleft()
                self.races.pop(race_id, None)
        finally:
            self._forgetting = False

    def _close_topics(self, race: RaceState) -> None:
        """A race that is over carries nothing more: its followers let its topics go."""
        hub = self.services.hub
        hub.close(topics.race(race.id))
        for player_id in race.racers:
            hub.close(topics.racer(race.id, player_id))

    def broadcast(self, race: RaceState, event: RaceEvent) -> None:
        message = {"type": "race_update", "event": event, "race": race.json()}
        self.services.hub.publish(topics.race(race.id), message)

    # -- storage -------------------------------------------------------------------------

    async def _set_status(self, race: RaceState, status: RaceStatus) -> None:
        race.status = status
        async with self.services.db.transaction() as tx:
            await store.set_status(tx, race.id, status, race.starts_ms)

    async def _load(self, race_id: str) -> RaceState:
        """Rebuild a race from storage and its racers' games (after a restart or eviction)."""
        async with self.services.db.read() as tx:
            found = await store.load(tx, race_id)
        if found is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, f"no race {race_id!r}")
        row, entries = found
        owner = next((e.name for e in entries if e.player_id == row.owner_id), "?")
        race = RaceState(
            row.id, parse_code(row.code), row.owner_id, owner, row.created_ms, RaceStatus(row.status)
        )
        race.starts_ms = row.starts_ms
        for entry in sorted(entries, key=lambda e: e.joined_ms):
            racer = Racer(entry.player_id, entry.name, entry.joined_ms, entry.game_id)
            race.racers[entry.player_id] = racer
            live = await self.services.games.get(entry.game_id) if entry.game_id else None
            if live is not None:
                racer.take(progress_of(live))
        self._resume(race)
        return race

    def _resume(self, race: RaceState) -> None:
        """Places from finish times; a countdown that was cut short by a restart goes on."""
        for racer in sorted(race.racers.values(), key=lambda r: r.finished_ms or 0):
            if racer.status == Status.WON:
                race.place_winner(racer)
        if race.status is RaceStatus.FINISHED:
            race.place_the_rest()
        if race.status is RaceStatus.COUNTDOWN and race.id not in self._timers:
            self._timers.add(race.id)
            self._spawn(self._launch_at(race, race.starts_ms or 0))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def start_listening(self) -> None:
        self.services.games.listeners.append(self.on_change)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
