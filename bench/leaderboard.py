"""Leaderboard scale benchmark: top 50, a rank, and a rank with neighbours, at several board sizes.

    .venv/bin/python bench/leaderboard.py --db postgresql+asyncpg://postgres@127.0.0.1:5432/test \\
        --sizes 100000,1000000,10000000 --writes 1000
    .venv/bin/python bench/leaderboard.py --db sqlite+aiosqlite:///data/bench.db --sizes 100000

For PostgreSQL a fresh database is created beside the one named in the URL
for each size (and dropped afterwards unless ``--keep``), filled in SQL
(``generate_series``, the board's secondary index and foreign key built after
the load); while the reads are timed, a second process writes ``--writes``
results a second to the same board with the statements of
``server.storage.leaderboards.record`` (new players' entries and better
results of existing ones, each in its own transaction, counts included). For
SQLite the file must not exist yet (a temporary one is used when the URL names
none) and there is no writer. The schema comes from the project's migrations
and the reads are the server's own (``top``, ``position`` and ``around``), so
the figures are what the HTTP routes cost in the database. The three reads
take turns, so the machine's noise falls on each alike. The last line printed
is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from serverproc import pg_admin
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection

from server.features.leaderboards.model import LEVELS, SHARDS, bucket_deltas, shard_of
from server.rules.ranking import sort_key
from server.storage.db import is_sqlite, make_engine, migrate
from server.storage.leaderboards import around, position, rebuild_counts, top

CODE = "HH1-N-BENCHAA"
CHUNK = 50_000
SPARE_PLAYERS = 300_000  # players with no entry yet, for the writer's new entries
WRITERS = 32  # the writer's connections: commits share WAL flushes (a flush here is 2-6 ms)
PLAYER_COLUMNS = ["id", "name", "token_hash", "created_ms"]
ENTRY_COLUMNS = [
    "code", "player_id", "game_id", "won", "progress", "moves", "elapsed_ms",
    "score", "undos", "result", "finished_ms", "sort_key",
]  # fmt: skip
STRUCTURE = (
    "bucket counts at shifts "
    + ", ".join(str(shift) for _, shift in LEVELS)
    + f", top level in {SHARDS} shards"
)


def player_rows(count: int) -> Iterator[tuple[Any, ...]]:
    for i in range(count):
        yield (f"p_{i:010d}", f"Player {i}", f"{i:064x}", 1_700_000_000_000)


def random_result(rng: random.Random) -> tuple[bool, int, int, int]:
    """Plausible results: a tenth won, the rest spread over progress, moves and time."""
    won = rng.random() < 0.1
    progress = 25 if won else rng.randint(0, 24)
    return won, progress, rng.randint(20, 400), rng.randint(30_000, 1_800_000)


def entry_rows(count: int, seed: int = 1) -> Iterator[tuple[Any, ...]]:
    rng = random.Random(seed)
    for i in range(count):
        won, progress, moves, elapsed = random_result(rng)
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

# The same distribution as ``entry_rows``, in SQL: the ranking key is sort_key()'s layout.
FILL_ENTRIES = """
INSERT INTO leaderboard_entries (code, player_id, game_id, won, progress, moves, elapsed_ms,
    score, undos, result, finished_ms, sort_key)
SELECT $1, 'p_' || lpad(i::text, 10, '0'), 'g_' || lpad(i::text, 10, '0'), won, progress, moves,
    elapsed, progress * 10, (random() * 5)::int, CASE WHEN won THEN 'won' ELSE 'resigned' END,
    1700000000000 + i,
    ((NOT won)::int::bigint << 62) | ((63 - progress)::bigint << 56) | (moves::bigint << 36) | elapsed
FROM (
    SELECT i, r < 0.1 AS won, CASE WHEN r < 0.1 THEN 25 ELSE (random() * 24)::int END AS progress,
        20 + (random() * 380)::int AS moves, 30000 + (random() * 1770000)::bigint AS elapsed
    FROM (SELECT i, random() AS r FROM generate_series($2::bigint, $3::bigint - 1) AS i) AS draws
) AS results
"""
FILL_PLAYERS = """
INSERT INTO players (id, name, token_hash, created_ms)
SELECT 'p_' || lpad(i::text, 10, '0'), 'Player ' || i, lpad(to_hex(i), 64, '0'), 1700000000000
FROM generate_series(0, $1::bigint - 1) AS i
"""
# What the load postpones: the board's index (random order) and the foreign key (a lookup a row).
DEFERRED = """
SELECT 'ALTER TABLE leaderboard_entries ADD CONSTRAINT ' || quote_ident(conname) || ' '
    || pg_get_constraintdef(oid), 'ALTER TABLE leaderboard_entries DROP CONSTRAINT ' || quote_ident(conname)
