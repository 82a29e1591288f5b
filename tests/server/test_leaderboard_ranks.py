"""The fast ranks (bucket counts) against a brute-force ranking, on both databases.

Random boards with many ties, entries replaced by better ones, flagged,
cleared, confirmed, removed and banned players, people's and bots' boards:
after every step every listed entry's rank, position and window, every page
and every board's size must be what a count over the model computed here
says (competition ranks among the listed entries of the entry's own board).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from server.features.leaderboards.model import LEVELS
from server.rules.ranking import sort_key
from server.storage.db import make_engine, migrate
from server.storage.leaderboards import around, board_size, hide_player, position, record, set_standing, top
from wire import LISTED_STANDINGS, PlayerKind, Standing

CODES = ("HH1-N-RANKAAAA", "HH1-N-RANKBBBB")
PLAYERS = 24
# Few distinct values on either side of every bucket edge (65.5 s steps, 2**20 ms, ...), so ties
# are common and neighbouring keys fall in different buckets at every level.
MOVES = (1, 2, 3, 31, 32, 1000)
ELAPSED = (0, 1, 65_535, 65_536, 65_537, (1 << 20) - 1, 1 << 20, 5_000_000)


@dataclass
class Entry:
    key: int
    kind: str
    standing: str = Standing.OK
    listed: bool = True


@dataclass
class Model:
    """What the boards should hold: the brute force the counts are checked against."""

    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)
    banned: set[str] = field(default_factory=set)
    kinds: dict[str, str] = field(default_factory=dict)

    def board(self, code: str, kind: str) -> list[tuple[int, str]]:
        """The listed entries of one board in listing order: (key, player id)."""
        rows = [(e.key, p) for (c, p), e in self.entries.items() if c == code and e.kind == kind and e.listed]
        return sorted(rows)


def player(i: int) -> str:
    return f"p_rank{i:04d}"


def random_key(rng: random.Random) -> int:
    won = rng.random() < 0.3
    progress = 25 if won else rng.choice((0, 1, 24))
    return sort_key(won, progress, rng.choice(MOVES), rng.choice(ELAPSED))


def values(code: str, player_id: str, key: int, kind: str, standing: str) -> dict[str, Any]:
    """A leaderboard row as the finish hook writes it (only ``sort_key`` orders it)."""
    return {
        "code": code,
        "player_id": player_id,
        "kind": kind,
        "game_id": f"g_{key % 10**9:09d}",
        "won": key >> 62 == 0,
        "progress": 0,
        "moves": 1,
        "elapsed_ms": 0,
        "score": 0,
        "undos": 0,
        "result": "resigned",
        "finished_ms": 1,
        "sort_key": key,
        "standing": standing,
        "listed": standing in LISTED_STANDINGS,
    }


@pytest.fixture(scope="module")
def migrated(database_url: str) -> str:
    """The module's database with the project's schema (once per module)."""
    asyncio.run(migrate(database_url))
    return database_url


@pytest.fixture
async def engine(migrated: str) -> AsyncIterator[AsyncEngine]:
    db = make_engine(migrated)
    try:
        yield db
    finally:
        await db.dispose()


async def reset(db: AsyncEngine, rng: random.Random) -> Model:
    """Empty boards and fresh players (a quarter of them bots)."""
    model = Model()
    async with db.begin() as tx:
        mine = {"a": CODES[0], "b": CODES[1]}
        await tx.execute(text("DELETE FROM leaderboard_entries WHERE code IN (:a, :b)"), mine)
        await tx.execute(text("DELETE FROM leaderboard_counts"))
        for i in range(PLAYERS):
            kind = PlayerKind.BOT if rng.random() < 0.25 else PlayerKind.HUMAN
            model.kinds[player(i)] = kind
            exists = await tx.execute(text("SELECT 1 FROM players WHERE id = :id"), {"id": player(i)})
            if exists.first() is None:
                row = {"id": player(i), "name": f"Rank {i}", "hash": f"{i:064x}"}
                sql = "INSERT INTO players (id, name, token_hash, created_ms) VALUES (:id, :name, :hash, 1)"
                await tx.execute(text(sql), row)
    return model


async def step(db: AsyncEngine, model: Model, rng: random.Random) -> None:
    """One random change, applied to the database and to the model alike."""
    code, pid = rng.choice(CODES), player(rng.randrange(PLAYERS))
    entry = model.entries.get((code, pid))
    roll = rng.random()
    async with db.begin() as tx:
        if roll < 0.6 or entry is None:
            if pid in model.banned:
                return  # a banned player's games do not count (the finish hook skips them)
            key = random_key(rng)
            standing = Standing.FLAGGED if rng.random() < 0.2 else Standing.OK
            changed = await record(tx, values(code, pid, key, model.kinds[pid], standing))
            assert changed == (entry is None or key < entry.key)
            if changed:
                listed = standing in LISTED_STANDINGS
                model.entries[(code, pid)] = Entry(key, model.kinds[pid], standing, listed)
        elif roll < 0.9:
            standing = rng.choice([Standing.CLEARED, Standing.CONFIRMED, Standing.REMOVED, Standing.FLAGGED])
            banned = pid in model.banned
            await set_standing(tx, code, pid, standing, banned)
            entry.standing, entry.listed = standing, standing in LISTED_STANDINGS and not banned
        else:
            await hide_player(tx, pid)
            model.banned.add(pid)
            for (_, p), e in model.entries.items():
                if p == pid:
                    e.listed = False


async def check(db: AsyncEngine, model: Model) -> None:
    """Every rank, position, window, page and size the database gives agrees with the model."""
    async with db.connect() as tx:
        for code in CODES:
            for kind in PlayerKind:
                board = model.board(code, kind)
                assert await board_size(tx, code, kind) == len(board)
                expected = [(p, 1 + sum(k < key for k, _ in board)) for key, p in board]
                pages, cursor = [], None
                while True:
                    page = await top(tx, code, 5, cursor, kind)
                    pages += [(e["player"]["id"], e["rank"]) for e in page.entries]
                    if page.next_cursor is None:
                        break
                    cursor = page.next_cursor
                assert pages == expected
                for at, (key, pid) in enumerate(board):
                    assert await position(tx, code, key, pid, kind) == (at, expected[at][1] - 1)
                    window = await around(tx, code, pid, 2, kind)
                    assert window is not None and window.me is not None
                    shown = [(e["player"]["id"], e["rank"]) for e in window.entries]
                    assert shown == expected[max(0, at - 2) : at + 3]
                    assert window.me["player"]["id"] == pid
                unlisted = {p for (c, p), e in model.entries.items() if c == code and not e.listed}
                for pid in unlisted:
                    assert await around(tx, code, pid, 2, kind) is None


async def counts_match(db: AsyncEngine) -> None:
    """The kept bucket counts equal a recount of the listed entries, bucket by bucket."""
    async with db.connect() as tx:
        for level, shift in LEVELS:
            kept_sql = "SELECT code, bucket, sum(entries) FROM leaderboard_counts WHERE level = :l"
            kept_sql += " GROUP BY code, bucket HAVING sum(entries) <> 0"  # the shards summed
            kept = (await tx.execute(text(kept_sql), {"l": level})).all()
            board = "CASE WHEN kind = 'bot' THEN 'bot:' || code ELSE code END"
            recount_sql = (
                f"SELECT {board}, sort_key >> {shift}, count(*) FROM leaderboard_entries"
                " WHERE listed = :yes AND code IN (:a, :b) GROUP BY 1, 2"
            )
            recount = (await tx.execute(text(recount_sql), {"yes": True, "a": CODES[0], "b": CODES[1]})).all()
            assert sorted(map(tuple, kept)) == sorted(map(tuple, recount))


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_fast_ranks_equal_brute_force_ranks(engine: AsyncEngine, seed: int) -> None:
    rng = random.Random(seed)
    model = await reset(engine, rng)
    for i in range(120):
        await step(engine, model, rng)
        if i % 20 == 19:
            await check(engine, model)
    await check(engine, model)
    await counts_match(engine)
    assert any(not e.listed for e in model.entries.values()), "the run hid nothing"
    keys = [e.key for e in model.entries.values() if e.listed]
    assert len(keys) > len(set(keys)), "the run made no ties"


async def test_a_missing_player_has_no_window(engine: AsyncEngine) -> None:
    async with engine.connect() as tx:
        assert await around(tx, CODES[0], "p_nobody", 3) is None
        assert await position(tx, CODES[0], 0, "p_nobody") == (0, 0)
