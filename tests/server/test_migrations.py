"""The schema comes only from migrations: after ``upgrade head`` it matches the models."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text

from server.rules.names import name_keys
from server.storage.db import alembic_config, make_engine, migrate
from server.storage.models import Base
from tests.conftest import fresh_pg_database


def _diff(connection: Any) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, Base.metadata))


async def test_migrations_match_models(database_url: str) -> None:
    await migrate(database_url)
    await migrate(database_url)  # idempotent: a second run at start is harmless
    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(_diff) == []
            tables = await conn.run_sync(lambda c: set(inspect(c).get_table_names()))
    finally:
        await engine.dispose()
    assert set(Base.metadata.tables) <= tables
    assert "alembic_version" in tables


@pytest.fixture(params=["sqlite", "postgres"])
def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database of each backend with no tables yet, for one test."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'names.db'}"
        return
    with fresh_pg_database() as url:
        yield url


OLD_NAMES = [  # (id, name before 0005, name after): the oldest holder of a name keeps it
    ("p_000000000001", "Ada", "Ada"),
    ("p_000000000002", "ADA", "Guest-000000000002"),  # the same name in capitals
    ("p_000000000003", "\u0410da", "Guest-000000000003"),  # Cyrillic A: Ada's lookalike
    ("p_000000000004", "  Grace   Hopper ", "Grace Hopper"),
    ("p_000000000005", "evil\u202eevil", "Guest-000000000005"),  # a bidi override
    ("p_00000000abcd", "Guest-abcd", "Guest-abcd"),  # an earlier guest keeps its name
    ("p_10000000abcd", "Guest-abcd", "Guest-10000000abcd"),  # two earlier guests' names clashed
]


async def test_names_are_normalized_and_made_unique_by_the_migration(empty_database: str) -> None:
    from alembic import command

    config = alembic_config(empty_database)
    await asyncio.to_thread(command.upgrade, config, "0004")
    engine = make_engine(empty_database)
    try:
        async with engine.begin() as conn:
            for n, (player_id, name, _) in enumerate(OLD_NAMES):
                await conn.execute(
                    text("INSERT INTO players (id, name, token_hash, created_ms) VALUES (:i, :n, :t, :c)"),
                    {"i": player_id, "n": name, "t": f"hash{n}", "c": n},
                )
        await migrate(empty_database)
        async with engine.connect() as conn:
            rows = (await conn.execute(text("SELECT id, name, name_fold, name_skeleton FROM players"))).all()
        assert {r.id: r.name for r in rows} == {player_id: after for player_id, _, after in OLD_NAMES}
        assert all((r.name_fold, r.name_skeleton) == name_keys(r.name) for r in rows)
        await asyncio.to_thread(command.downgrade, config, "0004")  # and back, data kept
        async with engine.connect() as conn:
            assert len((await conn.execute(text("SELECT id, name FROM players"))).all()) == len(OLD_NAMES)
    finally:
        await engine.dispose()


async def test_games_finished_before_accounts_are_folded_into_the_statistics(empty_database: str) -> None:
    from alembic import command

    config = alembic_config(empty_database)
    await asyncio.to_thread(command.upgrade, config, "0005")
    engine = make_engine(empty_database)
    games = [  # (id, code, result, moves, elapsed, finished, daily day)
        ("g_1", "SH1-C4-AAAAAJ2", "won", 90, 300_000, 1, None),
        ("g_2", "SH1-C4-AAAAAJ3", "won", 80, 200_000, 2, None),
        ("g_3", "SH1-C4-AAAAAJ4", "resigned", 5, 1_000, 3, None),
        ("g_4", "HH1-N-AAAAAAM", "won", 40, 90_000, 4, "2026-11-30"),
        ("g_5", "SH1-C2-AAAAAJ2", None, 3, 0, None, None),  # still open: not counted
    ]
    try:
        async with engine.begin() as conn:
            await conn.execute(
                text("INSERT INTO players (id, name, token_hash, created_ms) VALUES ('p_1', 'Old', 'h', 0)")
            )
            for game_id, code, result, moves, elapsed, finished, day in games:
                await conn.execute(
                    text(
                        "INSERT INTO games (id, player_id, code, status, result, score, moves, seq, progress,"
                        " undos, elapsed_ms, fingerprint, created_ms, finished_ms, daily_day, ranked)"
                        " VALUES (:i, 'p_1', :c, :s, :r, 0, :m, 0, 0, 0, :e, '0', 0, :f, :d, :k)"
                    ),
                    {"i": game_id, "c": code, "s": result or "playing", "r": result, "m": moves, "e": elapsed,
                     "f": finished, "d": day, "k": day is not None},
                )  # fmt: skip
        await migrate(empty_database)
        async with engine.connect() as conn:
            stats = {
                row.family: row
                for row in (
                    await conn.execute(text("SELECT * FROM player_stats WHERE player_id = 'p_1'"))
                ).all()
            }
            daily = (await conn.execute(text("SELECT * FROM player_daily_stats"))).one()
        assert set(stats) == {"SH1-C4", "HH1-N"}
        sh = stats["SH1-C4"]
        assert (sh.played, sh.won, sh.current_streak, sh.best_streak, sh.best_moves) == (3, 2, 0, 2, 80)
        assert (sh.won_moves, sh.best_time_ms, sh.won_time_ms) == (170, 200_000, 500_000)
        assert (daily.days_played, daily.last_day, daily.current_streak) == (1, "2026-11-30", 1)
        await asyncio.to_thread(command.downgrade, config, "0005")  # and back
    finally:
        await engine.dispose()
