"""What an operator watches: action latency, HTTP and WebSocket metrics with bounded labels, the
build, request ids, JSON-only logs, quiet health checks, the migration and Redis lines, the pool."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import websockets

from engine import Game
from server import metrics
from server.app import build_services
from server.cli import READY_LINE, build_parser, settings_from_args
from server.clock import wall_clock_ms
from server.cluster import link as redis_link
from server.cluster import node as redis_cluster
from server.cluster.node import RedisCluster
from server.config import Settings
from server.edge.request_id import request_id
from server.logs import QuietHealthChecks
from server.metrics import BUILD, source_revision
from server.storage.db import Database, migrate_logged
from tests import processes
from tests.support import ONE_ADDRESS, Client, free_port, new_player, running_server

ROOT = Path(__file__).resolve().parents[2]
PG_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/pool_only_never_opened"


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one series (``name`` with exactly these labels), 0 when it is absent."""
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        series, _, rest = head.partition("{")
        found = dict(re.findall(r'(\w+)="([^"]*)"', rest))
        if series == name and found == labels:
            return float(value)
    return 0.0


def series(text: str, name: str) -> list[str]:
    """Every series line of one metric name."""
    return [line for line in text.splitlines() if line.startswith(name + "{") or line.startswith(name + " ")]


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers)


def serving(tmp_path: Path) -> tuple[Settings, str]:
    listen = f"127.0.0.1:{free_port()}"
    url = f"sqlite+aiosqlite:///{tmp_path / 'o.db'}"
    return Settings(database_url=url, secret="t", limits=ONE_ADDRESS, metrics_listen=listen), listen


async def test_each_action_is_timed_end_to_end_in_seconds(tmp_path: Path) -> None:
    settings, listen = serving(tmp_path)
    with running_server(settings) as base:
        page = f"http://{listen}/metrics"
        before = await asyncio.to_thread(scrape, page)
        client = await Client.connect(base, (await new_player(base))["token"])
        game = (await client.request("new_game", game="SH", variant="C4"))["game"]
        actions = Game.new(game["code"]).legal_actions()
        assert (await client.act(game["id"], 0, **actions[0].to_json()))["type"] == "result"
        refused = await client.act(game["id"], 99, **actions[0].to_json())  # a seq not reached yet
        assert refused["type"] in ("result", "error")
        await client.close()
        after = await asyncio.to_thread(scrape, page)
    count = sample(after, "solitaire_action_seconds_count") - sample(before, "solitaire_action_seconds_count")
    assert count == 2  # an answer or a refusal: both are what the player waits for
    took = sample(after, "solitaire_action_seconds_sum") - sample(before, "solitaire_action_seconds_sum")
    assert 0 < took < 10  # seconds, not milliseconds
    assert 'le="0.001"' in "\n".join(series(after, "solitaire_action_seconds_bucket"))


async def test_http_requests_are_counted_by_route_template_with_bounded_labels(tmp_path: Path) -> None:
    settings, listen = serving(tmp_path)
    with running_server(settings) as base:
        page = f"http://{listen}/metrics"
        await asyncio.to_thread(get, f"{base}/health")
        before = await asyncio.to_thread(scrape, page)
        paths = [f"/{secrets.token_hex(6)}/{secrets.token_hex(4)}" for _ in range(100)]
        paths += [f"/api/players/p_{secrets.token_hex(6)}" for _ in range(50)]
        paths += [f"/api/{secrets.token_hex(5)}?q={secrets.token_hex(3)}" for _ in range(50)]
        for path in paths:
            await asyncio.to_thread(get, base + path)
        status, _ = await asyncio.to_thread(get, f"{base}/health")
        assert status == 200
        after = await asyncio.to_thread(scrape, page)
    grown = len(series(after, "solitaire_http_requests_total")) - len(
        series(before, "solitaire_http_requests_total")
    )
    assert grown <= 6, series(after, "solitaire_http_requests_total")  # 200 paths, a few templates
    buckets = len(series(after, "solitaire_http_request_seconds_bucket")) - len(
        series(before, "solitaire_http_request_seconds_bucket")
    )
    assert buckets <= 6 * 14  # the registry is the process's: only growth tells (14 buckets a series)
    assert not any(path.split("?")[0] in after for path in paths)
    assert sample(after, "solitaire_http_requests_total", method="GET", route="/health", status="2xx") >= 2
    assert sample(
        after, "solitaire_http_requests_total", method="GET", route="/api/players/{player_id}", status="4xx"
    ) or sample(after, "solitaire_http_requests_total", method="GET", route="/{path}", status="4xx")


def test_a_method_or_status_a_client_makes_up_is_one_label() -> None:
    assert metrics.http_method("BREW") == metrics.http_method("PROPFIND") == "other"
    assert metrics.status_class(204) == "2xx" and metrics.status_class(0) == "other"
    before = metrics.http_of.cache_info().currsize
    for _ in range(50):
        metrics.http_of("/x", metrics.http_method(secrets.token_hex(4)), metrics.status_class(599))
    assert metrics.http_of.cache_info().currsize <= before + 1


