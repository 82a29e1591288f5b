"""A disk that fills under load, and one whose every fsync is slow: the server and its database
(SQLite, or a throwaway PostgreSQL cluster) on a faultfs mount, verifying players playing.

Disk full: the mount is made as small as what it holds plus a little
(``headroom``); writes past that fail with ENOSPC. The players must then be
refused ``unavailable`` (SQLite's SQLITE_FULL, PostgreSQL's SQLSTATE 53100, or
the database away while it restarts), and once the limit is lifted the server
must take writes again by itself. Slow disk: every fsync takes ``fsync_delay_ms``;
acknowledgements come later, none is refused, no link breaks. Either way every
acknowledged action is then on the database, and SQLite passes
``PRAGMA integrity_check``.

Used by tests/durability/test_diskfull.py and bench/powercut.py ``--disk``.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.durability.failover import tracebacks
from tests.durability.players import Check, Player, check, game_ids, play, read_stored
from tests.durability.powercut import PowerCuts, serving
from tests.faultfs.mount import Mount, mounted
from tests.support import new_player

FILL_TIMEOUT_S = 60.0  # for the first refusal once the disk is small
RECOVER_TIMEOUT_S = 60.0  # for the first acknowledgement once space returns
SUPERVISE_PAUSE_S = 0.2  # between looks at the PostgreSQL postmaster


@dataclass
class DiskReport:
    """The figures of one disk-full or slow-disk run."""

    db: str
    fault: str  # "full" or "slow"
    check: Check = field(default_factory=Check)
    integrity: str = "ok"
    refused: dict[str, int] = field(default_factory=dict)  # refusals, by code
    refused_before: int = 0  # before the fault: there must be none
    full_to_refusal_s: float = 0.0  # from the disk made small to the first refusal
    recovery_s: float = 0.0  # from space returned to the first acknowledgement of a request sent after
    database_restarts: int = 0  # PostgreSQL postmasters that exited and were started again
    acked_during: int = 0  # acknowledgements while the fault held
    acked_after: int = 0  # acknowledgements after the fault
    latency_before_ms: dict[str, float] = field(default_factory=dict)  # p50/p99/max of acks
    latency_during_ms: dict[str, float] = field(default_factory=dict)
    slowest_answer_s: float = 0.0
    tracebacks: list[str] = field(default_factory=list)  # in the server's log: failures it let escape

    def as_json(self) -> dict[str, Any]:
        figures: dict[str, Any] = {
            "db": self.db,
            "fault": self.fault,
            "actions_checked": self.check.acked,
            "lost": self.check.lost,
            "phantoms": len(self.check.phantoms),
            "integrity": self.integrity,
            "refused": self.refused,
            "refused_before": self.refused_before,
            "acked_during": self.acked_during,
            "acked_after": self.acked_after,
            "slowest_answer_s": round(self.slowest_answer_s, 3),
            "tracebacks": len(self.tracebacks),
        }
        if self.fault == "full":
            figures |= {
                "full_to_refusal_s": round(self.full_to_refusal_s, 3),
                "recovery_s": round(self.recovery_s, 3),
                "database_restarts": self.database_restarts,
            }
        else:
            figures |= {
                "latency_before_ms": self.latency_before_ms,
                "latency_during_ms": self.latency_during_ms,
            }
        return figures


def latency(answers: list[tuple[float, float]]) -> dict[str, float]:
    """p50, p99 and the longest of (sent, answered) pairs, in milliseconds."""
    waits = sorted((answered - sent) * 1000 for sent, answered in answers)
    if len(waits) < 2:
        return {}
    cuts = statistics.quantiles(waits, n=100, method="inclusive")
    return {"p50": round(cuts[49], 1), "p99": round(cuts[98], 1), "max": round(waits[-1], 1)}


class DiskFault:
    """One run: ``before_s`` of load, the fault (held ``during_s``, or for the disk full until
    refused and then ``during_s``), then ``after_s`` of load on a healthy disk again."""

    def __init__(
        self,
        root: Path,
        db: str,
        fault: str,
        players: int = 6,
        before_s: float = 1.5,
        during_s: float = 2.0,
        after_s: float = 2.0,
        headroom: int = 256 * 1024,
        fsync_delay_ms: int = 500,
    ) -> None:
        assert fault in ("full", "slow")
        self.rig = PowerCuts(root, db)  # its mount, database and URL (no power cut here)
        self.fault, self.players = fault, players
        self.before_s, self.during_s, self.after_s = before_s, during_s, after_s
        self.headroom, self.fsync_delay_ms = headroom, fsync_delay_ms
        self.report = DiskReport(db, fault)

    def run(self) -> DiskReport:
        rig = self.rig
        try:
            with mounted(rig.backing, rig.mountpoint) as disk:
                rig._create(disk)
                with rig._database():
                    log = rig.backing.parent / "server.log"
                    try:
                        with serving(rig.url, log=log) as (base, _server):
                            players = asyncio.run(self._load(base, disk))
                    finally:
                        self.report.tracebacks = tracebacks(log)
                    disk.limit(0)
                    disk.fsync_delay(0)
                    stored = asyncio.run(read_stored(rig.url, game_ids(players)))
            self.report.check, self.report.integrity = check(players, stored), stored.integrity
        finally:
            if rig.pg is not None:
                rig.pg.close()
                with contextlib.suppress(OSError):
                    rig.mountpoint.rmdir()
        return self.report

    async def _load(self, base: str, disk: Mount) -> list[Player]:
        players = [
            Player([base], (await new_player(base))["token"], reconnect=True) for _ in range(self.players)
        ]
        stop = asyncio.Event()
        runs = asyncio.create_task(play(players, stop, time.monotonic() + 600))
        supervisor = asyncio.create_task(self._supervise(stop))
        try:
            await asyncio.sleep(self.before_s)
            fault_at = time.monotonic()
            healthy_at = await (self._fill(disk, players) if self.fault == "full" else self._slow(disk))
            await asyncio.sleep(self.after_s)
            if self.fault == "full":
                await self._recovered(players, healthy_at)
        finally:
            stop.set()
            await runs
            await supervisor
        self._measure(players, fault_at, healthy_at)
        return players

    async def _fill(self, disk: Mount, players: list[Player]) -> float:
        full_at = time.monotonic()
        await asyncio.to_thread(disk.headroom, self.headroom)
        deadline = full_at + FILL_TIMEOUT_S
        while not any(at >= full_at for p in players for at, _ in p.refusals):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no refusal {FILL_TIMEOUT_S} s after the disk filled")
            await asyncio.sleep(0.05)
        first = min(at for p in players for at, _ in p.refusals if at >= full_at)
        self.report.full_to_refusal_s = first - full_at
        await asyncio.sleep(self.during_s)
        await asyncio.to_thread(disk.limit, 0)
        return time.monotonic()

    async def _slow(self, disk: Mount) -> float:
        await asyncio.to_thread(disk.fsync_delay, self.fsync_delay_ms)
        await asyncio.sleep(self.during_s)
        await asyncio.to_thread(disk.fsync_delay, 0)
        return time.monotonic()

    async def _recovered(self, players: list[Player], healthy_at: float) -> None:
        """Until a request sent after space returned is acknowledged (the server took writes again)."""
        deadline = healthy_at + RECOVER_TIMEOUT_S
        while not any(sent >= healthy_at for p in players for sent, _ in p.answered):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no acknowledgement {RECOVER_TIMEOUT_S} s after space returned")
            await asyncio.sleep(0.05)

    async def _supervise(self, stop: asyncio.Event) -> None:
        """PostgreSQL's supervisor (as systemd's ``Restart=always``): a postmaster that exited
        (it stops when it cannot write its WAL) is started again."""
        pg = self.rig.pg
        while pg is not None and not stop.is_set():
            if pg.proc is not None and pg.proc.poll() is not None:
                self.report.database_restarts += 1
                with contextlib.suppress(RuntimeError):
                    await asyncio.to_thread(pg.start)
            await asyncio.sleep(SUPERVISE_PAUSE_S)

    def _measure(self, players: list[Player], fault_at: float, healthy_at: float) -> None:
        report = self.report
        answers = [a for p in players for a in p.answered]
        after = [answered for sent, answered in answers if sent >= healthy_at]
        report.recovery_s = min(after, default=float("nan")) - healthy_at
        report.acked_during = sum(1 for sent, answered in answers if fault_at <= answered < healthy_at)
        report.acked_after = len(after)
        report.latency_before_ms = latency([a for a in answers if a[1] < fault_at])
        report.latency_during_ms = latency([a for a in answers if fault_at <= a[0] and a[1] < healthy_at])
        report.slowest_answer_s = max(p.slowest_s for p in players)
        for player in players:
            for at, code in player.refusals:
                if at < fault_at:
                    report.refused_before += 1
                else:
                    report.refused[code] = report.refused.get(code, 0) + 1
