"""Migrations serialize on a database lock, and only ``migrate`` (or ``serve``'s migrate on start)
changes the schema: every other command refuses a database at another revision, in one line.

Real processes on real databases: three servers started together on an empty PostgreSQL
database, three ``migrate`` commands on one SQLite file, operator commands on an old schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text

from server.cli import READY_LINE
from server.storage.db import alembic_config, make_engine
from server.storage.migrate import head_revision
from tests.conftest import fresh_pg_database
from tests.processes import read_line, run, started
from tests.support import free_port

ROOT = Path(__file__).resolve().parents[2]
SHARED_REDIS = "redis://127.0.0.1:6379/0"
START_TIMEOUT_S = 90.0
OLD_REVISION = "0004"


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_pg_database() as url:
        yield url


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "server.cli", *args]


def env_for(database_url: str, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SOLITAIRE_")}
    return {**env, "SOLITAIRE_DATABASE_URL": database_url, **extra}


async def revision_of(url: str) -> str | None:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalar()
    finally:
        await engine.dispose()


def test_three_servers_started_together_on_an_empty_postgres_database_all_come_up(pg_url: str) -> None:
    """Each migrates on start; without the lock two of them died creating the same types."""
    prefix = f"mlock{os.getpid()}"
    with contextlib.ExitStack() as stack:
        procs = []
        for _ in range(3):
            env = env_for(
                pg_url,
                SOLITAIRE_PORT=str(free_port()),
                SOLITAIRE_REDIS_URL=SHARED_REDIS,
                SOLITAIRE_REDIS_PREFIX=prefix,
                SOLITAIRE_SECRET="s",
                SOLITAIRE_DRAIN_S="0",
            )
            argv = cli("--log-level", "warning")
            procs.append(
                stack.enter_context(
                    started(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                )
            )
        up = 0
        failures = []
        for proc in procs:
            try:
                read_line(proc, START_TIMEOUT_S, READY_LINE.encode())
                up += 1
            except (EOFError, TimeoutError) as exc:
                assert proc.stderr is not None
                failures.append(f"{exc}\n{proc.stderr.read().decode(errors='replace')[-1500:]}")
        assert up == 3, f"{up} of 3 up:\n" + "\n".join(failures)
    assert asyncio.run(revision_of(pg_url)) == head_revision()


def test_three_migrate_commands_at_once_on_one_sqlite_file(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'solitaire.db'}"
    with contextlib.ExitStack() as stack:
        procs = [
            stack.enter_context(
                started(
                    cli("migrate"),
                    cwd=ROOT,
                    env=env_for(url),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
            for _ in range(3)
        ]
        results = [(proc.wait(timeout=120), proc.stderr.read() if proc.stderr else "") for proc in procs]
    assert [code for code, _ in results] == [0, 0, 0], results
    assert asyncio.run(revision_of(url)) == head_revision()


def old_database(url: str) -> None:
    """A database migrated by an older release: at revision 0004."""
    command.upgrade(alembic_config(url), OLD_REVISION)


@pytest.mark.parametrize("args", [("admin", "audit"), ("admin", "flagged"), ("backup", "copy.db")])
def test_commands_other_than_migrate_refuse_an_old_schema_in_one_line(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'solitaire.db'}"
    old_database(url)
    done = run(cli(*args), 60, cwd=tmp_path, env=env_for(url))
    assert done.returncode != 0, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert OLD_REVISION in lines[0] and head_revision() in lines[0], lines[0]
    assert "run `solitaire-server migrate`" in lines[0], lines[0]
    assert asyncio.run(revision_of(url)) == OLD_REVISION  # nothing migrated it
    assert not (tmp_path / "copy.db").exists()


def test_an_empty_database_is_refused_and_migrate_then_serves_the_command(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'solitaire.db'}"
    refused = run(cli("admin", "audit"), 60, cwd=tmp_path, env=env_for(url))
    assert refused.returncode != 0
    assert "run `solitaire-server migrate`" in refused.stderr and "Traceback" not in refused.stderr
    migrated = run(cli("migrate"), 60, cwd=tmp_path, env=env_for(url))
    assert migrated.returncode == 0, migrated.stderr
    audit = run(cli("admin", "audit"), 60, cwd=tmp_path, env=env_for(url))
    assert audit.returncode == 0, audit.stderr
    assert '"entries": []' in audit.stdout


def test_serve_without_migrate_on_start_refuses_an_old_schema(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'solitaire.db'}"
    old_database(url)
    env = env_for(url, SOLITAIRE_MIGRATE_ON_START="0", SOLITAIRE_PORT=str(free_port()))
    done = run(cli("--log-level", "warning"), 60, cwd=tmp_path, env=env)
    assert done.returncode != 0
    assert "run `solitaire-server migrate`" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert asyncio.run(revision_of(url)) == OLD_REVISION
