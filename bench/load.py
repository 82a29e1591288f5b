"""Load test: N real WebSocket clients playing real games against a real server.

Each client owns a Heart to Heart game (Seahaven with --game SH), keeps a local
engine mirror to pick legal actions (undos included), and sends them at its
share of ``--rate`` (0 = as fast as each client can, one action in flight per
client). Measuring starts once every client has connected and opened its
game, after 2 more seconds of play. Every figure counts only acknowledged
actions, and the server acknowledges an action only after its commit. The server runs in its own
process (started here unless ``--url`` is given) so its CPU and memory can be
read. ``--idle N`` instead holds N idle authenticated connections and reports
the server memory per connection.

The last line printed is one JSON object (see docs/performance.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import websockets

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from engine import Action, Game  # noqa: E402
from engine.codes import random_code  # noqa: E402

UNDO = Action("undo")
PUSHES = ('{"type":"status"', '{"type":"finished"')  # may arrive before an answer
WARMUP_S = 2.0  # after the start: acting, but not measured yet


def fsync_ms(folder: str, rounds: int = 20) -> float:
    """Median latency of writing 4 KiB and fsyncing it, in the database's folder."""
    samples = []
    path = os.path.join(folder, ".fsync-probe")
    with open(path, "wb") as handle:
        for _ in range(rounds):
            handle.write(os.urandom(4096))
            started = time.perf_counter()
            handle.flush()
            os.fsync(handle.fileno())
            samples.append((time.perf_counter() - started) * 1000)
    os.unlink(path)
    return round(statistics.median(samples), 3)


def raise_fd_limit() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def server_process(db_url: str, rate: float) -> Any:
    """Start ``solitaire-server`` in its own process and wait for /health."""
    port = free_port()
    env = {
        **os.environ,
        "SOLITAIRE_DATABASE_URL": db_url,
        "SOLITAIRE_PORT": str(port),
        "SOLITAIRE_RATE_PER_S": str(max(50.0, rate)),
        "SOLITAIRE_BURST": "1000",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "--log-level", "warning"], env=env, preexec_fn=raise_fd_limit
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=2):
                break
        except OSError:
            time.sleep(0.2)
    try:
        yield base, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def create_players(base: str, count: int) -> list[str]:
    tokens = []
    for i in range(count):
        request = urllib.request.Request(
            f"{base}/api/players", data=json.dumps({"name": f"load{i}"}).encode(), method="POST"
        )
        with urllib.request.urlopen(request) as response:
            tokens.append(json.loads(response.read())["token"])
    return tokens


class Go:
    """Start line: every client connects and opens its game before anyone acts, so the
    connection storm is not part of the figures."""

    def __init__(self, clients: int, seconds: float) -> None:
        self.waiting = clients
        self.seconds = seconds
        self.started = asyncio.get_running_loop().create_future()

    async def ready(self) -> float:
        """Wait for the start; returns the deadline."""
        self.waiting -= 1
        if self.waiting == 0:
            self.started.set_result(time.monotonic() + WARMUP_S + self.seconds)
        return float(await self.started)


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors = 0
        self.acked = 0
        self.first_error = ""


async def connect(base: str, token: str) -> Any:
    ws = await websockets.connect(base.replace("http", "ws", 1) + "/ws", compression=None, max_size=2**20)
    await ws.recv()
    await ws.send(json.dumps({"type": "auth", "token": token}))
    await ws.recv()
    return ws


async def play(
    base: str, token: str, game: str, interval: float, go: Go, stats: Stats, reply_mode: str
) -> None:
    """One client: connect and start a game, wait for everyone, then act at the given
    pace until the deadline."""
    ws = await connect(base, token)
    variant = "N" if game == "HH" else "C4"
    rng = random.Random()
    await ws.send(json.dumps({"type": "new_game", "code": str(random_code(game, variant))}))
    reply = json.loads(await ws.recv())
    game_id, mirror = reply["game"]["id"], Game.new(reply["game"]["code"])
    until = await go.ready()
    next_at = time.monotonic() + rng.random() * interval
    while time.monotonic() < until:
        if interval:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            next_at += interval
        legal = mirror.legal_actions()
        if mirror.status in ("stalemate", "stuck") and mirror.history:
            legal = [UNDO]  # what a player does at a dead end: take moves back
        if not legal or mirror.status == "won":
            await ws.send(json.dumps({"type": "new_game", "code": str(random_code(game, variant))}))
            reply = json.loads(await ws.recv())
            game_id, mirror = reply["game"]["id"], Game.new(reply["game"]["code"])
            continue
        action = UNDO if mirror.history and rng.random() < 0.1 else rng.choice(legal)
        message = {
            "type": "act",
            "game_id": game_id,
            "seq": mirror.seq,
            "action": action.to_json(),
            "reply": reply_mode,
        }
        started = time.perf_counter()
        await ws.send(json.dumps(message))
        answer = await ws.recv()
        while answer.startswith(PUSHES):  # e.g. the solver's dead-end notice: not the answer
            answer = await ws.recv()
        if answer.startswith('{"type":"result"'):  # the mirror knows the state: no need to parse it
            stats.latencies.append((time.perf_counter() - started) * 1000)
            stats.acked += 1
            mirror = mirror.apply(action).game
        else:
            stats.errors += 1
            stats.first_error = stats.first_error or str(answer)[:300]
    await ws.close()


