"""The results log of a real server: sealed during the day, signed at its end, audited.

`solitaire log audit` runs against the server while the test edits its
database: a changed, reordered or removed leaf, and a past day rewritten and
signed again with the server's own key, are each found. The log and its
heads survive a SIGKILL of the real server process between an append and the
day's head.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import text

from client.cli.program import main
from client.http import HttpApi
from client.results_log import audit, verify_game
from server.clock import wall_clock_ms
from server.config import Settings
from server.features.moderation.service import Moderation
from server.features.results_log import model
from server.features.results_log.service import KEY_NAME, ResultsLog
from server.rules.days import DAY_MS, day_of, day_start_ms
from server.storage.db import Database
from tests.conftest import fresh_pg_database
from tests.server.competing import clocked_server
from tests.server.test_durability import server_process
from tests.support import (
    ONE_ADDRESS,
    UNSCREENED,
    Client,
    ManualClock,
    ahttp,
    free_port,
    new_player,
    running_server,
)

START_MS = day_start_ms("2031-05-20") + 9 * 3_600_000
HEAD_WAIT_S = 30


@pytest.fixture(scope="module")
def clock(database_url: str) -> ManualClock:
    return ManualClock(START_MS)


@pytest.fixture(scope="module")
def log_server(database_url: str, clock: ManualClock) -> Iterator[str]:
    with clocked_server(database_url, clock) as base:
        yield base


async def resigned_daily(base: str, family: str) -> str:
    """A new player's ranked daily attempt, resigned: its result is final."""
    player = await new_player(base)
    client = await Client.connect(base, player["token"])
    game = await client.request("new_game", daily=family)
    assert game["type"] == "game" and game["game"]["ranked"], game
    reply = await client.request("resign", game_id=game["game"]["id"])
    assert reply["type"] != "error", reply
    await client.close()
    return str(game["game"]["id"])


async def head_of(base: str, day: str) -> dict[str, Any]:
    deadline = time.monotonic() + HEAD_WAIT_S
    while True:
        status, body = await ahttp("GET", f"{base}/api/log/heads/{day}")
        if status == 200:
            return dict(body)
        assert status == 404 and time.monotonic() < deadline, (status, body)
        await asyncio.sleep(0.1)


async def cli(base: str, config: Path, *words: str) -> int:
    return await asyncio.to_thread(main, ["--server", base, "--config", str(config), "log", *words])


async def sql(database_url: str, statement: str, **params: Any) -> list[Any]:
    db = Database.open(database_url)
    try:
        async with db.transaction() as tx:
            result = await tx.execute(text(statement), params)
            return list(result.all()) if result.returns_rows else []
    finally:
        await db.dispose()


async def test_sealed_during_the_day_signed_after_and_audited(
    log_server: str, database_url: str, clock: ManualClock, tmp_path: Path
) -> None:
    base, day = log_server, day_of(START_MS)
    games = [await resigned_daily(base, family) for family in ("HH1-N", "SH1-C4", "SH1-C2")]
    status, body = await ahttp("GET", f"{base}/api/games/{games[0]}/inclusion")
    assert status == 403 and body["error"]["code"] == "sealed", body
    assert body["error"]["opens_at"] == day_start_ms(day) + DAY_MS
    status, body = await ahttp("GET", f"{base}/api/log/leaves?start=0&end=2")
    assert status == 403 and body["error"]["code"] == "sealed", body
    assert (await ahttp("GET", f"{base}/api/log/latest"))[0] == 404
    status, key = await ahttp("GET", f"{base}/api/log/key")
    assert status == 200 and key["algorithm"] == "ed25519" and len(key["public_key"]) == 64

    db = Database.open(database_url)  # an operator removes an entry: a moderation leaf
    try:
        moderation = Moderation(db, clock, boards=ResultsLog(db, clock))
        await moderation.review(("a_test", "tester"), games[2], "remove", "a test of the log")
    finally:
        await db.dispose()

    clock.advance(DAY_MS)
    head = await head_of(base, day)
    assert head["tree_size"] == 4
    status, latest = await ahttp("GET", f"{base}/api/log/latest")
    assert status == 200 and latest == head
    status, proof = await ahttp("GET", f"{base}/api/games/{games[1]}/inclusion")
    assert status == 200 and proof["root_hash"] == head["root_hash"], proof
    status, body = await ahttp("GET", f"{base}/api/log/leaves?start=0&end=9")
    assert status == 400 and body["error"]["code"] == "bad_message"
    status, body = await ahttp("GET", f"{base}/api/log/leaves?start=0&end=3")
    leaves = [model.canonical(json.loads(leaf)).decode() for leaf in body["leaves"]]
    assert status == 200 and leaves == body["leaves"]  # canonical as served
    assert '"kind":"moderation"' in body["leaves"][3] and '"action":"remove_entry"' in body["leaves"][3]
    status, body = await ahttp("GET", f"{base}/api/log/consistency?first=5&second=5")
    assert status == 400

    verdict = await verify_game(HttpApi(base), games[0])
    assert verdict.ok and verdict.included and verdict.signed, verdict
    config = tmp_path / "config.json"
    assert await cli(base, config, "verify", games[0]) == 0
    assert await cli(base, config, "audit") == 0

    # a second day, so that consistency between two heads is proved
    second_day = day_of(clock())
    games.append(await resigned_daily(base, "HH1-N"))
    clock.advance(DAY_MS)
    assert (await head_of(base, second_day))["tree_size"] == 5
    assert await cli(base, config, "audit") == 0

    original = await sql(database_url, "SELECT idx, leaf FROM log_leaves ORDER BY idx")
    first, second = str(original[0].leaf), str(original[1].leaf)

    async def put(index: int, leaf: str) -> None:
        await sql(database_url, "UPDATE log_leaves SET leaf = :leaf WHERE idx = :idx", leaf=leaf, idx=index)

    await put(0, first.replace('"score":', '"score":1'))  # a changed leaf
    assert await cli(base, tmp_path / "fresh.json", "audit") == 1
    await put(0, second)  # reordered leaves
    await put(1, first)
    assert await cli(base, tmp_path / "fresh.json", "audit") == 1
    await put(0, first)
    await put(1, second)
    await sql(database_url, "DELETE FROM log_leaves WHERE idx = 1")  # a removed leaf
    assert await cli(base, tmp_path / "fresh.json", "audit") == 1
    assert any("do not hash" in problem for problem in (await audit(HttpApi(base))).problems)
    await sql(
        database_url,
        "INSERT INTO log_leaves (idx, kind, day, game_id, leaf, appended_ms)"
        " VALUES (1, 'result', :day, :game, :leaf, 0)",
        day=day,
        game=games[1],
        leaf=second,
    )
    assert await cli(base, tmp_path / "fresh.json", "audit") == 0

    await rewrite_first_day(database_url, first.replace('"result":"resigned"', '"result":"won"'))
    assert await cli(base, tmp_path / "newcomer.json", "audit") == 0  # consistent with itself...
    assert await cli(base, config, "audit") == 1  # ...but not with the heads seen before
    seen = json.loads(config.read_text())["log_heads"][base]
    problems = (await audit(HttpApi(base), seen)).problems
    assert any("differs from the one seen before" in problem for problem in problems), problems


