"""Races: several players start the same code together and follow each other's progress.

A race lives in memory while it runs (and in ``races``/``race_entries`` so a
restarted server, or a reconnecting racer, finds it again). Each racer plays an
ordinary game (``race_id`` set) through the normal ``act``; a GameService
listener turns every committed change into a small ``race_progress`` push with
no board in it, so racers and spectators see progress, not positions, unless
they choose to ``watch`` a racer's game.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from engine import GameCode, parse_code
from engine.registry import rules_for
from server.daily import start_on_code
from server.games import LiveGame
from server.protocol import ProtocolError
from server.storage import queries
from server.storage.models import Player, Race, RaceEntry
from server.ws import Connection, handler

if TYPE_CHECKING:
    from server.app import Services

RACES = Race.__table__
ENTRIES = RaceEntry.__table__
PLAYERS = Player.__table__
MAX_RACERS = 16
DEFAULT_COUNTDOWN_S, MAX_COUNTDOWN_S = 5, 60
RETAIN_FINISHED_S = 600  # a finished race stays in memory this long (then it is read back from storage)
ENDED = ("won", "resigned", "expired")


@dataclass
class Racer:
    """One racer's public progress: never their board."""

    player_id: str
    name: str
    joined_ms: int
    game_id: str | None = None
    status: str = "waiting"
    progress: int = 0
    moves: int = 0
    elapsed_ms: int = 0
    finished_ms: int | None = None
    place: int | None = None

    @property
    def finished(self) -> bool:
        return self.status in ENDED

    def take(self, live: LiveGame) -> bool:
        """Copy a game's progress in; returns whether anything visible changed."""
        before = self.json(0)
        self.status, self.progress = live.status, live.game.progress
        self.moves, self.elapsed_ms = live.game.moves, live.elapsed_ms
        if live.finished and self.finished_ms is None:
            self.finished_ms = live.finished_ms
        return self.json(0) != before

    def json(self, progress_total: int) -> dict[str, Any]:
        return {
            "player": {"id": self.player_id, "name": self.name},
            "game_id": self.game_id,
            "status": self.status,
            "progress": self.progress,
            "progress_total": progress_total,
            "moves": self.moves,
            "elapsed_ms": self.elapsed_ms,
            "finished": self.finished,
            "finished_at": self.finished_ms,
            "place": self.place,
        }


@dataclass
class RaceState:
    """A race: its code, its racers and where it stands (open → countdown → running → finished)."""

    id: str
    code: GameCode
    owner_id: str
    owner_name: str
    created_ms: int
    status: str = "open"
    starts_ms: int | None = None
    finished_ms: int | None = None
    racers: dict[str, Racer] = field(default_factory=dict)

    @property
    def progress_total(self) -> int:
        return rules_for(self.code.game).progress_total

    def json(self) -> dict[str, Any]:
        total = self.progress_total
        return {
            "id": self.id,
            "code": str(self.code),
            "link": f"/#race={self.id}",
            "owner": {"id": self.owner_id, "name": self.owner_name},
            "status": self.status,
            "created_at": self.created_ms,
            "starts_at": self.starts_ms,
            "finished_at": self.finished_ms,
            "racers": [r.json(total) for r in self.ordered()],
        }

    def ordered(self) -> list[Racer]:
        """Placed racers first by place, then everyone else by join time."""
        return sorted(self.racers.values(), key=lambda r: (r.place or MAX_RACERS + 1, r.joined_ms))

    def place_winner(self, racer: Racer) -> None:
        racer.place = 1 + sum(1 for r in self.racers.values() if r.place is not None)

    def place_the_rest(self) -> None:
        """When everyone has finished: winners keep their places; the rest follow, best first."""
        rest = [r for r in self.racers.values() if r.place is None]
        rest.sort(key=lambda r: (-r.progress, r.moves, r.elapsed_ms, r.finished_ms or 0))
        for racer in rest:
            self.place_winner(racer)


def topic(race_id: str) -> str:
    return f"race:{race_id}"


def own_topic(race_id: str, player_id: str) -> str:
    """A racer's private topic: their ``race_started`` (with their own game) goes here."""
    return f"race:{race_id}:{player_id}"


