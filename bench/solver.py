"""Solver statistics: how many deals of each variant can be won, and how fast the solver says so.

Solves a fixed set of codes (seeds 0..N-1 of every variant, so runs compare)
with a node budget, on at most two worker processes. The last line printed
is one JSON object: per variant (``SH1-C4``, ``SH1-C2``, ``SH1-C1``,
``HH1-N``) the number of deals, the shares ``won`` / ``impossible`` /
``unknown`` and the ``median_ms`` / ``p95_ms`` / ``max_ms`` solve times.

    .venv/bin/python bench/solver.py               # 500 deals per variant
    .venv/bin/python bench/solver.py --limit 50    # a quick look
    .venv/bin/python bench/solver.py --traditional # classic group limit, for comparison
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from multiprocessing import Pool
from pathlib import Path

# This file is named like the package it measures: keep its own folder off the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from engine import Game  # noqa: E402
from engine.codes import make_code  # noqa: E402
from engine.solver import DEFAULT_BUDGET, seahaven, solve  # noqa: E402

VARIANTS = (("SH", "C4"), ("SH", "C2"), ("SH", "C1"), ("HH", "N"))
MAX_WORKERS = 2  # the machine is shared

Job = tuple[str, str, int, int, bool]  # game, variant, seed, node budget, traditional groups
Row = tuple[str, str, float, int]  # family, result, ms, nodes


def run_one(job: Job) -> Row:
    game, variant, seed, budget, traditional = job
    code = make_code(game, variant, seed)
    if traditional and game == "SH":
        started = time.perf_counter()
        sea = seahaven.solve_state(Game.new(code).state, budget, traditional=True)
        return code.family, sea.result, (time.perf_counter() - started) * 1000, sea.nodes
    answer = solve(code, budget)
    return code.family, answer.result, answer.ms, answer.nodes


def percentile(sorted_values: list[float], share: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    index = max(0, min(len(sorted_values) - 1, round(share * len(sorted_values)) - 1))
    return sorted_values[index]


def summarize(rows: list[Row]) -> dict[str, dict[str, float | int]]:
    table: dict[str, dict[str, float | int]] = {}
    for game, variant in VARIANTS:
        family = f"{game}1-{variant}"
        mine = [r for r in rows if r[0] == family]
        if not mine:
            continue
        times = sorted(r[2] for r in mine)
        entry: dict[str, float | int] = {"deals": len(mine)}
        for result in ("won", "impossible", "unknown"):
            entry[result] = round(sum(r[1] == result for r in mine) / len(mine), 4)
        entry["median_ms"] = round(statistics.median(times), 2)
        entry["p95_ms"] = round(percentile(times, 0.95), 2)
        entry["max_ms"] = round(times[-1], 1)
        entry["max_nodes"] = max(r[3] for r in mine)
        table[family] = entry
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=500, help="deals per variant (seeds 0..N-1)")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="node budget per deal")
    parser.add_argument("--workers", type=int, default=MAX_WORKERS, help="processes, at most 2")
    parser.add_argument("--only", choices=[f"{g}1-{v}" for g, v in VARIANTS], help="one variant")
    parser.add_argument(
        "--timeout", type=float, default=3600, help="seconds for the whole run (a lost worker would hang it)"
    )
    parser.add_argument(
        "--traditional", action="store_true", help="Seahaven groups of free cells + 1 only (not SH-10)"
    )
    args = parser.parse_args()
    jobs: list[Job] = [
        (game, variant, seed, args.budget, args.traditional)
        for game, variant in VARIANTS
        if args.only in (None, f"{game}1-{variant}")
        for seed in range(args.limit)
    ]
    workers = max(1, min(MAX_WORKERS, args.workers))
    started = time.perf_counter()
    with Pool(workers) as pool:  # leaving the block terminates the workers, on a timeout too
        rows = pool.map_async(run_one, jobs, chunksize=4).get(timeout=args.timeout)
    table = summarize(rows)
    for family, entry in table.items():
        shares = " ".join(f"{k} {entry[k]:.1%}" for k in ("won", "impossible", "unknown"))
        times = f"median {entry['median_ms']} ms, p95 {entry['p95_ms']} ms"
        print(f"{family}: {entry['deals']} deals, {shares}, {times}")
    print(f"{len(rows)} deals in {time.perf_counter() - started:.1f} s on {workers} worker(s)")
    print(json.dumps(table, separators=(",", ":")))


if __name__ == "__main__":
    main()
