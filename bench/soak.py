"""Soak benchmark: one server under mixed load for a long time, watched minute by minute.

The load is what a day on the site looks like, at a steady pace: players play
practice games (random legal moves, a resignation after a few dozen, now and
then a known winning line so the boards fill), pairs of players race, spectators
come and go on the players' games, readers fetch leaderboards and ranks over
HTTP, and every player drops its connection and comes back every few games.

Each minute (``--minute-s``) it records the server's resident memory (its
solver worker included), open descriptors, event-loop tasks
(``solitaire_event_loop_tasks``), open connections, games held in memory
(``solitaire_live_games``), the actions acknowledged and their p99 (send →
result), and the errors. The pass is flat lines: after the first minutes
(``--warmup``: the live-game cache fills to ``--live-games``, pools open, the
dead-end solver's worker starts), the last minutes' memory, descriptors and
tasks stay within a bound of the early ones. A leak of one object per action,
one descriptor per reconnect or one task per race would cross them within
minutes (the last one did: finished races each held a sleeping task).

The last line printed is one JSON object (see docs/performance.md, "Soak").
Every wait has a deadline; the server (in its own process group) is ended
however the run ends.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import tempfile
import time
import tracemalloc
import urllib.request
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from load import Trace as ServerTrace
from load import percentile
from prometheus_client.parser import text_string_to_metric_families
from serverproc import free_port, raise_fd_limit, started_server

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from client import SolitaireClient  # noqa: E402
from client.errors import SolitaireError  # noqa: E402
from engine import Action, Game  # noqa: E402
from engine.codes import random_code  # noqa: E402
from engine.solver import solve  # noqa: E402

REQUEST_TIMEOUT_S = 30.0
MEMORY_GROWTH_MAX = 0.10  # the last minutes' memory at most 10% (and 24 MiB) above the early ones'
MEMORY_SLACK_BYTES = 24 * 2**20
COUNT_SLACK = 0.15  # descriptors and tasks: within 15% (and a few) of the early minutes'
COUNT_SLACK_ABS = 8
JUDGED = ("rss_mib", "fds", "tasks", "p99_ms")  # early against late, in the report


@dataclass
class Minute:
    """What one minute of the run added up to."""

    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    reconnects: int = 0
    races: int = 0
    watches: int = 0
    reads: int = 0
    wins: int = 0


@dataclass
class Load:
    """The shared figures every worker adds to, and the known winning lines."""

    base: str
    deadline: float
    wins: list[tuple[str, list[Action]]]
    minute: Minute = field(default_factory=Minute)
    live_games: list[str] = field(default_factory=list)  # the players' current games, to watch
    first_error: str = ""

    def running(self) -> bool:
        return time.monotonic() < self.deadline

    def failed(self, exc: BaseException) -> None:
        self.minute.errors += 1
        self.first_error = self.first_error or f"{type(exc).__name__}: {exc}"


def fresh_code(rng: random.Random, game: str, variant: str) -> str:
    """A random deal, repeatable from the run's seed."""
    return str(random_code(game, variant, rng.getrandbits(35)))


async def timed_act(load: Load, client: SolitaireClient, game_id: str, seq: int, action: Action) -> Any:
    sent = time.perf_counter()
    result = await asyncio.wait_for(client.act(game_id, seq, action), REQUEST_TIMEOUT_S)
    load.minute.latencies.append((time.perf_counter() - sent) * 1000)
    return result


async def play_game(
    load: Load, client: SolitaireClient, rng: random.Random, pace_s: float, moves: int
) -> None:
    """One practice game: a known winning line one game in ten, else random moves, then resign."""
    known = rng.random() < 0.1 and load.wins
    game, variant = rng.choice([("SH", "C4"), ("HH", "N")])
    code, line = rng.choice(load.wins) if known else (fresh_code(rng, game, variant), [])
    handle = await asyncio.wait_for(client.new_game(code), REQUEST_TIMEOUT_S)
    load.live_games.append(handle.id)
    mirror = Game.new(code)
    try:
        for step in range(len(line) if line else moves):
            if not load.running():
                break
            legal = mirror.legal_actions()
            action = line[step] if line else (rng.choice(legal) if legal else Action("undo"))
            await timed_act(load, client, handle.id, mirror.seq, action)
            mirror = mirror.apply(action).game
            await asyncio.sleep(pace_s)
        if line and mirror.status == "won":
            load.minute.wins += 1
        elif mirror.status not in ("won", "lost"):
            await asyncio.wait_for(client.resign(handle.id), REQUEST_TIMEOUT_S)
    finally:
        load.live_games.remove(handle.id)
        client.games.pop(handle.id, None)


