"""A player's home: the statistics read for a player with 10,000 finished games, over HTTP.

    .venv/bin/python bench/profile.py --db sqlite+aiosqlite:///data/profile.db
    .venv/bin/python bench/profile.py --db postgresql+asyncpg://postgres@127.0.0.1:5432/test

The database (a new SQLite file, or a fresh PostgreSQL database beside the one
named, dropped afterwards) gets one player's finished games on every variant,
a fifth of them ranked dailies on consecutive past days with 20 other entries
on each day's board. The statistics are folded in with the finish hook's own
queries (``server.storage.profiles.record_finish`` and ``record_daily``, timed:
that is what finishing a game adds to its transaction). Then a real server
(``solitaire-server``) answers ``GET /api/players/{id}/stats``: the first reads
fix every past daily's rank once (at most 100 a read, counted as the catch-up);
the reads after it are timed. A check
compares the totals with a count over the games table. The last line printed
is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import random
import secrets
import statistics
import sys
import tempfile
import time
import urllib.parse
from datetime import date, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from serverproc import pg_admin, scratch_database, started_server
from sqlalchemy import func, insert, select
from sqlalchemy.engine import make_url

from server.rules.ranking import sort_key
from server.storage import profiles
from server.storage.db import is_sqlite, make_engine, migrate
from server.storage.leaderboards import rebuild_counts
from server.storage.models import GameRow, LeaderboardEntry, Player

FAMILIES = ("HH1-N", "SH1-C4", "SH1-C2", "SH1-C1")
PLAYER = "p_0000000bench"
RIVALS = 20
FIRST_DAY = date(2019, 1, 1)
BASE_MS = 1_546_300_800_000  # 2019-01-01T00:00Z


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def plan(count: int, seed: int = 3) -> list[dict[str, Any]]:
    """The player's finished games, oldest first: variants in turn, two in five won."""
    rng = random.Random(seed)
    games = []
    for i in range(count):
        family = FAMILIES[i % 4]
        daily = i % 5 == 0
        day = (FIRST_DAY + timedelta(days=i // 5)).isoformat() if daily else None
        won = rng.random() < 0.4
        result = "won" if won else rng.choice(("resigned", "resigned", "expired"))
        code = f"{family}-{'D' if daily else 'P'}{i:06d}"[:24]
        at = BASE_MS + i * 3_600_000
        games.append(
            {
                "id": f"g_{i:012x}",
                "player_id": PLAYER,
                "code": code,
                "status": "won" if won else result,
                "result": result,
                "score": rng.randint(0, 500),
                "moves": rng.randint(30, 300),
                "seq": 0,
                "progress": 25 if won else rng.randint(0, 24),
                "undos": 0,
                "elapsed_ms": rng.randint(60_000, 1_800_000),
                "fingerprint": "0" * 16,
                "created_ms": at - 600_000,
                "last_action_ms": at,
                "finished_ms": at,
                "daily_day": day,
                "ranked": daily,
                "race_id": None,
            }
        )
    return games


def entry(
    code: str, player_id: str, game_id: str, won: bool, progress: int, moves: int, ms: int
) -> dict[str, Any]:
    return {
        "code": code,
        "player_id": player_id,
        "game_id": game_id,
        "won": won,
        "progress": progress,
        "moves": moves,
        "elapsed_ms": ms,
        "score": 0,
        "undos": 0,
        "result": "won" if won else "resigned",
        "finished_ms": BASE_MS,
        "sort_key": sort_key(won, progress, moves, ms),
    }


async def fill(url: str, count: int) -> dict[str, Any]:
    """The games, the boards of the dailies and the folded statistics; times the fold."""
    games = plan(count)
    rng = random.Random(9)
    engine = make_engine(url)
    fold_ms: list[float] = []
    try:
        async with engine.begin() as conn:
            players = [
                {"id": PLAYER, "name": "Bench", "token_hash": secrets.token_hex(32), "created_ms": BASE_MS}
            ]
            players += [
                {
                    "id": f"p_{n:012d}",
                    "name": f"Rival {n}",
                    "token_hash": secrets.token_hex(32),
                    "created_ms": BASE_MS,
                }
                for n in range(RIVALS)
            ]
            await conn.execute(insert(Player), players)
            for start in range(0, len(games), 2000):
                await conn.execute(insert(GameRow), games[start : start + 2000])
            entries = []
            for g in games:
                if g["daily_day"] is None or g["result"] == "expired":
                    continue
                won = g["result"] == "won"
                entries.append(
                    entry(g["code"], PLAYER, g["id"], won, g["progress"], g["moves"], g["elapsed_ms"])
                )
                for n in range(RIVALS):
                    rival_won = rng.random() < 0.3
                    progress = 25 if rival_won else rng.randint(0, 24)
                    moves, ms = rng.randint(30, 300), rng.randint(60_000, 1_800_000)
                    entries.append(
                        entry(g["code"], f"p_{n:012d}", f"g_r{n:011d}", rival_won, progress, moves, ms)
                    )
            for start in range(0, len(entries), 5000):
                await conn.execute(insert(LeaderboardEntry), entries[start : start + 5000])
            await rebuild_counts(conn)
            for g in games:  # the finish hook's queries, in finish order
                started = time.perf_counter()
                family = g["code"].rsplit("-", 1)[0]
                won = g["result"] == "won"
                await profiles.record_finish(
                    conn, PLAYER, family, won, g["moves"], g["elapsed_ms"], g["finished_ms"]
                )
                if g["daily_day"] is not None and g["result"] in ("won", "resigned"):
                    await profiles.record_daily(conn, PLAYER, g["daily_day"], g["code"], g["id"])
                fold_ms.append((time.perf_counter() - started) * 1000)
        async with engine.connect() as conn:
            counted = (
                await conn.execute(
                    select(func.count()).select_from(GameRow).where(GameRow.result.is_not(None))
                )
            ).scalar_one()
            wins = (
                await conn.execute(select(func.count()).select_from(GameRow).where(GameRow.result == "won"))
            ).scalar_one()
    finally:
        await engine.dispose()
    return {
        "games": int(counted),
        "wins": int(wins),
        "daily_days": sum(1 for g in games if g["daily_day"] and g["result"] in ("won", "resigned")),
        "finish_hook_p50_ms": round(statistics.median(fold_ms), 3),
        "finish_hook_p99_ms": round(percentile(fold_ms, 0.99), 3),
    }


class Reader:
    """One kept-alive HTTP connection, as a browser keeps one: the figures are the server's."""

    def __init__(self, base: str) -> None:
        parts = urllib.parse.urlsplit(base)
        self.conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)

    def __call__(self, path: str) -> Any:
        self.conn.request("GET", path)
        response = self.conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise SystemExit(f"GET {path}: {response.status} {body[:200]!r}")
        return json.loads(body)

    def close(self) -> None:
        self.conn.close()


def measure(base: str, reads: int, expect: dict[str, Any]) -> dict[str, Any]:
    get = Reader(base)
    try:
        return timed_reads(get, reads, expect)
    finally:
        get.close()


def timed_reads(get: Reader, reads: int, expect: dict[str, Any]) -> dict[str, Any]:
    path = f"/api/players/{PLAYER}/stats"
    started = time.perf_counter()
    first = get(path)  # each read fixes the rank of up to 100 past dailies, once
    first_ms = (time.perf_counter() - started) * 1000
    catching_up = 1
    while first["dailies"]["ranked"] < expect["daily_days"] and catching_up < 1000:
        first = get(path)
        catching_up += 1
    caught_up_ms = (time.perf_counter() - started) * 1000
    played = sum(v["played"] for v in first["variants"])
    won = sum(v["won"] for v in first["variants"])
    if (played, won) != (expect["games"], expect["wins"]):
        raise SystemExit(f"statistics disagree with the games table: {played}/{won} vs {expect}")
    if first["dailies"]["ranked"] != expect["daily_days"]:
        raise SystemExit(f"ranked dailies {first['dailies']['ranked']} != {expect['daily_days']}")
    for _ in range(min(20, reads)):  # warm
        get(path)
    times = []
    for _ in range(reads):
        started = time.perf_counter()
        get(path)
        times.append((time.perf_counter() - started) * 1000)
    return {
        "first_read_ms": round(first_ms, 1),
        "catch_up_reads": catching_up,
        "catch_up_ms": round(caught_up_ms, 1),
        "stats_p50_ms": round(statistics.median(times), 3),
        "stats_p99_ms": round(percentile(times, 0.99), 3),
        "reads": reads,
        "median_percentile": first["dailies"]["median_percentile"],
    }


def run(url: str, count: int, reads: int) -> dict[str, Any]:
    with contextlib.ExitStack() as stack:
        if is_sqlite(url):
            path = make_url(url).database or str(Path(tempfile.mkdtemp()) / "profile.db")
            if Path(path).exists():
                raise SystemExit(f"{path} exists; the benchmark fills a new file")
            target = f"sqlite+aiosqlite:///{path}"
        else:
            target = stack.enter_context(scratch_database(url, f"solitaire_profile_{secrets.token_hex(4)}"))
        asyncio.run(migrate(target))
        started = time.perf_counter()
        filled = asyncio.run(fill(target, count))
        if not is_sqlite(url):
            asyncio.run(pg_admin(target, "VACUUM ANALYZE"))
        print(
            f"filled {count} finished games in {time.perf_counter() - started:.1f} s ({target})", flush=True
        )
        settings = {"SOLITAIRE_DATABASE_URL": target, "SOLITAIRE_HTTP_RATE_PER_S": "0"}
        with started_server(settings) as (base, _pid):
            figures = measure(base, reads, filled)
    return {"db": "sqlite" if is_sqlite(url) else "postgresql", **filled, **figures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db", required=True, help="database URL (sqlite+aiosqlite:/// or postgresql+asyncpg://)"
    )
    parser.add_argument("--games", type=int, default=10_000, help="the player's finished games")
    parser.add_argument("--reads", type=int, default=500, help="statistics reads to time")
    args = parser.parse_args()
    print(json.dumps(run(args.db, args.games, args.reads)))


if __name__ == "__main__":
    main()
