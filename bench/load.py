"""Load test: N real WebSocket clients playing real games against a real server.

Each client owns a Heart to Heart game (Seahaven with --game SH), keeps a local
engine mirror to pick legal actions (undos included), and sends them at its
share of ``--rate`` (0 = as fast as each client can, one action in flight per
client). Measuring starts once every client has connected and opened its
game, after 2 more seconds of play. Every figure counts only acknowledged
actions, and the server acknowledges an action only after its commit. The server runs in its own
process (started here unless ``--url`` is given) so its CPU and memory can be
read. ``--idle N`` instead holds N idle authenticated connections (from 50 local
addresses, the open-files limits raised for them) and reports the server
memory per connection and how long accepting them took; with ``--trace`` the
server runs under tracemalloc and the allocation sites that grew are printed.

Every wait has a deadline: a client that cannot connect, or a reply that
does not come within ``REPLY_TIMEOUT_S``, ends the run with an error instead
of a hang, and the server process (its whole process group) is ended however
the run ends.

The last line printed is one JSON object (see docs/performance.md).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import resource
import signal
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import websockets
from prometheus_client.parser import text_string_to_metric_families
from serverproc import ROOT, free_port, raise_fd_limit, started_server, tree_cpu_seconds

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from engine import Action, Game  # noqa: E402
from engine.codes import random_code  # noqa: E402

UNDO = Action("undo")
WARMUP_S = 2.0  # after the start: acting, but not measured yet
CONNECT_TIMEOUT_S = 30.0  # one client's WebSocket handshake
REPLY_TIMEOUT_S = 30.0  # one answer (hello, welcome, game, result): far above any sane latency
START_TIMEOUT_S = 120.0  # until every client has connected and opened its game
IDLE_BATCH = 500  # --idle: handshakes under way at once
TRACED_BATCH = 25  # --idle --trace: the same, to a server slowed by tracing
IDLE_SETTLE_S = 2.0  # --idle: after the last handshake, before the memory is read
SOURCE_ADDRESSES = 50  # --idle: clients connect from 127.0.0.2 … 127.0.0.51
FD_HEADROOM = 1024  # descriptors beyond one per connection (database, log, the loop's own)
TRACE_TIMEOUT_S = 120.0  # --trace: one snapshot of tens of thousands of connections written
TRACE_SHOWN_FRAMES = 6  # --trace: innermost frames shown per allocation site
FLAT_OUT_RATE_PER_S = 1e6  # the server's per-connection limit when clients act flat out
# Every client here comes from one address and shares a few players: the quotas per address and
# per player are off (0), or the run would measure them (bench/abuse.py does, with the defaults).
UNCOUNTED = {
    f"SOLITAIRE_{name}": "0"
    for name in (
        "CONNECTIONS_PER_ADDRESS",
        "CONNECTIONS_PER_PLAYER",
        "HTTP_RATE_PER_S",
        "PLAYERS_PER_HOUR",
        "GAMES_PER_MINUTE",
    )
}


class NoReply(RuntimeError):
    """An answer the load generator waited for did not come in time."""


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


@contextmanager
def server_process(
    db_url: str,
    rate: float,
    connections: int = 0,
    trace: str | None = None,
    root: Path | None = None,
    metrics_port: int = 0,
) -> Iterator[tuple[str, int]]:
    """Start ``solitaire-server`` for a run (see :func:`serverproc.started_server`).

    ``rate`` is the per-connection rate limit for paced runs; 0 (flat out) sets one no
    client can reach: the server answers a refused request without an id at most ten
    times a second, and a benchmark must measure the server, not its limiter.
    """
    settings = {
        "SOLITAIRE_DATABASE_URL": db_url,
        "SOLITAIRE_RATE_PER_S": str(max(50.0, rate) if rate else FLAT_OUT_RATE_PER_S),
        "SOLITAIRE_BURST": "1000",
        **UNCOUNTED,
    }
    if connections:  # a connection storm on a busy machine: no deadline of the server's is measured
        settings["SOLITAIRE_MAX_CONNECTIONS"] = str(connections + FD_HEADROOM)
        settings["SOLITAIRE_AUTH_TIMEOUT_S"] = settings["SOLITAIRE_REQUEST_TIMEOUT_S"] = str(START_TIMEOUT_S)
    if trace:
        settings["SOLITAIRE_BENCH_TRACE"] = trace
    if metrics_port:
        settings["SOLITAIRE_METRICS_LISTEN"] = f"127.0.0.1:{metrics_port}"
    with started_server(settings, root or ROOT, traced=trace is not None) as server:
        yield server


def create_players(base: str, count: int) -> list[str]:
    tokens = []
    for i in range(count):
        request = urllib.request.Request(
            f"{base}/api/players", data=json.dumps({"name": f"load{i}"}).encode(), method="POST"
        )
        with urllib.request.urlopen(request, timeout=REPLY_TIMEOUT_S) as response:
            tokens.append(json.loads(response.read())["token"])
    return tokens


class Go:
    """Start line: every client connects and opens its game before anyone acts, so the
    connection storm is not part of the figures.

    The clients run in one task group: one that fails before the start cancels the
    others, waiting here or not; and the start itself has a deadline (:meth:`wait`).
    """

    def __init__(self, clients: int, seconds: float) -> None:
        self.clients = clients
        self.waiting = clients
        self.seconds = seconds
        self.started: asyncio.Future[float] = asyncio.get_running_loop().create_future()

    async def ready(self) -> float:
        """Wait for the start; returns the deadline."""
        self.waiting -= 1
        if self.waiting == 0:
            self.started.set_result(time.monotonic() + WARMUP_S + self.seconds)
        return float(await asyncio.shield(self.started))

    async def wait(self, timeout: float = START_TIMEOUT_S) -> None:
        """Until every client is at the start line; an error if that takes over ``timeout``."""
        try:
            await asyncio.wait_for(asyncio.shield(self.started), timeout)
        except TimeoutError:
            raise NoReply(
                f"{self.waiting} of {self.clients} clients not at the start line after {timeout} s"
            ) from None


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors = 0
        self.acked = 0
        self.first_error = ""


async def receive(ws: Any, what: str) -> str:
    """The next frame, within ``REPLY_TIMEOUT_S``."""
    try:
        return str(await asyncio.wait_for(ws.recv(), REPLY_TIMEOUT_S))
    except TimeoutError:
        raise NoReply(f"no {what} within {REPLY_TIMEOUT_S} s") from None


async def answer_to(ws: Any, rid: str, what: str) -> str:
    """The answer carrying request id ``rid``; pushes (status, finished…) carry none and
    are skipped. The frame is not parsed: the id is unique enough to be looked for."""
    marker = f'"id":"{rid}"'
    deadline = time.monotonic() + REPLY_TIMEOUT_S
    while True:
        remaining = deadline - time.monotonic()
        try:
            frame = str(await asyncio.wait_for(ws.recv(), max(0.0, remaining)))
        except TimeoutError:
            raise NoReply(f"no answer to {what} (id {rid}) within {REPLY_TIMEOUT_S} s") from None
        if marker in frame:
            return frame


async def connect(base: str, token: str, source: str | None = None) -> Any:
    """An authenticated connection; ``source``: the local address to connect from."""
    ws = await websockets.connect(
        base.replace("http", "ws", 1) + "/ws",
        compression=None,
        max_size=2**20,
        open_timeout=CONNECT_TIMEOUT_S,
        close_timeout=5,
        **({"local_addr": (source, 0)} if source else {}),
    )
    try:
        await receive(ws, "hello")
        await ws.send(json.dumps({"type": "auth", "token": token, "id": "auth"}))
        await answer_to(ws, "auth", "auth")
    except BaseException:
        await ws.close()
        raise
    return ws


async def play(
    base: str, token: str, game: str, interval: float, go: Go, stats: Stats, reply_mode: str
) -> None:
    """One client: connect and start a game, wait for everyone, then act at the given
    pace until the deadline."""
    ws = await connect(base, token)
    try:
        await play_on(ws, game, interval, go, stats, reply_mode)
    finally:
        await ws.close()


async def play_on(ws: Any, game: str, interval: float, go: Go, stats: Stats, reply_mode: str) -> None:
    variant = "N" if game == "HH" else "C4"
    rng = random.Random()
    ids = iter(range(1, 2**62))

    async def new_game() -> tuple[str, Game] | None:
        """A new game on the server and its mirror; None (an error counted) if refused."""
        rid = f"g{next(ids)}"
        code = str(random_code(game, variant))
        await ws.send(json.dumps({"type": "new_game", "code": code, "id": rid}))
        answer = await answer_to(ws, rid, "new_game")
        reply = json.loads(answer)
        if reply.get("type") != "game":
            stats.errors += 1
            stats.first_error = stats.first_error or answer[:300]
            return None
        return reply["game"]["id"], Game.new(reply["game"]["code"])

    first = await new_game()
    if first is None:
        raise RuntimeError(f"new_game refused before the start: {stats.first_error}")
    game_id, mirror = first
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
            started_game = await new_game()
            if started_game is not None:  # else: tried again next round
                game_id, mirror = started_game
            continue
        action = UNDO if mirror.history and rng.random() < 0.1 else rng.choice(legal)
        rid = f"a{next(ids)}"
        message = {
            "type": "act",
            "game_id": game_id,
            "seq": mirror.seq,
            "action": action.to_json(),
            "reply": reply_mode,
            "id": rid,
        }
        started = time.perf_counter()
        await ws.send(json.dumps(message))
        answer = await answer_to(ws, rid, "act")  # pushes (e.g. the solver's dead-end notice) skipped
        if answer.startswith('{"type":"result"'):  # the mirror knows the state: no need to parse it
            stats.latencies.append((time.perf_counter() - started) * 1000)
            stats.acked += 1
            mirror = mirror.apply(action).game
        else:
            stats.errors += 1
            stats.first_error = stats.first_error or str(answer)[:300]


class Sampler:
    """Samples the server's CPU time (its solver process included) and the server process's
    peak resident memory."""

    def __init__(self, pid: int) -> None:
        self.proc = psutil.Process(pid)
        self.peak = 0
        self.cpu_start = self.cpu()

    def cpu(self) -> float:
        return tree_cpu_seconds(self.proc)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            await asyncio.sleep(0.2)


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))], 2)


HISTOGRAMS = ("solitaire_action_seconds", "solitaire_commit_seconds")  # read before and after a run


def server_buckets(metrics_url: str) -> dict[str, dict[float, float]]:
    """The server's own histograms so far (:data:`HISTOGRAMS`): cumulative count per bound (s)."""
    with urllib.request.urlopen(metrics_url, timeout=REPLY_TIMEOUT_S) as response:
        text = response.read().decode()
    found: dict[str, dict[float, float]] = {name: {} for name in HISTOGRAMS}
    for family in text_string_to_metric_families(text):
        if family.name in found:
            for sample in family.samples:
                if sample.name.endswith("_bucket"):
                    found[family.name][float(sample.labels["le"])] = sample.value
    return found


