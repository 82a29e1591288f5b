"""Verifying players and the check of what the database holds against what they were told.

A player has one request in flight at a time and records every acknowledgement:
each acted action (by ``seq``), each resignation. After a fault the database is
read straight (no server in between) and every acknowledged action, game result
and leaderboard entry must be there, as acknowledged. Beyond them a game may hold
one action more: the one in flight when its link broke (committed, never answered).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from engine import Action, Game
from server.storage.db import is_sqlite
from tests.support import Client, new_player
from wire import ErrorCode

BROKEN = (ConnectionClosed, InvalidHandshake, OSError, TimeoutError, EOFError)
RETRY_PAUSE_S = 0.05  # after a refusal, before the same action is sent again


class LoadClient(Client):
    """A test client that keeps no copy of what it sends and receives: thousands of frames of a
    few kinds, whose shapes the contract check (tests/contract.py) sees from the other tests."""

    async def recv(self, timeout: float = 10) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        return message

    async def send(self, message: dict[str, Any] | str) -> None:
        await self.ws.send(message if isinstance(message, str) else json.dumps(message))


@dataclass
class GameLog:
    """One game as its player was told: the acknowledged actions in ``seq`` order."""

    id: str
    acked: list[str] = field(default_factory=list)  # Action.to_text(), index = seq
    in_flight: str = ""  # sent, never answered: it may or may not be stored
    resigned: bool = False  # the resignation was acknowledged
    resigning: bool = False  # a resignation was sent
    over: bool = False  # resigned, or ended by the rules: the player has gone on to a new game


@dataclass
class Player:
    """Plays Seahaven games flat out, resigning each after ``actions_per_game`` actions.

    A refusal (``unavailable``) is answered by sending the same action again; with
    ``reconnect`` a broken link is opened again (through ``bases`` in turn), without
    it the player stops: a power cut ends its run.
    """

    bases: Sequence[str]
    token: str
    actions_per_game: int = 30
    reconnect: bool = False
    games: list[GameLog] = field(default_factory=list)
    refusals: list[tuple[float, str]] = field(default_factory=list)  # (monotonic time, code)
    acked_at: list[float] = field(default_factory=list)  # monotonic times of acknowledgements
    answered: list[tuple[float, float]] = field(
        default_factory=list
    )  # (sent, answered) of each acked request
    slowest_s: float = 0.0  # the longest wait for any answer
    ended_by_server: int = 0  # requests answered ``game_over``
    _turn: int = 0

    async def run(self, stop: asyncio.Event, until: float) -> None:
        """Play until ``stop`` is set, the link breaks (without ``reconnect``) or ``until`` passes."""
        client: Client | None = None
        try:
            while not stop.is_set() and time.monotonic() < until:
                try:
                    client = client or await self._connect(until)
                    await self._play_one(client, stop, until)
                except BROKEN:
                    if client is not None:
                        with contextlib.suppress(Exception):
                            await client.close()
                    client = None
                    if not self.reconnect:
                        return
                    await asyncio.sleep(RETRY_PAUSE_S)
        finally:
            if client is not None:
                with contextlib.suppress(Exception):
                    await client.close()

    async def _connect(self, until: float) -> Client:
        while True:
            base = self.bases[self._turn % len(self.bases)]
            self._turn += 1
            try:
                return await LoadClient.connect(base, self.token)
            except (*BROKEN, AssertionError):
                if not self.reconnect or time.monotonic() > until:
                    raise
                await asyncio.sleep(RETRY_PAUSE_S)

    async def _answer(self, client: Client, kind: str, **fields: Any) -> dict[str, Any]:
        sent = time.monotonic()
        reply = await client.request(kind, timeout=30, **fields)
        now = time.monotonic()
        self.slowest_s = max(self.slowest_s, now - sent)
        if reply["type"] == "error" and reply["code"] == ErrorCode.GAME_OVER:
            # The game's end, not a refusal: the server's solver proved it lost, or a first
            # resignation committed while its answer was cut off. The player goes on to a new game.
            self.ended_by_server += 1
        elif reply["type"] == "error":
            self.refusals.append((now, str(reply["code"])))
        elif kind in ("act", "resign"):
            self.answered.append((sent, now))
        return reply

    async def _play_one(self, client: Client, stop: asyncio.Event, until: float) -> None:
        log = self.games[-1] if self.games and not self.games[-1].over else None
        if log is None:
            reply = await self._answer(client, "new_game", game="SH", variant="C4")
            if reply["type"] == "error":
                await asyncio.sleep(RETRY_PAUSE_S)
                return
            log = GameLog(reply["game"]["id"])
            self.games.append(log)
        mirror = await self._resync(client, log)
        while not stop.is_set() and time.monotonic() < until and len(log.acked) < self.actions_per_game:
            legal = mirror.legal_actions()
            action = legal[0] if legal else Action.from_json({"kind": "undo"})
            log.in_flight = action.to_text()
            reply = await self._answer(client, "act", game_id=log.id, seq=mirror.seq, action=action.to_json())
            if reply["type"] == "error":
                if reply["code"] == ErrorCode.GAME_OVER:  # ended by the rules (stuck): the next game
                    log.over, log.in_flight = True, ""
                    return
                if reply["code"] == ErrorCode.STALE:  # a refused action's COMMIT ran: stored, not answered
                    mirror = await self._resync(client, log)
                else:
                    await asyncio.sleep(RETRY_PAUSE_S)
                continue
            log.acked.append(log.in_flight)
            log.in_flight = ""
            self.acked_at.append(time.monotonic())
            mirror = mirror.apply(action).game
        if len(log.acked) >= self.actions_per_game and not stop.is_set():
            log.resigning = True
            reply = await self._answer(client, "resign", game_id=log.id)
            if reply["type"] != "error":
                log.resigned = log.over = True
                self.acked_at.append(time.monotonic())
            elif reply["code"] == ErrorCode.GAME_OVER:
                log.over = True  # a first resignation's answer was cut off, or the rules ended it
            else:
                await asyncio.sleep(RETRY_PAUSE_S)

    async def _resync(self, client: Client, log: GameLog) -> Game:
        """The game as the server has it; an action in flight it holds counts as committed."""
        reply = await self._answer(client, "open_game", game_id=log.id)
        if reply["type"] == "error":
            raise OSError(f"open_game refused: {reply['code']}")
        state, code = reply["state"], reply["game"]["code"]
        if log.in_flight and state["seq"] == len(log.acked) + 1:
            log.acked.append(log.in_flight)  # committed by a refused or cut-off request, then read back
            log.in_flight = ""
        mirror = Game.new(code)
        for action in log.acked:
            mirror = mirror.apply(Action.from_text(action)).game
        assert state["seq"] == mirror.seq and state["fingerprint"] == mirror.fingerprint(), (state, log)
        return mirror


async def new_players(base: str, count: int, **options: Any) -> list[Player]:
    return [Player([base], (await new_player(base))["token"], **options) for _ in range(count)]


async def play(players: Sequence[Player], stop: asyncio.Event, until: float) -> None:
    """Every player at once, until ``stop``, their links break or ``until`` (then a few seconds
    for the answers in flight)."""
    runs = [asyncio.create_task(p.run(stop, until)) for p in players]
    await asyncio.wait_for(asyncio.gather(*runs), max(1.0, until - time.monotonic()) + 40)


@dataclass
class Stored:
    """What the database holds for some games."""

    actions: dict[str, list[str]]
    results: dict[str, str | None]
    entries: set[str]  # games with a leaderboard entry
    integrity: str = "ok"  # SQLite's PRAGMA integrity_check; "ok" on PostgreSQL


async def read_stored(database_url: str, game_ids: Sequence[str]) -> Stored:
    """The games' actions, results and leaderboard entries, read straight from the database."""
    engine = create_async_engine(database_url, poolclass=NullPool)
    try:
        async with engine.connect() as conn:

            async def rows(sql: str) -> list[Any]:
                query = text(sql).bindparams(bindparam("ids", expanding=True))
                return list(await conn.execute(query, {"ids": list(game_ids)})) if game_ids else []

            integrity = "ok"
            if is_sqlite(database_url):
                integrity = "; ".join(str(r[0]) for r in await conn.execute(text("PRAGMA integrity_check")))
            actions: dict[str, list[str]] = {}
            for game_id, action in await rows(
                "SELECT game_id, action FROM actions WHERE game_id IN :ids ORDER BY seq"
            ):
                actions.setdefault(game_id, []).append(action)
            results = {r[0]: r[1] for r in await rows("SELECT id, result FROM games WHERE id IN :ids")}
            boarded = await rows("SELECT game_id FROM leaderboard_entries WHERE game_id IN :ids")
            entries = {r[0] for r in boarded}
    finally:
        await engine.dispose()
    return Stored(actions, results, entries, integrity)


