"""Redis's answers while it gives them: what the fleet's shared counts ask through.

When Redis does not answer within a deadline, a check falls back to this instance's own
counts for a while (the answer is None), then Redis is asked again; the caller's log says
so once when that starts and once when it ends, never once a request.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

T = TypeVar("T")


class Answers:
    """Ask Redis with a deadline; None while it is away (see the module)."""

    def __init__(self, log: logging.Logger, alone: str, again: str, timeout_s: float, retry_s: float) -> None:
        self.log = log
        self.alone = alone  # said when Redis stops answering (with why)
        self.again = again  # said when it answers again
        self.timeout_s = timeout_s
        self.retry_s = retry_s
        self.away = False  # Redis did not answer the last time it was asked
        self._retry_at = 0.0  # monotonic: while away, this instance's counts alone until then

    async def __call__(self, call: Callable[[], Awaitable[T]]) -> T | None:
        if self.away and time.monotonic() < self._retry_at:
            return None
        try:
            answer = await asyncio.wait_for(_twice(call), self.timeout_s)
        except (RedisError, OSError, TimeoutError) as exc:
            if not self.away:
                self.log.warning("redis: %s (%s)", self.alone, exc)
            self.away = True
            self._retry_at = time.monotonic() + self.retry_s
            return None
        if self.away:
            self.log.warning("redis: %s", self.again)
            self.away = False
        return answer


async def _twice(call: Callable[[], Awaitable[T]]) -> T:
    """The call, and once more on a broken connection: after a Redis restart the pool's links
    are dead, and the client opens a new one only for the next call."""
    try:
        return await call()
    except RedisConnectionError:
        return await call()