def bucket_percentile(before: dict[float, float], after: dict[float, float], pct: float) -> float:
    """The bucket bound (ms) under which ``pct`` % of the actions between two readings fell."""
    counts = sorted((bound, after[bound] - before.get(bound, 0.0)) for bound in after)
    total = counts[-1][1] if counts else 0.0
    for bound, count in counts:
        if total and count >= total * pct / 100:
            return round(bound * 1000, 2)
    return 0.0


def server_percentiles(
    before: dict[str, dict[float, float]], after: dict[str, dict[float, float]]
) -> dict[str, float]:
    """The server's p50 and p99 of an action and of a group commit, as histogram bounds."""
    action, commit = (after.get(name, {}) for name in HISTOGRAMS)
    action_before, commit_before = (before.get(name, {}) for name in HISTOGRAMS)
    return {
        "server_p50_ms_under": bucket_percentile(action_before, action, 50),
        "server_p99_ms_under": bucket_percentile(action_before, action, 99),
        "commit_p99_ms_under": bucket_percentile(commit_before, commit, 99),
    }


class HeldCollector:
    """The load generator's cyclic garbage collector held off while it measures.

    The generator keeps a thousand connections and game mirrors: its young
    collections took 2-13 ms and its older ones up to 100 ms, each one a pause
    every answer waiting meanwhile was charged with (the p99 at a third of the
    server's capacity was 85 ms, most of it the generator's). What was built to
    get to the start line is frozen out; a run of seconds makes few cycles.
    """

    def __init__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.collect()
        gc.freeze()
        gc.disable()

    def close(self) -> None:
        if self.was_enabled:
            gc.enable()
        gc.unfreeze()