@dataclass
class Check:
    """The comparison of what players were told with what the database holds."""

    acked: int = 0  # acknowledged actions and resignations checked
    lost: int = 0  # of those, missing or different in the database
    unacked: int = 0  # stored, never acknowledged: in flight at the fault
    problems: list[str] = field(default_factory=list)  # which games lost what, or hold too much

    def add(self, other: Check) -> None:
        self.acked += other.acked
        self.lost += other.lost
        self.unacked += other.unacked
        self.problems += other.problems

    @property
    def phantoms(self) -> list[str]:
        """Stored actions beyond anything sent: never allowed, not even by a weakened database."""
        return [p for p in self.problems if "beyond" in p]


def check(players: Sequence[Player], stored: Stored) -> Check:
    result = Check()
    for log in (game for player in players for game in player.games):
        have = stored.actions.get(log.id, [])
        result.acked += len(log.acked) + log.resigned
        differs = [i for i, (a, b) in enumerate(zip(log.acked, have, strict=False)) if a != b]
        kept = differs[0] if differs else min(len(have), len(log.acked))
        if kept < len(log.acked):
            result.lost += len(log.acked) - kept
            result.problems.append(f"{log.id}: {len(log.acked) - kept} of {len(log.acked)} actions lost")
        extra = have[len(log.acked) :] if not differs else []
        if extra and (len(extra) > 1 or extra[0] != log.in_flight):
            result.problems.append(f"{log.id}: {extra} stored beyond {len(log.acked)} acknowledged")
        result.unacked += len(extra)
        if log.resigned and (stored.results.get(log.id) != "resigned" or log.id not in stored.entries):
            result.lost += 1
            result.problems.append(f"{log.id}: its resignation or its leaderboard entry lost")
        elif log.resigning and not log.resigned and stored.results.get(log.id) == "resigned":
            result.unacked += 1
    return result


def game_ids(players: Sequence[Player]) -> list[str]:
    return [game.id for player in players for game in player.games]
