"""The fleet's quotas in Redis (a :class:`server.core.quotas.SharedQuotas`): every instance
takes from the same token buckets and counts the same open connections.

Each check is one Lua script, so one round trip and atomic: two instances
taking the last token at once cannot both get it.

- A rate is one hash, ``<prefix>:q:rate:<name>:<SHA-256 of the key>``, holding
  ``k`` (tokens) and ``t`` (when they were counted, milliseconds on the
  instances' clock). The script refills, takes one or answers how long until
  one is there, and sets the key to expire when the bucket would be full
  again (a full bucket is the same as none).
- Open connections are a sorted set per key, ``<prefix>:q:open:<name>:<SHA-256>``,
  one member per connection (``<instance>:<n>``) scored with the time it
  expires. The script drops expired members, then adds the new one if fewer
  than ``cap`` remain. This instance renews its members every
  :data:`RENEW_S` (a pipeline of ``ZADD XX`` per key), so the counts of an
  instance that was killed expire within :data:`HOLD_S`, and a release
  (``ZREM``) runs in the background: a closing connection does not wait.

A key, an address or a player id never becomes part of a Redis name except
through its hash. These counts are not durable state: a Redis restart forgets
them, which costs at most the connections then open going uncounted until they
close. When Redis does not answer within :data:`TIMEOUT_S`, every answer is
None and the instance counts what it sees itself
(:class:`server.core.quotas.Rate`, :class:`~server.core.quotas.Slots`);
a warning is logged once per outage, and Redis is tried again :data:`RETRY_S` later.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.asyncio import Redis

from server.clock import Clock
from server.cluster.answers import Answers

log = logging.getLogger(__name__)
TIMEOUT_S = 1.0  # a check Redis has not answered within this is counted by this instance
RETRY_S = 5.0  # after Redis failed to answer, this instance's counts alone for this long
HOLD_S = 30.0  # an open connection's member expires this long after it was last renewed
RENEW_S = 10.0  # how often this instance renews its members

T = TypeVar("T")

TAKE = """
local now, rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local found = redis.call('HMGET', KEYS[1], 'k', 't')
local tokens, t = tonumber(found[1]), tonumber(found[2])
if tokens == nil or t == nil then
  tokens, t = burst, now
end
if now > t then
  tokens = math.min(burst, tokens + (now - t) * rate / 1000)
  t = now
end
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) / rate * 1000)
end
redis.call('HSET', KEYS[1], 'k', tostring(tokens), 't', t)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return wait
"""

ACQUIRE = """
local now, cap, hold = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= cap then
  return 0
end
redis.call('ZADD', KEYS[1], now + hold, ARGV[4])
redis.call('PEXPIRE', KEYS[1], hold)
return 1
"""


class RedisQuotas:
    """Token buckets and open-connection counts of the whole fleet, on one Redis client."""

    def __init__(self, redis: Redis, prefix: str, clock: Clock) -> None:
        self.redis = redis
        self.prefix = prefix
        self.clock = clock
        self.take_script = redis.register_script(TAKE)
        self.acquire_script = redis.register_script(ACQUIRE)
        self.answers = Answers(
            log,
            "quotas counted by each instance alone until it answers",
            "quotas counted for the whole fleet again",
            TIMEOUT_S,
            RETRY_S,
        )
        self._held: dict[str, set[str]] = {}  # Redis key -> this instance's members in it
        self._tasks: set[asyncio.Task[None]] = set()  # releases under way
        self._renewer: asyncio.Task[None] | None = None

    def name(self, kind: str, bucket: str, key: str) -> str:
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        return f"{self.prefix}:q:{kind}:{bucket}:{digest}"

    async def take(self, name: str, key: str, per_s: float, burst: float) -> float | None:
        keys, args = [self.name("rate", name, key)], [self.clock(), per_s, max(1.0, burst)]
        wait_ms = await self.ask(lambda: self.take_script(keys=keys, args=args))
        return None if wait_ms is None else int(wait_ms) / 1000

    async def acquire(self, name: str, key: str, cap: int, holder: str) -> bool | None:
        redis_key = self.name("open", name, key)
        args: list[str | int] = [self.clock(), cap, int(HOLD_S * 1000), holder]
        granted = await self.ask(lambda: self.acquire_script(keys=[redis_key], args=args))
        if granted is None:
            return None
        if granted:
            self._held.setdefault(redis_key, set()).add(holder)
            self._renew_soon()
        return bool(granted)

    def release(self, name: str, key: str, holder: str) -> None:
        redis_key = self.name("open", name, key)
        members = self._held.get(redis_key)
        if members is not None:
            members.discard(holder)
            if not members:
                del self._held[redis_key]
        task = asyncio.get_running_loop().create_task(self._forget(redis_key, holder))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _forget(self, redis_key: str, holder: str) -> None:
        await self.ask(lambda: self.redis.zrem(redis_key, holder))

    def _renew_soon(self) -> None:
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(self._renew_forever())

    async def _renew_forever(self) -> None:
        """Every :data:`RENEW_S` while this instance holds members: push their expiry on."""
        while self._held:
            await asyncio.sleep(RENEW_S)
            await self.renew()

    async def renew(self) -> None:
        """One pipeline: every member this instance holds expires :data:`HOLD_S` from now."""
        if not self._held:
            return
        until = self.clock() + int(HOLD_S * 1000)
        held = {key: {member: until for member in members} for key, members in self._held.items()}

        async def send() -> list[object]:
            async with self.redis.pipeline(transaction=False) as pipe:
                for key, members in held.items():
                    pipe.zadd(key, members, xx=True)
                    pipe.pexpire(key, int(HOLD_S * 1000))
                return list(await pipe.execute())

        await self.ask(send)

    async def close(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=TIMEOUT_S)

    async def ask(self, call: Callable[[], Awaitable[T]]) -> T | None:
        """Redis's answer, or None while it does not answer (logged once, when that starts)."""
        return await self.answers(call)