async def run_load(args: argparse.Namespace, base: str, pid: int) -> dict[str, Any]:
    tokens = create_players(base, min(args.clients, 200))
    stats = Stats()
    interval = args.clients / args.rate if args.rate else 0.0
    sampler = Sampler(pid)
    stop = asyncio.Event()
    go = Go(args.clients, args.seconds)
    try:
        # One group: a client (or the sampler) that fails cancels all the others.
        async with asyncio.TaskGroup() as group:
            sampling = group.create_task(sampler.run(stop))
            tasks = [
                group.create_task(
                    play(base, tokens[i % len(tokens)], args.game, interval, go, stats, args.reply)
                )
                for i in range(args.clients)
            ]
            await go.wait()
            collector = HeldCollector()  # the instrument's own pauses are not the server's latency
            if (on_start := getattr(args, "on_start", None)) is not None:
                on_start()  # a caller's hook at the start line (bench/floor.py starts its profiler)
            await asyncio.sleep(WARMUP_S)  # first actions: not measured
            stats.latencies.clear()
            stats.errors = 0
            acked_before, cpu_before = stats.acked, sampler.cpu()
            metrics_url = getattr(args, "metrics_url", None)
            buckets_before = server_buckets(metrics_url) if metrics_url else {}
            started = time.monotonic()
            await asyncio.gather(*tasks)
            elapsed = time.monotonic() - started
            buckets_after = server_buckets(metrics_url) if metrics_url else {}
            collector.close()
            stop.set()
            await sampling
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from failed  # the first failure says why the run ended
    if stats.first_error:
        print(f"first error: {stats.first_error}")
    return {
        "actions_per_s": round((stats.acked - acked_before) / elapsed, 1),
        "p50_ms": percentile(stats.latencies, 50),
        "p95_ms": percentile(stats.latencies, 95),
        "p99_ms": percentile(stats.latencies, 99),
        # In the server, from the frame read to its answer written (bounds of its histogram).
        **server_percentiles(buckets_before, buckets_after),
        "errors": stats.errors,
        "server_cpu_s": round(sampler.cpu() - cpu_before, 2),
        "server_peak_mib": round(sampler.peak / 2**20, 1),
    }


