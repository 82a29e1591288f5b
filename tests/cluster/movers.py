"""Players that act at a steady pace through the balancer, for the outage and drain tests.

Each one records when every action was acknowledged, when its socket was cut (and with which
close code) and how often it connected, so a test can read acknowledged moves per second and
open sockets over any window.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from engine import Action, Game
from tests.cluster.fleet import until
from tests.cluster.test_cluster import next_action
from tests.support import Client, new_player

PACE_S = 0.05  # between one player's actions: at most 20 a second each
RETRY_S = 0.05  # after a refusal or a failed connection


@dataclass
class Mover:
    """One player on one game, acting every :data:`PACE_S`; reconnects through ``front`` when cut."""

    front: str
    token: str
    game_id: str = ""
    mirror: Game | None = None
    acked_at: list[float] = field(default_factory=list)
    cuts: list[tuple[float, int | None]] = field(default_factory=list)  # (when, close code)
    byes: list[float] = field(default_factory=list)  # when a bye arrived
    connects: int = 0
    refusals: dict[str, int] = field(default_factory=dict)
    connected: bool = False

    async def connect(self, deadline: float) -> Client:
        while True:
            try:
                client = await Client.connect(self.front, self.token)
            except (OSError, ConnectionClosed, InvalidHandshake, InvalidStatus, TimeoutError, AssertionError):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(RETRY_S)
                continue
            self.connects += 1
            self.connected = True
            return client

    async def run(self, stop: asyncio.Event) -> None:
        client: Client | None = await self.connect(time.monotonic() + 20)
        assert client is not None
        game = (await client.request("new_game", game="SH", variant="C4"))["game"]
        self.game_id, self.mirror = game["id"], Game.new(game["code"])
        pending: dict[str, Any] | None = None
        while not stop.is_set():
            try:
                if client is None:
                    client = await self.connect(time.monotonic() + 30)
                    await self.resync(client, pending)
                    pending = None
                pending = pending or next_action(self.mirror)
                reply = await client.act(self.game_id, self.mirror.seq, **pending)
                self.byes += [time.monotonic() for m in client.pushed if m["type"] == "bye"]
                client.pushed.clear()
                if reply["type"] == "error":
                    self.refusals[reply["code"]] = self.refusals.get(reply["code"], 0) + 1
                    if reply["code"] == "stale":
                        await self.resync(client, pending)
                        pending = None
                    await asyncio.sleep(RETRY_S)
                    continue
                self.took(pending)
                pending = None
                await asyncio.sleep(PACE_S)
            except (ConnectionClosed, OSError, TimeoutError) as exc:
                self.connected = False
                code = exc.rcvd.code if isinstance(exc, ConnectionClosed) and exc.rcvd else None
                if client is not None:
                    self.byes += [time.monotonic() for m in client.pushed if m["type"] == "bye"]
                    with contextlib.suppress(Exception):
                        await client.close()
                self.cuts.append((time.monotonic(), code))
                client = None
        if client is not None:
            await client.close()
        self.connected = False

    def took(self, action: dict[str, Any]) -> None:
        assert self.mirror is not None
        self.mirror = self.mirror.apply(Action.from_json(action)).game
        self.acked_at.append(time.monotonic())

    async def resync(self, client: Client, pending: dict[str, Any] | None) -> None:
        """Open the game again: an action in flight when the link broke may have been committed."""
        state = (await client.request("open_game", game_id=self.game_id))["state"]
        assert self.mirror is not None
        if pending is not None and state["seq"] == self.mirror.seq + 1:
            self.took(pending)  # committed, never acknowledged
        assert state["seq"] == self.mirror.seq, (state["seq"], self.mirror.seq)


async def start_movers(front: str, count: int) -> tuple[list[Mover], list[asyncio.Task[None]], asyncio.Event]:
    """``count`` new players acting through ``front``, each with three actions acknowledged;
    set the event to stop them, then gather the tasks."""
    movers = [Mover(front, (await new_player(front))["token"]) for _ in range(count)]
    stop = asyncio.Event()
    runs = [asyncio.create_task(m.run(stop)) for m in movers]
    await until(lambda: all(len(m.acked_at) >= 3 for m in movers), 30, "three actions each")
    return movers, runs, stop


def acked_between(movers: list[Mover], start: float, end: float) -> int:
    return sum(1 for m in movers for at in m.acked_at if start <= at < end)


def cuts_between(movers: list[Mover], start: float, end: float) -> int:
    return sum(1 for m in movers for at, _ in m.cuts if start <= at < end)


def per_second(movers: list[Mover], start: float, seconds: int) -> list[int]:
    """Acknowledged actions of all movers in each whole second from ``start``."""
    return [acked_between(movers, start + s, start + s + 1) for s in range(seconds)]


class SocketWatch:
    """Samples how many movers hold an open socket, every ``every_s``, until stopped."""

    def __init__(self, movers: list[Mover], every_s: float = 0.1) -> None:
        self.movers = movers
        self.every_s = every_s
        self.samples: list[tuple[float, int]] = []
        self._task: asyncio.Task[None] | None = None

    def __enter__(self) -> SocketWatch:
        self._task = asyncio.get_running_loop().create_task(self._sample())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _sample(self) -> None:
        while True:
            self.samples.append((time.monotonic(), sum(m.connected for m in self.movers)))
            await asyncio.sleep(self.every_s)

    def fewest(self, start: float, end: float) -> int:
        return min(n for at, n in self.samples if start <= at < end)
