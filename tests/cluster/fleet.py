"""Real fleets for the cluster tests: server processes on one PostgreSQL database and Redis,
a private Redis that a test may restart, and HAProxy with the repository's own configuration.

Every process is started in its own group (tests.processes) and ended when its test ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.cli import READY_LINE
from tests.processes import end, read_line, run, started
from tests.support import free_port, http

ROOT = Path(__file__).resolve().parents[2]
HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
SHARED_REDIS = "redis://127.0.0.1:6379/0"
START_TIMEOUT_S = 60.0


def redis_answers(host: str = "127.0.0.1", port: int = 6379) -> bool:
    """Whether a Redis server answers PING there."""
    try:
        with socket.create_connection((host, port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def server_env(
    database_url: str, redis_url: str | None, prefix: str, port: int, metrics_port: int | None = None
) -> dict[str, str]:
    env = {
        **os.environ,
        "SOLITAIRE_DATABASE_URL": database_url,
        "SOLITAIRE_PORT": str(port),
        "SOLITAIRE_METRICS_LISTEN": f"127.0.0.1:{metrics_port or free_port()}",
        "SOLITAIRE_SECRET": "cluster-test-secret",
        "SOLITAIRE_MIGRATE_ON_START": "0",  # the fleet migrates once, before any instance starts
        "SOLITAIRE_REDIS_PREFIX": prefix,
        "SOLITAIRE_RATE_PER_S": "1000",
        "SOLITAIRE_BURST": "1000",
        "SOLITAIRE_HTTP_RATE_PER_S": "0",
        "SOLITAIRE_CONNECTIONS_PER_ADDRESS": "0",
        "SOLITAIRE_GAMES_PER_MINUTE": "0",
        "SOLITAIRE_RACES_PER_MINUTE": "0",
        "SOLITAIRE_PLAYERS_PER_HOUR": "0",
        "SOLITAIRE_DRAIN_S": "0",  # no balancer to wait for, unless a test starts one (env=)
    }
    env.pop("SOLITAIRE_REDIS_URL", None)
    if redis_url:
        env["SOLITAIRE_REDIS_URL"] = redis_url
    return env


# For an instance behind a balancer: on SIGTERM, /ready says draining for two of HAProxy's checks
# before clients are told bye, so their reconnects go elsewhere (server/cli.py GracefulServer).
BEHIND_BALANCER = {"SOLITAIRE_DRAIN_S": "2"}


def server_argv() -> list[str]:
    level = os.environ.get("SOLITAIRE_TEST_LOG_LEVEL", "warning")
    return [sys.executable, "-m", "server.cli", "--log-level", level]


def migrate(database_url: str) -> None:
    done = run([sys.executable, "-m", "server.cli", "migrate", "--database-url", database_url], 120, cwd=ROOT)
    assert done.returncode == 0, done.stderr


@dataclass
class Instance:
    port: int
    proc: subprocess.Popen[bytes]
    stack: contextlib.ExitStack
    log: Path | None = None  # where its stderr (its log) goes, if not to the test's
    metrics_port: int = 0  # its metrics listener (never on the public port)

    def logged(self) -> str:
        """What the instance has logged so far (its ``log`` file)."""
        assert self.log is not None, "started without a log file"
        return self.log.read_text(encoding="utf-8", errors="replace")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    def kill(self) -> None:
        """SIGKILL: no goodbye, no flush, as a crash or an OOM kill."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


