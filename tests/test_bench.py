"""The benchmark scripts still run and print the figures they promise.

Small runs, checked for shape and sense, never for speed: speed is measured
by running the scripts themselves (docs/performance.md).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from server.config import Limits, Settings
from tests import processes
from tests.conftest import create_pg_database, drop_pg_database, pg_database_url, pg_databases
from tests.support import running_server

BENCH = Path(__file__).resolve().parent.parent / "bench"
LOAD_KEYS = {
    "db",
    "clients",
    "actions_per_s",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "server_p50_ms_under",
    "server_p99_ms_under",
    "commit_p99_ms_under",
    "errors",
    "server_cpu_s",
    "server_peak_mib",
    "fsync_ms_start",
    "fsync_ms_end",
}


def last_json(
    script: str, *args: str, timeout: float = 90, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run a bench script (under the per-test timeout): past ``timeout`` it and its whole
    process group are ended, and the load bench ends the server it started."""
    done = processes.run([sys.executable, str(BENCH / script), *args], timeout=timeout, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("game", ["HH", "SH"])
def test_load_on_sqlite_acknowledges_actions_without_errors(game: str) -> None:
    result = last_json("load.py", "--clients", "20", "--seconds", "2", "--game", game)
    assert set(result) == LOAD_KEYS
    assert result["db"] == "sqlite+aiosqlite" and result["clients"] == 20
    assert result["errors"] == 0
    assert result["actions_per_s"] > 0
    assert 0 < result["p50_ms"] <= result["p95_ms"] <= result["p99_ms"]
    assert 0 < result["server_p50_ms_under"] <= result["server_p99_ms_under"]  # the server's own view
    assert result["commit_p99_ms_under"] > 0
    assert result["server_cpu_s"] > 0 and result["server_peak_mib"] > 0
    assert result["fsync_ms_start"] > 0 and result["fsync_ms_end"] > 0


def test_load_on_postgres_paced() -> None:
    name = create_pg_database()
    try:
        result = last_json(
            "load.py", "--db", pg_database_url(name), "--clients", "20", "--seconds", "2", "--rate", "100"
        )
    finally:
        drop_pg_database(name)
    assert set(result) == LOAD_KEYS
    assert result["db"] == "postgresql+asyncpg" and result["errors"] == 0
    assert 50 <= result["actions_per_s"] <= 150  # paced at 100 per second


def test_load_past_the_rate_limit_counts_refusals_instead_of_hanging(tmp_path: Path) -> None:
    """Flat-out clients against a server that allows 20 messages a second: the server answers
    an id-less refusal at most ten times a second, so a client waiting for every answer used to
    hang here. The bench sends ids, so each refusal comes back and is counted as an error."""
    limits = Limits(rate_per_s=20, burst=10)  # refused within the second, however slow the machine
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'limited.db'}"
    with running_server(Settings(database_url=database_url, secret="test-secret", limits=limits)) as base:
        env = {**os.environ, "SOLITAIRE_SERVER_PID": str(os.getpid())}  # the server runs in this process
        result = last_json("load.py", "--url", base, "--clients", "5", "--seconds", "1", env=env)
    assert result["errors"] > 0 and result["actions_per_s"] > 0


def test_idle_connections_report_memory_per_connection() -> None:
    result = last_json("load.py", "--idle", "200")
    assert result["idle_connections"] == 200
    assert result["server_rss_after_mib"] >= result["server_rss_before_mib"]
    assert result["kib_per_idle_connection"] >= 0


def test_abuse_bench_measures_each_phase_and_ends_its_flooders() -> None:
    result = last_json("abuse.py", "--seconds", "1", "--good", "2", timeout=110)
    assert result["good_clients"] == 2
    phases = [result[name] for name in ("alone", "flooders_1", "flooders_5")]
    for figures in phases:
        assert figures["samples"] > 0 and figures["errors"] == 0
        assert 0 < figures["p50_ms"] <= figures["p99_ms"]
        assert figures["server_cpu_pct"] >= 0
    assert all(figures["flood_sent_per_s"] > 0 for figures in phases[1:])
    assert result["p99_growth_ms_5"] == round(phases[2]["p99_ms"] - phases[0]["p99_ms"], 3)
    assert isinstance(result["target_met"], bool)  # shape only: speed is the script's to measure


@pytest.mark.timeout(200)
def test_floor_bench_runs_each_floor_and_the_server_in_turn() -> None:
    result = last_json("floor.py", "--rounds", "1", "--clients", "10", "--seconds", "1", timeout=190)
    (figures,) = result["rounds"]
    for kind in ("echo", "durable", "server"):
        assert figures[kind]["errors"] == 0 and figures[kind]["actions_per_s"] > 0
    assert figures["ratio"] == round(
        figures["server"]["actions_per_s"] / figures["durable"]["actions_per_s"], 3
    )
    assert result["ratios"] == [figures["ratio"]] and result["median_ratio"] == figures["ratio"]


