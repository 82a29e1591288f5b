"""Power cuts under load, many cycles per database: nothing acknowledged may be lost.

Each cycle runs the real server on SQLite, or on a throwaway PostgreSQL cluster,
with its data directory on the lose-unsynced-writes filesystem (tests/faultfs),
lets verifying players play (one request in flight each, every acknowledgement
recorded), then cuts the power: SIGKILL to the server and the database, every
byte not fsynced dropped (every other cut also tears each file's last write),
and checks every acknowledged action, game result and leaderboard entry against
the database after its restart (SQLite: and ``PRAGMA integrity_check``). Then a
run with the durability weakened on purpose (SQLite ``synchronous=NORMAL``,
PostgreSQL ``synchronous_commit=off``) shows the check catches what that loses.

    python bench/powercut.py                      # 50 cycles per database, 5 weakened
    python bench/powercut.py --db sqlite --cycles 100
    python bench/powercut.py --failover 3         # 3 failovers each with 1 and 2 instances
    python bench/powercut.py --disk               # disk full and 500 ms fsync, per database

``--failover``: a primary with a synchronous streaming standby, the primary
killed under load and the standby promoted; the server reconnects by its
multi-host URL (tests/durability/failover.py). ``--disk``: the disk fills under
load, then space returns; every fsync takes 500 ms (tests/durability/diskfull.py).

Needs root (FUSE, and PostgreSQL run as the ``postgres`` user). Prints one
JSON line: the figures of each run (docs/server.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the power-cut rig lives with the tests

from tests.durability.diskfull import DiskFault  # noqa: E402
from tests.durability.failover import Failover  # noqa: E402
from tests.durability.powercut import DATABASES, PowerCuts  # noqa: E402


def failovers(runs: int, players: int, seconds: float) -> dict[str, Any]:
    """``runs`` failovers with one instance and with two behind Redis: every run's figures."""
    figures: dict[str, Any] = {}
    for instances in (1, 2):
        reports = []
        for _ in range(runs):
            report = Failover(instances, players, before_s=seconds, after_s=seconds).run().as_json()
            print(f"failover x{instances}: {report}", file=sys.stderr, flush=True)
            reports.append(report)
        figures[f"failover_{instances}_instance{'s' if instances > 1 else ''}"] = {
            "runs": reports,
            "lost": sum(r["lost"] for r in reports),
            "actions_checked": sum(r["actions_checked"] for r in reports),
            "no_ack_s_max": max(r["no_ack_s"] for r in reports),
        }
    return figures


def disk_faults(dbs: list[str], players: int, seconds: float, fsync_ms: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for db in dbs:
        for fault in ("full", "slow"):
            with tempfile.TemporaryDirectory(prefix="diskfault-") as root:
                run = DiskFault(
                    Path(root), db, fault, players, seconds, seconds, seconds, fsync_delay_ms=fsync_ms
                )
                report = run.run().as_json()
            print(f"{db} {fault}: {report}", file=sys.stderr, flush=True)
            figures[f"{db}_{fault}"] = report
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=[*DATABASES, "both"], default="both")
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--weakened-cycles", type=int, default=5, help="0: no weakened run")
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=1.5, help="of load before each cut")
    parser.add_argument("--failover", type=int, default=0, metavar="RUNS", help="failovers instead of cuts")
    parser.add_argument("--disk", action="store_true", help="disk full and slow fsync instead of cuts")
    parser.add_argument("--fsync-ms", type=int, default=500, help="--disk: each fsync's delay")
    args = parser.parse_args()
    dbs = list(DATABASES) if args.db == "both" else [args.db]
    if args.failover or args.disk:
        seconds = max(args.seconds, 5.0)
        found = failovers(args.failover, args.players, seconds) if args.failover else {}
        if args.disk:
            found |= disk_faults(dbs, args.players, seconds, args.fsync_ms)
        print(json.dumps(found))
        return 1 if any(figures["lost"] for figures in found.values()) else 0
    figures: dict[str, dict[str, Any]] = {}
    for db in dbs:
        runs = [(db, False, args.cycles)]
        if args.weakened_cycles:
            runs.append((f"{db}_weakened", True, args.weakened_cycles))
        for name, weak, cycles in runs:
            with tempfile.TemporaryDirectory(prefix="powercut-") as root:
                cuts = PowerCuts(Path(root), db, weak=weak, players=args.players, seconds=args.seconds)
                report = cuts.run(cycles).as_json()
            print(f"{name}: {report}", file=sys.stderr, flush=True)
            figures[name] = report
    print(json.dumps(figures))
    failed = any(r["phantoms"] or r["integrity"] != "ok" for r in figures.values()) or any(
        r["lost"] for r in figures.values() if not r["weakened"]
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
