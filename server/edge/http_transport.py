"""The HTTP transport under uvicorn: requests that never complete are closed, and
connections past a cap are refused at once, so half-sent requests cannot lock anyone out.

uvicorn's httptools protocol arms no timer on a new connection (its
keep-alive timer starts only after a first response), so a client that sends
half a request line, or half of its headers (``GET /ws HTTP/1.1\\r\\nHost:
…\\r\\n`` and nothing more: slowloris), holds a file descriptor for as long
as it likes. A thousand of those reached the usual limit of 1,024 open files
and locked out new players and ``/health`` alike. So:

- a request (its headers and its body, or a WebSocket upgrade) must be
  complete within ``request_timeout_s`` of when the server started waiting for
  it (the connection opened, or the previous response was sent); else the
  connection is closed. A WebSocket is then the session's (its auth deadline);
- at most ``max_connections`` TCP connections are open, all kinds together:
  one more is answered ``503`` and closed at once, before it is read;
- at most ``per_address`` of them come from one client address (IPv6: one
  /64), counted at accept from the peer's address, before any byte is parsed,
  so one address cannot take every slot; one more is answered ``503`` the
  same way. A WebSocket keeps its slot until it closes. A peer uvicorn trusts
  for forwarded headers (``FORWARDED_ALLOW_IPS``) is a proxy carrying many
  clients: it is not capped per address here, since its clients' addresses
  are known only once their headers are parsed; from then on the per-address
  quotas (``connections_per_address``, ``http_rate_per_s``) count the
  forwarded address, and the proxy's own limits (``timeout http-request``,
  ``maxconn``) bound what it holds open;
- at start the soft limit on open files is raised to the hard limit, and the
  cap is kept :data:`FD_RESERVE` below it, so the database, the log and the
  files served still get descriptors when every connection slot is taken;
- running out of descriptors anyway (another process, a lower limit) is
  logged once per :data:`LOG_EVERY_S`, with a count, not once per accept.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import time
from collections.abc import Callable
from typing import Any, ClassVar

from uvicorn.middleware.proxy_headers import _TrustedHosts
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from server.core.quotas import address_key

# uvicorn's httptools protocol is private API, like ws_transport's: what of it is used.
UVICORN_PRIVATE_NAMES = (
    "uvicorn.protocols.http.httptools_impl.HttpToolsProtocol",
    "uvicorn.middleware.proxy_headers._TrustedHosts",  # FORWARDED_ALLOW_IPS as uvicorn reads it
)
UVICORN_PROTOCOL_ATTRIBUTES = (  # of an HttpToolsProtocol instance
    "loop",
    "config",
    "client",
    "connections",
    "transport",
    "pipeline",
    "parser",
    "connection_made",  # the rest: overridden, each calling uvicorn's own first
    "connection_lost",
    "on_message_begin",
    "on_message_complete",
    "on_response_complete",
    "handle_websocket_upgrade",
)

ADDRESS_SHARE = 4  # by default one address may hold a quarter of the open-files limit
FD_RESERVE = 128  # descriptors kept free of connections: database, log, static files, the loop's own
LOG_EVERY_S = 60.0  # exhaustion is logged at most this often
BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 21\r\nretry-after: 5\r\nconnection: close\r\n\r\ntoo many connections\n"
)
EXHAUSTED = (errno.EMFILE, errno.ENFILE)

log = logging.getLogger(__name__)


class OncePer:
    """Lets something through at most once per ``interval_s``, counting what it held back."""

    def __init__(self, interval_s: float, now: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = interval_s
        self.now = now
        self._next = float("-inf")
        self._held = 0

    def ready(self) -> int | None:
        """None: hold this one back; else how many were held back since the last one let through."""
        now = self.now()
        if now < self._next:
            self._held += 1
            return None
        held, self._held, self._next = self._held, 0, now + self.interval_s
        return held


class AddressSlots:
    """Open connections per client address for one server, at most ``cap`` each (0: no cap)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.open: dict[str, int] = {}
        self.refusals = OncePer(LOG_EVERY_S)

    def acquire(self, key: str) -> bool:
        held = self.open.get(key, 0)
        if self.cap > 0 and held >= self.cap:
            return False
        self.open[key] = held + 1
        return True

    def release(self, key: str) -> None:
        held = self.open.get(key, 0) - 1
        if held > 0:
            self.open[key] = held
        else:
            self.open.pop(key, None)


class GuardedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a request deadline, a connection cap and a cap per
    client address.

    All are class attributes, set by :func:`guarded_http` for one server.
    """

    request_timeout_s: ClassVar[float] = 10.0
    max_connections: ClassVar[int] = 20_000
    refusals: ClassVar[OncePer] = OncePer(LOG_EVERY_S)
    addresses: ClassVar[AddressSlots] = AddressSlots(0)
    proxies: ClassVar[list[_TrustedHosts]] = []  # FORWARDED_ALLOW_IPS, parsed on first use

    _request_timer: asyncio.TimerHandle | None = None
    _in_message = False
    _address: str | None = None  # the key this connection holds a slot of, until it closes

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        if len(self.connections) > self.max_connections:
            self._refuse()
            return
        key = self._peer_key()
        if key is not None:
            if not self.addresses.acquire(key):
                self._refuse_address(key)
                return
            self._address = key
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._release()
        super().connection_lost(exc)

    def _peer_key(self) -> str | None:
        """The address this connection counts under, None if not counted (no cap, a Unix
        socket, a trusted proxy)."""
        if self.addresses.cap <= 0 or not self.client:
            return None
        if not self.proxies:
            self.proxies.append(_TrustedHosts(self.config.forwarded_allow_ips))
        host = self.client[0]
        return None if host in self.proxies[0] else address_key(host)

    def _release(self) -> None:
        if self._address is not None:
            self.addresses.release(self._address)
            self._address = None

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_message = True
        if self._request_timer is None:  # a request pipelined behind one being answered
            self._arm()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_message = False
        self._disarm()

    def handle_websocket_upgrade(self) -> None:
        self._disarm()  # the request is complete; the WebSocket session has its own deadline
        super().handle_websocket_upgrade()
        if self._address is not None:  # the slot is the WebSocket's now: freed when it closes
            self._hand_slot_to(self.transport.get_protocol())
        self.parser = None  # type: ignore[assignment]  # it refers back to this protocol: freed now, not by the GC

    def _hand_slot_to(self, protocol: asyncio.BaseProtocol) -> None:
        """Free this connection's address slot when ``protocol`` (any WebSocket implementation)
        loses the connection: this protocol's own ``connection_lost`` is never called after an
        upgrade. The closure holds the slot's key and counts, not this protocol (which is freed)."""
        lost, addresses, key = protocol.connection_lost, self.addresses, self._address
        self._address = None

        def connection_lost(exc: Exception | None) -> None:
            try:
                lost(exc)
            finally:
                if key is not None:
                    addresses.release(key)

        setattr(protocol, "connection_lost", connection_lost)  # noqa: B010 (an instance's method)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and not self.pipeline and not self._in_message:
            self._arm()  # waiting for the next request from now (uvicorn's keep-alive runs too)

    def _arm(self) -> None:
        self._disarm()
        self._request_timer = self.loop.call_later(self.request_timeout_s, self._timed_out)

    def _disarm(self) -> None:
        if self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None

    def _timed_out(self) -> None:
        self._request_timer = None
        if not self.transport.is_closing():
            self.transport.close()

    def _refuse_address(self, key: str) -> None:
        self.transport.write(BUSY)
        self.transport.close()
        held = self.addresses.refusals.ready()
        if held is not None:
            log.warning(
                "%s holds %d connections, the most one address may: refusing its new ones (%d more "
                "refused since the last warning)",
                key,
                self.addresses.open.get(key, 0),
                held,
            )

    def _refuse(self) -> None:
        self.transport.write(BUSY)
        self.transport.close()
        held = self.refusals.ready()
        if held is not None:
            log.warning(
                "%d connections open, the most allowed: refusing new ones (%d more refused since the last "
                "warning)",
                len(self.connections) - 1,
                held,
            )


def guarded_http(
    request_timeout_s: float, max_connections: int, per_address: int = 0
) -> type[GuardedHttpProtocol]:
    """The protocol class for uvicorn's ``http`` option, with this server's settings
    (``per_address`` 0: no cap per address)."""
    attributes: dict[str, Any] = {
        "request_timeout_s": request_timeout_s,
        "max_connections": max_connections,
        "refusals": OncePer(LOG_EVERY_S),
        "addresses": AddressSlots(per_address),
        "proxies": [],
    }
    return type("GuardedHttpProtocol", (GuardedHttpProtocol,), attributes)


def open_files_limit() -> int:
    """The soft limit on open files now (RLIM_INFINITY as a large number)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 30


def raise_open_files_limit() -> int:
    """Raise the soft limit on open files to the hard one; returns the limit in effect."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-files limit from %d to %d: %s", soft, target, exc)
    return open_files_limit()


def connection_cap(max_connections: int, files_limit: int) -> int:
    """``max_connections``, but never closer than :data:`FD_RESERVE` to the open-files limit."""
    return max(1, min(max_connections, files_limit - FD_RESERVE))


def address_cap(setting: int, files_limit: int) -> int:
    """Connections one address may hold: ``setting`` if positive, else a quarter
    (:data:`ADDRESS_SHARE`) of the open-files limit; never more than the connection cap."""
    cap = setting if setting > 0 else files_limit // ADDRESS_SHARE
    return max(1, min(cap, connection_cap(cap, files_limit)))


class ExhaustionFilter(logging.Filter):
    """Lets one "too many open files" record through per interval, saying how many it held back.

    asyncio logs every failed ``accept()``, and a request that cannot open a
    file logs its own traceback: when descriptors run out that is a flood of
    identical tracebacks that buries everything else in the log.
    """

    def __init__(self, interval_s: float = LOG_EVERY_S, now: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.gate = OncePer(interval_s, now)

    def filter(self, record: logging.LogRecord) -> bool:
        if not is_exhaustion(record):
            return True
        held = self.gate.ready()
        if held is None:
            return False
        if held:
            record.msg = f"{record.msg} [{held} more like this since the last one, not logged]"
        return True


def is_exhaustion(record: logging.LogRecord) -> bool:
    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(exc, OSError):
        return exc.errno in EXHAUSTED
    return "Too many open files" in str(record.msg)


LOGGERS = ("", "asyncio", "uvicorn", "uvicorn.error", "uvicorn.access")


def install_exhaustion_filter(interval_s: float = LOG_EVERY_S) -> ExhaustionFilter:
    """Put one :class:`ExhaustionFilter` on every handler of the server's loggers."""
    shared = ExhaustionFilter(interval_s)
    for name in LOGGERS:
        for handler in logging.getLogger(name).handlers:
            if not any(isinstance(f, ExhaustionFilter) for f in handler.filters):
                handler.addFilter(shared)
    return shared
