"""Redis connections for the fan-out between instances: commands written at once, replies
parsed (by hiredis) in the callback that received them.

Every update crosses from its game's owner to the instances of its spectators
through Redis, so each step of that crossing is on the path of a push. Through
redis-py's asyncio pub/sub a received message woke a reading task, went
through its retry, timeout and push-handling layers and came out as a dict; a
publish waited for a sender task's turn. Here the first command given while
the event loop runs one round of callbacks is written at once, and those that
follow it in that round (the other actions of one group commit, say) go out
together as soon as the round ends, without waiting for any task; a message
is parsed and handed on in ``data_received``, before the event loop runs
anything else. At most two writes per round rather than one per command: each
write to a socket costs a system call and the kernel's whole path to Redis. redis-py still
serves what is not on that path (the leader key, ``/ready``).

:class:`RedisLink` is the protocol; :func:`open_link` connects it (TCP, TLS
or a Unix socket, with the URL's user and password) and authenticates.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import hiredis
from redis.connection import SSLConnection, UnixDomainSocketConnection, parse_url

CONNECT_TIMEOUT_S = 2.0
MAX_BUFFERED_BYTES = 8 * 1024 * 1024  # written but not yet taken by Redis: past it, publishes are dropped

Reply = Any  # what hiredis gives: bytes, int, a list of replies, or a ReplyError


class LinkError(ConnectionError):
    """Redis refused the connection's setup (a wrong password, say)."""


@dataclass(frozen=True)
class Endpoint:
    """Where Redis is and who to be there, from a ``redis://``, ``rediss://`` or ``unix://`` URL."""

    host: str = "127.0.0.1"
    port: int = 6379
    path: str | None = None
    tls: bool = False
    username: str | None = None
    password: str | None = None

    @classmethod
    def from_url(cls, url: str) -> Endpoint:
        parts = parse_url(url)  # type: ignore[no-untyped-call]
        kind = parts.get("connection_class")
        return cls(
            host=str(parts.get("host", "127.0.0.1")),
            port=int(parts.get("port", 6379)),
            path=parts.get("path") if kind is UnixDomainSocketConnection else None,
            tls=kind is SSLConnection,
            username=parts.get("username"),
            password=parts.get("password"),
        )


class RedisLink(asyncio.Protocol):
    """One Redis connection. ``on_reply`` gets every reply and pushed message, in order."""

    def __init__(self, on_reply: Callable[[Reply], None]) -> None:
        self.on_reply = on_reply
        self.heard = time.monotonic()  # when Redis last sent anything
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._reader = hiredis.Reader()
        self._transport: asyncio.Transport | None = None
        self._pending: list[bytes] = []  # packed commands, written when this round of callbacks ends
        self._round_open = False  # a command was written in this round: the next ones wait for its end

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's does not subclass asyncio's

    def data_received(self, data: bytes) -> None:
        self.heard = time.monotonic()
        self._reader.feed(data)
        while (reply := self._reader.gets()) is not False:
            self.on_reply(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        if not self.lost.done():
            self.lost.set_result(None)

    @property
    def open(self) -> bool:
        return self._transport is not None and not self._transport.is_closing()

    @property
    def backed_up(self) -> bool:
        """Whether Redis has stopped taking what is written (the write buffer is past its bound)."""
        return self._transport is None or self._transport.get_write_buffer_size() > MAX_BUFFERED_BYTES

    def command(self, *parts: str | bytes) -> None:
        """Send one command; its reply reaches ``on_reply`` in turn.

        The first command of a round of callbacks is written at once; those
        that follow it in the same round wait for the round's end and go out
        together.
        """
        if self._transport is None:
            return
        packed = hiredis.pack_command(parts)  # type: ignore[arg-type]
        if self._round_open:
            self._pending.append(packed)
            return
        self._round_open = True
        asyncio.get_running_loop().call_soon(self._end_round)
        self._transport.write(packed)

    def _end_round(self) -> None:
        self._round_open = False
        pending, self._pending = self._pending, []
        if self._transport is not None and pending:
            self._transport.write(b"".join(pending))

    def close(self) -> None:
        if self._transport is not None:
            self._transport.abort()


async def open_link(endpoint: Endpoint, on_reply: Callable[[Reply], None]) -> RedisLink:
    """A connected, authenticated link (raises ``OSError``, ``TimeoutError`` or ``LinkError``)."""
    loop = asyncio.get_running_loop()
    authenticated: asyncio.Future[Reply] = loop.create_future()

    def first_reply(reply: Reply) -> None:  # the answer of AUTH, before anything else
        link.on_reply = on_reply
        if not authenticated.done():
            authenticated.set_result(reply)

    def made() -> RedisLink:
        return RedisLink(first_reply if endpoint.password else on_reply)

    async with asyncio.timeout(CONNECT_TIMEOUT_S):
        if endpoint.path is not None:
            _, link = await loop.create_unix_connection(made, endpoint.path)
        else:
            context = ssl.create_default_context() if endpoint.tls else None
            _, link = await loop.create_connection(made, endpoint.host, endpoint.port, ssl=context)
        if endpoint.password:
            user = (endpoint.username,) if endpoint.username else ()
            link.command("AUTH", *user, endpoint.password)
            answer = await _first(authenticated, link)
            if isinstance(answer, hiredis.ReplyError):
                link.close()
                raise LinkError(f"Redis refused the login: {answer}")
    return link


async def _first(answer: asyncio.Future[Reply], link: RedisLink) -> Reply:
    done, _ = await asyncio.wait({answer, link.lost}, return_when=asyncio.FIRST_COMPLETED)
    if answer not in done:
        with contextlib.suppress(asyncio.CancelledError):
            answer.cancel()
        raise ConnectionError("Redis closed the connection during its setup")
    return answer.result()