@dataclass
class Fleet:
    """Instances on one database and one Redis prefix; each ended when the fleet's block ends."""

    database_url: str
    redis_url: str | None
    prefix: str = field(default_factory=lambda: f"t{secrets.token_hex(4)}")
    instances: list[Instance] = field(default_factory=list)
    stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def start(
        self,
        port: int | None = None,
        redis_url: str | bool | None = True,
        log: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> Instance:
        """One more instance (on ``port``, default a free one), waited for until it serves;
        with ``log``, what it logs (its stderr) is written to that file; ``env`` adds to or
        overrides its environment."""
        port, metrics_port = port or free_port(), free_port()
        url = self.redis_url if redis_url is True else (redis_url or None)
        stack = contextlib.ExitStack()
        argv = server_argv()
        stderr = None if log is None else stack.enter_context(log.open("wb"))
        proc = stack.enter_context(
            started(
                argv,
                cwd=ROOT,
                env={**server_env(self.database_url, url, self.prefix, port, metrics_port), **(env or {})},
                stdout=subprocess.PIPE,
                stderr=stderr,
            )
        )
        self.stack.callback(stack.close)
        read_line(proc, START_TIMEOUT_S, READY_LINE.encode())
        instance = Instance(port, proc, stack, log, metrics_port)
        self.instances.append(instance)
        return instance

    def refused(self, redis_url: str | None) -> subprocess.CompletedProcess[str]:
        """Start an instance that should refuse to start; its exit and what it said."""
        env = server_env(self.database_url, redis_url, self.prefix, free_port())
        return run(server_argv(), 60, cwd=ROOT, env=env)

    def close(self) -> None:
        self.stack.close()


@contextlib.contextmanager
def private_redis(unix_socket: Path | None = None) -> Iterator[PrivateRedis]:
    """A Redis server of the test's own on a free port (and on a Unix socket if given), which
    the test may stop and start again."""
    server = PrivateRedis(free_port(), unix_socket)
    try:
        server.start()
        yield server
    finally:
        server.stop()


class PrivateRedis:
    def __init__(self, port: int, unix_socket: Path | None = None) -> None:
        self.port = port
        self.unix_socket = unix_socket
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def socket_url(self) -> str:
        assert self.unix_socket is not None
        return f"unix://{self.unix_socket}"

    def start(self) -> None:
        argv = [
            "redis-server",
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        if self.unix_socket is not None:
            argv += ["--unixsocket", str(self.unix_socket), "--unixsocketperm", "700"]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 10
        while not redis_answers(port=self.port):
            assert self.proc.poll() is None, "redis-server exited"
            assert time.monotonic() < deadline, "redis-server did not answer in 10 s"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None:
            end(self.proc, graceful=False)
            self.proc = None


@contextlib.contextmanager
def balancer(backends: list[int]) -> Iterator[str]:
    """HAProxy with deploy/haproxy.cfg in front of these instance ports; yields its base URL."""
    port = free_port()
    env = {**os.environ, "SOLITAIRE_FRONT": f"127.0.0.1:{port}"}
    for i in range(3):  # the configuration names three instances; missing ones point at a closed port
        env[f"SOLITAIRE_BACKEND_{i + 1}"] = f"127.0.0.1:{backends[i] if i < len(backends) else free_port()}"
    with started(["haproxy", "-db", "-f", str(HAPROXY_CFG)], env=env, stdout=subprocess.DEVNULL) as proc:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            assert proc.poll() is None, "haproxy exited"
            with contextlib.suppress(OSError):
                if http("GET", f"{base}/ready")[0] == 200:
                    break
            assert time.monotonic() < deadline, "haproxy did not reach an instance in 20 s"
            time.sleep(0.1)
        yield base


async def subscriptions(redis_url: str, fleet: Fleet, topic: str) -> int:
    """How many instances Redis counts as subscribed to a topic's channel now."""
    from redis.asyncio import Redis

    client = Redis.from_url(redis_url)
    try:
        counts = await client.pubsub_numsub(f"{fleet.prefix}:t:{topic}")
        return int(counts[0][1]) if counts else 0
    finally:
        await client.aclose()


async def subscribed(redis_url: str, fleet: Fleet, topic: str, instances: int, timeout: float = 10) -> None:
    """Wait until ``instances`` instances of the fleet have subscribed to a topic's channel in Redis
    (a subscription follows a ``watch`` asynchronously)."""

    async def enough() -> bool:
        return await subscriptions(redis_url, fleet, topic) >= instances

    await until(enough, timeout, f"{instances} subscriptions to {fleet.prefix}:t:{topic}")


async def until(check: Any, timeout: float, what: str) -> None:
    """Wait until ``check()`` (sync or async) is true, or fail saying ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.05)
