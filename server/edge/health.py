"""``/health`` and ``/ready``: whether this instance can serve, for a balancer or an orchestrator."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from server.storage.db import Database
from server.storage.faults import brief
from server.storage.writer import GroupWriter

log = logging.getLogger(__name__)
Ping = Callable[[], Awaitable[bool]]


def health_routes(db: Database, writer: GroupWriter, redis_ping: Ping | None = None) -> list[BaseRoute]:
    """``/health`` and ``/ready``: 200 while the database answers and takes writes, 503 otherwise.

    With several instances ``/ready`` also asks Redis (``"redis"``): an
    instance that cannot reach it still commits, but its pushes would not
    reach the other instances, so a balancer should send new clients elsewhere.
    The answer names no driver error (that goes to the log): ``{"status",
    "database"}`` with ``ok`` or ``unavailable``.
    """

    async def database_ok() -> bool:
        try:
            await db.ping()
            return writer.healthy or await writer.probe()
        except Exception as exc:
            log.warning("health: the database does not answer (%s)", brief(exc))
            return False

    async def health(request: Request) -> Response:
        if not await database_ok():
            return JSONResponse({"status": "unavailable", "database": "unavailable"}, 503)
        return JSONResponse({"status": "ok", "database": "ok"})

    async def ready(request: Request) -> Response:
        if redis_ping is None:
            return await health(request)
        database, redis = await asyncio.gather(database_ok(), redis_ping())
        body = {
            "status": "ok" if database and redis else "unavailable",
            "database": "ok" if database else "unavailable",
            "redis": "ok" if redis else "unavailable",
        }
        return JSONResponse(body, 200 if database and redis else 503)

    return [Route("/health", health), Route("/ready", ready)]
