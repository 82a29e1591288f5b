"""What the fleet sees of the database, told through Redis, so ``/ready`` can tell an outage
every instance meets (stay in the balancer) from one this instance meets alone (step out).

Each readiness check writes, in one Lua script, whether this instance reached the database:
``<prefix>:db-seen`` is a hash of instance name to the Redis time (ms) it last did; the
script sets or clears this instance's field and answers how many other instances reached
it within :data:`FRESH_MS`. Redis's own clock is used, so the instances' clocks need not
agree. While Redis does not answer the answer is unknown (None) and the instance stays in.
"""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis
from redis.exceptions import RedisError

FRESH_MS = 5_000  # a report older than this is not counted (the balancer checks every second)
TIMEOUT_S = 1.0

SEEN = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], ARGV[1], now)
else
  redis.call('HDEL', KEYS[1], ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 10)
local others = 0
local found = redis.call('HGETALL', KEYS[1])
for i = 1, #found, 2 do
  local at = tonumber(found[i + 1])
  if now - at >= tonumber(ARGV[3]) then
    redis.call('HDEL', KEYS[1], found[i])
  elseif found[i] ~= ARGV[1] then
    others = others + 1
  end
end
return others
"""


class RedisFleetDatabase:
    """A :class:`server.edge.health.FleetDatabase` in Redis."""

    def __init__(self, redis: Redis, prefix: str, name: str) -> None:
        self.key = f"{prefix}:db-seen"
        self.name = name
        self.script = redis.register_script(SEEN)

    async def seen(self, reached: bool) -> bool | None:
        args = [self.name, "1" if reached else "0", FRESH_MS]
        try:
            others = await asyncio.wait_for(self.script(keys=[self.key], args=args), TIMEOUT_S)
        except (RedisError, OSError, TimeoutError):
            return None
        return int(others) > 0
