"""Live leaderboards and races as the client sees them, kept current by pushed messages."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from client.game import GameHandle


class RaceClient(Protocol):
    """What a race asks of its client (``SolitaireClient`` is one), named here so that the race
    does not import the client that holds it."""

    async def race_start(self, race_id: str, countdown_s: int | None = None) -> RaceHandle: ...

    async def race_leave(self, race_id: str) -> None: ...

    def adopt_game(self, message: dict[str, Any]) -> GameHandle: ...

    async def open_game(self, game_id: str) -> GameHandle: ...


class _Changes:
    """A version number and a way to wait for it to move (shared by feeds and races)."""

    def __init__(self) -> None:
        self.version = 0
        self._changed = asyncio.Event()

    def bump(self) -> None:
        self.version += 1
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def wait_change(self, since: int, timeout: float | None = None) -> int:
        """Wait until ``version`` passes ``since``; returns the new version."""
        while self.version <= since:
            await asyncio.wait_for(self._changed.wait(), timeout)
        return self.version


def board_key(message: dict[str, Any]) -> str:
    """How a client keys a board: its code, or ``DAY/FAMILY`` for a sealed daily's."""
    if message.get("code"):
        return str(message["code"])
    return f"{message.get('day')}/{message.get('family')}"


class LeaderboardFeed(_Changes):
    """One board: the top entries at subscription, then every pushed change.

    ``code`` is None for a daily challenge's board while its day lasts (named by
    ``day`` and ``family``).
    """

    def __init__(self, message: dict[str, Any]) -> None:
        super().__init__()
        self.code: str | None = message["code"]
        self.day: str | None = message.get("day")
        self.family: str | None = message.get("family")
        self.entries: list[dict[str, Any]] = list(message["entries"])
        self.next_cursor: str | None = message.get("next_cursor")
        self.updates: list[dict[str, Any]] = []  # pushed entries, oldest first

    def take_snapshot(self, message: dict[str, Any]) -> None:
        self.entries = list(message["entries"])
        self.next_cursor = message.get("next_cursor")
        self.bump()

    def take_update(self, message: dict[str, Any]) -> None:
        """A changed entry: replace the player's row and keep the list in rank order."""
        entry = message["entry"]
        self.updates.append(entry)
        others = [e for e in self.entries if e["player"]["id"] != entry["player"]["id"]]
        self.entries = sorted([*others, entry], key=lambda e: (e["rank"], e["player"]["id"]))
        self.bump()


class RaceHandle(_Changes):
    """A race this client opened, joined or watches.

    ``race`` is the latest race object (status, racers with progress and
    places); once the race starts, a racer's own game arrives as ``game``.
    """

    def __init__(self, client: RaceClient, message: dict[str, Any]) -> None:
        super().__init__()
        self.client = client
        self.race: dict[str, Any] = message["race"]
        self.role: str = message["role"]
        self.game_id: str | None = message.get("game_id")
        self.game: GameHandle | None = None
        self.events: list[str] = []  # race_update events seen: joined, countdown, started, …

    @property
    def id(self) -> str:
        return str(self.race["id"])

    @property
    def status(self) -> str:
        return str(self.race["status"])

    @property
    def racers(self) -> list[dict[str, Any]]:
        return list(self.race["racers"])

    async def start(self, countdown_s: int = 5) -> None:
        await self.client.race_start(self.id, countdown_s)

    async def leave(self) -> None:
        await self.client.race_leave(self.id)

    async def wait_game(self, timeout: float | None = None) -> GameHandle:
        """The racer's own game, once the race has started."""
        while self.game is None:
            await self.wait_change(self.version, timeout)
        return self.game

    async def wait_status(self, status: str, timeout: float | None = None) -> None:
        while self.status != status:
            await self.wait_change(self.version, timeout)

    def take_reply(self, message: dict[str, Any]) -> None:
        self.race, self.role = message["race"], message["role"]
        self.game_id = message.get("game_id") or self.game_id
        self.bump()

    def take_push(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "race_update":
            self.race = message["race"]
            self.events.append(message["event"])
        elif kind == "race_progress":
            self.race = {**self.race, "racers": _replace_racer(self.racers, message["racer"])}
        elif kind == "race_started":
            self.game = self.client.adopt_game(message)
            self.game_id = self.game.id
        self.bump()


def _replace_racer(racers: list[dict[str, Any]], racer: dict[str, Any]) -> list[dict[str, Any]]:
    """The racer list with one racer's row replaced in place (appended if new)."""
    who = racer["player"]["id"]
    if not any(r["player"]["id"] == who for r in racers):
        return [*racers, racer]
    return [racer if r["player"]["id"] == who else r for r in racers]


class GhostRaceHandle(_Changes):
    """A race against a finished game's replay: ``game`` is yours, ``ghost`` the recorded
    game's progress (a racer's shape), pushed at the times its actions were played, from your
    first action on; ``winner`` is set when your game ends (``racer``, ``ghost`` or ``tie``)."""

    def __init__(self, game: GameHandle, message: dict[str, Any]) -> None:
        super().__init__()
        self.id: str = message["race_id"]
        self.game = game
        self.ghost: dict[str, Any] = message["ghost"]
        self.recorded: dict[str, Any] | None = message.get("recorded")
        self.winner: str | None = None
        self.result: dict[str, Any] | None = None  # the ghost_finished message

    def take_push(self, message: dict[str, Any]) -> None:
        if message["type"] == "ghost_progress":
            self.ghost = message["racer"]
        elif message["type"] == "ghost_finished":
            self.ghost, self.winner, self.result = message["ghost"], message["winner"], message
        self.bump()

    async def wait_finished(self, timeout: float | None = None) -> str:
        while self.winner is None:
            await self.wait_change(self.version, timeout)
        return self.winner
