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

from tests.durability.powercut import DATABASES, PowerCuts  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=[*DATABASES, "both"], default="both")
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--weakened-cycles", type=int, default=5, help="0: no weakened run")
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=1.5, help="of load before each cut")
    args = parser.parse_args()
    figures: dict[str, dict[str, Any]] = {}
    for db in DATABASES if args.db == "both" else [args.db]:
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