class Sampler:
    """Samples the server process's CPU time and peak resident memory."""

    def __init__(self, pid: int) -> None:
        self.proc = psutil.Process(pid)
        self.peak = 0
        self.cpu_start = self.cpu()

    def cpu(self) -> float:
        times = self.proc.cpu_times()
        return float(times.user + times.system)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            await asyncio.sleep(0.2)


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))], 2)


async def run_load(args: argparse.Namespace, base: str, pid: int) -> dict[str, Any]:
    tokens = create_players(base, min(args.clients, 200))
    stats = Stats()
    interval = args.clients / args.rate if args.rate else 0.0
    sampler = Sampler(pid)
    stop = asyncio.Event()
    sampling = asyncio.create_task(sampler.run(stop))
    go = Go(args.clients, args.seconds)
    tasks = [
        asyncio.create_task(play(base, tokens[i % len(tokens)], args.game, interval, go, stats, args.reply))
        for i in range(args.clients)
    ]
    await go.started
    await asyncio.sleep(WARMUP_S)  # first actions: not measured
    stats.latencies.clear()
    stats.errors = 0
    acked_before, cpu_before = stats.acked, sampler.cpu()
    started = time.monotonic()
    await asyncio.gather(*tasks)
    elapsed = time.monotonic() - started
    stop.set()
    await sampling
    if stats.first_error:
        print(f"first error: {stats.first_error}")
    return {
        "actions_per_s": round((stats.acked - acked_before) / elapsed, 1),
        "p50_ms": percentile(stats.latencies, 50),
        "p95_ms": percentile(stats.latencies, 95),
        "p99_ms": percentile(stats.latencies, 99),
        "errors": stats.errors,
        "server_cpu_s": round(sampler.cpu() - cpu_before, 2),
        "server_peak_mib": round(sampler.peak / 2**20, 1),
    }


async def run_idle(args: argparse.Namespace, base: str, pid: int) -> dict[str, Any]:
    tokens = create_players(base, 50)
    proc = psutil.Process(pid)
    before = proc.memory_info().rss
    sockets = []
    for start in range(0, args.idle, 500):
        batch = [connect(base, tokens[i % len(tokens)]) for i in range(start, min(args.idle, start + 500))]
        sockets.extend(await asyncio.gather(*batch))
    await asyncio.sleep(2)
    after = proc.memory_info().rss
    for ws in sockets:
        await ws.close()
    return {
        "idle_connections": len(sockets),
        "server_rss_before_mib": round(before / 2**20, 1),
        "server_rss_after_mib": round(after / 2**20, 1),
        "kib_per_idle_connection": round((after - before) / 1024 / len(sockets), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", default="sqlite", help="database URL, or 'sqlite' for a temporary file")
    parser.add_argument("--url", help="use a running server instead of starting one")
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--rate", type=float, default=0, help="total actions/s to offer (0 = flat out)")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--game", choices=["HH", "SH"], default="HH")
    parser.add_argument("--idle", type=int, default=0, help="hold this many idle connections instead")
    parser.add_argument(
        "--reply", choices=["brief", "full"], default="brief", help="result size clients ask for"
    )
    args = parser.parse_args()
    raise_fd_limit()
    folder = tempfile.mkdtemp(prefix="solitaire-load-")
    db_url = f"sqlite+aiosqlite:///{folder}/load.db" if args.db == "sqlite" else args.db
    fsync_start = fsync_ms(folder)
    if args.url:
        base, pid = args.url, int(os.environ.get("SOLITAIRE_SERVER_PID", "0"))
        result = asyncio.run(run_idle(args, base, pid) if args.idle else run_load(args, base, pid))
    else:
        with server_process(db_url, args.rate / max(1, args.clients) * 4) as (base, pid):
            result = asyncio.run(run_idle(args, base, pid) if args.idle else run_load(args, base, pid))
    own = psutil.Process().cpu_times()
    print(f"load generator cpu: {own.user + own.system:.1f} s")
    summary = {"db": db_url.split(":")[0], "clients": args.idle or args.clients, **result}
    summary["fsync_ms_start"], summary["fsync_ms_end"] = fsync_start, fsync_ms(folder)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
