"""Keyed background work: arrival order, the newest item of a waiting key, once per running key,
and a worker that outlives a failed item."""

from __future__ import annotations

import asyncio

import pytest

from server.core.worklist import Worklist

DEADLINE_S = 5.0


async def test_keys_in_arrival_order_newest_item_and_once_while_running(
    caplog: pytest.LogCaptureFixture,
) -> None:
    done: list[tuple[str, int]] = []
    release = asyncio.Event()

    async def work(key: str, item: int) -> None:
        if key == "a":
            await release.wait()  # "a" runs while the others are queued
        if key == "bad":
            raise ValueError("a bug in one item")
        done.append((key, item))

    queue: Worklist[int] = Worklist("test work", work)
    queue.start()
    try:
        queue.put("a", 1)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert queue.running == "a"
        assert not queue.put_new("a", 2)  # running: not queued again
        queue.put("b", 1)
        queue.put("bad", 1)
        queue.put("c", 1)
        queue.put("b", 2)  # b waits: its item is replaced, its place kept
        assert queue.put_new("d", 1) and not queue.put_new("d", 2)
        release.set()
        await asyncio.wait_for(queue.idle.wait(), DEADLINE_S)
    finally:
        await queue.stop()
    assert done == [("a", 1), ("b", 2), ("c", 1), ("d", 1)]
    assert any("test work of bad failed" in r.getMessage() and r.exc_info for r in caplog.records)
