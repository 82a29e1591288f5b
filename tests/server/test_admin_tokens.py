"""Operator tokens: they expire and can be revoked (``admin create-token --expires-in``,
``admin tokens list``, ``admin revoke-token``), each change audited; the shipped balancer
never passes the admin API or /metrics to the public.

The commands run as processes on the database of a real server, which is asked over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from server.config import Settings
from server.features.moderation.model import token_state
from server.features.moderation.service import DAY_MS
from tests.cluster.fleet import balancer
from tests.processes import run
from tests.support import ONE_ADDRESS, ManualClock, ahttp, running_server

ROOT = Path(__file__).resolve().parents[2]


def admin_cli(database_url: str, *args: str, status: int = 0) -> Any:
    """``solitaire-server admin …`` as an operator runs it: its JSON output."""
    argv = [sys.executable, "-m", "server.cli", "admin", "--database-url", database_url, *args]
    done = run(argv, 120, cwd=ROOT)
    assert done.returncode == status, done.stderr + done.stdout
    return json.loads(done.stdout) if done.stdout.strip() else None


def migrate(database_url: str) -> None:
    done = run([sys.executable, "-m", "server.cli", "migrate", "--database-url", database_url], 120, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def status_of(url: str, token: str | None = None) -> int:
    """The HTTP status of a GET, whatever the body is (HAProxy answers its refusals in HTML)."""
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


async def audit_status(base: str, token: str) -> int:
    status, _ = await ahttp("GET", f"{base}/api/admin/audit?limit=1", token=token)
    return status


async def test_expired_and_revoked_tokens_are_refused_and_every_change_is_audited(
    database_url: str,
) -> None:
    await asyncio.to_thread(migrate, database_url)
    clock = ManualClock()
    settings = Settings(database_url=database_url, secret="t", limits=ONE_ADDRESS)
    with running_server(settings, clock) as base:
        alice = await asyncio.to_thread(admin_cli, database_url, "create-token", "alice", "--expires-in", "1")
        bob = await asyncio.to_thread(admin_cli, database_url, "create-token", "bob")
        assert alice["token"].startswith("sa_") and alice["expires_in_days"] == 1
        assert await audit_status(base, alice["token"]) == 200
        assert await audit_status(base, bob["token"]) == 200

        clock.advance(2 * DAY_MS)  # past alice's expiry on the server's clock (started before hers)
        status, body = await ahttp("GET", f"{base}/api/admin/audit", token=alice["token"])
        assert status == 401 and body["error"]["code"] == "bad_token", (status, body)
        assert await audit_status(base, bob["token"]) == 200

        revoked = await asyncio.to_thread(
            admin_cli, database_url, "--operator", "carol", "revoke-token", bob["id"], "--reason", "left"
        )
        assert revoked == {"id": bob["id"], "name": "bob", "revoked": True}
        assert await audit_status(base, bob["token"]) == 401
        status, _ = await ahttp("GET", f"{base}/metrics", token=bob["token"])
        assert status == 401  # the same tokens guard /metrics on the main port

        listed = (await asyncio.to_thread(admin_cli, database_url, "tokens", "list"))["tokens"]
        by_id = {entry["id"]: entry for entry in listed}
        assert by_id[bob["id"]]["state"] == "revoked" and by_id[bob["id"]]["revoked_at"] is not None
        assert by_id[alice["id"]]["expires_at"] - by_id[alice["id"]]["created_at"] == DAY_MS
        assert all(
            set(entry) == {"id", "name", "created_at", "expires_at", "revoked_at", "state"}
            for entry in listed
        )
        assert alice["token"] not in json.dumps(listed)

        missing = await asyncio.to_thread(admin_cli, database_url, "revoke-token", "a_nosuch", status=1)
        assert missing["error"]["code"] == "not_found"

        fresh = await asyncio.to_thread(admin_cli, database_url, "create-token", "dave")
        status, audit = await ahttp("GET", f"{base}/api/admin/audit?limit=10", token=fresh["token"])
    assert status == 200
    actions = [(e["action"], e["target"], e["admin"]["name"], e["reason"]) for e in audit["entries"]]
    assert ("revoke_token", bob["id"], "cli:carol", "left") in actions
    made = {target for action, target, _, _ in actions if action == "create_token"}
    assert {alice["id"], bob["id"], fresh["id"]} <= made


def test_a_token_states_follow_its_times() -> None:
    row = SimpleNamespace(revoked_ms=None, expires_ms=1000)
    assert token_state(row, 999) == "active" and token_state(row, 1000) == "expired"
    assert token_state(SimpleNamespace(revoked_ms=5, expires_ms=None), 1) == "revoked"
    assert token_state(SimpleNamespace(revoked_ms=None, expires_ms=None), 10**15) == "active"


def test_expires_in_must_be_a_number_of_days_above_zero(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'x.db'}"
    for bad in ("0", "-3", "soon"):
        done = run(
            [
                sys.executable,
                "-m",
                "server.cli",
                "admin",
                "--database-url",
                url,
                "create-token",
                "a",
                "--expires-in",
                bad,
            ],
            60,
            cwd=ROOT,
        )
        assert done.returncode == 2 and "days above 0" in done.stderr, done.stderr


async def test_the_balancer_refuses_the_admin_api_and_metrics_to_the_public(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'b.db'}"
    await asyncio.to_thread(migrate, url)
    token = (await asyncio.to_thread(admin_cli, url, "create-token", "ops"))["token"]
    settings = Settings(database_url=url, secret="t", limits=ONE_ADDRESS)
    with running_server(settings) as base:
        port = int(base.rsplit(":", 1)[1])
        with balancer([port]) as front:
            for path in ("/api/admin/audit", "/api/%61dmin/audit", "/api/admin", "/metrics"):
                assert await asyncio.to_thread(status_of, f"{front}{path}", token) == 403, path
            assert await asyncio.to_thread(status_of, f"{front}/health") == 200
            assert await asyncio.to_thread(status_of, f"{base}/api/admin/audit", token) == 200
            assert await asyncio.to_thread(status_of, f"{base}/metrics", token) == 200