async def player(load: Load, token: str, seed: int, pace_s: float, reconnect_every: int) -> None:
    """Plays game after game; every ``reconnect_every`` games the connection is closed and opened again."""
    rng = random.Random(seed)
    games = 0
    while load.running():
        try:
            async with SolitaireClient(load.base, token, timeout=REQUEST_TIMEOUT_S) as client:
                for _ in range(reconnect_every):
                    if not load.running():
                        break
                    await play_game(load, client, rng, pace_s, rng.randrange(20, 60))
                    games += 1
            load.minute.reconnects += 1
        except (SolitaireError, OSError, TimeoutError) as exc:
            load.failed(exc)
            await asyncio.sleep(1.0)


async def racers(load: Load, host_token: str, guest_token: str, seed: int, pace_s: float) -> None:
    """Two players race on random deals, a few moves each, then leave (which resigns)."""
    rng = random.Random(seed)
    async with (
        SolitaireClient(load.base, host_token, timeout=REQUEST_TIMEOUT_S) as host,
        SolitaireClient(load.base, guest_token, timeout=REQUEST_TIMEOUT_S) as guest,
    ):
        while load.running():
            try:
                await one_race(load, host, guest, rng, pace_s)
                load.minute.races += 1
            except (SolitaireError, OSError, TimeoutError) as exc:
                load.failed(exc)
                await asyncio.sleep(1.0)


async def one_race(
    load: Load, host: SolitaireClient, guest: SolitaireClient, rng: random.Random, pace_s: float
) -> None:
    race = await asyncio.wait_for(host.race_open(fresh_code(rng, "SH", "C4")), REQUEST_TIMEOUT_S)
    joined = await asyncio.wait_for(guest.race_join(race.id), REQUEST_TIMEOUT_S)
    await asyncio.wait_for(host.race_start(race.id, countdown_s=0), REQUEST_TIMEOUT_S)
    for handle, client in ((race, host), (joined, guest)):
        game = await asyncio.wait_for(handle.wait_game(), REQUEST_TIMEOUT_S)
        mirror = Game.new(str(game.code))
        for _ in range(rng.randrange(3, 10)):
            legal = mirror.legal_actions()
            if not legal:
                break
            action = rng.choice(legal)
            await timed_act(load, client, game.id, mirror.seq, action)
            mirror = mirror.apply(action).game
            await asyncio.sleep(pace_s)
        client.games.pop(game.id, None)
    for handle, client in ((race, host), (joined, guest)):
        await asyncio.wait_for(client.race_leave(handle.id), REQUEST_TIMEOUT_S)


async def spectator(load: Load, seed: int, stay_s: float) -> None:
    """Anonymous: watches a random player's game for a while, then another; a new connection each time."""
    rng = random.Random(seed)
    while load.running():
        try:
            async with SolitaireClient(load.base, timeout=REQUEST_TIMEOUT_S) as client:
                for _ in range(5):
                    if not load.live_games or not load.running():
                        await asyncio.sleep(0.5)
                        continue
                    game_id = rng.choice(load.live_games)
                    with contextlib.suppress(SolitaireError):  # the game may end meanwhile
                        await asyncio.wait_for(client.watch(game_id), REQUEST_TIMEOUT_S)
                        load.minute.watches += 1
                        await asyncio.sleep(stay_s)
                        await asyncio.wait_for(client.unwatch(game_id), REQUEST_TIMEOUT_S)
        except (SolitaireError, OSError, TimeoutError) as exc:
            load.failed(exc)
            await asyncio.sleep(1.0)


async def reader(load: Load, player_ids: list[str], seed: int, every_s: float) -> None:
    """Fetches the known deals' boards and a player's rank there over HTTP."""
    rng = random.Random(seed)
    while load.running():
        code = rng.choice(load.wins)[0]
        path = rng.choice(
            [f"/api/leaderboards/{code}", f"/api/leaderboards/{code}/players/{rng.choice(player_ids)}"]
        )
        try:
            await asyncio.to_thread(fetch, load.base + path)
            load.minute.reads += 1
        except OSError as exc:
            if "404" not in str(exc):  # a player with no entry on that board: an answer
                load.failed(exc)
        await asyncio.sleep(every_s)


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=REQUEST_TIMEOUT_S) as answer:
        data: bytes = answer.read()
        return data


