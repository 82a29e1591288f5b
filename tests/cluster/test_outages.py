"""Outages of what every instance shares, behind the shipped balancer: a 10 s Redis kill and a
10 s PostgreSQL refusal under three instances and steady players.

Neither may take the fleet down: an outage that every instance meets at once is not a
reason to take any of them out of the balancer. During the Redis kill every instance keeps
acknowledging moves and takes new players (only pushes between instances pause); during the
PostgreSQL refusal moves are answered ``unavailable``, every socket stays open, and play
resumes on the same sockets once the database answers. The figures are printed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from websockets.exceptions import InvalidHandshake, InvalidStatus

from engine import Game
from tests.cluster.fleet import Fleet, Instance, balancer, private_redis, until
from tests.cluster.movers import Mover, SocketWatch, acked_between, cuts_between, per_second, start_movers
from tests.cluster.test_cluster import next_action
from tests.pgproxy import commit_cutting_proxy
from tests.support import Client, ahttp

pytestmark = pytest.mark.timeout(240)
PLAYERS = 6
OUTAGE_S = 10
SETTLE_S = 3.0  # the balancer's checks see the outage within this (inter 1s, fall 2)
RECOVERY_S = 20.0
T = TypeVar("T")


async def answer(url: str) -> tuple[int, Any]:
    """A GET's status and JSON body; the balancer's own 503 page is not JSON (None then)."""
    try:
        return await ahttp("GET", url)
    except ValueError:
        return 503, None


async def new_client_plays(front: str) -> bool:
    """A player who arrives now: created, connected and acknowledged through the balancer."""
    try:
        status, body = await ahttp("POST", f"{front}/api/players", {})
        if status != 201:
            return False
        client = await Client.connect(front, body["token"])
    except (ValueError, OSError, InvalidHandshake, InvalidStatus):
        return False
    try:
        game = (await client.request("new_game", game="SH", variant="C4"))["game"]
        reply = await client.act(game["id"], 0, **next_action(Game.new(game["code"])))
        return bool(reply["type"] == "result")
    finally:
        await client.close()


def logged_errors(instances: list[Instance]) -> list[str]:
    return [
        line
        for instance in instances
        for line in instance.logged().splitlines()
        if line.startswith(("ERROR", "CRITICAL", "Traceback"))
    ]


@dataclass
class Ridden:
    """What the players saw of one outage: the rate before it, and its seconds."""

    rate_before: float  # acknowledged moves a second, in the 2 s before
    up_at: float  # when it ended (time.monotonic)
    during: list[int]  # acknowledged moves in each second of it
    cut: int  # sockets cut during it
    kept: int  # the fewest sockets open at once during it


async def ride_out(
    movers: list[Mover],
    sockets: SocketWatch,
    down: Callable[[], None],
    up: Callable[[], None],
    probe: Callable[[], Awaitable[T]],
) -> tuple[Ridden, T]:
    """``OUTAGE_S`` of outage under the movers, from ``down`` to ``up``; ``probe`` runs once
    the balancer has seen it (``SETTLE_S`` in), and its answer comes back with the figures."""
    before = time.monotonic()
    await asyncio.sleep(2)
    rate_before = acked_between(movers, before, before + 2) / 2
    down()
    down_at = time.monotonic()
    await asyncio.sleep(SETTLE_S)
    probed = await probe()
    await asyncio.sleep(max(0.0, down_at + OUTAGE_S - time.monotonic()))
    up_at = time.monotonic()
    ridden = Ridden(
        rate_before,
        up_at,
        per_second(movers, down_at, OUTAGE_S),
        cuts_between(movers, down_at, up_at),
        sockets.fewest(down_at, up_at),
    )
    up()
    return ridden, probed


async def test_a_redis_kill_keeps_every_instance_serving_its_players(pg_url: str, tmp_path: Path) -> None:
    async def probe() -> tuple[int, Any, bool]:
        return (*await answer(f"{front}/ready"), await new_client_plays(front))

    with private_redis() as redis:
        fleet = Fleet(pg_url, redis.url)
        try:
            instances = [fleet.start(log=tmp_path / f"i{i}.log") for i in range(3)]
            with balancer([i.port for i in instances]) as front:
                movers, runs, stop = await start_movers(front, PLAYERS)
                with SocketWatch(movers) as sockets:
                    seen, (ready_status, ready, newcomer) = await ride_out(
                        movers, sockets, redis.stop, redis.start, probe
                    )
                    await until(
                        lambda: all(any(at > seen.up_at + 1 for at in m.acked_at) for m in movers),
                        RECOVERY_S,
                        "every player acknowledged again after Redis returned",
                    )
                stop.set()
                await asyncio.wait_for(asyncio.gather(*runs), 30)
        finally:
            fleet.close()
    print(
        f"Redis killed for {OUTAGE_S} s under {PLAYERS} players: {seen.rate_before:.0f} acked moves/s "
        f"before; per second during: {seen.during}; sockets cut during: {seen.cut}; fewest open: "
        f"{seen.kept} of {PLAYERS}; /ready through the balancer: {ready_status} {ready}; a new player "
        f"served: {newcomer}"
    )
    assert seen.cut == 0 and seen.kept == PLAYERS, (seen.cut, seen.kept)
    assert all(seen.during[1:]), seen.during  # every second of the outage but the first acknowledged moves
    assert ready_status == 200 and ready and ready["redis"] == "unavailable", ready
    assert newcomer
    assert not logged_errors(instances), logged_errors(instances)


async def test_a_database_refusal_keeps_every_socket_open(
    pg_url: str, redis_url: str, tmp_path: Path
) -> None:
    async def probe() -> tuple[int, Any, int]:
        ready_status, ready = await answer(f"{front}/ready")
        health_status, _ = await answer(f"{front}/health")
        return ready_status, ready, health_status

    with commit_cutting_proxy() as proxy:
        fleet = Fleet(pg_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}"), redis_url)
        try:
            instances = [fleet.start(log=tmp_path / f"i{i}.log") for i in range(3)]
            with balancer([i.port for i in instances]) as front:
                movers, runs, stop = await start_movers(front, PLAYERS)
                with SocketWatch(movers) as sockets:
                    seen, (ready_status, ready, health_status) = await ride_out(
                        movers, sockets, proxy.down, proxy.up, probe
                    )
                    up_at = seen.up_at
                    await until(
                        lambda: all(any(at > up_at for at in m.acked_at) for m in movers),
                        RECOVERY_S,
                        "every player acknowledged again after the database returned",
                    )
                    resumed_s = max(min(at for at in m.acked_at if at > up_at) for m in movers) - up_at
                    cut_after = cuts_between(movers, up_at, time.monotonic())
                stop.set()
                await asyncio.wait_for(asyncio.gather(*runs), 30)
        finally:
            fleet.close()
    refused = {code: sum(m.refusals.get(code, 0) for m in movers) for m in movers for code in m.refusals}
    print(
        f"PostgreSQL refused for {OUTAGE_S} s under {PLAYERS} players: {seen.rate_before:.0f} acked moves/s "
        f"before; per second during: {seen.during}; sockets cut during: {seen.cut}, after: {cut_after}; "
        f"fewest open: {seen.kept} of {PLAYERS}; every player acknowledged again {resumed_s:.2f} s after; "
        f"refusals {refused}; through the balancer /ready {ready_status} {ready}, /health {health_status}"
    )
    assert seen.cut == 0 and cut_after == 0 and seen.kept == PLAYERS, (seen.cut, cut_after, seen.kept)
    assert set(refused) <= {"unavailable", "stale"}, refused
    assert ready_status == 200 and ready and ready["database"] == "unavailable", ready
    assert health_status == 200
    assert resumed_s < 10, resumed_s
    assert not logged_errors(instances), logged_errors(instances)
