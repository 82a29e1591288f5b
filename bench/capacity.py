"""Capacity model: instances, PostgreSQL writes, Redis messages and memory for N concurrent players.

    .venv/bin/python bench/capacity.py --db postgresql+asyncpg://postgres@127.0.0.1:5432/test

Measures the model's inputs on this machine, then prints the model's outputs
for 10k, 100k and 1M players (docs/capacity.md explains the model):

- server CPU per action, group commits per action and rows per commit:
  ``bench/cluster.py`` (one instance with Redis, and two), run as it is;
- memory per idle connection: ``bench/load.py --idle``, run as it is;
- PostgreSQL CPU per commit and per row, and a commit's wall time: batches
  of inserts on one connection, the backend's own CPU read from /proc;
- Redis CPU per published message and memory per subscribed channel:
  PUBLISH pipelined as the server's link does, one subscriber receiving, the
  server's ``INFO`` before and after.

Each measurement runs ``--repeat`` times and the median is used (the machine
is shared). The model's prediction for the two-instance run (from the
one-instance run's per-action figures) is printed beside what that run
measured. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import secrets
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil
from serverproc import ROOT, scratch_database
from sqlalchemy.engine import make_url

from server.features.leaderboards.model import SHARDS

BENCH = Path(__file__).resolve().parent
RUN_TIMEOUT_S = 600.0  # one child benchmark, start to end
REDIS = "redis://127.0.0.1:6379/0"
SIZES = (10_000, 100_000, 1_000_000)
MESSAGE = json.dumps({"type": "update", "game_id": "g_0123456789", "seq": 41, "state": "x" * 300})


def last_json(script: str, *args: str) -> dict[str, Any]:
    """Run a neighbouring benchmark as it is and take its last line's JSON object."""
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{script} failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each numeric figure's median over the runs (the other fields from the first run)."""
    out = dict(runs[0])
    for key, value in runs[0].items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = statistics.median(float(run[key]) for run in runs)
    return out


# -- PostgreSQL: a commit's cost -----------------------------------------------------------------


async def pg_commit_costs(url: str, commits: int = 300) -> dict[str, float]:
    """Backend CPU per commit and per inserted row, and a commit's wall time (the WAL flush).

    Batches of 1 and of 20 rows; the difference between them is the per-row
    part, the rest the per-commit part.
    """
    import asyncpg

    u = make_url(url)
    conn = await asyncpg.connect(host=u.host, port=u.port or 5432, user=u.username, database=u.database)
    try:
        await conn.execute("CREATE TABLE IF NOT EXISTS capacity_probe (id bigint PRIMARY KEY, body text)")
        backend = psutil.Process(await conn.fetchval("SELECT pg_backend_pid()"))
        per: dict[int, tuple[float, float]] = {}
        next_id = 0
        for rows in (1, 20):
            walls = []
            cpu_before = sum(backend.cpu_times()[:2])
            for _ in range(commits):
                batch = [(next_id + i, "x" * 200) for i in range(rows)]
                next_id += rows
                started = time.perf_counter()
                async with conn.transaction():
                    await conn.executemany("INSERT INTO capacity_probe VALUES ($1, $2)", batch)
                walls.append((time.perf_counter() - started) * 1000)
            cpu = (sum(backend.cpu_times()[:2]) - cpu_before) * 1000 / commits
            per[rows] = (cpu, statistics.median(walls))
        row_cpu = max(0.0, (per[20][0] - per[1][0]) / 19)
        return {
            "pg_cpu_ms_per_commit": round(max(0.0, per[1][0] - row_cpu), 4),
            "pg_cpu_ms_per_row": round(row_cpu, 4),
            "pg_commit_wall_ms": round(per[1][1], 3),
        }
    finally:
        await conn.execute("DROP TABLE IF EXISTS capacity_probe")
        await conn.close()


# -- Redis: a message's cost ----------------------------------------------------------------------


def redis_cpu(info: dict[str, Any]) -> float:
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def redis_costs(url: str, messages: int = 20_000, channels: int = 20_000) -> dict[str, float]:
    """Redis CPU per message published and delivered to one subscriber; bytes per subscription."""
    from redis.asyncio import Redis

    prefix = f"capacity{secrets.token_hex(3)}"
    pub, sub = Redis.from_url(url), Redis.from_url(url)
    pubsub = sub.pubsub()
    try:
        await pubsub.subscribe(f"{prefix}:hot")
        await pubsub.get_message(timeout=5.0)  # the confirmation
        received = 0

        async def drain() -> None:
            nonlocal received
            while received < messages:
                got = await pubsub.get_message(timeout=10.0)
                if got is None:
                    raise RuntimeError("Redis stopped delivering")
                received += 1

        reader = asyncio.create_task(drain())
        before, started = redis_cpu(await pub.info("cpu")), time.perf_counter()
        for start in range(0, messages, 100):  # pipelined, as the server's link writes
            pipe = pub.pipeline(transaction=False)
            for _ in range(min(100, messages - start)):
                pipe.publish(f"{prefix}:hot", MESSAGE)
            await pipe.execute()
        await asyncio.wait_for(reader, 60)
        cpu_us = (redis_cpu(await pub.info("cpu")) - before) * 1e6 / messages
        elapsed = time.perf_counter() - started
        memory_before = int((await pub.info("memory"))["used_memory"])
        names = [f"{prefix}:t:game:{i}" for i in range(channels)]
        for start in range(0, channels, 1000):
            await pubsub.subscribe(*names[start : start + 1000])
        await asyncio.sleep(0.5)
        memory_after = int((await pub.info("memory"))["used_memory"])
        return {
            "redis_cpu_us_per_message": round(cpu_us, 2),
            "redis_messages_per_s_one_client": round(messages / elapsed, 1),
            "redis_bytes_per_subscription": round((memory_after - memory_before) / channels, 1),
        }
    finally:
        await pubsub.aclose()
        await sub.aclose()
        await pub.aclose()


