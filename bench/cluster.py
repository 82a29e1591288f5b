"""Cluster benchmark: N server instances on one PostgreSQL database and Redis, real clients.

Players are spread over the instances (player i on instance i mod N); each
player's game is watched by a spectator connected to the next instance, so
every update crosses from one instance to another through Redis (with
``--instances 1`` it stays inside the one instance). Players act at their
share of ``--rate``, replaying runs of legal actions chosen before the start
(:func:`plan`), so the load generator runs no engine while it measures;
measuring starts after every client is in place and 2 more seconds of play.

Figures: acknowledged actions per second and their latency (send → result),
the push latency (send of the act on A → its update on B, both on this
process's clock) and its part after the result (result → update), the
servers' CPU per action (all instances together, their solver processes
included; also the event loops' threads alone, without the dead-end prover's
solves), their group commits (how
many, how long, how full, from each instance's metrics listener), and the share of a core this
process itself used, so a saturated load generator is seen, not mistaken for
a slow server, and how late a process of its own wakes from a 1 ms sleep
(what the machine adds to every wait). ``--alone`` runs one
instance without Redis on the same database instead: the single-process
mode, for the CPU comparison at the same load. ``--alone --instances N``
runs N single-process instances, each on a database of its own and with its
players' spectators on it too, sharing the load: what N processes cost on
this machine without Redis, the control that tells the Redis path's own cost
from the cost of splitting the load.

The database must exist (``--db``); its tables are migrated once before the
instances start (the N databases of ``--alone --instances N`` are created
beside it, and dropped at the end). Every wait has a deadline; the instances (each in its own
process group) are ended however the run ends. The last line printed is one
JSON object (see docs/performance.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import uvloop
from load import UNCOUNTED, NoReply, answer_to, connect, percentile, receive
from prometheus_client.parser import text_string_to_metric_families
from serverproc import ROOT, free_port, raise_fd_limit, scratch_database, started_server, tree_cpu_seconds
from sqlalchemy.engine import make_url

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from engine import Action, Game  # noqa: E402
from engine.codes import random_code  # noqa: E402

UNDO = Action("undo")
WARMUP_S = 2.0
START_TIMEOUT_S = 120.0
REDIS = "redis://127.0.0.1:6379/0"
UPDATE_HEAD = re.compile(r'\{"type":"update","game_id":"(?P<game_id>[^"]+)","seq":(?P<seq>\d+),')


class Figures:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.push: list[float] = []
        self.after_result: list[float] = []
        self.acked = 0
        self.errors = 0
        self.first_error = ""
        self.sent: dict[tuple[str, int], float] = {}
        self.answered: dict[tuple[str, int], float] = {}
        self.measuring = False
        self.ready = 0  # clients connected, with their first game watched

    def reset(self) -> None:
        self.latencies.clear()
        self.push.clear()
        self.after_result.clear()
        self.errors = 0
        self.measuring = True


Step = tuple[str, int, str]  # ("new", 0, code) or ("act", seq, the action's JSON)


def plan(steps: int, rng: random.Random) -> list[Step]:
    """One player's run, chosen before it starts: its deals and its legal actions (undo at a
    dead end, a new deal after a win or when nothing is left), so the clients replay it with no
    engine of their own: the machine's cores are for the servers."""
    planned: list[Step] = []
    mirror: Game | None = None
    while len(planned) < steps:
        if mirror is None:
            code = random_code("SH", "C4", rng.getrandbits(35))
            planned.append(("new", 0, str(code)))
            mirror = Game.new(code)
            continue
        legal = mirror.legal_actions()
        if mirror.status in ("stalemate", "stuck") and mirror.history:
            legal = [UNDO]
        if not legal or mirror.status == "won":
            mirror = None
            continue
        action = rng.choice(legal)
        planned.append(("act", mirror.seq, json.dumps(action.to_json())))
        mirror = mirror.apply(action).game
    return planned


