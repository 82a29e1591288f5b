"""Throwaway PostgreSQL clusters: Debian's server binaries, a data directory of the test's own
(on a faultfs mount, say), its own port, run as the ``postgres`` user (initdb refuses root).

Each server runs in a process group of its own: :meth:`PgCluster.kill` is a power cut of the
database (SIGKILL to the postmaster and every backend at once), :meth:`PgCluster.stop` a clean
fast shutdown. :func:`running` ends it however the block ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg

from tests import processes

START_TIMEOUT_S = 60.0  # crash recovery included
DATABASE = "solitaire"


def pg_bin(name: str) -> str:
    """A server binary of the newest PostgreSQL Debian installed (not on PATH there)."""
    found = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), key=lambda p: int(p.parts[-3]))
    if not found:
        raise FileNotFoundError(f"no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/{name})")
    return str(found[-1])


def _as_postgres() -> None:
    """In the child: become the ``postgres`` user (the server refuses to run as root)."""
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)


def reachable_dir(prefix: str) -> Path:
    """A new directory under the system's temporary one that the ``postgres`` user can reach
    (a test's own tmp_path is private to root): where a data directory is mounted."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    return path


def give_to_postgres(path: Path) -> None:
    """A directory the server may use as its data directory (mode 0700, its own)."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(path, user.pw_uid, user.pw_gid)


class PgCluster:
    """One PostgreSQL server on ``data`` and ``port``."""

    def __init__(self, data: Path, port: int, settings: dict[str, str] | None = None) -> None:
        self.data, self.port = data, port
        self.settings = dict(settings or {})
        self.socket_dir = Path(tempfile.mkdtemp(prefix="pgsock-"))
        give_to_postgres(self.socket_dir)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = self.socket_dir / "server.log"

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{DATABASE}"

    def initdb(self) -> None:
        """A new cluster with the ``solitaire`` database (not synced: the caller syncs its disk)."""
        give_to_postgres(self.data)
        argv = [pg_bin("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync"]
        done = processes.run([*argv, "-E", "UTF8", "--locale=C"], 180, preexec_fn=_as_postgres)
        assert done.returncode == 0, done.stderr[-2000:]
        self.start()
        asyncio.run(
            self.admin(f'CREATE DATABASE "{DATABASE}"', timeout=120)
        )  # copies a template: slow on a busy disk
        self.stop()

    def start(self, **settings: str) -> None:
        """Start the server (with these settings on top of the cluster's) and wait until it takes
        connections: after a kill that includes its crash recovery."""
        assert self.proc is None or self.proc.poll() is not None, "already running"
        options = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self.socket_dir),
            "shared_buffers": "32MB",
            "max_connections": "60",
            "fsync": "on",
            "synchronous_commit": "on",
            "full_page_writes": "on",
            **self.settings,
            **settings,
        }
        argv = [pg_bin("postgres"), "-D", str(self.data)]
        for key, value in options.items():
            argv += ["-c", f"{key}={value}"]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                argv, stdout=log, stderr=log, start_new_session=True, preexec_fn=_as_postgres
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                tail = self.log.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"PostgreSQL on port {self.port} did not start:\n{tail}")
            time.sleep(0.1)

    def ready(self) -> bool:
        with contextlib.suppress(Exception):
            asyncio.run(self.admin("SELECT 1", timeout=2))
            return True
        return False

    async def admin(self, sql: str, database: str = "postgres", timeout: float = 10) -> list[asyncpg.Record]:
        conn = await asyncpg.connect(
            host="127.0.0.1", port=self.port, user="postgres", database=database, timeout=timeout
        )
        try:
            return list(await conn.fetch(sql, timeout=timeout))
        finally:
            await conn.close(timeout=timeout)

    def kill(self) -> None:
        """A power cut of the database: SIGKILL to the postmaster and every backend."""
        if self.proc is not None:
            processes.end(self.proc, graceful=False)

    def stop(self) -> None:
        """A fast shutdown (SIGINT: open transactions rolled back, a checkpoint written)."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(2)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=30)
        self.kill()

    def close(self) -> None:
        """Killed if running, and its socket directory (with its log) removed."""
        self.kill()
        shutil.rmtree(self.socket_dir, ignore_errors=True)

    def ctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return processes.run([pg_bin("pg_ctl"), "-D", str(self.data), *args], 60, preexec_fn=_as_postgres)


@contextlib.contextmanager
def running(cluster: PgCluster, **settings: str) -> Iterator[PgCluster]:
    """The cluster started, killed when the block ends (however it ends)."""
    try:
        cluster.start(**settings)
        yield cluster
    finally:
        cluster.kill()
