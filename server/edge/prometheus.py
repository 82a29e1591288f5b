"""``/metrics``: this process's metrics for Prometheus to scrape (defined in server/metrics.py),
never public.

Counters of a quiet server show what its few players do and when (actions,
solver runs), so the page is served one of two ways (docs/operations.md, Metrics):

- on a listener of its own (``--metrics-listen HOST:PORT``): a second uvicorn
  server in the app's event loop, serving ``/metrics`` alone, without a token;
  it is bound where only the scraper reaches it, and the main port then has no
  ``/metrics`` at all (404, as any unknown path);
- otherwise on the main port, to an operator's token only
  (``Authorization: Bearer sa_…``, the admin API's tokens): 401 ``bad_token``
  without one.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Awaitable, Callable

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from server.edge.openapi import route
from server.errors import ProtocolError
from wire import ErrorCode

log = logging.getLogger(__name__)
Operator = Callable[[str], Awaitable[object | None]]  # an operator token -> who it is, or None
SHUTDOWN_S = 2  # a scrape still running when the server stops gets this long


async def metrics_page(request: Request) -> Response:
    """Every metric of this process in Prometheus' text format (docs/operations.md lists them)."""
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


def operator_metrics(operator: Operator) -> Callable[[Request], Awaitable[Response]]:
    """The main port's ``/metrics``: for an operator's bearer token, else ``bad_token`` (401)."""

    async def metrics(request: Request) -> Response:
        header = request.headers.get("authorization", "")
        known = header.lower().startswith("bearer ") and await operator(header[7:].strip()) is not None
        if not known:
            raise ProtocolError(
                ErrorCode.BAD_TOKEN, "the metrics need an operator's token: Authorization: Bearer sa_…"
            )
        return await metrics_page(request)

    return metrics


def metrics_routes(listening: bool, operator: Operator) -> list[BaseRoute]:
    """What the main port serves of the metrics: nothing when a listener of their own serves them."""
    return [] if listening else [route("/metrics", operator_metrics(operator))]


class MetricsListener:
    """``/metrics`` alone on an address of its own, served by this process's event loop.

    A second uvicorn server, started and stopped with the app (its lifespan): no
    thread takes the GIL from the loop between scrapes, and the main server's
    signal handling stays the one there is (uvicorn's ``serve`` would install its
    own; only its ``startup`` and ``shutdown`` are used). The socket is bound here,
    so an address in use fails the start with its ``OSError``.
    """

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._server: uvicorn.Server | None = None
        self._socket: socket.socket | None = None

    @property
    def address(self) -> tuple[str, int]:
        """(host, port) bound: the free port after a port of 0."""
        if self._socket is None:
            return self.host, self.port
        bound = self._socket.getsockname()
        return str(bound[0]), int(bound[1])

    async def start(self) -> None:
        app = Starlette(routes=[Route("/metrics", metrics_page)])
        config = uvicorn.Config(
            app, lifespan="off", log_config=None, ws="none", timeout_graceful_shutdown=SHUTDOWN_S
        )
        config.load()
        server = uvicorn.Server(config)
        server.lifespan = config.lifespan_class(config)  # "off": what serve() would set
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.create_server((self.host, self.port), family=family)
        await server.startup(sockets=[sock])
        self._server, self._socket = server, sock
        host, port = self.address
        log.info("metrics on http://%s:%d/metrics", f"[{host}]" if ":" in host else host, port)

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.shutdown(sockets=[self._socket] if self._socket is not None else None)
            self._server = self._socket = None