def scrape(metrics_url: str) -> dict[str, float]:
    """The server's own gauges: connections and event-loop tasks."""
    wanted = {"solitaire_connections", "solitaire_event_loop_tasks", "solitaire_live_games"}
    found: dict[str, float] = {}
    for family in text_string_to_metric_families(fetch(metrics_url).decode()):
        for sample in family.samples:
            if sample.name in wanted:
                found[sample.name] = sample.value
    return found


def tree_memory(process: psutil.Process) -> tuple[int, int]:
    """Resident bytes and open descriptors of the server and its children (the solver's worker)."""
    rss, fds = 0, 0
    for proc in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            rss += proc.memory_info().rss
            fds += proc.num_fds()
    return rss, fds


class Trace(ServerTrace):
    """With ``--trace PREFIX``: bench/load.py's snapshots of the server (bench/traced_server.py),
    at the end of the warm-up and at the end, and what grew between them, by line."""

    def growth(self, top: int = 12) -> list[list[Any]]:
        if self.taken < 2:
            return []
        first = tracemalloc.Snapshot.load(f"{self.prefix}.0")
        last = tracemalloc.Snapshot.load(f"{self.prefix}.{self.taken - 1}")
        stats = last.compare_to(first, "lineno")[:top]
        return [[str(s.traceback[0]), round(s.size_diff / 1024, 1), s.count_diff] for s in stats]


async def sample_minutes(
    load: Load, pid: int, metrics_url: str, minute_s: float, trace: Trace | None = None, warmup: int = 0
) -> list[dict[str, Any]]:
    process = psutil.Process(pid)
    rows: list[dict[str, Any]] = []
    while load.running():
        if trace is not None and len(rows) == warmup and trace.taken == 0:
            await trace.snapshot()  # tracing starts here: only what the warm-up left behind is seen
        await asyncio.sleep(min(minute_s, max(0.0, load.deadline - time.monotonic())))
        minute, load.minute = load.minute, Minute()
        rss, fds = tree_memory(process)
        gauges = await asyncio.to_thread(scrape, metrics_url)
        row = {
            "minute": len(rows) + 1,
            "rss_mib": round(rss / 2**20, 1),
            "fds": fds,
            "tasks": int(gauges.get("solitaire_event_loop_tasks", -1)),
            "connections": int(gauges.get("solitaire_connections", -1)),
            "live_games": int(gauges.get("solitaire_live_games", -1)),
            "acked": len(minute.latencies),
            "p99_ms": round(percentile(minute.latencies, 99), 1),
            "errors": minute.errors,
            "reconnects": minute.reconnects,
            "races": minute.races,
            "watches": minute.watches,
            "reads": minute.reads,
            "wins": minute.wins,
        }
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    if trace is not None and trace.taken == 1:
        await trace.snapshot()
    return rows


