"""Server processes for the benchmarks (started in their own group, waited for, always ended),
and the administrative SQL they run on PostgreSQL.

Imported by its neighbours as a sibling module (the scripts run as files, as
docs/performance.md shows them).
"""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import psutil
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parent.parent
SERVER_START_TIMEOUT_S = 60.0  # until the server answers /health
STOP_TIMEOUT_S = 15.0  # after SIGTERM, before SIGKILL
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a child gets when its parent dies


def tree_cpu_seconds(process: psutil.Process) -> float:
    """A process's CPU seconds so far, its children's included (a server's solver worker)."""
    times = process.cpu_times()
    total = float(times.user + times.system)
    for child in process.children(recursive=True):
        with suppress(psutil.NoSuchProcess):  # a worker may end meanwhile
            child_times = child.cpu_times()
            total += child_times.user + child_times.system
    return total


def raise_fd_limit(at_least: int = 0) -> None:
    """As many file descriptors as the hard limit allows, first raising the hard limit to
    ``at_least`` where this process may (root); children started afterwards inherit both."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and at_least > hard:
        with suppress(ValueError, OSError):  # not allowed: the hard limit stays
            resource.setrlimit(resource.RLIMIT_NOFILE, (at_least, at_least))
            hard = at_least
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def child_preexec() -> None:
    """In a child: more descriptors, and SIGTERM when the benchmark dies (even on SIGKILL,
    when no ``finally`` of ours runs)."""
    raise_fd_limit()
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def end_process_group(proc: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM the process's group (a graceful shutdown), then SIGKILL what is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=timeout)
            break
        except subprocess.TimeoutExpired:
            continue
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # anything the process itself started


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def started_server(
    settings: dict[str, str], root: Path = ROOT, traced: bool = False
) -> Iterator[tuple[str, int]]:
    """``solitaire-server`` with these ``SOLITAIRE_*`` variables on a free port, in its own
    process group; yields (base URL, pid) once /health answers, and ends the group however
    the run ends (errors, timeouts, Ctrl-C, SIGTERM). ``root``: the source tree it runs from
    (another checkout's, to compare two versions in one sitting). ``traced``: under
    tracemalloc (bench/traced_server.py; ``SOLITAIRE_BENCH_TRACE`` in ``settings`` says where to)."""
    port = free_port()
    script = [str(root / "bench" / "traced_server.py")] if traced else ["-m", "server.cli"]
    command = [sys.executable, *script, "--log-level", "warning"]
    with started_command(command, {**settings, "SOLITAIRE_PORT": str(port)}, port, root) as server:
        yield server


@contextmanager
def started_command(
    command: list[str], settings: dict[str, str], port: int, root: Path = ROOT
) -> Iterator[tuple[str, int]]:
    """Any HTTP server's command (run from ``root``, with these variables added), listening on
    ``port``: as :func:`started_server`."""
    env = {**os.environ, **settings}
    proc = subprocess.Popen(
        command,
        cwd=root,
        env=env,
        preexec_fn=child_preexec,
        start_new_session=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited with code {proc.returncode} before answering")
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the server did not answer /health in {SERVER_START_TIMEOUT_S} s"
                    ) from None
                time.sleep(0.2)
        yield base, proc.pid
    finally:
        end_process_group(proc)


@contextmanager
def scratch_database(url: str, name: str) -> Iterator[str]:
    """A new PostgreSQL database of this name on the server of ``url``; its URL. Dropped at the
    end, however the run ends."""
    asyncio.run(pg_admin(url, f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(url).set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(pg_admin(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def pg_admin(url: str, sql: str) -> None:
    """One statement outside a transaction (CREATE DATABASE, VACUUM) on the server of ``url``."""
    import asyncpg

    u = make_url(url)
    conn = await asyncpg.connect(host=u.host, port=u.port or 5432, user=u.username, database=u.database)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()