async def rewrite_first_day(database_url: str, leaf: str) -> None:
    """What an operator with the database and the key could do: another leaf 0, every node
    computed again, every head signed again."""
    await sql(database_url, "UPDATE log_leaves SET leaf = :leaf WHERE idx = 0", leaf=leaf)
    rows = await sql(database_url, "SELECT leaf FROM log_leaves ORDER BY idx")
    written = model.extend(0, [model.leaf_hash(str(r.leaf).encode()) for r in rows], {})
    secret = await sql(database_url, "SELECT value FROM server_secrets WHERE name = :name", name=KEY_NAME)
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(str(secret[0].value)))
    nodes = dict(written)
    await sql(database_url, "DELETE FROM log_nodes")
    db = Database.open(database_url)
    try:
        async with db.transaction() as tx:
            for (level, idx), digest in written:
                await tx.execute(
                    text("INSERT INTO log_nodes (level, idx, hash) VALUES (:l, :i, :h)"),
                    {"l": level, "i": idx, "h": digest},
                )
            heads = (await tx.execute(text("SELECT day, tree_size, timestamp_ms FROM log_tree_heads"))).all()
            for h in heads:
                root = model.range_hash(nodes, 0, int(h.tree_size)).hex()
                signed = model.TreeHead(str(h.day), int(h.tree_size), root, int(h.timestamp_ms))
                await tx.execute(
                    text("UPDATE log_tree_heads SET root_hash = :r, signature = :s WHERE day = :d"),
                    {"r": root, "s": key.sign(signed.signed_bytes()).hex(), "d": h.day},
                )
    finally:
        await db.dispose()


@pytest.fixture
def fresh_url(database_url: str, tmp_path: Path) -> Iterator[str]:
    """An empty database of the module's backend, on the wall clock's days."""
    if database_url.startswith("sqlite"):
        yield f"sqlite+aiosqlite:///{tmp_path / 'killed.db'}"
        return
    with fresh_pg_database() as url:
        yield url


async def test_the_log_survives_a_sigkill_between_append_and_head(fresh_url: str) -> None:
    """A result acknowledged by a real server process is in the log after a SIGKILL, and the
    next start signs the head that covers it."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with server_process(fresh_url, port) as proc:
        game_id = await resigned_daily(base, "SH1-C1")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    database_url = fresh_url
    rows = await sql(database_url, "SELECT idx FROM log_leaves WHERE game_id = :g", g=game_id)
    assert len(rows) == 1
    tomorrow = ManualClock(wall_clock_ms() + DAY_MS)
    settings = Settings(
        database_url=database_url, secret="test-secret", limits=ONE_ADDRESS, screening=UNSCREENED
    )
    with running_server(settings, tomorrow) as again:
        await head_of(again, day_of(wall_clock_ms()))
        verdict = await verify_game(HttpApi(again), game_id)
        assert verdict.ok, verdict
        assert verdict.leaf_index == rows[0].idx