FROM pg_constraint WHERE conrelid = 'leaderboard_entries'::regclass AND contype = 'f'
UNION ALL
SELECT pg_get_indexdef(indexrelid), 'DROP INDEX ' || indexrelid::regclass::text
FROM pg_index WHERE indrelid = 'leaderboard_entries'::regclass AND NOT indisprimary
"""


async def fill_postgres(url: str, count: int) -> None:
    """Players and entries by ``generate_series`` in chunks, then VACUUM ANALYZE.

    VACUUM matters: it sets the visibility map, without which PostgreSQL's
    index-only scans (what a rank count is) must visit the heap for every row.
    """
    import asyncpg

    u = make_url(url)
    conn = await asyncpg.connect(host=u.host, port=u.port or 5432, user=u.username, database=u.database)
    try:
        await conn.execute("SELECT setseed(0.5)")
        await conn.execute(FILL_PLAYERS, count + SPARE_PLAYERS)
        deferred = await conn.fetch(DEFERRED)
        for _create, drop in deferred:
            await conn.execute(drop)
        for start in range(0, count, 1_000_000):
            await conn.execute(FILL_ENTRIES, CODE, start, min(count, start + 1_000_000))
        for create, _drop in deferred:
            await conn.execute(create)
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


# -- the concurrent writer --------------------------------------------------------------------

MINE = "SELECT sort_key, listed FROM leaderboard_entries WHERE code = $1 AND player_id = $2 FOR UPDATE"
INSERT = f"""
INSERT INTO leaderboard_entries ({", ".join(ENTRY_COLUMNS)}, kind, standing, listed)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'human', 'ok', true)
ON CONFLICT DO NOTHING RETURNING game_id
"""
REPLACE = """
UPDATE leaderboard_entries SET game_id = $3, won = $4, progress = $5, moves = $6, elapsed_ms = $7,
    score = $8, undos = $9, result = $10, finished_ms = $11, sort_key = $12
WHERE code = $1 AND player_id = $2
"""
ADJUST = """
INSERT INTO leaderboard_counts (code, level, bucket, shard, entries) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (code, level, bucket, shard) DO UPDATE SET entries = leaderboard_counts.entries + excluded.entries
"""


async def write_one(conn: Any, row: tuple[Any, ...]) -> None:
    """One result, as ``record`` writes it: the player's row locked, entry and counts in step."""
    code, player_id, key = row[0], row[1], row[-1]
    async with conn.transaction():
        old = await conn.fetchrow(MINE, code, player_id)
        if old is None:
            if await conn.fetchrow(INSERT, *row) is None:
                return
            changes = {key: 1}
        elif old["sort_key"] <= key:
            return
        else:
            await conn.execute(REPLACE, *row)
            changes = {old["sort_key"]: -1, key: 1} if old["listed"] else {key: 1}
        for level, bucket, shard, delta in bucket_deltas(changes, shard_of(player_id)):
            await conn.execute(ADJUST, code, level, bucket, shard, delta)


def writer_rows(existing: int, seed: int) -> Iterator[tuple[Any, ...]]:
    """Results to write: two thirds new players' first entries, a third other players' tries."""
    rng = random.Random(seed)
    spare = iter(range(existing, existing + SPARE_PLAYERS))
    for i in range(10**9):
        index = next(spare) if rng.random() < 2 / 3 else rng.randrange(existing)
        won, progress, moves, elapsed = random_result(rng)
        key = sort_key(won, progress, moves, elapsed)
        yield (CODE, f"p_{index:010d}", f"w_{i:010d}", won, progress, moves, elapsed, progress * 10, 0,
               "won" if won else "resigned", 1_800_000_000_000 + i, key)  # fmt: skip


async def write_load(url: str, existing: int, rate: float, stop: Event, out: Any) -> None:
    """``rate`` results a second, paced on a schedule, until ``stop``; reports what it managed."""
    import asyncpg

    u = make_url(url)
    pool = await asyncpg.create_pool(
        host=u.host, port=u.port or 5432, user=u.username, database=u.database,
        min_size=WRITERS, max_size=WRITERS,
    )  # fmt: skip
    rows, latencies, started = writer_rows(existing, 11), [], time.perf_counter()
    done, sent = 0, 0

    async def one(row: tuple[Any, ...]) -> None:
        nonlocal done
        begun = time.perf_counter()
        async with pool.acquire() as conn:
            await write_one(conn, row)
        latencies.append((time.perf_counter() - begun) * 1000)
        done += 1

    tasks: set[asyncio.Task[None]] = set()
    try:
        while not stop.is_set():
            due = int((time.perf_counter() - started) * rate) + 1
            while sent < due and len(tasks) < 4 * WRITERS:
                task = asyncio.create_task(one(next(rows)))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
                sent += 1
            await asyncio.sleep(0.002)
        await asyncio.gather(*tasks)
    finally:
        await pool.close()
    seconds = time.perf_counter() - started
    out.put(
        {
            "writes_per_s": round(done / seconds, 1),
            "write_p50_ms": round(statistics.median(latencies), 3) if latencies else None,
            "write_p99_ms": round(percentile(latencies, 0.99), 3) if latencies else None,
        }
    )


