"""The server's Prometheus metrics (``GET /metrics``), defined once for the process.

Counters are cheap (an add under a lock), so they sit on the hot paths;
per-label children are bound ahead (:func:`refusals_of`) rather than looked up
per request. Names are documented in docs/operations.md.
"""

from __future__ import annotations

from functools import cache

from prometheus_client import Counter, Gauge, Histogram

CONNECTIONS = Gauge("solitaire_connections", "Open WebSocket connections")
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
