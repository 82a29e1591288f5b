"""The ``solitaire`` command run as a subprocess, for the command-line tests."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests import processes
from tests.support import RECEIVED

SCRIPT = Path(sys.executable).with_name("solitaire")


class Run:
    """Runs the CLI with its own config file; every message it receives joins the contract check."""

    def __init__(self, server: str, home: Path) -> None:
        self.server = server
        self.config = home / "config.json"
        self.trace = home / "trace.jsonl"
        self.started: list[asyncio.subprocess.Process] = []  # all ended by the fixture

    def argv(self, *args: str) -> list[str]:
        base = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "client.cli"]
        return [*base, "--server", self.server, "--trace", str(self.trace), *args]

    def env(self) -> dict[str, str]:
        return {**os.environ, "SOLITAIRE_CONFIG": str(self.config), "NO_COLOR": "1", "PYTHONUTF8": "1"}

    async def start(self, *args: str) -> asyncio.subprocess.Process:
        process = await asyncio.create_subprocess_exec(
            *self.argv(*args),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=self.env(),
            start_new_session=True,
        )
        self.started.append(process)
        return process

    async def __call__(self, *args: str, stdin: str = "", timeout: float = 60) -> tuple[int, str]:
        process = await self.start(*args)
        out = await processes.communicate(process, timeout, stdin.encode())
        self.collect()
        return process.returncode or 0, out.decode()

    async def end_all(self) -> None:
        for process in self.started:
            await processes.end_async(process)

    def collect(self) -> None:
        if self.trace.exists():
            RECEIVED.extend(json.loads(line) for line in self.trace.read_text().splitlines())
            self.trace.unlink()

    def token(self) -> str:
        accounts = json.loads(self.config.read_text())["players"]
        return str(next(iter(accounts.values()))["token"])


@pytest.fixture
async def run(server: str, tmp_path: Path) -> AsyncIterator[Run]:
    runner = Run(server, tmp_path)
    try:
        yield runner
    finally:
        await runner.end_all()  # what a failed or timed-out test left running
