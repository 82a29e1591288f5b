"""A PostgreSQL outage under a real fleet: two instances reach the database through a proxy of
ours (tests/pgproxy.py) that drops every link at once and refuses new ones for a while.

While it lasts, every action is refused quickly with ``unavailable`` (nothing hangs, nothing
is logged at ERROR, no traceback); once it ends, both instances serve again by themselves,
and the database holds exactly the acknowledged actions, read back straight from PostgreSQL.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from engine import Action, Game
from tests.cluster.fleet import Fleet, Instance, until
from tests.cluster.test_cluster import actions_stored, next_action
from tests.pgproxy import commit_cutting_proxy
from tests.support import Client, ahttp, new_player

pytestmark = pytest.mark.timeout(180)
PLAYERS_PER_INSTANCE = 2
OUTAGE_S = 3.0
ANSWER_S = 6.0  # the slowest answer allowed at any time: the outage is told, not waited out
RECOVERY_S = 20.0  # after the database is back, each player's next action is acknowledged within
PAUSE_S = 0.05  # between a refusal and the next try


@dataclass
class Player:
    """Acts as fast as answers come; a refused action is sent again (the same seq) until answered."""

    client: Client
    game_id: str
    mirror: Game
    acked: list[tuple[int, str]] = field(default_factory=list)
    committed: list[tuple[int, str]] = field(default_factory=list)  # refused, yet stored
    refused: list[tuple[float, str]] = field(default_factory=list)  # (when, code)
    acked_at: list[float] = field(default_factory=list)
    slowest_s: float = 0.0

    async def run(self, stop: asyncio.Event) -> None:
        pending: dict[str, Any] | None = None
        while not stop.is_set():
            pending = pending or next_action(self.mirror)
            sent = time.monotonic()
            reply = await self.client.act(self.game_id, self.mirror.seq, **pending)
            self.slowest_s = max(self.slowest_s, time.monotonic() - sent)
            if reply["type"] == "error" and reply["code"] == "stale" and reply["seq"] == self.mirror.seq + 1:
                # the COMMIT of a refused action ran, its answer cut off: stored, never acknowledged
                self.committed.append((self.mirror.seq, Action.from_json(pending).to_text()))
                self.mirror = self.mirror.apply(Action.from_json(pending)).game
                pending = None
                continue
            if reply["type"] == "error":
                self.refused.append((time.monotonic(), reply["code"]))
                await asyncio.sleep(PAUSE_S)
                continue  # the same action again: a duplicate if its COMMIT ran after all
            assert reply["type"] == "result" and reply["seq"] == self.mirror.seq, reply
            self.acked.append((reply["seq"], Action.from_json(pending).to_text()))
            self.acked_at.append(time.monotonic())
            self.mirror = self.mirror.apply(Action.from_json(pending)).game
            pending = None


async def health(instance: Instance) -> int:
    status, _ = await ahttp("GET", f"{instance.url}/health")
    return status


async def healthy(instance: Instance) -> bool:
    status, ready = await ahttp("GET", f"{instance.url}/ready")
    return status == 200 and ready["status"] == "ok"


async def test_a_database_outage_is_told_survived_and_loses_nothing(
    pg_url: str, redis_url: str, tmp_path: Path
) -> None:
    with commit_cutting_proxy() as proxy:
        proxied = pg_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
        assert proxied != pg_url
        fleet = Fleet(proxied, redis_url)
        try:
            instances = [fleet.start(log=tmp_path / f"instance{i}.log") for i in range(2)]
            players: list[Player] = []
            for instance in instances:
                for _ in range(PLAYERS_PER_INSTANCE):
                    token = (await new_player(instance.url))["token"]
                    client = await Client.connect(instance.url, token)
                    game = (await client.request("new_game", game="SH", variant="C4"))["game"]
                    players.append(Player(client, game["id"], Game.new(game["code"])))
            stop = asyncio.Event()
            runs = [asyncio.create_task(p.run(stop)) for p in players]
            await until(lambda: all(len(p.acked) >= 3 for p in players), 20, "three actions each")

            proxy.down()
            down_at = time.monotonic()
            await asyncio.sleep(OUTAGE_S)
            for instance in instances:
                assert await health(instance) == 200  # alive: the outage is the database's
                status, ready = await ahttp("GET", f"{instance.url}/ready")
                # every instance meets it: degraded, not taken out of the balancer
                assert status == 200 and ready["status"] == "degraded", ready
                assert ready["database"] == "unavailable", ready
            during = [
                [code for at, code in p.refused if at > down_at + 0.5] for p in players
            ]  # settled into the outage
            assert all(during), "an instance did not refuse during the outage"
            assert {code for codes in during for code in codes} == {"unavailable"}, during
            assert all(not any(at > down_at + 0.5 for at in p.acked_at) for p in players)
            assert proxy.refused > 0  # the instances kept trying to reach it, and were turned away

            proxy.up()
            up_at = time.monotonic()
            await until(
                lambda: all(any(at > up_at for at in p.acked_at) for p in players),
                RECOVERY_S,
                "every player acknowledged again after the outage",
            )
            recovered_s = max(min(at for at in p.acked_at if at > up_at) for p in players) - up_at
            for instance in instances:
                await until(lambda i=instance: healthy(i), 10, f"{instance.url} healthy")
            acked_before = [len(p.acked) for p in players]
            await until(
                lambda: all(len(p.acked) >= n + 3 for p, n in zip(players, acked_before, strict=True)),
                20,
                "three more actions each",
            )
            stop.set()
            await asyncio.wait_for(asyncio.gather(*runs), 30)
        finally:
            fleet.close()

    slowest = max(p.slowest_s for p in players)
    print(
        f"{sum(len(p.refused) for p in players)} refusals during a {OUTAGE_S:.0f} s outage; "
        f"slowest answer {slowest:.2f} s; every player acknowledged again {recovered_s:.2f} s after it; "
        f"{sum(len(p.committed) for p in players)} refused actions found stored"
    )
    assert slowest <= ANSWER_S, slowest
    for player in players:
        stored = await actions_stored(pg_url, player.game_id)  # straight from PostgreSQL
        # exactly: nothing acknowledged is missing, nothing else is there but an action whose
        # COMMIT ran while its answer was cut off by the outage (at most one per player)
        assert stored == sorted(player.acked + player.committed), (stored, player.acked)
        assert len(player.committed) <= 1, player.committed
        await player.client.close()
    for instance in instances:
        logged = instance.logged()
        assert "Traceback" not in logged, logged[-4000:]
        errors = [line for line in logged.splitlines() if line.startswith(("ERROR", "CRITICAL"))]
        assert not errors, errors
