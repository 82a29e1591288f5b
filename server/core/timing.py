"""Waiting on the injected clock, so a test that moves time by hand never sleeps for real."""

from __future__ import annotations

import asyncio

from server.clock import Clock

TICK_S = 0.05  # how often a waiter looks at the clock: a hand-moved clock is noticed this fast


async def sleep_until(clock: Clock, when_ms: int, tick_s: float = TICK_S) -> None:
    """Return once ``clock()`` reaches ``when_ms``.

    It sleeps for real at most ``tick_s`` at a time, so it follows both the
    wall clock (one short sleep per tick until the time) and a test's clock.
    """
    while (remaining_ms := when_ms - clock()) > 0:
        await asyncio.sleep(min(tick_s, remaining_ms / 1000))
