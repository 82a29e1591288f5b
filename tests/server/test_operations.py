"""What operators use: /metrics (never public), JSON log lines with connection and request ids,
and backup FILE."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest
import uvloop

from engine import Game
from server.cli import READY_LINE, build_parser, run_loop, settings_from_args
from server.clock import wall_clock_ms
from server.config import Settings, listen_address
from server.features.moderation.service import Moderation
from server.logs import CONNECTION, REQUEST, JsonFormatter
from server.solver.pool import WORKER
from server.storage.db import Database, migrate
from tests import processes
from tests.support import ONE_ADDRESS, Client, free_port, new_player, running_server

ROOT = Path(__file__).resolve().parents[2]


def metric(text: str, name: str) -> float:
    """The value of one sample line (``name`` with its labels, as printed)."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


def scrape(url: str, token: str | None = None) -> tuple[int, str]:
    """GET a metrics page (status, body), with an ``Authorization: Bearer`` token if given."""
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.headers["content-type"].startswith("text/plain")
            return response.status, str(response.read().decode())
    except urllib.error.HTTPError as exc:
        return exc.code, str(exc.read().decode())


async def metrics_text(url: str, token: str | None = None) -> str:
    status, text = await asyncio.to_thread(scrape, url, token)
    assert status == 200, text
    return text


async def operator_token(database_url: str) -> str:
    """An operator's token, made as ``solitaire-server admin create-token`` makes one."""
    await migrate(database_url)
    db = Database.open(database_url)
    try:
        _, token = await Moderation(db, wall_clock_ms).create_token("ops", ("cli", "cli:ops"))
    finally:
        await db.dispose()
    return token


async def test_metrics_count_actions_refusals_commits_and_connections(tmp_path: Path) -> None:
    listen = f"127.0.0.1:{free_port()}"
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'm.db'}",
        secret="t",
        limits=ONE_ADDRESS,
        metrics_listen=listen,
    )
    with running_server(settings) as base:
        scraped = f"http://{listen}/metrics"
        before = await metrics_text(scraped)
        player = await new_player(base)
        client = await Client.connect(base, player["token"])
        game = (await client.request("new_game", game="SH", variant="C4"))["game"]
        action = Game.new(game["code"]).legal_actions()[0].to_json()
        assert (await client.act(game["id"], 0, **action))["type"] == "result"
        assert (await client.act(game["id"], 5, **action))["code"] == "stale"
        after = await metrics_text(scraped)
        assert metric(after, "solitaire_connections") >= 1
        assert metric(after, "solitaire_event_loop_tasks") >= 2  # this connection's and the listener's
        await client.close()
    assert metric(after, "solitaire_actions_total") == metric(before, "solitaire_actions_total") + 1
    stale = 'solitaire_refusals_total{code="stale"}'
    assert metric(after, stale) == metric(before, stale) + 1
    acts = 'solitaire_requests_total{type="act"}'
    assert metric(after, acts) == metric(before, acts) + 1
    assert metric(after, "solitaire_commit_batch_writes_count") > metric(
        before, "solitaire_commit_batch_writes_count"
    )
    assert metric(after, "solitaire_commit_seconds_count") > metric(before, "solitaire_commit_seconds_count")


async def test_metrics_are_never_public(tmp_path: Path) -> None:
    """On the main port only to an operator's token (401 without one, or with a player's); with
    a listener of their own, served there without a token and not on the main port at all."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'p.db'}"
    operator = await operator_token(url)
    with running_server(Settings(database_url=url, secret="t", limits=ONE_ADDRESS)) as base:
        player = await new_player(base)
        for token in (None, player["token"], "sa_not-a-token"):
            status, body = await asyncio.to_thread(scrape, f"{base}/metrics", token)
            assert status == 401 and json.loads(body)["error"]["code"] == "bad_token", (token, body)
        assert "solitaire_actions_total" in await metrics_text(f"{base}/metrics", operator)

    listen = f"127.0.0.1:{free_port()}"
    separate = Settings(database_url=url, secret="t", limits=ONE_ADDRESS, metrics_listen=listen)
    with running_server(separate) as base:
        for token in (None, operator):
            status, body = await asyncio.to_thread(scrape, f"{base}/metrics", token)
            assert status == 404 and "solitaire_" not in body, (token, body)  # as any unknown page
        assert "solitaire_actions_total" in await metrics_text(f"http://{listen}/metrics")
        status, _ = await asyncio.to_thread(scrape, f"http://{listen}/api/daily")
        assert status == 404  # the listener serves the metrics and nothing else
    with pytest.raises(OSError):  # closed with the server
        await asyncio.to_thread(scrape, f"http://{listen}/metrics")


def test_the_metrics_listener_address_is_checked_at_start() -> None:
    for bad in ("9100", "localhost:", ":9100", "host:99999", "host:port"):
        with pytest.raises(ValueError):
            Settings(metrics_listen=bad)
    assert Settings.from_env({"SOLITAIRE_METRICS_LISTEN": "[::1]:9100"}).metrics_listen == "[::1]:9100"
    assert listen_address("[::1]:9100") == ("::1", 9100)
    args = build_parser().parse_args(["--metrics-listen", "10.0.0.5:9100"])
    assert settings_from_args(args).metrics_listen == "10.0.0.5:9100"


async def test_the_games_held_in_memory_are_bounded_by_a_setting(tmp_path: Path) -> None:
    """``SOLITAIRE_LIVE_GAMES`` bounds the live cache (memory, docs/operations.md); a game past
    the bound is read back from storage and plays on."""
    from server.app import build_services

    settings = Settings.from_env(
        {"SOLITAIRE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'l.db'}", "SOLITAIRE_LIVE_GAMES": "2"}
    )
    assert settings.live_games == 2
    assert build_services(settings, wall_clock_ms).games.cache_size == 2
    with running_server(Settings(**{**settings.__dict__, "secret": "t", "limits": ONE_ADDRESS})) as base:
        client = await Client.connect(base, (await new_player(base))["token"])
        games = [(await client.request("new_game", game="SH", variant="C4"))["game"] for _ in range(3)]
        first = games[0]  # the oldest: no longer held, read back for its action
        action = Game.new(first["code"]).legal_actions()[0].to_json()
        assert (await client.act(first["id"], 0, **action))["type"] == "result"
        await client.close()


def test_a_json_log_line_names_the_connection_and_the_request() -> None:
    record = logging.LogRecord(
        "server.edge.ws", logging.WARNING, __file__, 1, "request %r: %s", ("act", "x"), None
    )
    connection, request = CONNECTION.set("c1-7"), REQUEST.set(42)
    try:
        line = json.loads(JsonFormatter().format(record))
    finally:
        CONNECTION.reset(connection)
        REQUEST.reset(request)
    assert line["level"] == "warning" and line["logger"] == "server.edge.ws"
    assert line["message"] == "request 'act': x"
    assert line["connection"] == "c1-7" and line["request"] == 42
    assert line["time"].endswith("Z")


def wait_until_ready(proc: subprocess.Popen[bytes], log_file: Path) -> None:
    """Until the server's log says it is ready (60 s at most; it must not have ended)."""
    deadline = time.monotonic() + 60
    while READY_LINE not in log_file.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log_file.read_text()[-2000:]
        time.sleep(0.05)


