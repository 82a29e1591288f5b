"""Results log scale benchmark: a million leaves, then appends, proofs and a day-end head.

    .venv/bin/python bench/results_log.py --db postgresql+asyncpg://postgres@127.0.0.1:5432/test
    .venv/bin/python bench/results_log.py --db sqlite+aiosqlite:///data/bench.db --leaves 5000

For PostgreSQL a fresh database is created beside the one named in the URL
(and dropped afterwards unless ``--keep``); for SQLite the file must not exist
yet. The schema is the migrations', and every figure goes through the
server's own functions: the leaves are bulk-loaded with
``server.storage.results_log.append`` (thousands a transaction), then
measured: one result appended per transaction (what a finishing game pays),
inclusion and consistency proofs as the routes compute them (nodes read by key,
folded by the model), and :meth:`ResultsLog.day_ended` (root and signature).
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from serverproc import pg_admin
from sqlalchemy.engine import make_url

from server.features.results_log.model import (
    consistency_ranges,
    inclusion_ranges,
    keys_of,
    range_hash,
    result_leaf,
)
from server.features.results_log.service import ResultsLog
from server.rules.days import DAY_MS, day_of, day_start_ms
from server.storage import results_log as store
from server.storage.db import Database, is_sqlite, migrate
from server.storage.results_log import NewLeaf

DAY = "2031-01-10"
LOAD_CHUNK = 5_000
AT_MS = day_start_ms(DAY) + 3_600_000  # when the bench appends: during its day


def leaf(i: int) -> NewLeaf:
    data = result_leaf(
        DAY, "SH1-C4", "SH1-C4-BENCHAAA", f"g_{i:012d}", f"p_{i:012d}", "won", 900, 80, 95_000, i
    )
    return NewLeaf(data, "result", DAY, None)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def figures(name: str, ms: list[float]) -> dict[str, float]:
    return {
        f"{name}_p50_ms": round(statistics.median(ms), 3),
        f"{name}_p99_ms": round(percentile(ms, 0.99), 3),
    }


async def load(db: Database, count: int) -> float:
    began = time.perf_counter()
    for start in range(0, count, LOAD_CHUNK):
        async with db.transaction() as tx:
            await store.append(tx, [leaf(i) for i in range(start, min(count, start + LOAD_CHUNK))], AT_MS)
    return time.perf_counter() - began


async def measure(db: Database, count: int, runs: int) -> dict[str, Any]:
    rng = random.Random(1)
    appends: list[float] = []
    for i in range(runs):
        began = time.perf_counter()
        async with db.transaction() as tx:
            await store.append(tx, [leaf(count + i)], AT_MS)
        appends.append((time.perf_counter() - began) * 1000)
    size = count + runs
    inclusions: list[float] = []
    consistencies: list[float] = []
    for _ in range(runs):
        index = rng.randrange(size)
        began = time.perf_counter()
        async with db.read() as tx:
            ranges = inclusion_ranges(index, size)
            found = await store.nodes(tx, keys_of(ranges))
        [range_hash(found, a, b) for a, b in ranges]
        inclusions.append((time.perf_counter() - began) * 1000)
        first = rng.randrange(1, size)
        began = time.perf_counter()
        async with db.read() as tx:
            ranges = consistency_ranges(first, size)
            found = await store.nodes(tx, keys_of(ranges))
        [range_hash(found, a, b) for a, b in ranges]
        consistencies.append((time.perf_counter() - began) * 1000)
    clock_ms = day_start_ms(DAY) + DAY_MS + 1000
    results_log = ResultsLog(db, lambda: clock_ms)
    await results_log.key()
    began = time.perf_counter()
    signed = await results_log.day_ended(day_of(clock_ms))
    head_ms = (time.perf_counter() - began) * 1000
    if signed != [DAY]:
        raise SystemExit(f"the day-end signed {len(signed)} heads, not the one of {DAY}")
    return {
        **figures("append", appends),
        **figures("inclusion", inclusions),
        **figures("consistency", consistencies),
        "day_end_head_ms": round(head_ms, 3),
    }


async def run(url: str, count: int, runs: int, keep: bool) -> dict[str, Any]:
    target, name = url, ""
    if not is_sqlite(url):
        name = f"solitaire_bench_log_{secrets.token_hex(4)}"
        await pg_admin(url, f'CREATE DATABASE "{name}"')
        target = make_url(url).set(database=name).render_as_string(hide_password=False)
    elif make_url(url).database in (None, "", ":memory:"):
        target = f"sqlite+aiosqlite:///{tempfile.mkdtemp()}/log.db"
    elif Path(str(make_url(url).database)).exists():
        raise SystemExit(f"{make_url(url).database} exists: the bench needs a new file")
    try:
        await migrate(target)
        db = Database.open(target)
        try:
            load_s = await load(db, count)
            if name:
                await pg_admin(target, "VACUUM ANALYZE log_nodes")
            result = await measure(db, count, runs)
        finally:
            await db.dispose()
    finally:
        if name and not keep:
            await pg_admin(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return {
        "bench": "results_log",
        "db": "sqlite" if is_sqlite(url) else "postgresql",
        "leaves": count,
        "runs": runs,
        "load_s": round(load_s, 1),
        **result,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="database URL (PostgreSQL: a fresh database beside it)")
    parser.add_argument("--leaves", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=2_000, help="appends and proofs of each kind measured")
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL database")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.db, args.leaves, args.runs, args.keep))))


if __name__ == "__main__":
    main()
