"""``/metrics``: this process's metrics for Prometheus to scrape (defined in server/metrics.py)."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import Request
from starlette.responses import Response


async def metrics_page(request: Request) -> Response:
    """Every metric of this process in Prometheus' text format (docs/operations.md lists them)."""
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