def test_the_server_logs_json_lines_with_log_format_json(tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "SOLITAIRE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'j.db'}",
        "SOLITAIRE_PORT": str(free_port()),
    }
    argv = [sys.executable, "-m", "server.cli", "--log-format", "json", "--log-level", "info"]
    log_file = tmp_path / "server.log"
    with (
        log_file.open("wb") as out,
        processes.started(argv, cwd=ROOT, env=env, stdout=out, stderr=out) as proc,
    ):
        wait_until_ready(proc, log_file)
        processes.end(proc)
    rest = log_file.read_text()
    lines = [line for line in rest.splitlines() if line and READY_LINE not in line]
    assert len(lines) >= 2, rest  # uvicorn's own lines come through the JSON handler too
    for line in lines:
        entry = json.loads(line)
        assert {"time", "level", "logger", "message"} <= set(entry)


async def test_backup_copies_a_live_sqlite_database(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'live.db'}"
    target = tmp_path / "copies" / "backup.db"
    with running_server(Settings(database_url=url, secret="t", limits=ONE_ADDRESS)) as base:
        player = await new_player(base)
        client = await Client.connect(base, player["token"])
        game = (await client.request("new_game", game="SH", variant="C4"))["game"]
        action = Game.new(game["code"]).legal_actions()[0].to_json()
        assert (await client.act(game["id"], 0, **action))["type"] == "result"
        done = await asyncio.to_thread(
            processes.run,
            [sys.executable, "-m", "server.cli", "backup", str(target), "--database-url", url],
            60,
            cwd=ROOT,
        )
        await client.close()
    assert done.returncode == 0, done.stderr
    assert "backed up" in done.stdout
    copy = sqlite3.connect(target)
    try:
        assert copy.execute("SELECT count(*) FROM actions WHERE game_id = ?", (game["id"],)).fetchone() == (
            1,
        )
        assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        copy.close()


def test_redis_with_sqlite_is_refused_at_start(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "server.cli", "--redis-url", "redis://127.0.0.1:6379/0"]
    argv += ["--database-url", f"sqlite+aiosqlite:///{tmp_path / 'x.db'}"]
    done = processes.run(argv, 60, cwd=ROOT)
    assert done.returncode == 2 and "PostgreSQL" in done.stderr


def test_the_server_runs_on_uvloop_where_it_is_installed() -> None:
    """The command's loop is uvloop's (installed with uvicorn[standard] on Linux and macOS)."""
    seen: list[type[asyncio.AbstractEventLoop]] = []

    async def record() -> None:
        seen.append(type(asyncio.get_running_loop()))

    run_loop(record())
    assert seen == [uvloop.Loop]


async def test_a_server_that_solved_stops_without_a_warning_or_a_traceback(tmp_path: Path) -> None:
    """Stopped while its solver worker starts or solves: the worker is ended, and the lost solve
    is one line, no traceback."""
    port = free_port()
    env = {
        "PATH": "/usr/bin:/bin",
        "SOLITAIRE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 's.db'}",
        "SOLITAIRE_PORT": str(port),
    }
    log_file = tmp_path / "server.log"
    argv = [sys.executable, "-m", "server.cli", "--log-level", "info"]
    with (
        log_file.open("wb") as out,
        processes.started(argv, cwd=ROOT, env=env, stdout=out, stderr=out) as proc,
    ):
        await asyncio.to_thread(wait_until_ready, proc, log_file)
        deadline = time.monotonic() + 60
        base = f"http://127.0.0.1:{port}"
        client = await Client.connect(base, (await new_player(base))["token"])
        game = (await client.request("new_game", game="SH", variant="C4"))["game"]
        action = Game.new(game["code"]).legal_actions()[0].to_json()
        assert (await client.act(game["id"], 0, **action))["type"] == "result"  # a dead-end check
        await client.close()
        while not any(WORKER in c.cmdline() for c in psutil.Process(proc.pid).children()):
            assert time.monotonic() < deadline, "the solver's worker started"
            await asyncio.sleep(0.05)
        processes.end(proc)
    text = log_file.read_text()
    assert "Traceback" not in text and "leaked" not in text and "Warning:" not in text, text[-3000:]