async def run_idle(args: argparse.Namespace, base: str, pid: int) -> dict[str, Any]:
    """Hold ``args.idle`` authenticated connections, ``IDLE_BATCH`` handshakes at a time
    (``TRACED_BATCH`` for a server slowed by tracing); the server's memory per connection and
    how long accepting them all took."""
    tokens = create_players(base, 50)
    proc = psutil.Process(pid)
    trace = Trace(args.trace, pid) if args.trace else None
    if trace:
        await trace.snapshot()
    before = proc.memory_info().rss
    sockets: list[Any] = []
    started = time.monotonic()
    try:
        step = TRACED_BATCH if trace else IDLE_BATCH
        for start in range(0, args.idle, step):
            async with asyncio.TaskGroup() as group:  # one failed connection cancels the batch
                batch = [
                    group.create_task(connect(base, tokens[i % len(tokens)], source_address(i)))
                    for i in range(start, min(args.idle, start + step))
                ]
            sockets.extend(task.result() for task in batch)
        accept_s = time.monotonic() - started
        await asyncio.sleep(IDLE_SETTLE_S)
        after = proc.memory_info().rss
        if trace:
            await trace.snapshot()
            trace.report(len(sockets))
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from failed
    finally:
        await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    return {
        "idle_connections": len(sockets),
        "server_rss_before_mib": round(before / 2**20, 1),
        "server_rss_after_mib": round(after / 2**20, 1),
        "kib_per_idle_connection": round((after - before) / 1024 / len(sockets), 1),
        "accept_s": round(accept_s, 1),
        "accepted_per_s": round(len(sockets) / accept_s, 1),
    }


def source_address(i: int) -> str:
    """Client ``i``'s own address: one address has fewer than 30,000 ephemeral ports."""
    return f"127.0.0.{2 + i % SOURCE_ADDRESSES}"