class Races:
    """The running races of this server and their fan-out."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.races: dict[str, RaceState] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # -- lifecycle ---------------------------------------------------------------------

    async def open(self, player_id: str, name: str, code: GameCode) -> RaceState:
        now = self.services.clock()
        race = RaceState(queries.new_id("r"), code, player_id, name, now)
        race.racers[player_id] = Racer(player_id, name, now)
        async with self.services.engine.begin() as conn:
            await conn.execute(
                insert(Race).values(
                    id=race.id, code=str(code), owner_id=player_id, status="open", created_ms=now
                )
            )
            await conn.execute(insert(RaceEntry).values(race_id=race.id, player_id=player_id, joined_ms=now))
        self.races[race.id] = race
        return race

    async def get(self, race_id: str) -> RaceState:
        race = self.races.get(race_id)
        if race is None:
            race = await self._load(race_id)
            self.races.setdefault(race_id, race)
            race = self.races[race_id]
        return race

    async def join(self, race: RaceState, player_id: str, name: str) -> None:
        if race.status not in ("open", "countdown"):
            raise ProtocolError("conflict", f"the race is {race.status}; watch it instead")
        if len(race.racers) >= MAX_RACERS:
            raise ProtocolError("conflict", f"the race is full ({MAX_RACERS} racers)")
        now = self.services.clock()
        race.racers[player_id] = Racer(player_id, name, now)
        async with self.services.engine.begin() as conn:
            await conn.execute(insert(RaceEntry).values(race_id=race.id, player_id=player_id, joined_ms=now))
        self.broadcast(race, "joined")

    async def leave(self, race: RaceState, player_id: str) -> None:
        """Before the start a racer just leaves (the owner leaving cancels); once running, resigns."""
        racer = race.racers[player_id]
        if race.status == "running" and racer.game_id is not None and not racer.finished:
            with contextlib.suppress(ProtocolError):
                await self.services.games.end(racer.game_id, player_id, "resigned")
            return
        if race.status not in ("open", "countdown"):
            return
        if player_id == race.owner_id:
            await self._set_status(race, "cancelled")
            self.broadcast(race, "cancelled")
            return
        del race.racers[player_id]
        async with self.services.engine.begin() as conn:
            await conn.execute(
                delete(RaceEntry).where(RaceEntry.race_id == race.id, RaceEntry.player_id == player_id)
            )
        self.broadcast(race, "left")

    async def start(self, race: RaceState, player_id: str, countdown_s: int) -> None:
        if player_id != race.owner_id:
            raise ProtocolError("forbidden", "only the player who opened the race can start it")
        if race.status != "open":
            raise ProtocolError("conflict", f"the race is already {race.status}")
        race.starts_ms = self.services.clock() + countdown_s * 1000
        await self._set_status(race, "countdown")
        self.broadcast(race, "countdown")
        self._spawn(self._launch_after(race, countdown_s))

    async def _launch_after(self, race: RaceState, delay_s: float) -> None:
        await asyncio.sleep(delay_s)
        if race.status == "countdown":
            await self._launch(race)

    async def _launch(self, race: RaceState) -> None:
        """Create every racer's game on the race's code, all at once, then tell everyone."""
        racers = list(race.racers.values())
        games = await asyncio.gather(
            *(start_on_code(self.services, r.player_id, r.name, race.code, race.id) for r in racers)
        )
        for racer, live in zip(racers, games, strict=True):
            racer.game_id = live.id
            racer.take(live)
        async with self.services.engine.begin() as conn:
            for racer in racers:
                await conn.execute(
                    update(RaceEntry)
                    .where(RaceEntry.race_id == race.id, RaceEntry.player_id == racer.player_id)
                    .values(game_id=racer.game_id)
                )
            await self._write_status(conn, race, "running")
        race.status = "running"
        self.broadcast(race, "started")
        hub = self.services.hub
        for live in games:
            own = own_topic(race.id, live.owner_id)
            for subscriber in hub.subscribers(own):  # a racer's connections follow their game
                if isinstance(subscriber, Connection):
                    subscriber.subscribe(f"game:{live.id}")
            message = {"type": "race_started", "race_id": race.id, "game": live.info(), "state": live.state()}
            hub.publish(own, message)

    # -- progress ----------------------------------------------------------------------

    def on_change(self, live: LiveGame) -> None:
        """GameService listener: a racer's game changed (committed); push their progress."""
        if live.race_id is None:
            return
        race = self.races.get(live.race_id)
        racer = race.racers.get(live.owner_id) if race else None
        if race is None or racer is None or racer.game_id != live.id or race.status != "running":
            return
        if not racer.take(live):
            return
        if racer.status == "won" and racer.place is None:
            race.place_winner(racer)
        progress = {"type": "race_progress", "race_id": race.id, "racer": racer.json(race.progress_total)}
        self.services.hub.publish(topic(race.id), progress)
        if all(r.finished for r in race.racers.values()):
            self._finish(race)

    def _finish(self, race: RaceState) -> None:
        race.place_the_rest()
        race.status, race.finished_ms = "finished", self.services.clock()
        self.broadcast(race, "finished")
        self._spawn(self._set_status(race, "finished"))
        self._spawn(self._forget_later(race.id))

    async def _forget_later(self, race_id: str) -> None:
        await asyncio.sleep(RETAIN_FINISHED_S)
        self.races.pop(race_id, None)

    def broadcast(self, race: RaceState, event: str) -> None:
        message = {"type": "race_update", "event": event, "race": race.json()}
        self.services.hub.publish(topic(race.id), message)

    # -- storage -------------------------------------------------------------------------

    async def _set_status(self, race: RaceState, status: str) -> None:
        race.status = status
        async with self.services.engine.begin() as conn:
            await self._write_status(conn, race, status)

    @staticmethod
    async def _write_status(conn: AsyncConnection, race: RaceState, status: str) -> None:
        values = {"status": status, "starts_ms": race.starts_ms}
        await conn.execute(update(Race).where(Race.id == race.id).values(**values))

    async def _load(self, race_id: str) -> RaceState:
        """Rebuild a race from storage and its racers' games (after a restart or eviction)."""
        async with self.services.engine.connect() as conn:
            row = (await conn.execute(select(RACES).where(RACES.c.id == race_id))).first()
            if row is None:
                raise ProtocolError("not_found", f"no race {race_id!r}")
            query = select(ENTRIES, PLAYERS.c.name).join(PLAYERS, PLAYERS.c.id == ENTRIES.c.player_id)
            entries = (await conn.execute(query.where(ENTRIES.c.race_id == race_id))).all()
        owner = next((e.name for e in entries if e.player_id == row.owner_id), "?")
        race = RaceState(row.id, parse_code(row.code), row.owner_id, owner, row.created_ms, row.status)
        race.starts_ms = row.starts_ms
        for entry in sorted(entries, key=lambda e: e.joined_ms):
            racer = Racer(entry.player_id, entry.name, entry.joined_ms, entry.game_id)
            race.racers[entry.player_id] = racer
            live = await self.services.games.get(entry.game_id) if entry.game_id else None
            if live is not None:
                racer.take(live)
        self._resume(race)
        return race

    def _resume(self, race: RaceState) -> None:
        """Places from finish times; a countdown that was cut short by a restart goes on."""
        for racer in sorted(race.racers.values(), key=lambda r: r.finished_ms or 0):
            if racer.status == "won":
                race.place_winner(racer)
        if race.status == "finished":
            race.place_the_rest()
        if race.status == "countdown":
            delay = max(0, (race.starts_ms or 0) - self.services.clock()) / 1000
            self._spawn(self._launch_after(race, delay))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()


