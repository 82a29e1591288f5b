"""What each connection, player and client address may use, counted on the injected clock.

Pure bookkeeping, no I/O: the WebSocket plumbing, the play and race handlers
and the HTTP middleware ask here before doing (or storing) anything, so a
refused request costs a dictionary look-up. Rates are token buckets; open
connections are counted slots. A bucket that has refilled is the same as no
bucket, so those are forgotten and memory follows the active keys only.

With several instances the same quotas are the fleet's: a :class:`SharedQuotas`
(``server/cluster/quotas.py``, composed by ``server/app.py``) counts the
rates and the open connections of ``new_game``, races, players created and
WebSockets in one place, one round trip per check. While it does not answer,
each instance applies the same limits to what it sees itself (the counts here),
so an outage loosens a quota by at most the number of instances, never locks
anyone out. The HTTP request rate stays per instance: it is asked on every
request, and a balancer limits requests per address better.
"""

from __future__ import annotations

import ipaddress
import itertools
import math
import secrets
from collections.abc import Hashable
from typing import Protocol

from server.clock import Clock
from server.config import Limits
from server.errors import ProtocolError
from wire import ErrorCode


class SharedQuotas(Protocol):
    """Quotas counted for a whole fleet. Every answer None: not reachable now (count locally)."""

    async def take(self, name: str, key: str, per_s: float, burst: float) -> float | None:
        """Take one from ``key``'s bucket ``name``: 0.0 if allowed, else seconds until it would be."""
        ...

    async def acquire(self, name: str, key: str, cap: int, holder: str) -> bool | None:
        """Count ``holder`` as open under ``key`` unless ``cap`` are open already."""
        ...

    def release(self, name: str, key: str, holder: str) -> None:
        """``holder`` is closed (done in the background: a closing connection does not wait)."""
        ...

    async def close(self) -> None:
        """Stop keeping this instance's holders alive; they expire on their own."""
        ...


class TokenBucket:
    """``rate`` per second sustained, ``burst`` at once; a rate of 0 or less is no limit."""

    __slots__ = ("burst", "last_ms", "rate", "tokens")

    def __init__(self, rate: float, burst: float, now_ms: int) -> None:
        self.rate, self.burst, self.tokens, self.last_ms = rate, max(1.0, burst), max(1.0, burst), now_ms

    def _refill(self, now_ms: int) -> None:
        elapsed_s = max(0, now_ms - self.last_ms) / 1000
        self.tokens = min(self.burst, self.tokens + elapsed_s * self.rate)
        self.last_ms = max(self.last_ms, now_ms)

    def take(self, now_ms: int) -> bool:
        if self.rate <= 0:
            return True
        self._refill(now_ms)
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def wait_ms(self, now_ms: int) -> int:
        """How long until a token is there (0: now)."""
        if self.rate <= 0:
            return 0
        self._refill(now_ms)
        return 0 if self.tokens >= 1 else math.ceil((1 - self.tokens) / self.rate * 1000)

    def full(self, now_ms: int) -> bool:
        self._refill(now_ms)
        return self.tokens >= self.burst


class Rate:
    """One token bucket per key (a player, an address): ``per_s`` sustained, ``burst`` at once."""

    def __init__(
        self,
        what: str,
        per_s: float,
        burst: float,
        clock: Clock,
        shared: SharedQuotas | None = None,
        name: str = "",
    ) -> None:
        self.what = what  # for the refusal: "too many {what}"
        self.per_s, self.burst, self.clock = per_s, burst, clock
        self.shared, self.name = shared, name  # the fleet's bucket, when there is one
        self._buckets: dict[Hashable, TokenBucket] = {}
        self._sweep_at = clock()

    def take(self, key: Hashable) -> float:
        """Take one for ``key``: 0.0 if allowed, else the seconds until it would be."""
        if self.per_s <= 0:
            return 0.0
        now = self.clock()
        self._sweep(now)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(self.per_s, self.burst, now)
        if bucket.take(now):
            return 0.0
        return bucket.wait_ms(now) / 1000

    async def require(self, key: str) -> None:
        """Take one for ``key`` (from the fleet's bucket when there is one and it answers) or
        refuse with ``rate_limited`` saying when to come back."""
        if self.per_s <= 0:
            return
        wait_s = None
        if self.shared is not None:
            wait_s = await self.shared.take(self.name, key, self.per_s, self.burst)
        if wait_s is None:
            wait_s = self.take(key)
        if wait_s:
            raise rate_limited(f"too many {self.what}", wait_s)

    def __len__(self) -> int:
        return len(self._buckets)

    def _sweep(self, now: int) -> None:
        """Forget full buckets, at most once per refill time (so the cost is spread thin)."""
        if now < self._sweep_at:
            return
        self._sweep_at = now + math.ceil(self.burst / self.per_s * 1000)
        for key in [k for k, bucket in self._buckets.items() if bucket.full(now)]:
            del self._buckets[key]


