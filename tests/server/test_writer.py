"""The group writer on each database: batches commit whole, a bad write fails alone.

The common batch takes a direct path (SQLite: its own connection and thread;
PostgreSQL: one statement on a connection of its own); batches with extras go
through SQLAlchemy. Both must leave the same rows.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import insert, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.db import make_engine, migrate
from server.storage.models import ActionRow, GameRow, Player
from server.storage.pg_batches import PgBatches
from server.storage.sqlite_batches import SqliteBatches
from server.storage.writer import GroupWriter, Write
from tests.support import game_values


def _row_update(game_id: str, seq: int) -> dict[str, Any]:
    return {
        "id": game_id,
        "status": "playing",
        "result": None,
        "score": seq * 10,
        "moves": seq,
        "seq": seq,
        "progress": seq,
        "undos": 0,
        "elapsed_ms": seq * 100,
        "fingerprint": f"{seq:016x}",
        "last_action_ms": seq,
        "finished_ms": None,
    }


def _action(game_id: str, seq: int) -> dict[str, Any]:
    return {"game_id": game_id, "seq": seq, "action": "draw", "at_ms": seq}


@pytest.fixture(scope="module")
def migrated(database_url: str) -> str:
    asyncio.run(migrate(database_url))
    return database_url


class AnswerLost(GroupWriter):
    """Commits every batch, then loses the answer on the way back (while ``losing``)."""

    losing = True

    async def _write_batch(self, batch: list[Write]) -> None:
        await super()._write_batch(batch)
        if self.losing:
            raise ConnectionResetError("the answer of the commit was lost")


async def _with_writer(url: str, body: Any, kind: type[GroupWriter] = GroupWriter) -> Any:
    engine = make_engine(url)
    writer = kind(engine)
    writer.start()
    try:
        async with engine.begin() as conn:
            await conn.execute(text("DELETE FROM actions"))
            await conn.execute(text("DELETE FROM games"))
            await conn.execute(text("DELETE FROM players"))
            await conn.execute(insert(Player), {"id": "p_1", "name": "w", "token_hash": "h", "created_ms": 0})
        return await body(engine, writer)
    finally:
        await writer.close()
        await engine.dispose()


def test_direct_paths_for_sqlite_files_and_postgresql(migrated: str) -> None:
    engine = make_engine(migrated)
    is_sqlite = migrated.startswith("sqlite")
    assert (SqliteBatches.for_engine(engine) is not None) == is_sqlite
    assert (PgBatches.for_engine(engine) is not None) == (not is_sqlite)
    asyncio.run(engine.dispose())
    memory = make_engine("sqlite+aiosqlite:///:memory:")
    assert SqliteBatches.for_engine(memory) is None
    asyncio.run(memory.dispose())


def test_concurrent_writes_share_commits_and_keep_each_games_last_row(migrated: str) -> None:
    async def body(engine: Any, writer: GroupWriter) -> None:
        games = [f"g_{i}" for i in range(20)]
        await asyncio.gather(
            *(writer.submit(Write(None, None, new_game=game_values(g, "p_1"))) for g in games)
        )
        writes = [Write(_action(g, s), _row_update(g, s + 1)) for s in range(5) for g in games]
        await asyncio.gather(*(writer.submit(w) for w in writes))
        assert writer.writes == 120
        assert writer.commits < 120  # grouped: 20 new games + 100 actions in fewer transactions
        async with engine.connect() as conn:
            rows = (await conn.execute(select(GameRow.id, GameRow.seq, GameRow.fingerprint))).all()
            count = (await conn.execute(select(ActionRow.game_id))).all()
        assert sorted(rows) == [(g, 5, f"{5:016x}") for g in sorted(games)]
        assert len(count) == 100

    asyncio.run(_with_writer(migrated, body))


def test_a_bad_write_fails_alone(migrated: str) -> None:
    async def body(engine: Any, writer: GroupWriter) -> None:
        await writer.submit(Write(None, None, new_game=game_values("g_ok", "p_1")))
        good = [Write(_action("g_ok", s), _row_update("g_ok", s + 1)) for s in range(3)]
        conflicting = Write({**_action("g_ok", 0), "action": "undo"}, None)  # good[0]'s key, not its action
        orphan = Write(_action("g_missing", 0), None)  # no such game: foreign key
        again = Write(_action("g_ok", 1), None)  # exactly good[1] once more: already stored, idempotent
        results = await asyncio.gather(
            *(writer.submit(w) for w in [*good, conflicting, orphan]), return_exceptions=True
        )
        assert results[:3] == [None, None, None]
        assert isinstance(results[3], Exception) and isinstance(results[4], Exception)
        late = await asyncio.gather(writer.submit(again), writer.submit(orphan), return_exceptions=True)
        assert late[0] is None and isinstance(
            late[1], Exception
        )  # one stored write does not vouch for another
        async with engine.connect() as conn:
            seqs = (await conn.execute(select(ActionRow.seq).order_by(ActionRow.seq))).scalars().all()
            row = (await conn.execute(select(GameRow.seq).where(GameRow.id == "g_ok"))).scalar_one()
        assert list(seqs) == [0, 1, 2]
        assert row == 3

    asyncio.run(_with_writer(migrated, body))


def test_extras_commit_in_the_same_transaction(migrated: str) -> None:
    async def body(engine: Any, writer: GroupWriter) -> None:
        await writer.submit(Write(None, None, new_game=game_values("g_x", "p_1")))

        async def rename(conn: AsyncConnection) -> None:
            await conn.execute(text("UPDATE players SET name = 'extra' WHERE id = 'p_1'"))

        async def fail(conn: AsyncConnection) -> None:
            raise RuntimeError("extra failed")

        await writer.submit(Write(_action("g_x", 0), _row_update("g_x", 1), [rename]))
        with pytest.raises(RuntimeError):
            await writer.submit(Write(_action("g_x", 1), _row_update("g_x", 2), [fail]))
        async with engine.connect() as conn:
            name = (await conn.execute(select(Player.name))).scalar_one()
            seq = (await conn.execute(select(GameRow.seq).where(GameRow.id == "g_x"))).scalar_one()
            actions = (await conn.execute(select(ActionRow.seq))).scalars().all()
        assert name == "extra"
        assert (seq, list(actions)) == (1, [0])  # the failed extra took its action down with it

    asyncio.run(_with_writer(migrated, body))


def test_a_lost_answer_is_read_back_for_every_kind_of_write(migrated: str) -> None:
    """New games, actions and a game row changed alone (a resignation) are all found stored."""

    async def body(engine: Any, writer: GroupWriter) -> None:
        assert isinstance(writer, AnswerLost)
        writer.losing = False
        await writer.submit(Write(None, None, new_game=game_values("g_a", "p_1")))
        await writer.submit(Write(None, None, new_game=game_values("g_b", "p_1")))
        writer.losing = True
        ended = {**_row_update("g_b", 0), "status": "lost", "result": "resigned", "finished_ms": 9}
        writes = [
            Write(None, None, new_game=game_values("g_c", "p_1")),
            Write(_action("g_a", 0), _row_update("g_a", 1)),
            Write(None, ended),
        ]
        assert await asyncio.gather(*(writer.submit(w) for w in writes)) == [None, None, None]
        async with engine.connect() as conn:
            rows = (await conn.execute(select(GameRow.id, GameRow.seq, GameRow.result))).all()
        assert sorted(rows) == [("g_a", 1, None), ("g_b", 0, "resigned"), ("g_c", 0, None)]

    asyncio.run(_with_writer(migrated, body, AnswerLost))


def test_a_batch_larger_than_one_statement_writes_every_row(migrated: str) -> None:
    """SQLite writes a batch in multi-row statements, a few hundred parameters each: a
    batch of more rows than one holds is split, and every row keeps its own values."""

    async def body(engine: Any, writer: GroupWriter) -> None:
        games = [f"g_{i:03}" for i in range(300)]
        await asyncio.gather(
            *(writer.submit(Write(None, None, new_game=game_values(g, "p_1"))) for g in games)
        )
        writes = [Write(_action(g, i), _row_update(g, i + 1)) for i, g in enumerate(games)]
        await asyncio.gather(*(writer.submit(w) for w in writes))
        async with engine.connect() as conn:
            rows = (await conn.execute(select(GameRow.id, GameRow.seq, GameRow.score))).all()
            actions = (await conn.execute(select(ActionRow.game_id, ActionRow.seq))).all()
        assert sorted(rows) == [(g, i + 1, (i + 1) * 10) for i, g in enumerate(games)]
        assert sorted(actions) == [(g, i) for i, g in enumerate(games)]
        assert writer.commits < 600 - 100  # most went in large batches

    asyncio.run(_with_writer(migrated, body))