# -- the model -------------------------------------------------------------------------------------


def model(inputs: dict[str, float], players: int, a: argparse.Namespace) -> dict[str, Any]:
    """What ``players`` concurrent players need, from the measured per-unit costs."""
    actions = players * a.actions_per_player
    per_instance = a.core_share * 1000 / inputs["server_cpu_ms_per_action"]  # actions/s an instance
    by_cpu = math.ceil(actions / per_instance)
    connection_mib = players * inputs["kib_per_connection"] / 1024
    by_memory = math.ceil((connection_mib + a.base_mib) / a.instance_mib)
    instances = max(1, by_cpu, by_memory)
    rows = actions * inputs["rows_per_commit"] * inputs["commits_per_action"]
    # Each instance's writer commits again as soon as its last commit is back: commits a second
    # are bounded by the commit's latency, and batches grow to carry the rest.
    commits = min(rows, instances * 1000 / inputs["pg_commit_wall_ms"])
    pg_ms = commits * inputs["pg_cpu_ms_per_commit"] + rows * inputs["pg_cpu_ms_per_row"]
    pg_cores = pg_ms / 1000 / a.core_share
    watched = actions * a.watched_share
    redis_share = watched * inputs["redis_cpu_us_per_message"] / 1e6  # of Redis's one thread
    subscriptions = players * a.watched_share  # a watched game's channel, on its watcher's instance
    redis_mib = subscriptions * inputs["redis_bytes_per_subscription"] / 2**20
    results = actions / a.actions_per_game
    # A result holds its top-level count row from its upsert to its commit.
    hot_row = results * a.hot_bucket_share / SHARDS * inputs["pg_commit_wall_ms"] / 1000
    loads = {
        "PostgreSQL connections (instances a primary serves)": instances / a.max_instances,
        "PostgreSQL primary CPU": pg_cores / a.primary_cores,
        "a board's busiest count row": hot_row,
        "Redis (one thread)": redis_share,
    }
    return {
        "players": players,
        "actions_per_s": round(actions),
        "instances": instances,
        "instances_by_cpu": by_cpu,
        "instances_by_memory": by_memory,
        "server_memory_gib": round((connection_mib + instances * a.base_mib) / 1024, 2),
        "pg_commits_per_s": round(commits),
        "pg_rows_per_s": round(rows),
        "pg_rows_per_commit": round(rows / max(1.0, commits), 1),
        "pg_cores": round(pg_cores, 2),
        "board_results_per_s": round(results, 1),
        "board_hot_row_busy": round(hot_row, 3),
        "redis_messages_per_s": round(watched),
        "redis_cpu_share": round(redis_share, 3),
        "redis_memory_mib": round(redis_mib, 1),
        "utilisation": {name: round(load, 3) for name, load in loads.items()},
        "first_bottleneck": max(loads, key=lambda name: loads[name]),
    }


def cluster_args(db: str, instances: int, a: argparse.Namespace) -> list[str]:
    rate = str(a.rate * instances)
    sizes = ["--instances", str(instances), "--clients", str(a.clients)]
    return ["--db", db, *sizes, "--rate", rate, "--seconds", str(a.seconds)]


