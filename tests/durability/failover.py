"""Database failover under load: a primary with a synchronous streaming standby, the primary
killed, the standby promoted, the server reconnecting by its multi-host URL and going on.

Two throwaway PostgreSQL clusters on ports of their own: the primary made by
``initdb``, the standby by ``pg_basebackup -R`` from it, and the primary's
``synchronous_standby_names`` naming the standby (with ``synchronous_commit=on``
a commit, and so an acknowledgement, waits until the standby has the WAL on its
disk). The server's database URL lists both hosts with
``target_session_attrs=read-write``: a connection goes to whichever of them
takes writes. Verifying players play through one instance, or two behind Redis;
the primary's postmaster and backends get SIGKILL, the standby is promoted
(``pg_ctl promote``), the players go on, and every action they were told was
stored is then looked for on the promoted database.

Used by tests/durability/test_failover.py (one short run per set-up) and
bench/powercut.py ``--failover`` (figures: docs/server.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.storage.db import ADVISORY_KEY
from tests import processes
from tests.cluster.fleet import SHARED_REDIS
from tests.durability.pgcluster import (
    DATABASE,
    PgCluster,
    _as_postgres,
    give_to_postgres,
    pg_bin,
    reachable_dir,
)
from tests.durability.players import Check, Player, check, game_ids, play, read_stored
from tests.durability.powercut import serving
from tests.support import free_port, new_player

STANDBY_NAME = "standby"
SYNC_TIMEOUT_S = 60.0
LOAD_TIMEOUT_S = 60.0
LOCK_TIMEOUT_S = 20.0  # after the promotion, for every instance to hold its lock there again


def multi_host_url(*clusters: PgCluster) -> str:
    """The libpq-style URL of several hosts, of which a connection takes the one that accepts writes."""
    hosts = "&".join(f"host=127.0.0.1:{c.port}" for c in clusters)
    return f"postgresql+asyncpg://postgres@/{DATABASE}?{hosts}&target_session_attrs=read-write"


@dataclass
class Pair:
    """A primary and its synchronous standby."""

    primary: PgCluster
    standby: PgCluster

    @property
    def url(self) -> str:
        return multi_host_url(self.primary, self.standby)

    def promote(self) -> None:
        """``pg_ctl promote``, waited for until the standby takes writes."""
        done = self.standby.ctl("promote", "-w", "-t", "60")
        assert done.returncode == 0, done.stderr[-2000:]

    async def in_recovery(self, cluster: PgCluster) -> bool:
        rows = await cluster.admin("SELECT pg_is_in_recovery()", database=DATABASE)
        return bool(rows[0][0])


def _base_backup(primary: PgCluster, standby: PgCluster) -> None:
    """The standby's data directory copied from the running primary, set up to follow it (``-R``)."""
    give_to_postgres(standby.data)
    argv = [pg_bin("pg_basebackup"), "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres"]
    argv += ["-D", str(standby.data), "-R", "-X", "stream", "-c", "fast", "--no-sync"]
    done = processes.run(argv, 180, preexec_fn=_as_postgres)
    assert done.returncode == 0, done.stderr[-2000:]


async def _wait_synchronous(primary: PgCluster, standby: PgCluster) -> None:
    """Until the primary names the standby synchronous: from then on a commit waits for it."""
    await primary.admin(f"ALTER SYSTEM SET synchronous_standby_names = '{STANDBY_NAME}'")
    await primary.admin("SELECT pg_reload_conf()")
    deadline = time.monotonic() + SYNC_TIMEOUT_S
    query = f"SELECT sync_state FROM pg_stat_replication WHERE application_name = '{STANDBY_NAME}'"
    while [tuple(r) for r in await primary.admin(query)] != [("sync",)]:
        if time.monotonic() > deadline:
            seen = await primary.admin("SELECT application_name, state, sync_state FROM pg_stat_replication")
            tail = standby.log.read_text(errors="replace")[-2000:] if standby.log.exists() else ""
            raise TimeoutError(f"the standby never became synchronous: {[tuple(r) for r in seen]}\n{tail}")
        await asyncio.sleep(0.1)


@contextlib.contextmanager
def standby_pair(root: Path) -> Iterator[Pair]:
    """A primary and a synchronous standby with data directories under ``root``, both killed and
    their sockets and logs removed when the block ends."""
    primary = PgCluster(root / "primary", free_port())
    standby = PgCluster(root / "standby", free_port(), settings={"cluster_name": STANDBY_NAME})
    try:
        primary.initdb()
        primary.start()
        _base_backup(primary, standby)
        standby.start()
        asyncio.run(_wait_synchronous(primary, standby))
        yield Pair(primary, standby)
    finally:
        primary.close()
        standby.close()


@dataclass
class FailoverReport:
    """The figures of one failover under load."""

    instances: int
    check: Check = field(default_factory=Check)
    no_ack_s: float = 0.0  # from the kill to the first acknowledgement of a request sent after it
    promoted_s: float = 0.0  # from the kill to the standby taking writes
    reconnect_s: float = 0.0  # from the promotion to that first acknowledgement
    acked_before: int = 0
    acked_after: int = 0
    refused: dict[str, int] = field(default_factory=dict)  # refusals after the kill, by code
    refused_before: int = 0  # refusals before the kill: there must be none
    promoted_in_recovery: bool = True  # the promoted database still a standby: must be False
    tracebacks: list[str] = field(default_factory=list)  # the first line of each in the instances' logs
    locks_after: int = 0  # instances holding their advisory lock on the promoted database
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "instances": self.instances,
            "actions_checked": self.check.acked,
            "lost": self.check.lost,
            "unacknowledged_stored": self.check.unacked,
            "phantoms": len(self.check.phantoms),
            "no_ack_s": round(self.no_ack_s, 3),
            "promoted_s": round(self.promoted_s, 3),
            "reconnect_s": round(self.reconnect_s, 3),
            "acked_before_kill": self.acked_before,
            "acked_after_kill": self.acked_after,
            "refused_after_kill": self.refused,
            "refused_before_kill": self.refused_before,
            "tracebacks": len(self.tracebacks),
            "locks_after": self.locks_after,
            "seconds": round(self.seconds, 1),
        }


