"""Keyed background work, done one item at a time by one task, off the action path."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from server.storage.faults import brief, is_away

log = logging.getLogger(__name__)
T = TypeVar("T")


class Worklist(Generic[T]):
    """Work keyed by game, taken in the order the keys arrived by one worker task.

    :meth:`put` replaces the item of a key that waits, in its place (the newest
    position is the one worth proving); :meth:`put_new` leaves a key that waits
    or is being worked on alone (a result is compared once). One failed item
    never stops the worker: a database that is away is one warning line (the
    work comes again, or waits for the next start), anything else a traceback.
    """

    def __init__(self, name: str, work: Callable[[str, T], Awaitable[None]]) -> None:
        self.name = name  # in log lines: "<name> of <key> ..."
        self.work = work
        self.pending: dict[str, T] = {}
        self.running: str | None = None
        self.wake = asyncio.Event()
        self.idle = asyncio.Event()  # set while nothing waits or runs
        self.idle.set()
        self.task: asyncio.Task[None] | None = None

    def put(self, key: str, item: T) -> None:
        self.pending[key] = item
        self.idle.clear()
        self.wake.set()

    def put_new(self, key: str, item: T) -> bool:
        """Queue the key unless it waits or runs already; whether it was queued."""
        if key in self.pending or key == self.running:
            return False
        self.put(key, item)
        return True

    def start(self) -> None:
        self.task = asyncio.create_task(self.run(), name=self.name)

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    async def run(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            while self.pending:
                key = next(iter(self.pending))
                item = self.pending.pop(key)
                self.running = key
                try:
                    await self.work(key, item)
                except Exception as exc:
                    if is_away(exc):
                        log.warning(
                            "%s of %s not stored: the database is away (%s)", self.name, key, brief(exc)
                        )
                    else:
                        log.exception("%s of %s failed", self.name, key)
                finally:
                    self.running = None
            self.idle.set()
