"""Leaderboard scale benchmark: one code with a million entries, top 50 and rank with neighbours.

    .venv/bin/python bench/leaderboard.py --db postgresql+asyncpg://postgres@127.0.0.1:5432/test
    .venv/bin/python bench/leaderboard.py --db sqlite+aiosqlite:///data/bench.db

For PostgreSQL a fresh database is created beside the one named in the URL
(and dropped afterwards unless ``--keep``); for SQLite the file must not exist
yet (a temporary one is used when the URL names none). The schema comes from
the project's migrations and the queries are the server's own
(``server.storage.leaderboards.top`` and ``around``), so the figures are what the HTTP
routes cost in the database. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from serverproc import pg_admin
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection

from server.rules.ranking import sort_key
from server.storage.db import is_sqlite, make_engine, migrate
from server.storage.leaderboards import around, rebuild_counts, top

CODE = "HH1-N-BENCHAA"
CHUNK = 50_000
PLAYER_COLUMNS = ["id", "name", "token_hash", "created_ms"]
ENTRY_COLUMNS = [
    "code", "player_id", "game_id", "won", "progress", "moves", "elapsed_ms",
    "score", "undos", "result", "finished_ms", "sort_key",
]  # fmt: skip


def player_rows(count: int) -> Iterator[tuple[Any, ...]]:
    for i in range(count):
        yield (f"p_{i:010d}", f"Player {i}", f"{i:064x}", 1_700_000_000_000)


def entry_rows(count: int, seed: int = 1) -> Iterator[tuple[Any, ...]]:
    """Plausible results: a tenth won, the rest spread over progress, moves and time."""
    rng = random.Random(seed)
    for i in range(count):
        won = rng.random() < 0.1
        progress = 25 if won else rng.randint(0, 24)
        moves, elapsed = rng.randint(20, 400), rng.randint(30_000, 1_800_000)
        result = "won" if won else rng.choice(("resigned", "expired"))
        key = sort_key(won, progress, moves, elapsed)
        finished = 1_700_000_000_000 + i
        yield (CODE, f"p_{i:010d}", f"g_{i:010d}", won, progress, moves, elapsed,
               progress * 10, rng.randint(0, 5), result, finished, key)  # fmt: skip


def chunks(rows: Iterator[tuple[Any, ...]], size: int = CHUNK) -> Iterator[list[tuple[Any, ...]]]:
    batch: list[tuple[Any, ...]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


# -- filling ---------------------------------------------------------------------------------


async def fill_postgres(url: str, count: int) -> None:
    """COPY in chunks (the fastest bulk path), then VACUUM ANALYZE.

    VACUUM matters: it sets the visibility map, without which PostgreSQL's
    index-only scans (what a rank count is) must visit the heap for every row.
    """
    import asyncpg

    u = make_url(url)
    conn = await asyncpg.connect(host=u.host, port=u.port or 5432, user=u.username, database=u.database)
    try:
        for batch in chunks(player_rows(count)):
            await conn.copy_records_to_table("players", records=batch, columns=PLAYER_COLUMNS)
        for batch in chunks(entry_rows(count)):
            await conn.copy_records_to_table("leaderboard_entries", records=batch, columns=ENTRY_COLUMNS)
        await conn.execute("VACUUM ANALYZE players")
        await conn.execute("VACUUM ANALYZE leaderboard_entries")
    finally:
        await conn.close()


def fill_sqlite(path: str, count: int) -> None:
    """executemany in chunks inside one transaction, then ANALYZE."""
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA synchronous=OFF")
        marks = ",".join("?" * len(PLAYER_COLUMNS))
        for batch in chunks(player_rows(count)):
            db.executemany(f"INSERT INTO players ({','.join(PLAYER_COLUMNS)}) VALUES ({marks})", batch)
        marks = ",".join("?" * len(ENTRY_COLUMNS))
        sql = f"INSERT INTO leaderboard_entries ({','.join(ENTRY_COLUMNS)}) VALUES ({marks})"
        for batch in chunks(entry_rows(count)):
            db.executemany(sql, batch)
        db.commit()
        db.execute("ANALYZE")
        db.commit()
    finally:
        db.close()


# -- measuring -------------------------------------------------------------------------------


async def timed(fn: Callable[[], Awaitable[Any]], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(url: str, count: int, runs: int) -> dict[str, float]:
    engine = make_engine(url)
    rng = random.Random(7)
    try:
        async with engine.connect() as conn:

            async def top50(db: AsyncConnection = conn) -> None:
                window = await top(db, CODE, 50)
                assert len(window.entries) == 50 and window.entries[0]["rank"] == 1

            async def rank(db: AsyncConnection = conn) -> None:
                player = f"p_{rng.randrange(count):010d}"
                window = await around(db, CODE, player, 5)
                assert window is not None and window.me is not None

            async def ping(db: AsyncConnection = conn) -> None:
                await db.execute(text("SELECT 1"))

            await timed(top50, 20)  # warm caches and statement caches
            await timed(rank, 20)
            tops, ranks = await timed(top50, runs), await timed(rank, runs)
            pings = await timed(ping, runs)  # the floor: one round trip that does nothing
            floor = f"p50 {statistics.median(pings):.3f} ms, p99 {percentile(pings, 0.99):.3f} ms"
            print(f"round trip alone (SELECT 1): {floor}", flush=True)
    finally:
        await engine.dispose()
    return {
        "top50_p50_ms": round(statistics.median(tops), 3),
        "top50_p99_ms": round(percentile(tops, 0.99), 3),
        "rank_p50_ms": round(statistics.median(ranks), 3),
        "rank_p99_ms": round(percentile(ranks, 0.99), 3),
    }


# -- databases ---------------------------------------------------------------------------------


async def run(url: str, count: int, runs: int, keep: bool) -> dict[str, Any]:
    if is_sqlite(url):
        path = make_url(url).database or str(Path(tempfile.mkdtemp()) / "bench.db")
        if Path(path).exists():
            raise SystemExit(f"{path} exists; the benchmark fills a new file")
        target = f"sqlite+aiosqlite:///{path}"
        await migrate(target)
        started = time.perf_counter()
        await asyncio.to_thread(fill_sqlite, path, count)
    else:
        name = f"solitaire_bench_{secrets.token_hex(4)}"
        await pg_admin(url, f'CREATE DATABASE "{name}"')
        target = make_url(url).set(database=name).render_as_string(hide_password=False)
        await migrate(target)
        started = time.perf_counter()
        await fill_postgres(target, count)
    engine = make_engine(target)
    try:
        async with engine.begin() as conn:  # what migration 0003 does for existing boards
            await rebuild_counts(conn)
    finally:
        await engine.dispose()
    if not is_sqlite(url):
        await pg_admin(target, "VACUUM ANALYZE leaderboard_counts")
    print(f"filled {count} entries in {time.perf_counter() - started:.1f} s ({target})", flush=True)
    try:
        figures = await measure(target, count, runs)
    finally:
        if not is_sqlite(url) and not keep:
            await pg_admin(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    backend = "sqlite" if is_sqlite(url) else "postgresql"
    return {"db": backend, "entries": count, **figures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db", required=True, help="database URL (sqlite+aiosqlite:/// or postgresql+asyncpg://)"
    )
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200, help="queries of each kind to time")
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL database afterwards")
    args = parser.parse_args()
    result = asyncio.run(run(args.db, args.entries, args.queries, args.keep))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