def repeated(what: str, times: int, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The median of ``times`` runs; a run that fails (a busy machine refusing connections) is
    reported and left out, and only no run at all ends the benchmark."""
    runs = []
    for _ in range(times):
        try:
            runs.append(run())
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as failed:
            print(f"{what}: a run failed: {str(failed)[-300:]}", flush=True)
            continue
        print(f"{what}: {json.dumps(runs[-1])}", flush=True)
    if not runs:
        raise SystemExit(f"{what}: every run failed")
    return median_of(runs)


def measure(a: argparse.Namespace) -> dict[str, Any]:
    """Every input, each the median of ``--repeat`` runs."""
    name = f"capacity_{secrets.token_hex(3)}"
    with scratch_database(a.db, name) as db:
        one = repeated(
            "cluster, 1 instance", a.repeat, lambda: last_json("cluster.py", *cluster_args(db, 1, a))
        )
        two = repeated(
            "cluster, 2 instances", a.repeat, lambda: last_json("cluster.py", *cluster_args(db, 2, a))
        )
        pg = repeated("postgresql", a.repeat, lambda: asyncio.run(pg_commit_costs(db)))
    idle = repeated("idle", a.repeat, lambda: last_json("load.py", "--idle", str(a.idle)))
    redis = repeated("redis", a.repeat, lambda: asyncio.run(redis_costs(a.redis)))
    return {"one": one, "two": two, **pg, **idle, **redis}


def inputs_from(figures: dict[str, Any], run: dict[str, Any]) -> dict[str, float]:
    return {
        "server_cpu_ms_per_action": float(run["server_cpu_ms_per_action"]),
        "commits_per_action": float(run["commits_per_s"]) / max(1.0, float(run["actions_per_s"])),
        "rows_per_commit": float(run["writes_per_commit"]),
        "kib_per_connection": float(figures["kib_per_idle_connection"]),
        "pg_cpu_ms_per_commit": float(figures["pg_cpu_ms_per_commit"]),
        "pg_cpu_ms_per_row": float(figures["pg_cpu_ms_per_row"]),
        "pg_commit_wall_ms": float(figures["pg_commit_wall_ms"]),
        "redis_cpu_us_per_message": float(figures["redis_cpu_us_per_message"]),
        "redis_bytes_per_subscription": float(figures["redis_bytes_per_subscription"]),
    }


def check(
    inputs: dict[str, float], one: dict[str, Any], two: dict[str, Any], seconds: float
) -> dict[str, Any]:
    """The one-instance run's per-action figures applied to the two-instance run's load, beside
    what that run measured (there every update crosses Redis: each player is watched from the
    other instance)."""
    actions = float(two["actions_per_s"])
    return {
        "two_instances_actions_per_s": actions,
        "predicted_server_cores": round(actions * inputs["server_cpu_ms_per_action"] / 1000, 3),
        "measured_server_cores": round(float(two["server_cpu_ms_per_action"]) * actions / 1000, 3),
        # Latency-bound: each instance commits again when its last commit (as long as in the
        # one-instance run) is back; the per-action figure alone would say half as many.
        "predicted_commits_per_s": round(2 * 1000 / float(one["commit_mean_ms"]), 1),
        "predicted_commits_per_s_per_action_only": round(actions * inputs["commits_per_action"], 1),
        "measured_commits_per_s": float(two["commits_per_s"]),
        "predicted_redis_messages_per_s": round(actions, 1),
        "measured_pushes_per_s": round(float(two["pushes"]) / seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="PostgreSQL URL (a scratch database is made beside it)")
    parser.add_argument("--redis", default=REDIS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clients", type=int, default=100, help="cluster.py clients a run")
    parser.add_argument("--rate", type=float, default=300, help="cluster.py actions/s offered per instance")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--idle", type=int, default=1000, help="load.py idle connections")
    parser.add_argument("--actions-per-player", type=float, default=0.5, help="a move every 2 s")
    parser.add_argument("--actions-per-game", type=float, default=120, help="one result per game")
    parser.add_argument("--watched-share", type=float, default=0.1, help="games watched elsewhere")
    parser.add_argument(
        "--hot-bucket-share", type=float, default=0.15, help="results in a board's busiest bucket"
    )
    parser.add_argument("--core-share", type=float, default=0.7, help="of a core, at most, for steady load")
    parser.add_argument("--instance-mib", type=float, default=4096, help="memory of one instance")
    parser.add_argument("--base-mib", type=float, default=120, help="an instance's memory with no client")
    parser.add_argument("--max-instances", type=float, default=64, help="instances one primary serves")
    parser.add_argument("--primary-cores", type=float, default=16, help="cores of the PostgreSQL primary")
    parser.add_argument("--inputs", help="model again from a saved last line of this script (no measuring)")
    a = parser.parse_args()
    if a.inputs:
        saved = json.loads(Path(a.inputs).read_text().strip().splitlines()[-1])
        figures = {"one": saved["runs"]["one_instance"], "two": saved["runs"]["two_instances"]}
        figures.update({k: v for k, v in saved["inputs"].items()})
        figures["kib_per_idle_connection"] = saved["inputs"]["kib_per_connection"]
    else:
        figures = measure(a)
    inputs = inputs_from(figures, figures["one"])
    two = figures["two"]
    out = {
        "inputs": {k: round(v, 4) for k, v in inputs.items()},
        "assumed": {
            "actions_per_player_s": a.actions_per_player,
            "actions_per_game": a.actions_per_game,
            "watched_share": a.watched_share,
            "hot_bucket_share": a.hot_bucket_share,
            "core_share": a.core_share,
            "instance_mib": a.instance_mib,
            "primary_cores": a.primary_cores,
        },
        "runs": {"one_instance": figures["one"], "two_instances": two},
        "check": check(inputs, figures["one"], two, a.seconds),
        "model": [model(inputs, players, a) for players in SIZES],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