class Trace:
    """Tracemalloc snapshots of a server started under bench/traced_server.py (``--trace``):
    the allocation sites that grew between the first and the last, per connection."""

    def __init__(self, prefix: str, pid: int) -> None:
        self.prefix = prefix
        self.pid = pid
        self.taken = 0

    async def snapshot(self) -> None:
        path = Path(f"{self.prefix}.{self.taken}")
        os.kill(self.pid, signal.SIGUSR1)
        deadline = time.monotonic() + TRACE_TIMEOUT_S
        while not path.exists():
            if time.monotonic() > deadline:
                raise NoReply(f"no snapshot {path} within {TRACE_TIMEOUT_S} s")
            await asyncio.sleep(0.2)
        self.taken += 1

    def report(self, connections: int, top: int = 30) -> None:
        import tracemalloc

        first, last = (tracemalloc.Snapshot.load(f"{self.prefix}.{i}") for i in (0, self.taken - 1))
        ignored = [tracemalloc.Filter(False, tracemalloc.__file__)]
        first, last = first.filter_traces(ignored), last.filter_traces(ignored)
        grown = sum(stat.size_diff for stat in last.compare_to(first, "filename"))
        print(f"traced growth: {grown / 1024 / connections:.2f} KiB per connection; top sites:")
        for stat in last.compare_to(first, "traceback")[:top]:
            innermost = list(reversed(stat.traceback))[:TRACE_SHOWN_FRAMES]  # the allocation first
            frames = [f"{Path(f.filename).name}:{f.lineno}" for f in innermost]
            print(
                f"{stat.size_diff / connections:8.0f} B {stat.count_diff / connections:6.2f} blocks"
                f"  {' <- '.join(frames)}"
            )


def on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


async def within_deadline(args: argparse.Namespace, base: str, pid: int) -> dict[str, Any]:
    """The run, bounded as a whole (each wait inside has its own, shorter deadline)."""
    if args.idle:
        budget = (args.idle / 500 + 1) * (CONNECT_TIMEOUT_S + 2 * REPLY_TIMEOUT_S) + 30
        run = run_idle(args, base, pid)
    else:
        budget = START_TIMEOUT_S + WARMUP_S + args.seconds + 2 * REPLY_TIMEOUT_S + 30
        run = run_load(args, base, pid)
    try:
        return await asyncio.wait_for(run, budget)
    except TimeoutError:
        raise NoReply(f"the run did not end within {budget:.0f} s") from None


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
        "--trace",
        metavar="PREFIX",
        help="with --idle: run the server under tracemalloc, snapshots at PREFIX.0, PREFIX.1, and "
        "print the allocation sites that grew, per connection (its memory figures include tracing)",
    )
    parser.add_argument(
        "--reply", choices=["brief", "full"], default="brief", help="result size clients ask for"
    )
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, on_sigterm)  # so that the server is ended as on Ctrl-C
    needed = args.idle + FD_HEADROOM  # in each process: the load generator and the server
    raise_fd_limit(needed)
    if args.idle and (limit := resource.getrlimit(resource.RLIMIT_NOFILE)[0]) < needed:
        sys.exit(
            f"--idle {args.idle} needs {needed} open files and the limit is {limit}: raising it needs "
            "root with CAP_SYS_RESOURCE (or a higher hard limit: ulimit -Hn, systemd LimitNOFILE)"
        )
    folder = tempfile.mkdtemp(prefix="solitaire-load-")
    db_url = f"sqlite+aiosqlite:///{folder}/load.db" if args.db == "sqlite" else args.db
    fsync_start = fsync_ms(folder)
    if args.url:
        base, pid = args.url, int(os.environ.get("SOLITAIRE_SERVER_PID", "0"))
        result = asyncio.run(within_deadline(args, base, pid))
    else:
        rate = args.rate / max(1, args.clients) * 4
        metrics_port = free_port()
        args.metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
        with server_process(db_url, rate, args.idle, args.trace, metrics_port=metrics_port) as (base, pid):
            result = asyncio.run(within_deadline(args, base, pid))
    own = psutil.Process().cpu_times()
    print(f"load generator cpu: {own.user + own.system:.1f} s")
    summary = {"db": db_url.split(":")[0], "clients": args.idle or args.clients, **result}
    summary["fsync_ms_start"], summary["fsync_ms_end"] = fsync_start, fsync_ms(folder)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