def verdict(rows: list[dict[str, Any]], warmup: int) -> dict[str, Any]:
    """Flat lines: the last minutes against the first judged ones (after the warm-up)."""
    judged = rows[warmup:]
    if len(judged) < 4:
        return {"flat": None, "why": "too few minutes to judge (at least warm-up + 4)"}
    span = max(2, len(judged) // 4)
    early, late = judged[:span], judged[-span:]

    def mean(rows_: list[dict[str, Any]], key: str) -> float:
        return sum(float(r[key]) for r in rows_) / len(rows_)

    checks: dict[str, bool] = {}
    memory = mean(early, "rss_mib"), mean(late, "rss_mib")
    checks["memory"] = memory[1] <= max(
        memory[0] * (1 + MEMORY_GROWTH_MAX), memory[0] + MEMORY_SLACK_BYTES / 2**20
    )
    for key in ("fds", "tasks"):
        a, b = mean(early, key), mean(late, key)
        checks[key] = b <= a * (1 + COUNT_SLACK) + COUNT_SLACK_ABS
    checks["errors"] = sum(r["errors"] for r in judged) == 0
    return {
        "flat": all(checks.values()),
        "checks": checks,
        "early_late": {
            k: [round(mean(early, k), 1), round(mean(late, k), 1)]
            for k in ("rss_mib", "fds", "tasks", "p99_ms")
        },
    }


def winning_lines(count: int, seed: int) -> list[tuple[str, list[Action]]]:
    """Seahaven deals the engine's solver wins, with their lines: the boards the players fill."""
    rng = random.Random(seed)
    found: list[tuple[str, list[Action]]] = []
    while len(found) < count:
        code = fresh_code(rng, "SH", "C4")
        result = solve(code, node_budget=200_000)
        if result.actions:
            found.append((code, list(result.actions)))
    return found


async def create_players(base: str, count: int) -> list[tuple[str, str]]:
    made = []
    for i in range(count):
        player = await SolitaireClient.create_player(base, f"Soak {i}")
        made.append((player.token, player.id))
    return made


async def run(args: argparse.Namespace, base: str, pid: int, metrics_url: str) -> dict[str, Any]:
    trace = Trace(args.trace, pid) if args.trace else None
    wins = winning_lines(args.boards, args.seed)
    accounts = await create_players(base, args.players + 2 * args.races)
    tokens = [token for token, _ in accounts]
    ids = [player_id for _, player_id in accounts]
    load = Load(base, time.monotonic() + args.minutes * args.minute_s, wins)
    workers: list[Coroutine[Any, Any, None]] = []
    for i in range(args.players):
        workers.append(player(load, tokens[i], args.seed + i, args.pace_s, args.reconnect_every))
    for i in range(args.races):
        host, guest = tokens[args.players + 2 * i], tokens[args.players + 2 * i + 1]
        workers.append(racers(load, host, guest, args.seed + 1000 + i, args.pace_s))
    for i in range(args.spectators):
        workers.append(spectator(load, args.seed + 2000 + i, args.watch_s))
    for i in range(args.readers):
        workers.append(reader(load, ids, args.seed + 3000 + i, args.read_every_s))
    tasks = [asyncio.ensure_future(work) for work in workers]
    try:
        rows = await sample_minutes(load, pid, metrics_url, args.minute_s, trace, args.warmup)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks, timeout=30)
    return {
        "bench": "soak",
        "minutes": args.minutes,
        "minute_s": args.minute_s,
        "players": args.players,
        "race_pairs": args.races,
        "spectators": args.spectators,
        "readers": args.readers,
        "pace_s": args.pace_s,
        "acked": sum(r["acked"] for r in rows),
        "first": rows[0] if rows else None,
        "last": rows[-1] if rows else None,
        "per_minute": rows,
        "first_error": load.first_error,
        "trace_growth_kib": trace.growth() if trace is not None else None,
        "warmup_minutes": args.warmup,
        "live_games_bound": args.live_games,
        **verdict(rows, args.warmup),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=int, default=30)
    parser.add_argument(
        "--minute-s", type=float, default=60.0, help="seconds per sample (shorter for a quick look)"
    )
    parser.add_argument("--players", type=int, default=40)
    parser.add_argument("--races", type=int, default=3, help="pairs of racers")
    parser.add_argument("--spectators", type=int, default=10)
    parser.add_argument("--readers", type=int, default=4)
    parser.add_argument("--pace-s", type=float, default=0.25, help="each player's pause between actions")
    parser.add_argument("--watch-s", type=float, default=10.0)
    parser.add_argument("--read-every-s", type=float, default=0.5)
    parser.add_argument("--reconnect-every", type=int, default=3, help="games between a player's reconnects")
    parser.add_argument("--boards", type=int, default=4, help="known winnable deals whose boards fill")
    parser.add_argument("--db", default="", help="a database URL (default: SQLite in a temporary directory)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--live-games", type=int, default=1000, help="SOLITAIRE_LIVE_GAMES: the cache fills in the warm-up"
    )
    parser.add_argument("--warmup", type=int, default=5, help="first minutes not judged (caches filling)")
    parser.add_argument("--trace", help="path prefix: tracemalloc the server, report what grew after warm-up")
    args = parser.parse_args()
    raise_fd_limit()
    metrics_port = free_port()
    with tempfile.TemporaryDirectory(prefix="soak-") as scratch:
        settings = {
            "SOLITAIRE_DATABASE_URL": args.db or f"sqlite+aiosqlite:///{Path(scratch) / 'soak.db'}",
            "SOLITAIRE_SECRET": "soak-secret",
            "SOLITAIRE_METRICS_LISTEN": f"127.0.0.1:{metrics_port}",
            "SOLITAIRE_RATE_PER_S": "1000",
            "SOLITAIRE_BURST": "1000",
            "SOLITAIRE_HTTP_RATE_PER_S": "0",
            "SOLITAIRE_CONNECTIONS_PER_ADDRESS": "0",
            "SOLITAIRE_GAMES_PER_MINUTE": "0",
            "SOLITAIRE_RACES_PER_MINUTE": "0",
            "SOLITAIRE_PLAYERS_PER_HOUR": "0",
            "SOLITAIRE_LIVE_GAMES": str(args.live_games),
        }
        if args.trace:
            settings["SOLITAIRE_BENCH_TRACE"] = args.trace
        with started_server(settings, traced=bool(args.trace)) as (base, pid):
            report = asyncio.run(run(args, base, pid, f"http://127.0.0.1:{metrics_port}/metrics"))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
