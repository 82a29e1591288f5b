"""Database faults: a lost COMMIT answer (PostgreSQL), a SQLite file locked by another process,
a second server on the same SQLite file, background work meeting an away database. Memory
always ends equal to the database, every client is told the truth, and the server recovers
without a restart."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import create_async_engine

from engine import Action, Game
from server.config import Settings
from server.core.games import GameService, LiveGame
from server.core.services import Services
from server.errors import ProtocolError
from server.features.screening.service import SolverComparison
from server.features.solutions.service import DeadEnds
from server.solver.deals import Deals
from server.solver.pool import SolverPool
from server.storage.db import make_engine, migrate
from server.storage.faults import is_away, is_unavailable
from server.storage.models import ActionRow
from tests.conftest import fresh_pg_database
from tests.pgproxy import CommitCuttingProxy, commit_cutting_proxy
from tests.server.competing import random_line
from tests.support import Client, ahttp, new_player, running_server
from wire import ErrorCode

ROOT = Path(__file__).resolve().parents[2]


async def stored_actions(database_url: str, game_id: str) -> list[str]:
    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            query = select(ActionRow.action).where(ActionRow.game_id == game_id).order_by(ActionRow.seq)
            return list((await conn.execute(query)).scalars())
    finally:
        await engine.dispose()


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_pg_database() as url:
        yield url


async def play_line(client: Client, game_id: str, code: str, seed: int) -> tuple[list[str], list[str]]:
    """Play a random line; returns (acknowledged actions, refusal codes)."""
    acknowledged: list[str] = []
    refusals: list[str] = []
    for seq, action in enumerate(random_line(code, seed, 12)):
        reply = await client.act(game_id, seq, **action.to_json())
        if reply["type"] == "result":
            acknowledged.append(action.to_text())
        else:
            refusals.append(reply["code"])
            break
    return acknowledged, refusals


@contextmanager
def server_behind_proxy(pg_url: str) -> Iterator[tuple[CommitCuttingProxy, str]]:
    """A server whose every database connection goes through a commit-cutting proxy."""
    with commit_cutting_proxy() as proxy:
        proxied = pg_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
        with running_server(Settings(database_url=proxied, secret="s", migrate_on_start=False)) as base:
            yield proxy, base


@pytest.mark.postgres
async def test_a_lost_commit_answer_is_read_back_and_the_truth_told(pg_url: str) -> None:
    """13 games wedged before: now every stored action is acknowledged, memory equals the database."""
    await migrate(pg_url)
    with server_behind_proxy(pg_url) as (proxy, base):
        player = await new_player(base, "Cut")
        clients = [await Client.connect(base, player["token"]) for _ in range(4)]
        codes = [f"SH1-C4-AAAAA{c}2" for c in "BCDE"]
        games = [
            (await c.request("new_game", code=code))["game"]["id"]
            for c, code in zip(clients, codes, strict=True)
        ]
        proxy.cut_every = 3  # from now on every third COMMIT's answer is lost
        results = await asyncio.gather(
            *(
                play_line(c, g, code, i)
                for i, (c, g, code) in enumerate(zip(clients, games, codes, strict=True))
            )
        )
        proxy.cut_every = 0
        assert proxy.cuts >= 3, proxy.cuts
        for (acknowledged, refusals), game_id, code, client in zip(
            results, games, codes, clients, strict=True
        ):
            stored = await stored_actions(pg_url, game_id)
            assert stored == acknowledged  # acknowledged if and only if stored: the truth
            assert set(refusals) <= {"unavailable"}, refusals
            status, shown = await ahttp("GET", f"{base}/api/games/{game_id}")
            assert status == 200 and shown["state"]["seq"] == len(stored)  # memory equals the database
            replayed = Game.replay(code, [Action.from_text(text) for text in stored])
            assert shown["state"]["fingerprint"] == replayed.fingerprint()
            legal = replayed.legal_actions()[0].to_json()  # later moves work
            assert (await client.act(game_id, len(stored), **legal))["type"] == "result"
        for client in clients:
            await client.close()


def hold_write_lock(path: Path) -> subprocess.Popen[str]:
    """Another process that takes the SQLite file's write lock and keeps it until told to stop."""
    script = (
        "import sqlite3, sys\n"
        f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
        "c.execute('BEGIN IMMEDIATE')\n"
        "print('locked', flush=True)\n"
        "sys.stdin.readline()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def release(holder: subprocess.Popen[str]) -> None:
    """Let the lock go and end the holder; its pipes are closed whatever happens."""
    try:
        if holder.poll() is None and holder.stdin is not None:
            holder.stdin.write("\n")
            holder.stdin.flush()
        holder.wait(timeout=10)
    except (subprocess.TimeoutExpired, OSError):
        holder.kill()
        holder.wait(timeout=10)
    finally:
        for pipe in (holder.stdin, holder.stdout):
            if pipe is not None:
                pipe.close()


async def test_a_locked_sqlite_file_answers_unavailable_soon_and_recovers(tmp_path: Path) -> None:
    path = tmp_path / "solitaire.db"
    url = f"sqlite+aiosqlite:///{path}"
    with running_server(Settings(database_url=url, secret="s")) as base:
        player = await new_player(base, "Locked")
        client = await Client.connect(base, player["token"])
        game_id = (await client.request("new_game", code="HH1-N-AAAAAAM"))["game"]["id"]
        holder = hold_write_lock(path)
        try:
            started = time.monotonic()
            refused = await client.act(game_id, 0, type="draw")  # Client.request waits 10 s at most
            assert refused["type"] == "error" and refused["code"] == "unavailable", refused
            assert time.monotonic() - started < 5 + 1  # the lock wait is bounded, not once per writer
            status, health = await ahttp("GET", f"{base}/health")
            assert status == 200 and health == {"status": "ok"}  # alive: nothing a restart would cure
            status, ready = await ahttp("GET", f"{base}/ready")
            assert status == 200 and ready == {"status": "degraded", "database": "unavailable"}
        finally:
            release(holder)
        deadline = time.monotonic() + 15
        while (await ahttp("GET", f"{base}/ready"))[1]["status"] != "ok":  # recovers alone
            assert time.monotonic() < deadline, "health did not recover"
            await asyncio.sleep(0.1)
        accepted = await client.act(game_id, 0, type="draw")  # nothing was stored: seq 0 again
        assert accepted["type"] == "result" and accepted["state"]["seq"] == 1
        assert await stored_actions(url, game_id) == ["draw"]
        await client.close()


async def test_a_second_process_on_the_same_sqlite_file_refuses_to_start(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'solitaire.db'}"
    with running_server(Settings(database_url=url, secret="s")):
        env = {**os.environ, "SOLITAIRE_DATABASE_URL": url, "SOLITAIRE_SECRET": "s"}
        second = subprocess.run(
            [sys.executable, "-m", "server.cli", "--port", "0", "--log-level", "warning"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 2
        assert "another server process is using" in second.stderr
        assert "Traceback" not in second.stdout + second.stderr  # a clear message, not a crash


@pytest.mark.postgres
async def test_every_http_route_answers_503_json_while_the_database_is_away(pg_url: str) -> None:
    await migrate(pg_url)
    with server_behind_proxy(pg_url) as (proxy, base):
        token = (await new_player(base, "Away"))["token"]
        proxy.stop()
        routes = [
            ("GET", "/api/games", None),
            ("GET", "/api/games/g_x", None),
            ("GET", "/api/games/g_x/actions", None),
            ("GET", "/api/games/g_x/verify", None),
            ("GET", "/api/games/g_x/solution", None),
            ("POST", "/api/players", {"name": "N"}),
            ("GET", "/api/players/p_x", None),
            ("PATCH", "/api/players/me", {"name": "M"}),
            ("GET", "/api/daily", None),
            ("GET", "/api/daily/2026-01-01", None),
            ("GET", "/api/leaderboards/HH1-N-AAAAAAM", None),
            ("GET", "/api/leaderboards/HH1-N-AAAAAAM/players/p_x", None),
            ("POST", "/api/accounts", {"username": "away", "password": "correct horse battery"}),
            ("GET", "/api/accounts/me", None),
            ("POST", "/api/accounts/me/password", {"password": "x" * 12, "new_password": "y" * 12}),
            ("POST", "/api/sessions", {"username": "away", "password": "correct horse battery"}),
            ("GET", "/api/sessions", None),
            ("DELETE", "/api/sessions/current", None),
            ("DELETE", "/api/sessions/s_000000000000", None),
            ("GET", "/api/players/p_x/stats", None),
            ("GET", "/api/players/p_x/games", None),
            ("GET", "/api/games/g_x/replay", None),
        ]
        for method, path, body in routes:
            status, answer = await ahttp(method, base + path, body, token)
            assert status == 503 and answer["error"]["code"] == "unavailable", (path, status, answer)
        assert await ahttp("GET", base + "/health") == (200, {"status": "ok"})
        status, answer = await ahttp("GET", base + "/ready")  # alone: no other instance could do better
        assert status == 200 and answer == {"status": "degraded", "database": "unavailable"}


@pytest.mark.parametrize(
    ("away", "expected"),
    [
        (ProtocolError(ErrorCode.UNAVAILABLE, "the database cannot be written now"), True),
        (ConnectionResetError(104, "Connection reset by peer"), True),
        (ProtocolError(ErrorCode.BAD_MESSAGE, "no"), False),
        (ValueError("a bug"), False),
    ],
)
def test_what_counts_as_the_database_being_away(away: Exception, expected: bool) -> None:
    assert is_away(away) is expected


async def test_background_work_meeting_an_away_database_logs_a_warning_not_a_traceback(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dead-end prover and the solver signals go on, and say so in one line each."""
    dead_ends = DeadEnds(cast(GameService, None), SolverPool())  # never solves: no worker starts
    signals = SolverComparison(cast(Services, None), Deals(SolverPool()))

    async def away(*_: object) -> None:
        raise ProtocolError(ErrorCode.UNAVAILABLE, "the database cannot be written now; nothing was changed")

    monkeypatch.setattr(dead_ends, "check", away)
    monkeypatch.setattr(signals, "analyse", away)
    workers = [asyncio.create_task(dead_ends.queue.run()), asyncio.create_task(signals.queue.run())]
    try:
        with caplog.at_level(logging.WARNING):
            dead_ends.queue.put("g_1", (cast(LiveGame, None), 3))
            signals.queue.put_new("g_2", "SH1-C4-AAAAAJ2")
            deadline = time.monotonic() + 5
            while not (dead_ends.queue.idle.is_set() and signals.queue.idle.is_set()):
                assert time.monotonic() < deadline, "the workers did not get through their queues"
                await asyncio.sleep(0.01)
    finally:
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    said = [(r.levelno, r.getMessage(), r.exc_info) for r in caplog.records]
    assert [level for level, _, _ in said] == [logging.WARNING, logging.WARNING], said
    assert all("database is away" in text and info is None for _, text, info in said), said


async def test_a_pool_with_every_connection_busy_counts_as_the_database_away(pg_url: str) -> None:
    """In a connection storm every pooled connection can be taken past the pool's wait: the
    requests then answer ``unavailable``, as for a database that is away, not a traceback."""
    engine = create_async_engine(pg_url, pool_size=1, max_overflow=0, pool_timeout=0.2)
    try:
        async with engine.connect() as held:
            await held.execute(text("SELECT 1"))
            with pytest.raises(PoolTimeout) as raised:
                async with engine.connect():
                    pass
        assert is_unavailable(raised.value)
    finally:
        await engine.dispose()
