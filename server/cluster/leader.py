"""Leadership of once-per-cluster jobs: a Redis key set with NX and a time to live, renewed by
its holder. It implements core's :class:`server.core.cluster.Leadership`."""

from __future__ import annotations

import time

LEADER_TTL_MS = 5_000
LEADER_RENEW_S = 1.0
RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""


class RedisLeader:
    """Leadership through a Redis key with a time to live, renewed by its holder."""

    def __init__(self) -> None:
        self.until = 0.0  # monotonic time the current term is safe until

    @property
    def leading(self) -> bool:
        return time.monotonic() < self.until
