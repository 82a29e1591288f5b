"""The fence itself, on a real PostgreSQL database: an instance that lost a game never commits
for it again, and its refused write does not hold back the other writes of its batch."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import insert, select

from server.storage import leases
from server.storage.db import Database, make_engine
from server.storage.models import ActionRow, GameRow, Player
from server.storage.writer import Write
from tests.support import game_values

pytestmark = pytest.mark.timeout(60)


def action_write(game_id: str, seq: int, fence: int) -> Write:
    row = {**game_values(game_id, "p_fence", "SH1-C4-AAAAAJ2"), "seq": seq + 1, "moves": seq + 1}
    for key in ("player_id", "code", "created_ms", "daily_day", "ranked", "race_id"):
        row.pop(key)
    return Write({"game_id": game_id, "seq": seq, "action": "undo", "at_ms": 2}, row, fence=fence)


async def test_a_write_with_a_lost_token_is_never_stored_and_the_rest_of_its_batch_is(pg_url: str) -> None:
    engine = make_engine(pg_url)
    db = Database(engine)
    writer = leases.FencedWriter(engine)
    writer.start()
    try:
        async with engine.begin() as conn:
            await conn.execute(
                insert(Player).values(id="p_fence", name="Fence", token_hash="h" * 64, created_ms=1)
            )
            await conn.execute(
                insert(GameRow),
                [
                    game_values("g_lost", "p_fence", "SH1-C4-AAAAAJ2"),
                    game_values("g_kept", "p_fence", "SH1-C4-AAAAAJ2"),
                ],
            )
        paused = await leases.take(db, "g_lost", "instance-a")  # A owns it, then pauses
        kept = await leases.take(db, "g_kept", "instance-a")
        assert await leases.take(db, "g_lost", "instance-b") == paused + 1  # B takes it over
        results = await asyncio.gather(
            writer.submit(action_write("g_lost", 0, paused)),
            writer.submit(action_write("g_kept", 0, kept)),
            return_exceptions=True,
        )
        assert isinstance(results[0], leases.StorageFenced) and results[1] is None
        again = await asyncio.gather(writer.submit(action_write("g_lost", 0, paused)), return_exceptions=True)
        assert isinstance(again[0], leases.StorageFenced)  # never again, however often it tries
        async with engine.connect() as conn:
            stored = (
                (await conn.execute(select(ActionRow.game_id).order_by(ActionRow.game_id))).scalars().all()
            )
            seqs = {row.id: row.seq for row in await conn.execute(select(GameRow.id, GameRow.seq))}
        assert stored == ["g_kept"] and seqs == {"g_kept": 1, "g_lost": 0}
    finally:
        await writer.close()
        await engine.dispose()
