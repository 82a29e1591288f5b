"""A TCP proxy on a local port that tests can cut, blackhole or re-point: real sockets, real drops.

It stands between a client and a server so a test can lose a reply on the
wire (``blackhole``), drop every connection (``cut``) or move the client to a
restarted server (``target``) exactly when it wants to.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Proxy:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.blackhole = False  # True: bytes from the server are dropped, not forwarded
        self.connections = 0
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def cut(self) -> None:
        """Drop every open connection at once, as a network failure would."""
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def _serve(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            client_writer.transport.abort()
            return
        self._writers.update((client_writer, server_writer))
        upstream = asyncio.ensure_future(self._pipe(client_reader, server_writer, False))
        downstream = asyncio.ensure_future(self._pipe(server_reader, client_writer, True))
        await asyncio.wait([upstream, downstream], return_when=asyncio.FIRST_COMPLETED)
        for writer in (client_writer, server_writer):
            writer.transport.abort()
            self._writers.discard(writer)
        for task in (upstream, downstream):
            task.cancel()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, down: bool) -> None:
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while data := await reader.read(65536):
                if down and self.blackhole:
                    continue
                writer.write(data)
                await writer.drain()


@asynccontextmanager
async def proxy_to(base: str) -> AsyncIterator[Proxy]:
    proxy = Proxy(int(base.rsplit(":", 1)[1]))
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.stop()
