"""The operator docs' command blocks marked runnable run as written and succeed.

A block is marked by its fence's info string: ```` ```sh runnable ```` runs in a fresh
temporary folder against a fresh SQLite database (``SOLITAIRE_DATABASE_URL``), ```` ```sh
runnable postgres ```` against a fresh PostgreSQL database, and ``in-repo`` added runs it at
the top of the repository (for the plain ``alembic`` command and its ``alembic.ini``). Each
block runs in bash with ``-e -o pipefail``, the installed ``solitaire-server`` first on the
PATH, within a deadline, and must exit 0.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from server.cli import build_parser, settings_from_args, uvicorn_config
from server.config import Settings
from tests.conftest import fresh_pg_database
from tests.processes import run
from tests.support import ONE_ADDRESS, running_server

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("docs/operations.md", "docs/server.md")
FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```\s*$", re.MULTILINE | re.DOTALL)
BLOCK_DEADLINE_S = 300.0


@dataclass(frozen=True)
class Block:
    doc: str
    line: int
    body: str
    postgres: bool
    in_repo: bool

    @property
    def name(self) -> str:
        return f"{self.doc}:{self.line}"


def runnable_blocks() -> list[Block]:
    blocks = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            words = match["info"].split()
            if words[:2] != ["sh", "runnable"]:
                continue
            line = text.count("\n", 0, match.start()) + 1
            flags = set(words[2:])
            assert flags <= {"postgres", "in-repo"}, f"{doc}:{line}: unknown marks {flags}"
            blocks.append(Block(doc, line, match["body"], "postgres" in flags, "in-repo" in flags))
    return blocks


BLOCKS = runnable_blocks()


@pytest.fixture
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    block: Block = request.param
    if not block.postgres:
        yield f"sqlite+aiosqlite:///{tmp_path / 'data' / 'solitaire.db'}"
        return
    with fresh_pg_database() as url:
        yield url


def test_the_docs_mark_blocks_of_both_kinds() -> None:
    """The test must have something to run: the backup, token and migration commands at least."""
    assert {block.doc for block in BLOCKS} == set(DOCS)
    assert any(block.postgres for block in BLOCKS) and any(not block.postgres for block in BLOCKS)
    text = "".join(block.body for block in BLOCKS)
    for command in ("backup", "restore", "migrate", "create-token", "revoke-token", "pg_dump", "pg_restore"):
        assert command in text, command


@pytest.mark.parametrize(
    ("block", "database"), [(b, b) for b in BLOCKS], ids=[b.name for b in BLOCKS], indirect=["database"]
)
def test_a_runnable_block_succeeds_as_written(block: Block, database: str, tmp_path: Path) -> None:
    assert shutil.which("bash") is not None
    env = {key: value for key, value in os.environ.items() if not key.startswith("SOLITAIRE_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["SOLITAIRE_DATABASE_URL"] = database
    env["SOLITAIRE_DATA_DIR"] = str(tmp_path / "data")
    cwd = ROOT if block.in_repo else tmp_path
    done = run(["bash", "-e", "-o", "pipefail", "-c", block.body], BLOCK_DEADLINE_S, cwd=cwd, env=env)
    assert done.returncode == 0, (
        f"{block.name} exited {done.returncode}\n{block.body}\n--- stdout ---\n{done.stdout[-3000:]}"
        f"\n--- stderr ---\n{done.stderr[-3000:]}"
    )


def test_forwarded_allow_ips_is_a_flag_and_a_setting() -> None:
    args = build_parser().parse_args(["--forwarded-allow-ips", "10.0.0.2,10.0.0.3"])
    assert settings_from_args(args).forwarded_allow_ips == "10.0.0.2,10.0.0.3"
    assert Settings.from_env({"SOLITAIRE_FORWARDED_ALLOW_IPS": "*"}).forwarded_allow_ips == "*"
    assert uvicorn_config(None, Settings(forwarded_allow_ips="*")).forwarded_allow_ips == "*"


@pytest.mark.parametrize(("trusted", "second"), [("127.0.0.1", 201), ("10.9.9.9", 429)])
def test_forwarded_for_counts_only_from_a_trusted_proxy(tmp_path: Path, trusted: str, second: int) -> None:
    """One player per address per hour: two clients behind a trusted proxy are two addresses;
    behind an untrusted one the header is ignored and both are the proxy's address."""
    from dataclasses import replace

    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'f.db'}",
        secret="t",
        limits=replace(ONE_ADDRESS, players_per_hour=1),
        forwarded_allow_ips=trusted,
    )
    with running_server(settings) as base:
        statuses = [post_player(f"{base}/api/players", address) for address in ("203.0.113.1", "203.0.113.2")]
    assert statuses == [201, second]


def post_player(url: str, address: str) -> int:
    import json
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=json.dumps({"name": None}).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("X-Forwarded-For", address)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