_holders = itertools.count(1)
INSTANCE = secrets.token_hex(6)  # names this process's holders in the fleet's counts


class Slots:
    """Things open at once per key (a player's connections), at most ``cap`` each; 0 is no cap.

    With a :class:`SharedQuotas` the fleet's count decides; each slot taken there is
    remembered (a holder name per slot) so that its release goes there too, and a slot
    taken while the fleet's count did not answer is counted and released here.
    """

    def __init__(self, cap: int, shared: SharedQuotas | None = None, name: str = "") -> None:
        self.cap = cap
        self.shared, self.name = shared, name
        self._open: dict[Hashable, int] = {}
        self._holders: dict[str, list[str]] = {}  # key -> holders taken in the fleet's count

    async def acquire(self, key: str) -> bool:
        """Take a slot of ``key``: False when ``cap`` are open (in the fleet, when it answers)."""
        if self.shared is not None and self.cap > 0:
            holder = f"{INSTANCE}:{next(_holders)}"
            granted = await self.shared.acquire(self.name, key, self.cap, holder)
            if granted is not None:
                if granted:
                    self._holders.setdefault(key, []).append(holder)
                return granted
        return self.acquire_here(key)

    def release(self, key: str) -> None:
        holders = self._holders.get(key)
        if holders and self.shared is not None:
            holder = holders.pop()
            if not holders:
                del self._holders[key]
            self.shared.release(self.name, key, holder)
            return
        self.release_here(key)

    def acquire_here(self, key: Hashable) -> bool:
        """This instance's own count (one instance, or the fleet's count away)."""
        held = self._open.get(key, 0)
        if self.cap > 0 and held >= self.cap:
            return False
        self._open[key] = held + 1
        return True

    def release_here(self, key: Hashable) -> None:
        held = self._open.get(key, 0) - 1
        if held > 0:
            self._open[key] = held
        else:
            self._open.pop(key, None)

    def held(self, key: Hashable) -> int:
        """Held here: counted by this instance, or taken in the fleet's count by it."""
        return self._open.get(key, 0) + len(self._holders.get(str(key), ()))


class Quotas:
    """The server's quotas, from its :class:`Limits`, on its clock: one set per app."""

    def __init__(self, limits: Limits, clock: Clock, shared: SharedQuotas | None = None) -> None:
        self.limits = limits
        self.shared = shared
        games, races, players = limits.games_per_minute, limits.races_per_minute, limits.players_per_hour
        self.games = Rate("new games in a minute", games / 60, games, clock, shared, "games")
        # A hint costs a solve, as a "winnable deals only" new game does: the same per-player limit.
        self.hints = Rate("hints in a minute", games / 60, games, clock, shared, "hints")
        self.races = Rate("races opened in a minute", races / 60, races, clock, shared, "races")
        self.players = Rate(
            "players created from this address in an hour", players / 3600, players, clock, shared, "players"
        )
        self.http = Rate("requests from this address", limits.http_rate_per_s, limits.http_burst, clock)
        self.player_connections = Slots(limits.connections_per_player, shared, "player")
        self.address_connections = Slots(limits.connections_per_address, shared, "address")

    async def close(self) -> None:
        if self.shared is not None:
            await self.shared.close()


def rate_limited(what: str, wait_s: float) -> ProtocolError:
    """``rate_limited``, with ``retry_after_s`` (whole seconds, at least 1) for the client."""
    return ProtocolError(ErrorCode.RATE_LIMITED, what, retry_after_s=max(1, math.ceil(wait_s)))


def address_key(host: str | None) -> str | None:
    """The key a client address counts under: IPv4 as is, IPv6 by its /64 (one site's block).

    None when the address is unknown (a Unix socket): such clients are not counted.
    """
    if not host:
        return None
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return host
