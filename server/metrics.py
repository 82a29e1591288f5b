"""The server's Prometheus metrics (``GET /metrics``), defined once for the process.

Counters are cheap (an add under a lock), so they sit on the hot paths;
per-label children are bound ahead (:func:`refusals_of`) rather than looked up
per request. Every label takes its values from a fixed set (request types of
the schema, error and close codes, route templates, status classes), never
from what a client sends, so the number of series stays bounded. Times are in
seconds. Names are documented in docs/operations.md (Observability).

The build (:data:`BUILD`) is read once at import: the version from the
installed package's metadata, the revision from ``SOLITAIRE_REVISION``, else
``git rev-parse --short HEAD`` of the source checkout (bounded by a timeout),
else ``unknown``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path

from prometheus_client import Counter, Gauge, Histogram

from wire import CloseCode

PACKAGE = "solitaire-server"
SOURCE_ROOT = Path(__file__).resolve().parent.parent
GIT_TIMEOUT_S = 2.0
REVISION_CHARS = 40  # a longer SOLITAIRE_REVISION is cut: it is a label value and a hello field

CONNECTIONS = Gauge("solitaire_connections", "Open WebSocket connections")
LIVE_GAMES = Gauge("solitaire_live_games", "Games held in memory (bounded by SOLITAIRE_LIVE_GAMES)")
TASKS = Gauge("solitaire_event_loop_tasks", "Tasks alive on the event loop (a steady rise is a leak)")


def running_tasks() -> float:
    """The event loop's task count, read at scrape time; NaN when read outside the loop."""
    try:
        return float(len(asyncio.all_tasks()))
    except RuntimeError:  # no running loop: the registry was read from another thread
        return float("nan")


TASKS.set_function(running_tasks)
REQUESTS = Counter("solitaire_requests_total", "WebSocket requests answered, by type", ["type"])
REFUSALS = Counter("solitaire_refusals_total", "WebSocket requests refused, by error code", ["code"])
ACTIONS = Counter("solitaire_actions_total", "Game actions committed and applied")
COMMIT_BATCH = Histogram(
    "solitaire_commit_batch_writes",
    "Writes per group commit",
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
)
COMMIT_SECONDS = Histogram(
    "solitaire_commit_seconds",
    "Time of one group commit, from its first statement to the answer of COMMIT",
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
PUSHES = Counter("solitaire_pushes_total", "Frames queued to subscribers of this instance")
LEASE_MOVES = Counter("solitaire_lease_moves_total", "Games this instance took over (several instances)")
FENCED = Counter("solitaire_fenced_writes_total", "Writes refused because another instance took the game")
SOLVES = Counter("solitaire_solver_runs_total", "Dead-end solver runs (cache misses)")
SOLVER_SECONDS = Counter("solitaire_solver_seconds_total", "Time the dead-end solver spent")
SOLVER_WAITS = Counter(
    "solitaire_solver_waits_total", "Looks of a background solve that found no spare core (it waited)"
)
REDIS_CONNECTED = Gauge("solitaire_redis_connected", "1 while this instance's Redis subscription is up")
REDIS_PUBLISHED = Counter("solitaire_redis_published_total", "Messages published to Redis")
REDIS_DROPPED = Counter("solitaire_redis_dropped_total", "Messages not published: Redis was away")
REDIS_RECEIVED = Counter("solitaire_redis_received_total", "Messages received from other instances")
LEADER = Gauge("solitaire_leader", "1 while this instance runs the once-per-cluster jobs")


@cache
def requests_of(kind: str) -> Counter:
    """The bound counter of the answered requests of one type (the types are the schema's, a fixed set)."""
    return REQUESTS.labels(kind)


@cache
def refusals_of(code: str) -> Counter:
    """The bound counter of the requests refused with one error code."""
    return REFUSALS.labels(code)


ACTION_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
ACTION_SECONDS = Histogram(
    "solitaire_action_seconds",
    "Game actions, end to end: from the frame received to its answer (result or error) handed to the socket",
    buckets=ACTION_BUCKETS,
)
HTTP_REQUESTS = Counter(
    "solitaire_http_requests_total",
    "HTTP requests answered, by route template, method and status class",
    ["route", "method", "status"],
)
HTTP_SECONDS = Histogram(
    "solitaire_http_request_seconds",
    "HTTP requests, from the request to the end of the answer, by route template and method",
    ["route", "method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
WS_CLOSES = Counter(
    "solitaire_ws_closes_total",
    "WebSocket connections closed, by close code (one of the protocol's; 'other' for the rest)",
    ["code"],
)
CLOSE_CODES = frozenset(int(code) for code in CloseCode) | {1000, 1005, 1006, 1011}
BUILD_INFO = Gauge("solitaire_build_info", "1, labelled with the running build", ["version", "revision"])


@dataclass(frozen=True)
class Build:
    """What is running: the package version and the source revision."""

    version: str
    revision: str


def package_version() -> str:
    """The installed package's version (its metadata), ``unknown`` when it is not installed."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return "unknown"


def source_revision(env: dict[str, str] | None = None, root: Path = SOURCE_ROOT) -> str:
    """``SOLITAIRE_REVISION``, else the checkout's short commit, else ``unknown``."""
    given = (os.environ if env is None else env).get("SOLITAIRE_REVISION", "").strip()
    if given:
        return given[:REVISION_CHARS]
    if not (root / ".git").exists():
        return "unknown"
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    revision = done.stdout.strip()
    return revision[:REVISION_CHARS] if done.returncode == 0 and revision else "unknown"


BUILD = Build(package_version(), source_revision())
BUILD_INFO.labels(BUILD.version, BUILD.revision).set(1)


def http_method(method: str) -> str:
    """A method as a label: one of :data:`HTTP_METHODS`, else ``other`` (a client names it)."""
    return method if method in HTTP_METHODS else "other"


@cache
def http_of(route: str, method: str, status_class: str) -> Counter:
    """The bound counter of one route template, label method (:func:`http_method`) and status class."""
    return HTTP_REQUESTS.labels(route, method, status_class)


@cache
def http_seconds_of(route: str, method: str) -> Histogram:
    """The bound latency histogram of one route template and label method."""
    return HTTP_SECONDS.labels(route, method)


def status_class(status: int) -> str:
    """``2xx``…``5xx``; anything outside 100–599 as ``other``."""
    return f"{status // 100}xx" if 100 <= status <= 599 else "other"


def ws_closed(code: int | None) -> None:
    """Count one closed WebSocket by its code; a code outside the known set counts as ``other``."""
    closes_of(code if code is None or code in CLOSE_CODES else -1).inc()


@cache
def closes_of(code: int | None) -> Counter:
    """The bound counter of one close code (None: ``none``; -1: ``other``), from a fixed set."""
    return WS_CLOSES.labels("none" if code is None else "other" if code == -1 else str(code))
