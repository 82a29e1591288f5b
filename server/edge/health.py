"""``/health`` and ``/ready``: whether this process lives, and whether this instance should get new clients.

The two answer different questions, for different callers:

- ``/health`` is liveness: the process and its event loop answer. It asks no
  dependency, so an orchestrator that restarts on it never restarts a fleet for
  an outage of the database or Redis, which no restart would cure.
- ``/ready`` is readiness of *this* instance to serve its players, for a
  balancer. An outage that every instance meets at once (Redis, the one
  PostgreSQL) is no reason to send clients elsewhere: there is no elsewhere,
  and taking every backend out turned a Redis blip into a full outage. So it
  answers 200 then, with ``"status": "degraded"`` and what is away named.
  It answers 503 only when this instance alone cannot serve: its database
  check fails while another instance of the fleet reached the database within
  the last few seconds (:class:`FleetDatabase`, told through Redis). And from
  the start of a drain it answers 404 ``draining``: HAProxy's
  ``http-check disable-on-404`` then sends it nothing new but keeps its open
  connections, which the instance closes itself with a ``bye``.

No answer names a driver error (that goes to the log).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from server.storage.db import Database
from server.storage.faults import OUTAGE
from server.storage.writer import GroupWriter

log = logging.getLogger(__name__)
Ping = Callable[[], Awaitable[bool]]
DRAINING_STATUS = 404  # HAProxy's soft stop (http-check disable-on-404): no new clients, open ones kept


class Readiness(StrEnum):
    OK = "ok"
    DEGRADED = "degraded"  # serving, with a dependency every instance shares away
    DRAINING = "draining"  # stopping: no new clients
    UNAVAILABLE = "unavailable"  # this instance alone cannot serve


class Dependency(StrEnum):
    OK = "ok"
    UNAVAILABLE = "unavailable"


class FleetDatabase(Protocol):
    """What the other instances of a fleet see of the database."""

    async def seen(self, reached: bool) -> bool | None:
        """Tell whether this instance reached the database now; answer whether another one
        did within the last few seconds (None: unknown, Redis is away)."""
        ...


class Drain:
    """This instance's own part of readiness: from :meth:`start` on, ``/ready`` says ``draining``."""

    def __init__(self) -> None:
        self.draining = False

    def start(self) -> None:
        self.draining = True


def health_routes(
    db: Database,
    writer: GroupWriter,
    drain: Drain,
    redis_ping: Ping | None = None,
    fleet: FleetDatabase | None = None,
) -> list[BaseRoute]:
    """``/health`` (liveness) and ``/ready`` (this instance's readiness); see the module's doc."""

    async def database_ok() -> bool:
        try:
            await db.ping()
            healthy = writer.healthy or await writer.probe()
        except Exception as exc:
            OUTAGE.failed(log, "health check", exc)
            return False
        if healthy:
            OUTAGE.answered()
        return healthy

    async def health(request: Request) -> Response:
        return JSONResponse({"status": Readiness.OK})

    async def ready(request: Request) -> Response:
        if drain.draining:
            return JSONResponse({"status": Readiness.DRAINING}, DRAINING_STATUS)
        if redis_ping is None:
            database, redis = await database_ok(), None
        else:
            database, redis = await asyncio.gather(database_ok(), redis_ping())
        alone = False
        if fleet is not None:
            others = await fleet.seen(database)
            alone = not database and others is True
        body: dict[str, str] = {"database": Dependency.OK if database else Dependency.UNAVAILABLE}
        if redis is not None:
            body["redis"] = Dependency.OK if redis else Dependency.UNAVAILABLE
        if alone:
            return JSONResponse({"status": Readiness.UNAVAILABLE, **body}, 503)
        degraded = not database or redis is False
        return JSONResponse({"status": Readiness.DEGRADED if degraded else Readiness.OK, **body})

    return [Route("/health", health), Route("/ready", ready)]