def writer_process(url: str, existing: int, rate: float, stop: Event, out: Any) -> None:
    asyncio.run(write_load(url, existing, rate, stop, out))


# -- measuring -------------------------------------------------------------------------------


async def timed(fn: Callable[[], Awaitable[Any]], into: list[float]) -> None:
    start = time.perf_counter()
    await fn()
    into.append((time.perf_counter() - start) * 1000)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(name: str, values: list[float]) -> dict[str, float]:
    return {
        f"{name}_p50_ms": round(statistics.median(values), 3),
        f"{name}_p99_ms": round(percentile(values, 0.99), 3),
    }


async def measure(url: str, count: int, runs: int) -> dict[str, float]:
    """The three reads in turn, ``runs`` times each after a warm-up; and a round trip's floor."""
    engine = make_engine(url)
    rng = random.Random(7)
    try:
        async with engine.connect() as conn:

            async def top50(db: AsyncConnection = conn) -> None:
                window = await top(db, CODE, 50)
                assert len(window.entries) == 50 and window.entries[0]["rank"] == 1

            async def rank(db: AsyncConnection = conn) -> None:
                player = f"p_{rng.randrange(count):010d}"
                key = (await db.execute(text(KEY_SQL), {"code": CODE, "p": player})).scalar_one()
                started = time.perf_counter()
                await position(db, CODE, key, player)
                ranks.append((time.perf_counter() - started) * 1000)

            async def neighbours(db: AsyncConnection = conn) -> None:
                player = f"p_{rng.randrange(count):010d}"
                window = await around(db, CODE, player, 5)
                assert window is not None and window.me is not None

            async def ping(db: AsyncConnection = conn) -> None:
                await db.execute(text("SELECT 1"))
                await db.commit()

            tops: list[float] = []
            ranks: list[float] = []
            arounds: list[float] = []
            pings: list[float] = []
            for i in range(runs + 50):  # the first 50 warm caches and statement caches
                await timed(top50, tops)
                await rank()
                await timed(neighbours, arounds)
                await timed(ping, pings)
                await conn.commit()  # each read its own snapshot, as the routes have
                if i == 49:
                    tops, ranks, arounds, pings = [], [], [], []
    finally:
        await engine.dispose()
    return {
        **summary("top50", tops),
        **summary("rank", ranks),
        **summary("neighbours", arounds),
        **summary("round_trip", pings),
    }


KEY_SQL = "SELECT sort_key FROM leaderboard_entries WHERE code = :code AND player_id = :p"


# -- databases ---------------------------------------------------------------------------------


async def one_size(url: str, count: int, runs: int, writes: float, keep: bool) -> dict[str, Any]:
    if is_sqlite(url):
        path = make_url(url).database or str(Path(tempfile.mkdtemp()) / "bench.db")
        path = path if count == 0 else path.replace(".db", f"-{count}.db")
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
    filled = time.perf_counter() - started
    print(f"filled {count} entries in {filled:.1f} s ({target})", flush=True)
    load: dict[str, Any] = {}
    try:
        if writes and not is_sqlite(url):
            load = await measure_under_writes(target, count, runs, writes)
        else:
            load = await measure(target, count, runs)
    finally:
        if not is_sqlite(url) and not keep:
            await pg_admin(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return {"entries": count, "fill_s": round(filled, 1), **load}


async def measure_under_writes(url: str, count: int, runs: int, writes: float) -> dict[str, Any]:
    """The reads while a second process writes ``writes`` results a second to the same board."""
    context = multiprocessing.get_context("spawn")
    stop, out = context.Event(), context.Queue()
    proc = context.Process(target=writer_process, args=(url, count, writes, stop, out), daemon=True)
    proc.start()
    try:
        await asyncio.sleep(3.0)  # the writer at its pace before the clock starts
        figures = await measure(url, count, runs)
    finally:
        stop.set()
    written = await asyncio.to_thread(out.get, True, 120.0)
    await asyncio.to_thread(proc.join, 30.0)
    return {**figures, **written}


async def run(url: str, sizes: list[int], runs: int, writes: float, keep: bool) -> dict[str, Any]:
    results = []
    for count in sizes:
        figures = await one_size(url, count, runs, writes, keep)
        print(json.dumps(figures), flush=True)
        results.append(figures)
    backend = "sqlite" if is_sqlite(url) else "postgresql"
    return {"db": backend, "structure": STRUCTURE, "target_writes_per_s": writes, "sizes": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db", required=True, help="database URL (sqlite+aiosqlite:/// or postgresql+asyncpg://)"
    )
    parser.add_argument("--sizes", default="100000,1000000,10000000", help="board sizes, comma-separated")
    parser.add_argument("--queries", type=int, default=1000, help="queries of each kind to time")
    parser.add_argument("--writes", type=float, default=1000.0, help="results a second written meanwhile")
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL databases afterwards")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    result = asyncio.run(run(args.db, sizes, args.queries, args.writes, args.keep))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
