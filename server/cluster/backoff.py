"""Failed attempts counted in Redis, so every instance of a fleet slows a key alike.

The rule is :class:`server.core.backoff.BackoffRule`, the same as one
instance's; only where the counts live differs. Each key is one Redis hash,
``<prefix>:fail:<kind>:<SHA-256 of the key>`` (a username or an address never
becomes part of a Redis name, so none can collide with another or reach
outside the prefix), holding ``n``, the failures, and ``t``, the last one's
time in milliseconds on the instances' injected clock (the wall clock in
production, which the instances keep in step; a skew between two moves a wait
by as much). A failure is added by one Lua script, atomically: the count
starts again once the key has been quiet for the rule's ``forget_s``, and the
key expires (PEXPIRE) that long after its last failure.

These counts are not durable state: a Redis restart forgets them, which
costs at most a few more free tries. When Redis does not answer (within
``TIMEOUT_S``), logins still work: the counts of this instance alone are
used instead (a warning is logged once, not per request), and Redis is tried
again ``RETRY_S`` later.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.asyncio import Redis

from server.clock import Clock
from server.cluster.answers import Answers
from server.core.backoff import Backoff, BackoffRule

log = logging.getLogger(__name__)
TIMEOUT_S = 1.0  # a count Redis has not answered within this is taken from this instance's
RETRY_S = 5.0  # after Redis failed to answer, this instance's counts alone for this long

T = TypeVar("T")

FAIL = """
local now, forget = tonumber(ARGV[1]), tonumber(ARGV[2])
local found = redis.call('HMGET', KEYS[1], 'n', 't')
local n, t = tonumber(found[1]) or 0, tonumber(found[2])
if t == nil or now - t >= forget then
  n = 0
elseif t > now then
  now = t
end
redis.call('HSET', KEYS[1], 'n', n + 1, 't', now)
redis.call('PEXPIRE', KEYS[1], forget)
return n + 1
"""


class RedisCounts:
    """The fleet's failure counts (a :data:`~server.core.backoff.FailureCounts`): one
    :class:`RedisFailures` for each kind of key, all on one Redis client."""

    def __init__(self, redis: Redis, prefix: str, clock: Clock) -> None:
        self.redis = redis
        self.prefix = prefix
        self.clock = clock
        self.script = redis.register_script(FAIL)
        self.answers = Answers(
            log,
            "failed logins counted by this instance alone until it answers",
            "failed logins counted by the whole fleet again",
            TIMEOUT_S,
            RETRY_S,
        )

    def __call__(self, kind: str, rule: BackoffRule) -> RedisFailures:
        return RedisFailures(self, f"{self.prefix}:fail:{kind}:", rule)

    async def ask(self, call: Callable[[], Awaitable[T]]) -> T | None:
        """Redis's answer, or None while it does not answer (logged once, when that starts)."""
        return await self.answers(call)


class RedisFailures:
    """Failures of one kind of key in Redis; this instance's own :class:`Backoff` when Redis
    does not answer."""

    def __init__(self, counts: RedisCounts, base: str, rule: BackoffRule) -> None:
        self.counts = counts
        self.base = base
        self.rule = rule
        self.local = Backoff(counts.clock, rule)

    def name(self, key: str) -> str:
        """The Redis key of ``key``: the prefix and kind, then a hash of the key itself."""
        return self.base + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()

    async def wait_s(self, key: str) -> float:
        redis, name = self.counts.redis, self.name(key)
        found = await self.counts.ask(lambda: redis.hmget(name, ["n", "t"]))
        if found is None:
            return self.local.wait_s(key)
        count, last = found
        if count is None or last is None:
            return 0.0
        return self.rule.wait_s(int(count), int(last), self.counts.clock())

    async def failed(self, key: str) -> None:
        script, keys = self.counts.script, [self.name(key)]
        args = [self.counts.clock(), self.rule.forget_ms]
        if await self.counts.ask(lambda: script(keys=keys, args=args)) is None:
            self.local.failed(key)

    async def succeeded(self, key: str) -> None:
        self.local.succeeded(key)
        redis, name = self.counts.redis, self.name(key)
        await self.counts.ask(lambda: redis.delete(name))
