"""Failed attempts slowed down (logins, password checks): the rule, and one instance's counts.

The rule is :class:`BackoffRule`, pure and written once: ``free`` failures cost
nothing, then the ``n``-th more waits ``base_s * 2**(n-1)`` seconds (at most
``cap_s``) after the last failure before the next try, and a key quiet for
``forget_s`` is forgotten. :class:`Backoff` keeps the counts in this process's
memory, on the injected clock: the embedded default. With several instances
:mod:`server.cluster.backoff` keeps them in Redis by the same rule, so the
whole fleet slows a key alike.

A feature sees either through :class:`Failures`, made by the
:data:`FailureCounts` the app composed; it never knows which it has.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from server.clock import Clock

MAX_DOUBLINGS = 62  # past this the cap has long been reached: no larger powers are computed


@dataclass(frozen=True, slots=True)
class BackoffRule:
    """How long a key waits after its failures."""

    free: int
    base_s: float = 1.0
    cap_s: float = 900.0
    forget_s: float = 3600.0

    @property
    def forget_ms(self) -> int:
        return int(self.forget_s * 1000)

    def delay_s(self, failures: int) -> float:
        """How long after the last of ``failures`` failures the next try must wait."""
        over = failures - self.free
        if over <= 0:
            return 0.0
        return min(self.base_s * float(2 ** min(over - 1, MAX_DOUBLINGS)), self.cap_s)

    def forgotten(self, last_ms: int, now_ms: int) -> bool:
        """Whether a key whose last failure was at ``last_ms`` has been quiet long enough."""
        return now_ms - last_ms >= self.forget_ms

    def wait_s(self, failures: int, last_ms: int, now_ms: int) -> float:
        """Seconds before the next try (0: now), ``failures`` failures the last at ``last_ms``."""
        if self.forgotten(last_ms, now_ms):
            return 0.0
        return max(0.0, (last_ms + self.delay_s(failures) * 1000 - now_ms) / 1000)


class Failures(Protocol):
    """Failed attempts per key, slowed by a rule: this instance's counts, or the fleet's."""

    async def wait_s(self, key: str) -> float:
        """Seconds before ``key`` may try again (0: now)."""

    async def failed(self, key: str) -> None:
        """One more failure of ``key``, now."""

    async def succeeded(self, key: str) -> None:
        """``key`` got it right: its failures are forgotten."""


FailureCounts = Callable[[str, BackoffRule], Failures]
"""Makes the counts of one kind of key (its name: ``"account"``, ``"address"``) under a rule."""


@dataclass(slots=True)
class _Count:
    count: int
    last_ms: int


class Backoff:
    """Failed attempts per key in this process's memory, on the injected clock (see
    :class:`BackoffRule`).

    A key is forgotten once it has been quiet for ``forget_s``; memory is capped at
    ``max_keys`` (the oldest go first), so a flood of made-up names cannot fill it.
    """

    def __init__(self, clock: Clock, rule: BackoffRule, max_keys: int = 100_000) -> None:
        self.clock = clock
        self.rule = rule
        self.max_keys = max_keys
        self._keys: dict[str, _Count] = {}

    def wait_s(self, key: str) -> float:
        """Seconds before ``key`` may try again (0: now)."""
        found = self._keys.get(key)
        if found is None:
            return 0.0
        now = self.clock()
        if self.rule.forgotten(found.last_ms, now):
            del self._keys[key]
            return 0.0
        return self.rule.wait_s(found.count, found.last_ms, now)

    def failed(self, key: str) -> None:
        found = self._keys.pop(key, None)  # re-inserted: the dict stays in order of last failure
        self._keys[key] = _Count((found.count if found else 0) + 1, self.clock())
        while len(self._keys) > self.max_keys:
            del self._keys[next(iter(self._keys))]

    def succeeded(self, key: str) -> None:
        self._keys.pop(key, None)

    def __len__(self) -> int:
        return len(self._keys)


class LocalFailures:
    """:class:`Failures` counted by this instance alone (a :class:`Backoff`)."""

    def __init__(self, backoff: Backoff) -> None:
        self.backoff = backoff

    async def wait_s(self, key: str) -> float:
        return self.backoff.wait_s(key)

    async def failed(self, key: str) -> None:
        self.backoff.failed(key)

    async def succeeded(self, key: str) -> None:
        self.backoff.succeeded(key)


def in_memory(clock: Clock) -> FailureCounts:
    """The counts of one instance on its own: each kind of key in a :class:`Backoff` of its own."""

    def counts(name: str, rule: BackoffRule) -> Failures:
        return LocalFailures(Backoff(clock, rule))

    return counts