async def test_websocket_closes_are_counted_by_code(tmp_path: Path) -> None:
    settings, listen = serving(tmp_path)
    page = f"http://{listen}/metrics"
    with running_server(settings) as base:
        before = await asyncio.to_thread(scrape, page)
        ws = await websockets.connect(base.replace("http", "ws", 1) + "/ws")
        await ws.recv()  # hello
        await ws.send(json.dumps({"type": "ping", "id": 1}))  # not auth: closed with 4401
        with pytest.raises(websockets.ConnectionClosed):
            while True:
                await asyncio.wait_for(ws.recv(), 10)
        assert ws.close_code == 4401
        client = await Client.connect(base)
        await client.close()  # the client's own 1000
        deadline = time.monotonic() + 10
        while True:
            after = await asyncio.to_thread(scrape, page)
            if sample(after, "solitaire_ws_closes_total", code="1000") > sample(
                before, "solitaire_ws_closes_total", code="1000"
            ):
                break
            assert time.monotonic() < deadline, series(after, "solitaire_ws_closes_total")
            await asyncio.sleep(0.05)

    def grew(code: str) -> float:
        return sample(after, "solitaire_ws_closes_total", code=code) - sample(
            before, "solitaire_ws_closes_total", code=code
        )

    assert grew("4401") == 1 and grew("1000") == 1
    metrics.ws_closed(4999)
    metrics.ws_closed(3999)
    assert {"other"} == {
        code
        for code in ("4999", "3999", "other")
        if f'code="{code}"' in "\n".join(series(metrics_text(), "solitaire_ws_closes_total"))
    }


def metrics_text() -> str:
    from prometheus_client import generate_latest

    return generate_latest().decode()


async def test_the_build_is_a_metric_and_in_hello(tmp_path: Path) -> None:
    settings, listen = serving(tmp_path)
    with running_server(settings) as base:
        text = await asyncio.to_thread(scrape, f"http://{listen}/metrics")
        client = await Client.connect(base)
        hello = client.hello
        await client.close()
    assert sample(text, "solitaire_build_info", version=BUILD.version, revision=BUILD.revision) == 1
    assert hello["revision"] == BUILD.revision
    assert hello["server"] == f"solitaire-server {BUILD.version}"
    from importlib.metadata import version

    assert BUILD.version == version("solitaire-server")


def test_the_revision_comes_from_the_environment_then_git_then_unknown(tmp_path: Path) -> None:
    assert source_revision({"SOLITAIRE_REVISION": " abc1234 "}) == "abc1234"
    assert len(source_revision({"SOLITAIRE_REVISION": "x" * 100})) == 40
    assert source_revision({}, root=tmp_path) == "unknown"  # not a checkout
    checkout = tmp_path / "repo"
    checkout.mkdir()
    git = ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True, timeout=30)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True, timeout=30)
    short = subprocess.run(
        [*git, "rev-parse", "--short", "HEAD"], check=True, timeout=30, capture_output=True, text=True
    ).stdout.strip()
    assert source_revision({}, root=checkout) == short
    (checkout / ".git" / "HEAD").write_text("garbage\n")  # a broken checkout: unknown, not an error
    assert source_revision({}, root=checkout) == "unknown"


async def test_every_http_request_gets_an_id_in_its_answer(tmp_path: Path) -> None:
    settings, _ = serving(tmp_path)
    with running_server(settings) as base:
        _, made = await asyncio.to_thread(get, f"{base}/health")
        _, kept = await asyncio.to_thread(get, f"{base}/nope", {"X-Request-ID": "lb-42.abc"})
        _, bad = await asyncio.to_thread(get, f"{base}/health", {"X-Request-ID": "a b\u00e9" + "x" * 200})
    assert re.fullmatch(r"[0-9a-f]{16}", made["x-request-id"])
    assert kept["x-request-id"] == "lb-42.abc"
    assert re.fullmatch(r"[0-9a-f]{16}", bad["x-request-id"])
    assert request_id([(b"X-Request-Id", b"ok-1")]) == "ok-1"
    assert request_id([(b"x-request-id", b"x" * 129)]) != "x" * 129


def access_record(path: str, status: int) -> logging.LogRecord:
    args = ("127.0.0.1:5", "GET", path, "1.1", status)
    return logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d', args, None
    )


def test_passing_health_checks_leave_no_access_line() -> None:
    quiet = QuietHealthChecks()
    assert not quiet.filter(access_record("/health", 200))
    assert not quiet.filter(access_record("/ready?x=1", 200))
    assert quiet.filter(access_record("/ready", 503))  # a failing check is logged
    assert quiet.filter(access_record("/api/players", 200))


