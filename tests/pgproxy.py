"""A TCP proxy between the server and PostgreSQL that can lose a COMMIT's answer, or the
whole database for a while.

It forwards bytes both ways. When cutting is on, every ``cut_every``-th
commit a client sends is forwarded to PostgreSQL, and once PostgreSQL has
had time to run it, the connection is closed both ways before the answer can
travel back: the database holds the transaction, the client never hears so.
A commit is a ``COMMIT``, or a run of the group writer's one-statement batch
(:mod:`server.storage.pg_batches`), which commits on its own.

:meth:`CommitCuttingProxy.down` is an outage: every link is dropped at once,
whatever it was doing, and every new one is closed as soon as it arrives,
until :meth:`CommitCuttingProxy.up`.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import threading
from collections.abc import Iterator

COMMIT_GRACE_S = 0.05  # PostgreSQL runs the COMMIT within this; then the link is cut
_NEGOTIATIONS = (80877103, 80877104)  # SSLRequest, GSSENCRequest: untyped, before the startup message
BATCH_MARK = b"INSERT INTO actions"  # in the text of the group writer's batch statement


class ClientMessages:
    """Splits what a client sends into protocol messages, and tells which of them commit."""

    def __init__(self) -> None:
        self._buffer = b""
        self._started = False  # past the untyped startup message
        self._batches: set[bytes] = set()  # names of prepared statements that write a batch

    def commits(self, data: bytes) -> int:
        """How many commits this chunk of the client's stream carries."""
        self._buffer += data
        found = 0
        while (message := self._next()) is not None:
            kind, body = message
            found += self._commits(kind, body)
        return found

    def _next(self) -> tuple[bytes, bytes] | None:
        if not self._started:
            if len(self._buffer) < 8:
                return None
            length, code = struct.unpack("!ii", self._buffer[:8])
            if len(self._buffer) < length:
                return None
            self._buffer = self._buffer[length:]
            self._started = code not in _NEGOTIATIONS
            return b"", b""
        if len(self._buffer) < 5:
            return None
        (length,) = struct.unpack("!i", self._buffer[1:5])
        if len(self._buffer) < 1 + length:
            return None
        kind, body = self._buffer[:1], self._buffer[5 : 1 + length]
        self._buffer = self._buffer[1 + length :]
        return kind, body

    def _commits(self, kind: bytes, body: bytes) -> int:
        if kind == b"Q":
            return int(body[:40].strip().upper().startswith(b"COMMIT"))
        if kind == b"P":  # Parse: statement name, then its text
            name, _, rest = body.partition(b"\0")
            if BATCH_MARK in rest.split(b"\0", 1)[0]:
                self._batches.add(name)
        if kind == b"B":  # Bind: portal name, then statement name
            statement = body.split(b"\0", 2)[1]
            return int(statement in self._batches)
        return 0


class CommitCuttingProxy:
    """Runs on its own event loop in a thread; ``port`` is where the server should connect."""

    def __init__(self, upstream_host: str = "127.0.0.1", upstream_port: int = 5432) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.cut_every = 0  # 0: never cut
        self.commits = 0
        self.cuts = 0
        self.port = 0
        self.refusing = False  # an outage: new links are closed at once
        self.refused = 0  # links closed at once during outages
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._links: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        started.result(timeout=10)

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        """Close the listening socket and every link (safe to call twice)."""
        if not self._thread.is_alive():
            return

        async def stop() -> None:
            if self._server is not None:
                self._server.close()
            for task in list(self._links):
                task.cancel()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()

    def down(self) -> None:
        """Drop every link now and refuse new ones until :meth:`up`."""

        async def drop() -> None:
            self.refusing = True
            for task in list(self._links):
                task.cancel()

        asyncio.run_coroutine_threadsafe(drop(), self._loop).result(timeout=10)

    def up(self) -> None:
        """Let links through again."""

        async def allow() -> None:
            self.refusing = False

        asyncio.run_coroutine_threadsafe(allow(), self._loop).result(timeout=10)

    async def _accept(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        if self.refusing:
            self.refused += 1
            client_w.close()
            return
        task = asyncio.current_task()
        if task is not None:
            self._links.add(task)
        try:
            server_r, server_w = await asyncio.open_connection(*self.upstream)
        except OSError:
            client_w.close()
            return
        cut = asyncio.Event()
        up = asyncio.create_task(self._client_to_server(client_r, server_w, cut))
        down = asyncio.create_task(self._server_to_client(server_r, client_w, cut))
        try:
            await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task_ in (up, down):
                task_.cancel()
            for writer in (client_w, server_w):
                writer.close()
            if task is not None:
                self._links.discard(task)

    async def _client_to_server(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, cut: asyncio.Event
    ) -> None:
        messages = ClientMessages()
        while data := await reader.read(65536):
            cutting = False
            for _ in range(messages.commits(data)):
                self.commits += 1
                cutting = cutting or (bool(self.cut_every) and self.commits % self.cut_every == 0)
            if cutting:
                cut.set()  # from now on nothing more travels back to the client
            writer.write(data)
            await writer.drain()
            if cutting:
                self.cuts += 1
                await asyncio.sleep(COMMIT_GRACE_S)  # PostgreSQL commits meanwhile, unheard
                return

    @staticmethod
    async def _server_to_client(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, cut: asyncio.Event
    ) -> None:
        while not cut.is_set() and (data := await reader.read(65536)):
            if cut.is_set():
                return
            writer.write(data)
            await writer.drain()


@contextlib.contextmanager
def commit_cutting_proxy() -> Iterator[CommitCuttingProxy]:
    proxy = CommitCuttingProxy()
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
