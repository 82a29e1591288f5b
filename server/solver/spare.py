"""Spare cores: the background solves (dead ends, solver signals) run on idle capacity only.

A search in the worker process at the lowest priority still lengthens the
players' worst waits on a small, busy machine: on two cores, the dead-end
prover next to a server at 1,000 actions/s took the 99th percentile of a push
from 4 to 7 ms, and an outside process at nice 19 (or SCHED_IDLE) doing the
same work did the same; three instances whose provers solved at once held
every player up for 0.2 s. So before each background solve the prover looks
at the machine (over :data:`LOOK_S`) and goes on only once a core is spare:
idle on average over the look, or half the machine's cores on a machine of
one. Under a load that never lets up, proofs wait until it does: the
``lost`` status is a courtesy (the rules' own ``stuck`` and ``stalemate``
still come at once), the players' waits are not. A solve a player waits for
(the solution after a game, winnable deals, a day's challenge) never waits
here. ``solitaire_solver_waits_total`` counts the looks that found no spare
core.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

import psutil

from server import metrics
from server.solver.runner import Runner

P = ParamSpec("P")
R = TypeVar("R")

LOOK_S = 0.1  # the window over which the idle share is read


def needed_cores(cores: int | None = None) -> float:
    """Idle cores a background solve waits for: one, or half of a machine smaller than two."""
    return min(1.0, (cores or psutil.cpu_count() or 1) / 2)


def idle_seconds() -> float:
    """Every core's idle time so far, in seconds (waiting for I/O counts as idle)."""
    times = psutil.cpu_times()
    return float(times.idle + getattr(times, "iowait", 0.0))


class SpareCores:
    """The gate of background solves: :meth:`wait` returns when a core is spare."""

    def __init__(
        self,
        idle: Callable[[], float] = idle_seconds,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        needed: float | None = None,
    ) -> None:
        self._needed = needed_cores() if needed is None else needed
        self._idle = idle
        self._monotonic = monotonic
        self._sleep = sleep

    async def wait(self) -> None:
        """Once a core was spare over the last look (cancel it to stop waiting)."""
        while not await self.look():
            metrics.SOLVER_WAITS.inc()

    async def look(self) -> bool:
        """Whether the machine's cores were idle enough over one look."""
        idle, at = self._idle(), self._monotonic()
        await self._sleep(LOOK_S)
        elapsed = self._monotonic() - at
        return elapsed > 0 and (self._idle() - idle) / elapsed >= self._needed


class OnSpareCores:
    """A runner of background solves: each waits for a spare core, then runs in the pool."""

    def __init__(self, pool: Runner, spare: SpareCores) -> None:
        self.pool = pool
        self.spare = spare

    async def run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        await self.spare.wait()
        return await self.pool.run(fn, *args, **kwargs)
