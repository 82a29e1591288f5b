"""A deploy through the shipped balancer: SIGTERM of one of three instances under steady players.

The instance says ``draining`` on ``/ready`` first (404: HAProxy's soft stop), waits two
check intervals, then says ``bye``: each of its clients reconnects once, to another
instance, and is never cut again. Before, the ``bye`` came while ``/ready`` was still 200,
and under ``leastconn`` the emptied instance drew the reconnects back, to be cut again.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from tests.cluster.fleet import BEHIND_BALANCER, Fleet, balancer, until
from tests.cluster.movers import start_movers
from tests.support import ahttp

pytestmark = pytest.mark.timeout(180)
PLAYERS = 9


async def test_a_drained_instance_sends_each_client_elsewhere_once(fleet: Fleet) -> None:
    instances = [fleet.start(env=BEHIND_BALANCER) for _ in range(3)]
    with balancer([i.port for i in instances]) as front:
        movers, runs, stop = await start_movers(front, PLAYERS)
        drained = instances[0]
        os.killpg(drained.proc.pid, signal.SIGTERM)
        sigterm_at = time.monotonic()
        ready, body = await ahttp("GET", f"{drained.url}/ready")
        await until(lambda: drained.proc.poll() is not None, 30, "the drained instance exited")
        exited_at = time.monotonic()
        await asyncio.sleep(3)
        settled_at = time.monotonic()
        stop.set()
        await asyncio.wait_for(asyncio.gather(*runs), 30)
    moved = [m for m in movers if any(at > sigterm_at for at, _ in m.cuts)]
    cuts = [len([c for c in m.cuts if c[0] > sigterm_at]) for m in moved]
    codes = {code for m in moved for at, code in m.cuts if at > sigterm_at}
    reconnects = [m.connects - 1 for m in moved]
    first_cut = min(at for m in moved for at, _ in m.cuts) - sigterm_at if moved else None
    print(
        f"drain of one of 3 instances under {PLAYERS} players: /ready {ready} {body} right after SIGTERM; "
        f"{len(moved)} players moved, first cut {first_cut} s after SIGTERM; cuts each {cuts}, "
        f"reconnects each {reconnects}, close codes {codes}; "
        f"exited {exited_at - sigterm_at:.1f} s after SIGTERM"
    )
    assert ready == 404 and body == {"status": "draining"}, (ready, body)
    assert moved, "no player was on the drained instance"
    assert cuts == [1] * len(moved) and reconnects == [1] * len(moved), (cuts, reconnects)
    assert codes == {1001}, codes
    assert first_cut is not None and first_cut >= 1.5  # the bye waited for the balancer
    assert all(any(at > exited_at for at in m.acked_at) for m in movers)  # everyone plays on
    assert all(not m.cuts or m.cuts[-1][0] < settled_at for m in movers)