async def player(
    base: str,
    watch_base: str,
    token: str,
    planned: list[Step],
    interval: float,
    phase: float,
    until: asyncio.Future[float],
    figures: Figures,
) -> None:
    """Play the planned games at the given pace; a spectator on ``watch_base`` follows each.

    ``phase`` (a share of ``interval``) spreads the players' first actions, so
    independent players do not all act in the same millisecond, every interval.
    """
    ws = await connect(base, token)
    watcher = await connect(watch_base, token)  # a second connection of the player, elsewhere
    ids = iter(range(1, 2**62))
    steps = iter(planned)
    watching: asyncio.Task[None] | None = None
    try:

        async def new_game(code: str) -> str:
            rid = f"g{next(ids)}"
            await ws.send(json.dumps({"type": "new_game", "code": code, "id": rid}))
            reply = json.loads(await answer_to(ws, rid, "new_game"))
            if reply.get("type") != "game":
                raise RuntimeError(f"new_game refused: {reply}")
            game_id = str(reply["game"]["id"])
            wid = f"w{next(ids)}"
            await watcher.send(json.dumps({"type": "watch", "game_id": game_id, "id": wid}))
            await answer_to(watcher, wid, "watch")
            return game_id

        game_id = await new_game(next(steps)[2])
        watching = asyncio.create_task(watch(watcher, figures))
        figures.ready += 1
        deadline = await asyncio.shield(until)
        next_at = time.monotonic() + phase * interval
        while time.monotonic() < deadline:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            next_at += interval
            kind, seq, body = next(steps)
            if kind == "new":
                game_id = await new_game(body)
                continue
            rid = f"a{next(ids)}"
            message = (
                f'{{"type":"act","game_id":"{game_id}","seq":{seq},"action":{body},'
                f'"reply":"brief","id":"{rid}"}}'
            )
            key = (game_id, seq)
            started = time.perf_counter()
            figures.sent[key] = started
            await ws.send(message)
            answer = await answer_to(ws, rid, "act")
            done = time.perf_counter()
            if answer.startswith('{"type":"result"'):
                figures.answered[key] = done
                if time.monotonic() <= deadline:  # the window ends at the deadline, not at the close
                    figures.latencies.append((done - started) * 1000)
                    figures.acked += 1
            else:
                figures.errors += 1
                figures.first_error = figures.first_error or answer[:300]
    finally:
        if watching is not None:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watching
        await ws.close()
        await watcher.close()


async def watch(ws: Any, figures: Figures) -> None:
    """Time every update against the send of its act (and its result)."""
    while True:
        frame = await receive(ws, "update")
        if not frame.startswith('{"type":"update"'):
            continue
        arrived = time.perf_counter()
        head = UPDATE_HEAD.match(frame)  # the rest (the whole board) is not this client's to read
        if head is None:
            raise RuntimeError(f"an update without its game and seq first: {frame[:200]}")
        key = (head["game_id"], int(head["seq"]))
        sent = figures.sent.pop(key, None)
        answered = figures.answered.pop(key, None)
        if sent is not None and figures.measuring:
            figures.push.append((arrived - sent) * 1000)
            if answered is not None:
                figures.after_result.append((arrived - answered) * 1000)


STALLS = """
import json, sys, time
end = time.perf_counter() + float(sys.argv[1])
late = []
while (now := time.perf_counter()) < end:
    time.sleep(0.001)
    late.append((time.perf_counter() - now - 0.001) * 1000)
late.sort()
print(json.dumps({"p99_ms": round(late[len(late) * 99 // 100], 2), "max_ms": round(late[-1], 2)}))
"""


def stall_meter(seconds: float) -> subprocess.Popen[str]:
    """A process of its own that sleeps 1 ms over and over and notes how late it wakes: what the
    machine itself (its scheduler, the host of a virtual machine) adds to any wait in the window."""
    return subprocess.Popen([sys.executable, "-c", STALLS, str(seconds)], stdout=subprocess.PIPE, text=True)


def stalls(meter: subprocess.Popen[str]) -> dict[str, float]:
    out, _ = meter.communicate(timeout=60)
    return dict(json.loads(out))


