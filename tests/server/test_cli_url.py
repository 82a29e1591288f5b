"""``solitaire-server`` prints the URL it listens on, whatever the log level.

Scripts start it with ``--port 0`` and read the real port from that line, so it
must come on stdout even with ``--log-level warning``, which hides uvicorn's own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from server.cli import READY_LINE
from tests import processes
from tests.support import http


def test_port_0_prints_the_bound_url_at_warning_level(tmp_path: Path) -> None:
    env = {**os.environ, "SOLITAIRE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'url.db'}"}
    argv = [sys.executable, "-m", "server.cli", "--port", "0", "--log-level", "warning"]
    with processes.started(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        line = processes.read_line(proc, timeout=60, contains=READY_LINE.encode()).decode()
        url = line.split(READY_LINE, 1)[1].split()[0].rstrip("/")
        host, port = url.removeprefix("http://").rsplit(":", 1)
        assert host == "127.0.0.1" and int(port) > 0
        status, body = http("GET", f"{url}/health")
        assert status == 200, body
        assert processes.end(proc) in (0, -signal.SIGTERM)  # a graceful stop (uvicorn re-raises it)
