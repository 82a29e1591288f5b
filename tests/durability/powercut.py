"""Power cuts: the server and its database on a faultfs mount, cut again and again under load.

Each cycle mounts the disk, starts the database (PostgreSQL: its crash
recovery) and checks the previous cycle's acknowledgements against what it
holds, starts the server, lets verifying players play, then cuts the power:
SIGKILL to the database and the server, every unsynced byte dropped, the disk
unmounted. Every other cycle's cut also tears the last write of each file in
half. After the last cycle every game of every cycle is checked once more.

Used by tests/durability/test_powercut.py (a few quick cycles) and
bench/powercut.py (50 and more).
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.cli import READY_LINE
from tests import processes
from tests.cluster.fleet import server_env
from tests.durability.pgcluster import PgCluster, reachable_dir
from tests.durability.players import Check, Player, check, game_ids, new_players, play, read_stored
from tests.faultfs.mount import Mount, mounted
from tests.support import free_port

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60.0
DATABASES = ("sqlite", "postgres")


def instance_env(
    database_url: str, port: int, redis_url: str | None = None, prefix: str = "durable"
) -> dict[str, str]:
    """A server's environment for these tests: no per-address limits, no screening, migrated on start."""
    env = server_env(database_url, redis_url, prefix, port)
    env["SOLITAIRE_MIGRATE_ON_START"] = "1"
    env["SOLITAIRE_SCREENING"] = "0"
    return env


@contextlib.contextmanager
def serving(
    database_url: str,
    weak_sqlite: bool = False,
    redis_url: str | None = None,
    port: int | None = None,
    prefix: str = "durable",
    env: dict[str, str] | None = None,
    log: Path | None = None,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The real server process on ``database_url``; yields (base URL, process) once it serves.
    ``weak_sqlite``: with SQLite's ``synchronous=NORMAL`` (tests.durability.weak_sqlite);
    ``prefix``: its Redis keys' (instances sharing it form one fleet); ``env`` adds to its environment;
    ``log``: where what it logs goes (else to the caller's standard error)."""
    port = port or free_port()
    module = "tests.durability.weak_sqlite" if weak_sqlite else "server.cli"
    argv = [sys.executable, "-m", module, "--log-level", "warning"]
    env = {**instance_env(database_url, port, redis_url, prefix), **(env or {})}
    with contextlib.ExitStack() as files:
        stderr = files.enter_context(log.open("ab")) if log is not None else None
        with processes.started(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=stderr) as proc:
            processes.read_line(proc, START_TIMEOUT_S, READY_LINE.encode())
            yield f"http://127.0.0.1:{port}", proc


@dataclass
class Report:
    """The figures of a run of cycles."""

    db: str
    weak: bool
    cycles: int = 0
    check: Check = field(default_factory=Check)  # each cycle's players, right after its cut
    final: Check = field(default_factory=Check)  # every cycle's players, after the last cut
    refused: int = 0  # refusals before a cut: there must be none
    integrity: list[str] = field(default_factory=list)  # anything but "ok"
    acked_before_cut: list[int] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def lost(self) -> int:
        """Acknowledged actions and results missing after their cut, or after a later one."""
        return max(self.check.lost, self.final.lost)

    def as_json(self) -> dict[str, Any]:
        return {
            "db": self.db,
            "weakened": self.weak,
            "cycles": self.cycles,
            "actions_checked": self.check.acked,
            "lost": self.lost,
            "unacknowledged_stored": self.check.unacked,
            "phantoms": len(self.check.phantoms),
            "refused": self.refused,
            "integrity": "ok" if not self.integrity else self.integrity[:3],
            "min_acked_per_cycle": min(self.acked_before_cut, default=0),
            "seconds": round(self.seconds, 1),
        }


class PowerCuts:
    """Cycles of load and power cuts on one database kept in ``root`` (backing and mount point)."""

    def __init__(
        self, root: Path, db: str, weak: bool = False, players: int = 6, seconds: float = 1.5
    ) -> None:
        assert db in DATABASES
        self.backing = root / "backing"
        self.mountpoint = reachable_dir("powercut-") if db == "postgres" else root / "mount"
        self.db, self.weak, self.players, self.seconds = db, weak, players, seconds
        self.report = Report(db, weak)
        self.everyone: list[Player] = []  # every player of every cycle
        self.pg = PgCluster(self.mountpoint / "pgdata", free_port()) if db == "postgres" else None
        self.created = False

    @property
    def url(self) -> str:
        return self.pg.url if self.pg is not None else f"sqlite+aiosqlite:///{self.mountpoint}/solitaire.db"

    def _create(self, disk: Mount) -> None:
        if self.pg is not None:
            self.pg.initdb()
        disk.sync()  # the empty database starts durable
        self.created = True

    @contextlib.contextmanager
    def _database(self) -> Iterator[None]:
        if self.pg is None:
            yield
            return
        settings = {"synchronous_commit": "off"} if self.weak else {}
        try:
            self.pg.start(**settings)
            yield
        finally:
            self.pg.kill()

    def run(self, cycles: int) -> Report:
        started = time.monotonic()
        try:
            self._run(cycles)
        finally:
            if self.pg is not None:
                self.pg.close()
                with contextlib.suppress(OSError):
                    self.mountpoint.rmdir()
        self.report.seconds = time.monotonic() - started
        return self.report

    def _run(self, cycles: int) -> None:
        previous: list[Player] = []
        for number in range(cycles):
            with mounted(self.backing, self.mountpoint, torn=number % 2 == 1) as disk:
                if not self.created:
                    self._create(disk)
                with self._database():
                    self._check(previous)
                    previous = self._cycle()
                disk.drop()  # the power cut: both processes are dead, their unsynced writes go
            self.report.cycles += 1
        with mounted(self.backing, self.mountpoint), self._database():
            self._check(previous)
            self.report.final = self._read(self.everyone)  # all cycles again: nothing lost later either

    def _read(self, players: list[Player]) -> Check:
        stored = asyncio.run(read_stored(self.url, game_ids(players)))
        if stored.integrity != "ok":
            self.report.integrity.append(stored.integrity)
        return check(players, stored)

    def _check(self, players: list[Player]) -> None:
        if players:
            self.report.check.add(self._read(players))

    def _cycle(self) -> list[Player]:
        with serving(self.url, weak_sqlite=self.weak and self.pg is None) as (base, server):

            def cut() -> None:
                if self.pg is not None:
                    self.pg.kill()
                processes.end(server, graceful=False)

            players, cut_at = asyncio.run(self._load(base, cut))
        self.everyone += players
        self.report.refused += sum(1 for p in players for at, _ in p.refusals if at < cut_at)
        self.report.acked_before_cut.append(sum(len(p.acked_at) for p in players))
        return players

    async def _load(self, base: str, cut: Callable[[], None]) -> tuple[list[Player], float]:
        players = await new_players(base, self.players)
        stop = asyncio.Event()
        runs = asyncio.create_task(play(players, stop, time.monotonic() + self.seconds + 30))
        await asyncio.sleep(self.seconds)
        cut_at = time.monotonic()
        cut()
        await runs
        return players, cut_at