def test_the_server_output_is_json_line_by_line(tmp_path: Path) -> None:
    """The real process: every line of stdout and stderr together parses as a JSON record."""
    port = free_port()
    env = {
        "PATH": "/usr/bin:/bin",
        "SOLITAIRE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'j.db'}",
        "SOLITAIRE_PORT": str(port),
        "SOLITAIRE_REVISION": "feedbee",
    }
    argv = [sys.executable, "-m", "server.cli", "--log-format", "json", "--log-level", "info"]
    log_file = tmp_path / "server.log"
    base = f"http://127.0.0.1:{port}"
    with (
        log_file.open("wb") as out,
        processes.started(argv, cwd=ROOT, env=env, stdout=out, stderr=out) as proc,
    ):
        deadline = time.monotonic() + 60
        while READY_LINE not in log_file.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log_file.read_text()[-2000:]
            time.sleep(0.05)
        for _ in range(3):
            assert get(f"{base}/health")[0] == 200
            assert get(f"{base}/ready")[0] == 200
        status, headers = get(f"{base}/api/no-such-thing", {"X-Request-ID": "trace-7"})
        assert status == 404 and headers["x-request-id"] == "trace-7"
        processes.end(proc)
    entries = [json.loads(line) for line in log_file.read_text().splitlines() if line.strip()]
    messages = [entry["message"] for entry in entries]
    ready = [entry for entry in entries if READY_LINE in entry["message"]]
    assert len(ready) == 1 and ready[0]["url"] == f"{base}/", entries
    assert any(m.startswith("database migrated from an empty schema to ") for m in messages), messages
    assert any("Application startup complete" in m for m in messages)  # uvicorn's own, as JSON
    access = [entry for entry in entries if entry["logger"] == "uvicorn.access"]
    assert not [e for e in access if "/health" in e["message"] or "/ready" in e["message"]], access
    assert len(access) == 1 and "/api/no-such-thing" in access[0]["message"], access
    assert access[0]["request_id"] == "trace-7"


async def test_a_migration_on_start_says_from_and_to(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'm.db'}"
    with caplog.at_level(logging.INFO, logger="server.storage.db"):
        before, after = await migrate_logged(url)
        again = await migrate_logged(url)
    assert before is None and after and again == (after, after)
    lines = [r.getMessage() for r in caplog.records if r.name == "server.storage.db"]
    assert lines == [
        f"database migrated from an empty schema to {after}",
        f"database schema at {after}: no migration to run",
    ]


async def test_an_unreachable_redis_is_logged_once_and_its_return_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    attempts = 0
    down = True
    real = redis_link.open_link

    async def gated(endpoint: Any, on_reply: Any) -> Any:
        nonlocal attempts
        attempts += 1
        if down:
            raise ConnectionRefusedError(111, "Connection refused")
        return await real(endpoint, on_reply)

    monkeypatch.setattr(redis_cluster, "open_link", gated)
    monkeypatch.setattr(redis_cluster, "RETRY_S", 0.01)
    db = Database.open(f"sqlite+aiosqlite:///{tmp_path / 'r.db'}")
    cluster = RedisCluster("redis://127.0.0.1:6379/0", f"obs{secrets.token_hex(3)}", db)
    caplog.set_level(logging.WARNING, logger="server.cluster.node")
    listening = asyncio.get_running_loop().create_task(cluster._listen())
    try:
        deadline = time.monotonic() + 10
        while attempts < 20:
            assert time.monotonic() < deadline and not listening.done()
            await asyncio.sleep(0.01)
        lines = [r.getMessage() for r in caplog.records]
        assert len(lines) == 1 and lines[0].startswith("redis: unreachable"), lines
        down = False
        while not cluster.connected:
            assert time.monotonic() < deadline + 10 and not listening.done()
            await asyncio.sleep(0.01)
        lines = [r.getMessage() for r in caplog.records]
        assert len(lines) == 2 and lines[1].startswith("redis: subscribed again"), lines
    finally:
        listening.cancel()
        with pytest.raises(asyncio.CancelledError):
            await listening
        await cluster.redis.aclose()
        await db.dispose()


def test_the_postgres_pool_is_sized_by_flags_or_environment() -> None:
    env = {"SOLITAIRE_DATABASE_URL": PG_URL, "SOLITAIRE_DB_POOL_SIZE": "4", "SOLITAIRE_DB_MAX_OVERFLOW": "0"}
    from_env = Settings.from_env(env)
    assert (from_env.db_pool_size, from_env.db_max_overflow) == (4, 0)
    args = build_parser().parse_args(
        ["--database-url", PG_URL, "--db-pool-size", "3", "--db-max-overflow", "7"]
    )
    settings = settings_from_args(args)
    services = build_services(settings, wall_clock_ms)  # builds the engine; opens no connection
    pool: Any = services.db.engine.pool
    assert (pool.size(), pool._max_overflow) == (3, 7)
    default: Any = Database.open(PG_URL).engine.pool
    assert (default.size(), default._max_overflow) == (10, 10)
    with pytest.raises(ValueError):
        Settings(db_pool_size=0)