def create_player(base: str) -> str:
    """A guest player (a unique name however often the database is reused); its token."""
    request = urllib.request.Request(f"{base}/api/players", data=b"{}", method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return str(json.loads(response.read())["token"])


COUNTED = (
    "solitaire_commit_seconds_count",  # group commits
    "solitaire_commit_seconds_sum",  # seconds in them
    "solitaire_commit_batch_writes_sum",  # writes in them
    "solitaire_solver_runs_total",  # the dead-end prover's solves
    "solitaire_solver_waits_total",  # its looks that found no spare core
)


def metric_totals(scrapes: list[str]) -> tuple[float, ...]:
    """Every instance's :data:`COUNTED` figures so far (from its metrics listener), summed, in
    that order."""
    totals = dict.fromkeys(COUNTED, 0.0)
    for url in scrapes:
        with urllib.request.urlopen(url, timeout=10) as response:
            for family in text_string_to_metric_families(response.read().decode()):
                for sample in family.samples:
                    if sample.name in totals:
                        totals[sample.name] += sample.value
    return tuple(totals[name] for name in COUNTED)


def cpu_of(pids: list[int]) -> tuple[float, float]:
    """The instances' CPU seconds so far: (all, their solver processes included; the event
    loop's thread alone).

    The rest is mostly the dead-end prover's solves, in each instance's solver
    process (a child of the instance): work per position, capped at a share of
    each instance's time, so N instances may solve up to N times as much; the
    loop's thread is what serving costs.
    """
    total = loop = 0.0
    for pid in pids:
        process = psutil.Process(pid)
        total += tree_cpu_seconds(process)
        loop += sum(t.user_time + t.system_time for t in process.threads() if t.id == pid)
    return total, loop


async def run(
    args: argparse.Namespace, bases: list[str], pids: list[int], scrapes: list[str]
) -> dict[str, Any]:
    n = len(bases)
    tokens = [create_player(bases[i % n]) for i in range(args.clients)]
    watched = 0 if args.alone else 1  # a spectator on the player's own instance, or the next one
    figures = Figures()
    until: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    interval = args.clients / args.rate
    steps = int((WARMUP_S + args.seconds) / interval * 1.25) + 10  # a margin for new deals
    plans = [plan(steps, random.Random(i)) for i in range(args.clients)]
    tasks = [
        asyncio.create_task(
            player(
                bases[i % n],
                bases[(i + watched) % n],
                tokens[i],
                plans[i],
                interval,
                i / args.clients,
                until,
                figures,
            )
        )
        for i in range(args.clients)
    ]
    await asyncio.sleep(0)
    start_by = time.monotonic() + START_TIMEOUT_S
    while figures.ready < args.clients:
        failed = [t for t in tasks if t.done()]
        if failed:
            failed[0].result()  # raises why that client stopped
        if time.monotonic() > start_by:
            raise NoReply("the clients did not start in time")
        await asyncio.sleep(0.1)
    deadline = time.monotonic() + WARMUP_S + args.seconds
    until.set_result(deadline)
    # The servers' counted figures are scraped outside the window, in a thread: a scrape holds
    # each server's loop for a moment, and, read on this loop, it held every push then arriving.
    await asyncio.sleep(WARMUP_S / 2)
    counted_before, scraped = await asyncio.to_thread(metric_totals, scrapes), time.monotonic()
    await asyncio.sleep(max(0.0, deadline - args.seconds - time.monotonic()))
    (cpu_before, loop_before), started = cpu_of(pids), time.monotonic()  # /proc: no server waits
    meter = stall_meter(max(0.0, deadline - started))
    figures.reset()
    acked_before, own_before = figures.acked, time.process_time()
    await asyncio.sleep(max(0.0, deadline - time.monotonic()))
    cpu_after, loop_after = cpu_of(pids)
    cpu, loop = cpu_after - cpu_before, loop_after - loop_before  # the work in the window
    own = time.process_time() - own_before
    elapsed = time.monotonic() - started
    figures.measuring = False
    counted_after = await asyncio.to_thread(metric_totals, scrapes)
    machine = await asyncio.to_thread(stalls, meter)
    per_s = 1 / (time.monotonic() - scraped)  # the counted figures' own window, a little wider
    counted = (b - a for a, b in zip(counted_before, counted_after, strict=True))
    commits, commit_s, written, solves, solver_waits = counted
    await asyncio.wait_for(asyncio.gather(*tasks), 60)
    acked = figures.acked - acked_before
    if figures.first_error:
        print(f"first error: {figures.first_error}")
    return {
        "instances": n,
        "mode": "alone" if args.alone else "redis",
        "clients": args.clients,
        "offered_per_s": args.rate,
        "actions_per_s": round(acked / elapsed, 1),
        "p50_ms": percentile(figures.latencies, 50),
        "p99_ms": percentile(figures.latencies, 99),
        "push_p50_ms": percentile(figures.push, 50),
        "push_p99_ms": percentile(figures.push, 99),
        "push_after_result_p50_ms": percentile(figures.after_result, 50),
        "push_after_result_p99_ms": percentile(figures.after_result, 99),
        "pushes": len(figures.push),
        "errors": figures.errors,
        "server_cpu_s": round(cpu, 2),
        "server_cpu_ms_per_action": round(cpu * 1000 / max(1, acked), 3),
        "loop_cpu_ms_per_action": round(loop * 1000 / max(1, acked), 3),
        "solver_cpu_s": round(cpu - loop, 2),
        "dead_end_solves": int(solves),
        "solver_waits": int(solver_waits),  # looks of the prover that found no spare core
        "commits_per_s": round(commits * per_s, 1),
        "commit_mean_ms": round(commit_s * 1000 / max(1.0, commits), 2),
        "writes_per_commit": round(written / max(1.0, commits), 1),
        "bench_cpu_share": round(own / elapsed, 2),  # of one core: the clients' own load
        "wake_late_p99_ms": machine["p99_ms"],  # a 1 ms sleep of a process of its own, woken late
        "wake_late_max_ms": machine["max_ms"],
    }


def migrate(db: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "migrate", "--database-url", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"migrate failed: {done.stderr[-1000:]}")


def on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def databases(db: str, count: int) -> Iterator[list[str]]:
    """``--db`` itself for one instance; else ``count`` new databases beside it, dropped at the end."""
    if count == 1:
        yield [db]
        return
    stem = f"{make_url(db).database}_split{secrets.token_hex(3)}"
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(scratch_database(db, f"{stem}_{i + 1}")) for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--instances", type=int, help="2 with Redis, 1 alone, unless given")
    parser.add_argument("--db", required=True, help="PostgreSQL URL of an existing database")
    parser.add_argument("--redis", default=REDIS)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--rate", type=float, default=1000, help="total actions/s offered")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument(
        "--alone", action="store_true", help="without Redis, each instance on its own database"
    )
    args = parser.parse_args()
    if args.instances is None:
        args.instances = 1 if args.alone else 2
    signal.signal(signal.SIGTERM, on_sigterm)
    raise_fd_limit()
    settings = {
        "SOLITAIRE_SECRET": "bench",
        "SOLITAIRE_MIGRATE_ON_START": "0",
        "SOLITAIRE_RATE_PER_S": str(max(50.0, args.rate / args.clients * 4)),
        **UNCOUNTED,
    }
    if not args.alone:
        settings["SOLITAIRE_REDIS_URL"] = args.redis
        settings["SOLITAIRE_REDIS_PREFIX"] = f"bench{secrets.token_hex(3)}"
    os.environ.pop("SOLITAIRE_REDIS_URL", None)
    with contextlib.ExitStack() as stack:
        urls = stack.enter_context(databases(args.db, args.instances if args.alone else 1))
        for url in urls:
            migrate(url)
        listeners = [f"127.0.0.1:{free_port()}" for _ in range(args.instances)]  # metrics: never public
        servers = [
            stack.enter_context(
                started_server(
                    {
                        **settings,
                        "SOLITAIRE_DATABASE_URL": urls[i % len(urls)],
                        "SOLITAIRE_METRICS_LISTEN": listeners[i],
                    }
                )
            )
            for i in range(args.instances)
        ]
        scrapes = [f"http://{listen}/metrics" for listen in listeners]
        # The clients' loop is uvloop too: the load generator shares the machine's two cores.
        result = uvloop.run(run(args, [base for base, _ in servers], [pid for _, pid in servers], scrapes))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