def test_engine_bench_prints_rates() -> None:
    result = last_json("engine.py", "--games", "3", "--steps", "50")
    assert {"hh_actions_per_s", "sh_actions_per_s"} <= set(result)
    assert all(value > 0 for value in result.values() if isinstance(value, int | float))


def test_leaderboard_bench_times_both_queries(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'board.db'}"
    result = last_json("leaderboard.py", "--db", url, "--sizes", "2000,3000", "--queries", "20")
    assert [size["entries"] for size in result["sizes"]] == [2000, 3000]
    for size in result["sizes"]:
        for read in ("top50", "rank", "neighbours"):
            assert 0 < size[f"{read}_p50_ms"] <= size[f"{read}_p99_ms"]


def test_solver_bench_accounts_for_every_deal() -> None:
    figures = last_json("solver.py", "--limit", "6", "--only", "SH1-C4", "--workers", "1")["SH1-C4"]
    assert figures["deals"] == 6
    assert figures["won"] + figures["impossible"] + figures["unknown"] == pytest.approx(1.0)


def test_cluster_bench_pushes_across_instances() -> None:
    from tests.cluster.fleet import redis_answers

    if not redis_answers():
        if os.environ.get("SOLITAIRE_REQUIRE_REDIS") == "1":
            pytest.fail("Redis is required but does not answer at 127.0.0.1:6379")
        pytest.skip("Redis does not answer at 127.0.0.1:6379 (set SOLITAIRE_REQUIRE_REDIS=1 to fail)")
    name = create_pg_database()
    try:
        args = ("--db", pg_database_url(name), "--clients", "6", "--rate", "60", "--seconds", "2")
        result = last_json("cluster.py", "--instances", "2", *args, timeout=120)
        alone = last_json("cluster.py", "--alone", *args, timeout=120)
        split = last_json("cluster.py", "--alone", "--instances", "2", *args, timeout=120)
        left = pg_databases(f"{name}_split")  # the split's own databases, dropped at its end
    finally:
        drop_pg_database(name)
    assert result["instances"] == 2 and result["mode"] == "redis" and result["errors"] == 0
    assert result["actions_per_s"] > 0 and 0 < result["p50_ms"] <= result["p99_ms"]
    assert result["pushes"] > 0 and 0 < result["push_p50_ms"] <= result["push_p99_ms"]
    assert result["server_cpu_ms_per_action"] > 0
    assert 0 <= result["wake_late_p99_ms"] <= result["wake_late_max_ms"]  # the machine's own stalls
    assert alone["instances"] == 1 and alone["mode"] == "alone" and alone["errors"] == 0
    assert split["instances"] == 2 and split["mode"] == "alone" and split["errors"] == 0
    assert split["pushes"] > 0 and split["actions_per_s"] > 0 and left == []


def test_profile_bench_reads_statistics_that_agree_with_the_games(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'profile.db'}"
    result = last_json("profile.py", "--db", url, "--games", "300", "--reads", "20")
    assert result["db"] == "sqlite" and result["games"] == 300  # the bench checks the totals itself
    assert 0 < result["wins"] < 300 and result["daily_days"] > 0
    assert 0 < result["stats_p50_ms"] <= result["stats_p99_ms"]
    assert 0 < result["finish_hook_p50_ms"] <= result["finish_hook_p99_ms"]
    assert result["catch_up_reads"] >= 1 and result["median_percentile"] is not None


def test_results_log_bench_times_appends_proofs_and_the_head(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'log.db'}"
    result = last_json("results_log.py", "--db", url, "--leaves", "3000", "--runs", "30")
    assert result["leaves"] == 3000 and result["day_end_head_ms"] > 0
    for name in ("append", "inclusion", "consistency"):
        assert 0 < result[f"{name}_p50_ms"] <= result[f"{name}_p99_ms"]


def test_soak_bench_reports_every_minute_and_judges_the_lines() -> None:
    quick = ["--minutes", "5", "--minute-s", "2", "--warmup", "1", "--players", "3", "--races", "1"]
    result = last_json(
        "soak.py", *quick, "--spectators", "1", "--readers", "1", "--boards", "1", "--pace-s", "0.05"
    )
    rows = result["per_minute"]
    assert [row["minute"] for row in rows] == [1, 2, 3, 4, 5]
    for row in rows:
        assert row["rss_mib"] > 0 and row["fds"] > 0 and row["tasks"] > 0 and row["connections"] > 0
    assert result["acked"] == sum(row["acked"] for row in rows) > 0
    assert sum(row["races"] for row in rows) > 0 and sum(row["reads"] for row in rows) > 0
    assert isinstance(result["flat"], bool) and set(result["checks"]) == {"memory", "fds", "tasks", "errors"}
    assert result["first_error"] == "" and result["checks"]["errors"], result["first_error"]
