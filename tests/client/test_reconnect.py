"""Reconnecting: the backoff's delays on an injected random source, and the waits it makes on an
injected sleep, against a port where nothing listens (no time passes in these tests)."""

from __future__ import annotations

import itertools

import pytest

from client import SolitaireClient
from client.core import MAX_DELAY_S, backoff_delays
from client.errors import ConnectionLostError
from tests.support import free_port


def test_delays_double_up_to_the_cap_with_jitter_around_each() -> None:
    middle = list(itertools.islice(backoff_delays(lambda: 0.5), 8))
    assert middle == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0])
    low = list(itertools.islice(backoff_delays(lambda: 0.0), 3))
    high = list(itertools.islice(backoff_delays(lambda: 0.999), 3))
    assert low == pytest.approx([0.05, 0.1, 0.2]) and high == pytest.approx([0.1499, 0.2998, 0.5996])
    assert max(itertools.islice(backoff_delays(lambda: 0.999), 50)) < 1.5 * MAX_DELAY_S


async def test_a_client_that_cannot_connect_backs_off_on_its_sleep_then_gives_up() -> None:
    waited: list[float] = []

    async def sleep(seconds: float) -> None:
        waited.append(seconds)

    client = SolitaireClient(
        f"http://127.0.0.1:{free_port()}", retries=4, timeout=2, random_source=lambda: 0.0, sleep=sleep
    )
    with pytest.raises(ConnectionLostError):
        await client.connect()
    assert waited == pytest.approx([0.05, 0.1, 0.2, 0.4])
    await client.close()
