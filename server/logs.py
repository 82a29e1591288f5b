"""Log set-up: plain text (the default) or JSON lines with connection and request ids.

The WebSocket plumbing sets :data:`CONNECTION` for the task that serves one
connection and :data:`REQUEST` around each request, so every line logged
while serving it names both without any caller passing them along; the HTTP
middleware (server/edge/request_id.py) sets :data:`HTTP_REQUEST` to the id it
returns in ``X-Request-ID``, so an HTTP request's lines (its access line
too) name it as ``request_id``.

In JSON every line of the server's output is one object: uvicorn's lines,
Python's warnings and the start line (:func:`ready_line`) included, so a
collector parses the stream line by line. Access lines of passing health
checks (``/health``, ``/ready``) are left out in both formats
(:class:`QuietHealthChecks`): a balancer asks every second.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import time
from contextvars import ContextVar

CONNECTION: ContextVar[str | None] = ContextVar("connection", default=None)
REQUEST: ContextVar[object] = ContextVar("request", default=None)
HTTP_REQUEST: ContextVar[str | None] = ContextVar("http_request", default=None)
HEALTH_PATHS = frozenset({"/health", "/ready"})
FORMATS = ("text", "json")
_connections = itertools.count(1)


def next_connection_id() -> str:
    """An id for a new connection, unique across the instances of a fleet (pid and a count)."""
    return f"c{os.getpid()}-{next(_connections)}"


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, ids, and the traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        connection, request, http_request = CONNECTION.get(), REQUEST.get(), HTTP_REQUEST.get()
        if connection is not None:
            entry["connection"] = connection
        if request is not None:
            entry["request"] = request
        if http_request is not None:
            entry["request_id"] = http_request
        extra = getattr(record, "fields", None)
        if isinstance(extra, dict):
            entry.update({key: value for key, value in extra.items() if key not in entry})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class QuietHealthChecks(logging.Filter):
    """Drops the access line of a health check that passed (status below 400).

    uvicorn logs each access as ``'%s - "%s %s HTTP/%s" %d'`` with (client,
    method, path with query, version, status); a line of any other shape is kept.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if not isinstance(args, tuple) or len(args) != 5:
            return True
        path, status = str(args[2]).split("?", 1)[0], args[4]
        return not (path in HEALTH_PATHS and isinstance(status, int) and status < 400)


def quiet_health_checks() -> None:
    """Put one :class:`QuietHealthChecks` on uvicorn's access logger (once; its own config keeps it)."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, QuietHealthChecks) for f in access.filters):
        access.addFilter(QuietHealthChecks())


def ready_line(text: str, log_format: str, **fields: object) -> str:
    """The line the server prints once it listens: ``text`` as is, or in JSON one record of it."""
    if log_format != "json":
        return text
    record = logging.LogRecord("server.cli", logging.INFO, __file__, 0, text, None, None)
    record.fields = fields
    return JsonFormatter().format(record)


def configure(level: str, log_format: str) -> None:
    """The root logger's one handler, in the chosen format (uvicorn's loggers included)."""
    if log_format not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, not {log_format!r}")
    handler = logging.StreamHandler()
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("alembic").setLevel(logging.WARNING)
    logging.captureWarnings(log_format == "json")  # a warning is a record, not a plain stderr line
    quiet_health_checks()
