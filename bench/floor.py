"""The server against its stack's floors, in turn in one sitting.

Each round runs, one after the other, with the same load generator (bench/load.py's clients:
N real WebSocket clients flat out, one message in flight each):

- ``echo``: a Starlette WebSocket echo on uvicorn (bench/echo_app.py): the stack's floor;
- ``durable``: the same echo acknowledging each act only after a group commit to SQLite
  (WAL, synchronous=FULL; a batch commits everything queued meanwhile): the durable floor;
- ``server``: this server (SQLite, or ``--db``).

The figure is ``ratio``: the server's acknowledged actions per second over the durable
floor's, in the same round (absolute figures move with the machine's load; the ratio in one
sitting much less). ``--py-spy FILE`` samples the server's process during each of its runs
with py-spy (raw stacks, appended to FILE; bench/stages.py breaks them down by stage).

    .venv/bin/python bench/floor.py --rounds 3 --clients 1000 --seconds 10

The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import load
from serverproc import end_process_group, free_port, raise_fd_limit, started_command

ECHO_APP = str(Path(__file__).resolve().parent / "echo_app.py")
KINDS = ("echo", "durable", "server", "base")


@contextlib.contextmanager
def started(kind: str, folder: str, args: argparse.Namespace) -> Iterator[tuple[str, int]]:
    """The process of one kind, on a free port; (base URL, pid)."""
    if kind in ("server", "base"):
        url = f"sqlite+aiosqlite:///{folder}/server.db" if args.db == "sqlite" else args.db
        with load.server_process(url, 0, root=Path(args.base) if kind == "base" else None) as server:
            yield server
        return
    port = free_port()
    command = [sys.executable, ECHO_APP, "--port", str(port)]
    if kind == "durable":
        command += ["--durable", f"{folder}/durable.db"]
    with started_command(command, {}, port) as server:
        yield server


class Spy:
    """py-spy recording a process from :meth:`start` (the start line: the connection storm is
    not sampled) until :meth:`stop`, its raw stacks appended to ``out``."""

    def __init__(self, pid: int, out: str) -> None:
        self.pid, self.out, self.raw = pid, out, out + ".part"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        spy = str(Path(sys.executable).with_name("py-spy"))
        command = [spy, "record", "-p", str(self.pid), "-f", "raw", "-r", "250", "-o", self.raw]
        self.proc = subprocess.Popen(
            [*command, "--threads", "--nonblocking"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGINT)  # py-spy writes what it sampled and ends
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            end_process_group(self.proc)
        if os.path.exists(self.raw):
            with open(self.raw) as part, open(self.out, "a") as whole:
                whole.write(part.read())
            os.unlink(self.raw)


def one_run(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    folder = tempfile.mkdtemp(prefix=f"solitaire-floor-{kind}-")
    load_args = argparse.Namespace(
        clients=args.clients, rate=0.0, seconds=args.seconds, game="HH", reply="brief", idle=0
    )
    with started(kind, folder, args) as (base, pid):
        spy = Spy(pid, args.py_spy) if args.py_spy and kind in ("server", "base") else None
        load_args.on_start = spy.start if spy else None
        try:
            result = asyncio.run(load.within_deadline(load_args, base, pid))
        finally:
            if spy is not None:
                spy.stop()
    keep = ("actions_per_s", "p50_ms", "p99_ms", "errors", "server_cpu_s")
    return {key: result[key] for key in keep}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument(
        "--db", default="sqlite", help="the server's database URL, or 'sqlite' for a new file"
    )
    parser.add_argument("--only", choices=KINDS, action="append", help="run only these (repeatable)")
    parser.add_argument(
        "--base", help="another checkout of the server, run too in each round (kind 'base'): before and after"
    )
    parser.add_argument("--py-spy", help="append py-spy's raw samples of the server's runs to this file")
    args = parser.parse_args()
    raise_fd_limit()
    # A thousand handshakes on a loaded machine can take longer than the default auth deadline.
    os.environ.setdefault("SOLITAIRE_AUTH_TIMEOUT_S", "60")
    kinds = args.only or [kind for kind in KINDS if kind != "base" or args.base]
    rounds: list[dict[str, Any]] = []
    for number in range(1, args.rounds + 1):
        figures: dict[str, Any] = {"round": number, "load_avg_1m": round(os.getloadavg()[0], 2)}
        for kind in kinds:
            figures[kind] = one_run(kind, args)
            print(f"round {number} {kind}: {figures[kind]}", flush=True)
        for kind, ratio in (("server", "ratio"), ("base", "base_ratio")):
            if kind in figures and "durable" in figures:
                figures[ratio] = round(
                    figures[kind]["actions_per_s"] / figures["durable"]["actions_per_s"], 3
                )
        rounds.append(figures)
    summary: dict[str, Any] = {"clients": args.clients, "seconds": args.seconds, "db": args.db.split(":")[0]}
    for kind in kinds:
        summary[f"{kind}_median_per_s"] = statistics.median(r[kind]["actions_per_s"] for r in rounds)
    for ratio in ("ratio", "base_ratio"):
        ratios = [r[ratio] for r in rounds if ratio in r]
        if ratios:
            summary[f"{ratio}s"] = ratios
            summary[f"median_{ratio}"] = statistics.median(ratios)
    summary["rounds"] = rounds
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
