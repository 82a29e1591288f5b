"""Log set-up: plain text (the default) or JSON lines with connection and request ids.

The WebSocket plumbing sets :data:`CONNECTION` for the task that serves one
connection and :data:`REQUEST` around each request, so every line logged
while serving it names both without any caller passing them along.
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
        connection, request = CONNECTION.get(), REQUEST.get()
        if connection is not None:
            entry["connection"] = connection
        if request is not None:
            entry["request"] = request
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


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
