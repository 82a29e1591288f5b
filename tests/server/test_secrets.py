"""Secrets stay secret: URLs are printed with their password as ``***``, and every secret setting
can come from a file (``SOLITAIRE_<NAME>_FILE``, as Docker and Kubernetes mount secrets)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from server.config import SECRET_SETTINGS, Settings, redact_url
from tests.conftest import create_pg_database, drop_pg_database, pg_database_url
from tests.processes import run

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "hunter2-s3cr3t"


@pytest.fixture
def pg_url_with_password() -> Iterator[str]:
    """A fresh PostgreSQL database, its URL carrying a password (trust auth ignores it)."""
    name = create_pg_database()
    try:
        url = make_url(pg_database_url(name)).set(password=PASSWORD)
        yield url.render_as_string(hide_password=False)
    finally:
        drop_pg_database(name)


def clean_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SOLITAIRE_")}
    return {**env, **extra}


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "server.cli", *args]


def test_urls_are_redacted() -> None:
    assert redact_url("postgresql+asyncpg://app:pw@db:5432/s") == "postgresql+asyncpg://app:***@db:5432/s"
    assert redact_url("redis://:pw@cache:6379/0") == "redis://:***@cache:6379/0"
    assert redact_url("rediss://user:p%40ss@cache:6380/1") == "rediss://user:***@cache:6380/1"
    assert (
        redact_url("sqlite+aiosqlite:////srv/data/solitaire.db")
        == "sqlite+aiosqlite:////srv/data/solitaire.db"
    )
    assert redact_url("unix:///run/redis.sock") == "unix:///run/redis.sock"


def test_every_secret_setting_reads_its_file(tmp_path: Path) -> None:
    values = {
        "DATABASE_URL": "postgresql+asyncpg://app:pw@db/s",
        "REDIS_URL": "redis://:pw@cache:6379/0",
        "SECRET": "daily-secret",
    }
    env = {}
    for name, value in values.items():
        path = tmp_path / name.lower()
        path.write_text(value + "\n", encoding="utf-8")  # as `echo` writes it: the newline is dropped
        env[f"SOLITAIRE_{name}_FILE"] = str(path)
    assert set(values) == set(SECRET_SETTINGS)
    settings = Settings.from_env(env)
    assert (settings.database_url, settings.redis_url, settings.secret) == tuple(values.values())


@pytest.mark.parametrize("name", SECRET_SETTINGS)
def test_a_secret_and_its_file_both_set_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / "value"
    path.write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match=f"SOLITAIRE_{name} and SOLITAIRE_{name}_FILE are both set"):
        Settings.from_env({f"SOLITAIRE_{name}": "y", f"SOLITAIRE_{name}_FILE": str(path)})
    with pytest.raises(ValueError, match="cannot read"):
        Settings.from_env({f"SOLITAIRE_{name}_FILE": str(tmp_path / "missing")})


def test_commands_read_the_url_from_its_file_and_never_print_the_password(
    tmp_path: Path, pg_url_with_password: str
) -> None:
    secret_file = tmp_path / "database_url"
    secret_file.write_text(pg_url_with_password + "\n", encoding="utf-8")
    env = clean_env(SOLITAIRE_DATABASE_URL_FILE=str(secret_file))
    outputs = []
    for args in (("migrate",), ("backup", str(tmp_path / "s.dump")), ("admin", "audit")):
        done = run(cli(*args), 120, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout + done.stderr)
    assert all(PASSWORD not in text for text in outputs), outputs
    assert ":***@" in outputs[0] and ":***@" in outputs[1], outputs

    both = run(cli("migrate"), 60, cwd=tmp_path, env={**env, "SOLITAIRE_DATABASE_URL": pg_url_with_password})
    assert both.returncode == 2 and "both set" in both.stderr and PASSWORD not in both.stderr
    admin_both = run(cli("admin", "audit"), 60, cwd=tmp_path, env={**env, "SOLITAIRE_DATABASE_URL": "x"})
    assert admin_both.returncode == 2 and len(admin_both.stderr.strip().splitlines()) == 1, admin_both.stderr


def test_an_unreachable_database_is_named_without_its_password(tmp_path: Path) -> None:
    url = f"postgresql+asyncpg://app:{PASSWORD}@127.0.0.1:1/nothing"  # port 1: nothing listens
    for args in (("migrate",), ("admin", "audit"), ("backup", str(tmp_path / "x"))):
        done = run(
            cli(*args),
            120,
            cwd=tmp_path,
            env=clean_env(SOLITAIRE_DATABASE_URL=url),
        )
        assert done.returncode != 0
        assert PASSWORD not in done.stdout + done.stderr, done.stderr
        assert "Traceback" not in done.stderr and ":***@" in done.stderr, done.stderr
