"""``backup FILE`` and ``restore FILE`` with each database's own tools.

SQLite: the online backup API (a consistent copy while the server writes, and
the same API back into the file). PostgreSQL: ``pg_dump --format=custom`` and
``pg_restore --clean --if-exists``, given the libpq form of the SQLAlchemy URL
(its ``+asyncpg`` driver name taken off).
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

from sqlalchemy.engine import make_url

from server.storage.db import LOCK_WAIT_S, backup_sqlite, is_sqlite


class BackupFailed(RuntimeError):
    """The copy or the restore did not complete; the message says why, in one line."""


def libpq_url(url: str) -> str:
    """``postgresql+asyncpg://u:p@h/db`` as ``postgresql://u:p@h/db``, what pg_dump takes."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _sqlite_file(url: str) -> Path:
    database = make_url(url).database
    if not database or database == ":memory:":
        raise BackupFailed("an in-memory SQLite database has nothing to back up or restore")
    return Path(database)


def _pg_tool(argv: list[str]) -> None:
    if shutil.which(argv[0]) is None:
        raise BackupFailed(f"{argv[0]} is not installed (Debian: postgresql-client)")
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise BackupFailed(lines[0] if lines else f"{argv[0]} exited with {done.returncode}")


def backup(url: str, target: str) -> str:
    """Write a consistent copy of the database to ``target``; says what was written."""
    if is_sqlite(url):
        try:
            pages = backup_sqlite(url, target)
        except (OSError, sqlite3.Error) as exc:
            raise BackupFailed(str(exc)) from None
        return f"{pages} pages"
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    _pg_tool(["pg_dump", "--format=custom", "--file", target, "--dbname", libpq_url(url)])
    return f"pg_dump custom format, {Path(target).stat().st_size} bytes"


def restore(url: str, source: str) -> None:
    """Replace the database's contents with a backup's (stop the servers on it first)."""
    if not Path(source).is_file():
        raise BackupFailed(f"no backup at {source}")
    if is_sqlite(url):
        _restore_sqlite(source, _sqlite_file(url))
        return
    _pg_tool(
        [
            "pg_restore",
            "--clean",
            "--if-exists",  # a fresh database has nothing to drop: no errors for it
            "--no-owner",
            "--single-transaction",  # all of it or nothing
            "--dbname",
            libpq_url(url),
            source,
        ]
    )


def _restore_sqlite(source: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        origin = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        try:
            origin.execute("PRAGMA schema_version").fetchone()  # "file is not a database" here
            destination = sqlite3.connect(target, timeout=LOCK_WAIT_S)
            try:
                origin.backup(destination, pages=1024)
            finally:
                destination.close()
        finally:
            origin.close()
    except sqlite3.Error as exc:
        raise BackupFailed(f"{source}: {exc}") from None