def races(services: Services) -> Races:
    found: Races = services.extras["races"]
    return found


# -- WebSocket ----------------------------------------------------------------------------


def race_reply(race: RaceState, conn: Connection, role: str) -> dict[str, Any]:
    racer = race.racers.get(conn.player_id or "")
    return {"type": "race", "race": race.json(), "role": role, "game_id": racer.game_id if racer else None}


def follow(conn: Connection, race: RaceState, as_racer: bool) -> None:
    conn.subscribe(topic(race.id))
    if as_racer and conn.player_id is not None:
        conn.subscribe(own_topic(race.id, conn.player_id))


@handler("race_open")
async def _race_open(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    player_id = conn.require_player()
    code = conn.services.code_from_fields(fields)
    race = await races(conn.services).open(player_id, conn.player_name or "?", code)
    follow(conn, race, True)
    return race_reply(race, conn, "owner")


@handler("race_join")
async def _race_join(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    """Join a race, or come back to one (a racer who reconnected gets their game id back)."""
    player_id = conn.require_player()
    service = races(conn.services)
    race = await service.get(fields["race_id"])
    if player_id not in race.racers:
        await service.join(race, player_id, conn.player_name or "?")
    follow(conn, race, True)
    return race_reply(race, conn, "owner" if player_id == race.owner_id else "racer")


@handler("race_watch")
async def _race_watch(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    race = await races(conn.services).get(fields["race_id"])
    follow(conn, race, False)
    return race_reply(race, conn, "spectator")


@handler("race_start")
async def _race_start(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    player_id = conn.require_player()
    countdown = fields.get("countdown_s", DEFAULT_COUNTDOWN_S)
    if not 0 <= countdown <= MAX_COUNTDOWN_S:
        raise ProtocolError("bad_message", f"countdown_s must be 0 to {MAX_COUNTDOWN_S}", field="countdown_s")
    service = races(conn.services)
    race = await service.get(fields["race_id"])
    await service.start(race, player_id, countdown)
    return race_reply(race, conn, "owner")


@handler("race_leave")
async def _race_leave(conn: Connection, fields: dict[str, Any]) -> dict[str, Any]:
    """Stop following a race; a racer also leaves it (or, once it runs, resigns their game)."""
    service = races(conn.services)
    race = await service.get(fields["race_id"])
    if conn.player_id is not None and conn.player_id in race.racers:
        await service.leave(race, conn.player_id)
        conn.unsubscribe(own_topic(race.id, conn.player_id))
    conn.unsubscribe(topic(race.id))
    return {"type": "race_left", "race_id": race.id}
