"""The quotas without a server: token buckets per key, counted slots, addresses, settings."""

from __future__ import annotations

import pytest

from server.config import Limits, Settings
from server.core.quotas import Quotas, Rate, Slots, TokenBucket, address_key
from server.errors import ProtocolError
from tests.support import ManualClock
from wire import ErrorCode


def test_a_bucket_says_how_long_until_its_next_token() -> None:
    bucket = TokenBucket(rate=2, burst=3, now_ms=0)
    assert [bucket.take(0) for _ in range(4)] == [True, True, True, False]
    assert bucket.wait_ms(0) == 500 and bucket.wait_ms(400) == 100
    assert bucket.take(500) and not bucket.take(500)
    assert TokenBucket(rate=0, burst=1, now_ms=0).take(0)  # a rate of 0 is no limit


async def test_a_rate_counts_each_key_apart_and_refuses_with_when_to_come_back() -> None:
    clock = ManualClock(0)
    games = Rate("new games in a minute", per_s=30 / 60, burst=30, clock=clock)
    for _ in range(30):
        await games.require("p_1")
    with pytest.raises(ProtocolError) as refused:
        await games.require("p_1")
    assert refused.value.code is ErrorCode.RATE_LIMITED
    assert refused.value.extra == {"retry_after_s": 2}  # one token every 2 s
    assert refused.value.message == "too many new games in a minute"
    await games.require("p_2")  # another player has a budget of their own
    clock.advance(2000)
    await games.require("p_1")


def test_refilled_buckets_are_forgotten() -> None:
    clock = ManualClock(0)
    rate = Rate("requests", per_s=10, burst=10, clock=clock)
    for address in range(1000):
        rate.take(f"10.0.{address // 256}.{address % 256}")
    assert len(rate) == 1000
    clock.advance(1000)  # every bucket is full again after burst / rate seconds
    rate.take("10.9.9.9")
    assert len(rate) == 1


async def test_slots_cap_what_is_open_at_once() -> None:
    slots = Slots(cap=2)
    assert await slots.acquire("a") and await slots.acquire("a") and not await slots.acquire("a")
    assert await slots.acquire("b")
    slots.release("a")
    assert slots.held("a") == 1 and await slots.acquire("a")
    slots.release("b")
    assert slots.held("b") == 0
    unlimited = Slots(cap=0)
    assert all([await unlimited.acquire("a") for _ in range(100)])  # 0 is no cap


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),  # one site's block counts as one address
        ("2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"),
        ("::ffff:198.51.100.1", "198.51.100.1"),
        ("testclient", "testclient"),
        (None, None),  # unknown (a Unix socket): not counted
    ],
)
def test_addresses_count_ipv4_alone_and_ipv6_by_its_64(host: str | None, key: str | None) -> None:
    assert address_key(host) == key


async def test_limits_come_from_the_environment_and_feed_the_quotas() -> None:
    settings = Settings.from_env(
        {"SOLITAIRE_GAMES_PER_MINUTE": "2", "SOLITAIRE_HTTP_RATE_PER_S": "0.5", "SOLITAIRE_BURST": "7"}
    )
    limits = settings.limits
    assert (limits.games_per_minute, limits.http_rate_per_s, limits.burst) == (2, 0.5, 7)
    assert limits.players_per_hour == Limits().players_per_hour
    quotas = Quotas(limits, ManualClock(0))
    await quotas.games.require("p")
    await quotas.games.require("p")
    with pytest.raises(ProtocolError):
        await quotas.games.require("p")
    assert {"games_per_minute", "connections_per_player"} <= set(limits.as_json())
    assert "players_per_hour" not in limits.as_json()  # HTTP limits are not the connection's
