"""Where an action's time goes: py-spy's raw samples of the server (bench/floor.py --py-spy)
summed by stage of the action's path.

    .venv/bin/python bench/floor.py --rounds 1 --only server --py-spy /tmp/server.raw
    .venv/bin/python bench/stages.py /tmp/server.raw

Each sampled stack counts once, for the first stage of :data:`STAGES` any of its frames
belongs to (so the fingerprint counts as itself, not as the engine or the encode that called
it). Samples are of running threads only (py-spy without ``--idle``): a share is a share of
the server's CPU. The SQLite writer's thread is counted apart from the event loop's.

The last line printed is one JSON object: each stage's share of the event loop's samples.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter

# (stage, pattern matched against "function (file:line)"), in order of precedence.
STAGES: tuple[tuple[str, str], ...] = (
    ("tripwire (checked_frame)", r"^checked_frame |Tripwire\.check "),
    ("state fingerprint", r"fingerprint |snapshot_json "),
    ("metrics", r"prometheus_client/"),
    ("logging", r"^(Logger\.|Handler\.)|logging/__init__"),
    ("engine (action parse, rules)", r"\(engine/"),
    ("result build and encode", r"\(server/core/hub\.py|^GameService\._result |brief_state |state_json "),
    ("write frames (ack and push)", r"send_text_now |^Connection\.push |^Connection\._drain |send_text "),
    (
        "commit (event loop side)",
        r"\(server/storage/(writer|sqlite_batches|pg_batches)\.py|concurrent/futures/",
    ),
    ("parse and validate (schema)", r"\(server/edge/protocol\.py:\d+\)$"),
    ("read frames (transport, ASGI receive)", r"ws_transport\.py|websockets/|uvicorn/|starlette/websockets"),
    ("game service (lock, draft, adopt)", r"\(server/core/games\.py"),
    ("dispatch (session, connection, handler)", r"\(server/edge/|\(server/features/play\.py"),
)
PARSE = re.compile(r"^(.*) (\d+)$")


def own_frames(frames: list[str]) -> list[str]:
    """The frames of the work itself: a connection's task from below ``Connection.run`` (the
    frames above it, uvicorn's and Starlette's, are on every stack of the task), any other
    callback from below the event loop's ``Runner.run``."""
    for marker in ("Connection.run (server/edge/ws.py", "Runner.run (asyncio/runners.py"):
        for index in range(len(frames) - 1, -1, -1):
            if frames[index].startswith(marker):
                return frames[index + 1 :]
    return frames


def stage_of(frames: list[str]) -> str:
    frames = own_frames(frames)
    if not frames:
        return "event loop (uvloop, sockets: no Python frame)"
    for stage, pattern in STAGES:
        compiled = _compiled(pattern)
        if any(compiled.search(frame) for frame in frames):
            return stage
    return "event loop, asyncio and other"


_CACHE: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    if pattern not in _CACHE:
        _CACHE[pattern] = re.compile(pattern)
    return _CACHE[pattern]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("raw", help="py-spy raw output (-f raw --threads)")
    args = parser.parse_args()
    loop: Counter[str] = Counter()
    writer = 0
    other_threads = 0
    with open(args.raw) as handle:
        for line in handle:
            matched = PARSE.match(line.rstrip("\n"))
            if not matched:
                continue
            frames, count = matched.group(1).split(";"), int(matched.group(2))
            thread = frames[0]
            if "sqlite-writer" in thread or "echo-writer" in thread:
                writer += count
            elif "MainThread" in thread:
                loop[stage_of(frames[1:])] += count
            else:
                other_threads += count
    total = sum(loop.values())
    shares = {stage: round(100 * n / total, 1) for stage, n in loop.most_common()}
    print(f"{'stage':45} {'samples':>8} {'% of loop':>9}")
    for stage, n in loop.most_common():
        print(f"{stage:45} {n:8} {shares[stage]:9}")
    print(f"{'(SQLite writer thread)':45} {writer:8}")
    print(f"{'(other threads)':45} {other_threads:8}")
    print(json.dumps({"loop_samples": total, "writer_samples": writer, "shares_pct": shares}))


if __name__ == "__main__":
    main()
