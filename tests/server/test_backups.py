"""``backup FILE`` and ``restore FILE`` with each database's own tools, as an operator runs them:
SQLite's online backup API, PostgreSQL's pg_dump and pg_restore."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.config import Settings
from server.storage.backups import libpq_url
from tests.conftest import create_pg_database, drop_pg_database, pg_database_url
from tests.processes import run
from tests.support import ONE_ADDRESS, running_server

ROOT = Path(__file__).resolve().parents[2]


def cli(url: str, *args: str, cwd: Path = ROOT) -> tuple[int, str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SOLITAIRE_")}
    done = run(
        [sys.executable, "-m", "server.cli", *args], 120, cwd=cwd, env={**env, "SOLITAIRE_DATABASE_URL": url}
    )
    return done.returncode, done.stdout, done.stderr


def token_names(url: str) -> list[str]:
    status, out, err = cli(url, "admin", "tokens", "list")
    assert status == 0, err
    return [entry["name"] for entry in json.loads(out)["tokens"]]


@pytest.fixture
def two_pg_databases() -> Iterator[tuple[str, str]]:
    names = [create_pg_database(), create_pg_database()]
    try:
        yield pg_database_url(names[0]), pg_database_url(names[1])
    finally:
        for name in names:
            drop_pg_database(name)


def test_libpq_url_is_the_sqlalchemy_url_without_its_driver() -> None:
    assert libpq_url("postgresql+asyncpg://u:p@h:5433/db") == "postgresql://u:p@h:5433/db"
    assert libpq_url("postgresql://u@h/db") == "postgresql://u@h/db"


def test_sqlite_backup_and_restore(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'solitaire.db'}"
    assert cli(url, "migrate")[0] == 0
    assert cli(url, "admin", "create-token", "kept")[0] == 0
    status, out, err = cli(url, "backup", str(tmp_path / "copy.db"))
    assert status == 0 and "backed up" in out, err
    assert cli(url, "admin", "create-token", "after")[0] == 0
    assert token_names(url) == ["kept", "after"]

    status, out, err = cli(url, "restore", str(tmp_path / "copy.db"))
    assert status == 0 and "restored" in out, err
    assert token_names(url) == ["kept"]
    check = sqlite3.connect(tmp_path / "solitaire.db")
    try:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        check.close()

    not_a_db = tmp_path / "junk"
    not_a_db.write_bytes(b"not a database" * 100)
    status, _, err = cli(url, "restore", str(not_a_db))
    assert status == 1 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert token_names(url) == ["kept"]


def test_restore_refuses_a_sqlite_file_a_server_has_open(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'live.db'}"
    with running_server(Settings(database_url=url, secret="t", limits=ONE_ADDRESS)):
        assert cli(url, "backup", str(tmp_path / "copy.db"))[0] == 0  # while it runs: fine
        status, _, err = cli(url, "restore", str(tmp_path / "copy.db"))
    assert status == 2 and "stop it before restoring" in err, err


def test_postgres_backup_and_restore_into_a_fresh_database(
    tmp_path: Path, two_pg_databases: tuple[str, str]
) -> None:
    source, fresh = two_pg_databases
    assert cli(source, "migrate")[0] == 0
    assert cli(source, "admin", "create-token", "kept")[0] == 0
    dump = tmp_path / "solitaire.dump"
    status, out, err = cli(source, "backup", str(dump))
    assert status == 0 and "pg_dump" in out, err
    assert dump.read_bytes()[:5] == b"PGDMP"  # the custom format

    status, out, err = cli(fresh, "restore", str(dump))  # nothing to clean there: --if-exists
    assert status == 0 and err == "", err
    assert token_names(fresh) == ["kept"]
    assert cli(fresh, "admin", "create-token", "after")[0] == 0
    status, _, err = cli(fresh, "restore", str(dump))  # over a database in use: --clean
    assert status == 0, err
    assert token_names(fresh) == ["kept"]


def test_backup_and_restore_need_their_file(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'x.db'}"
    for command in ("backup", "restore"):
        status, _, err = cli(url, command)
        assert status == 2 and "FILE" in err, err
    status, _, err = cli(url, "restore", str(tmp_path / "nothing"))
    assert status == 1 and "no backup at" in err, err