def tracebacks(log: Path) -> list[str]:
    """What an instance logged with a traceback (each one's line before it): a failure it let escape."""
    if not log.exists():
        return []
    lines = log.read_text(errors="replace").splitlines()
    return [lines[i - 1] if i else line for i, line in enumerate(lines) if line.startswith("Traceback")]


async def acknowledged(players: list[Player], count: int, since: float) -> None:
    """Until ``count`` requests sent after ``since`` are acknowledged (a slow machine warms up slowly)."""
    deadline = time.monotonic() + LOAD_TIMEOUT_S
    while sum(1 for p in players for sent, _ in p.answered if sent >= since) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"fewer than {count} acknowledgements in {LOAD_TIMEOUT_S} s")
        await asyncio.sleep(0.05)


async def locks_held(cluster: PgCluster, expected: int) -> int:
    """How many instances hold their advisory lock (server.storage.db.DatabaseLock) on
    ``cluster``: until ``expected`` do, or the deadline passes (they take it again in turn)."""
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    sql = f"SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = {ADVISORY_KEY}"
    while True:
        rows = await cluster.admin(sql, database=DATABASE)
        held = int(rows[0][0])
        if held >= expected or time.monotonic() > deadline:
            return held
        await asyncio.sleep(0.1)


class Failover:
    """One failover: ``before_s`` of load, the kill, the promotion ``promote_after_s`` later, then
    ``after_s`` more of load, through ``instances`` server instances (two or more: with Redis)."""

    def __init__(
        self,
        instances: int = 1,
        players: int = 6,
        before_s: float = 2.0,
        after_s: float = 3.0,
        promote_after_s: float = 0.0,
        min_acks: int = 50,
    ) -> None:
        self.instances, self.players = instances, players
        self.before_s, self.after_s, self.promote_after_s = before_s, after_s, promote_after_s
        self.min_acks = min_acks  # acknowledgements before the kill, and after the promotion, at least
        self.report = FailoverReport(instances)

    def run(self) -> FailoverReport:
        started = time.monotonic()
        root = reachable_dir("failover-")
        try:
            with standby_pair(root) as pair:
                players, kill_at, promoted_at = self._serve(pair, root)
                self.report.promoted_in_recovery = asyncio.run(pair.in_recovery(pair.standby))
                stored = asyncio.run(read_stored(pair.standby.url, game_ids(players)))
                self.report.check = check(players, stored)
            self._measure(players, kill_at, promoted_at)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        self.report.seconds = time.monotonic() - started
        return self.report

    def _serve(self, pair: Pair, root: Path) -> tuple[list[Player], float, float]:
        redis = SHARED_REDIS if self.instances > 1 else None
        prefix = f"failover{secrets.token_hex(4)}"
        logs = [root / f"instance-{number}.log" for number in range(self.instances)]
        try:
            with contextlib.ExitStack() as stack:
                bases = [
                    stack.enter_context(serving(pair.url, redis_url=redis, prefix=prefix, log=log))[0]
                    for log in logs
                ]
                return asyncio.run(self._load(bases, pair))
        finally:
            for log in logs:
                self.report.tracebacks += tracebacks(log)

    async def _load(self, bases: list[str], pair: Pair) -> tuple[list[Player], float, float]:
        players = []
        for number in range(self.players):
            base = bases[number % len(bases)]
            players.append(Player([base], (await new_player(base))["token"], reconnect=True))
        stop = asyncio.Event()
        until = time.monotonic() + self.before_s + self.promote_after_s + self.after_s + 60
        runs = asyncio.create_task(play(players, stop, until))
        await asyncio.sleep(self.before_s)
        await acknowledged(players, self.min_acks, since=0.0)
        kill_at = time.monotonic()
        await asyncio.to_thread(pair.primary.kill)
        await asyncio.sleep(self.promote_after_s)
        await asyncio.to_thread(pair.promote)
        promoted_at = time.monotonic()
        await asyncio.sleep(self.after_s)
        await acknowledged(players, self.min_acks, since=promoted_at)
        self.report.locks_after = await locks_held(pair.standby, self.instances)
        stop.set()
        await runs
        return players, kill_at, promoted_at

    def _measure(self, players: list[Player], kill_at: float, promoted_at: float) -> None:
        report = self.report
        after = [answered for p in players for sent, answered in p.answered if sent >= kill_at]
        first = min(after, default=float("nan"))
        report.no_ack_s, report.promoted_s = first - kill_at, promoted_at - kill_at
        report.reconnect_s = first - promoted_at
        report.acked_before = sum(1 for p in players for at in p.acked_at if at < kill_at)
        report.acked_after = len(after)
        for player in players:
            for at, code in player.refusals:
                if at < kill_at:
                    report.refused_before += 1
                else:
                    report.refused[code] = report.refused.get(code, 0) + 1
