"""What browsers may do here: the Host names served, the Origins that may open ``/ws``, and the
headers every HTTP answer carries.

A page of ``evil.example`` whose name its owner makes resolve to 127.0.0.1 (DNS rebinding) reaches
a server on this machine with ``Host: evil.example`` and ``Origin: http://evil.example``: the two
agree, so neither says who the server is. Both are checked against configuration instead: the
public URL (``--public-url``), or when none is set the loopback names at the server's port, plus
the listed extra origins and hosts. The headers keep the client's pages (and the token they hold
in ``localStorage``) from running anything but the server's own files, and from being framed.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.config import Settings, origin_of

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")  # as Host headers spell them
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::", "[::]"})  # listen on every interface: names none


def bracketed(host: str) -> str:
    """An IPv6 literal as it appears in a Host header and a URL (``[::1]``)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def arrival_port(scope: Scope) -> int:
    """The local port a request came in on (ASGI ``server``), 0 when the server does not say."""
    server = scope.get("server")
    return int(server[1]) if server and server[1] else 0


@dataclass(frozen=True)
class BrowserPolicy:
    """The server's own origins and hosts, from its settings; see the module's docstring."""

    public_origin: str  # the configured public URL's origin; "" for the loopback default
    listen_host: str  # the interface listened on, bracketed
    port: int  # the configured port; 0: the port each connection arrived on
    extra_origins: frozenset[str]
    extra_hosts: tuple[str, ...]
    inline_scripts: tuple[str, ...] = ()  # CSP sources ('sha256-…') of the page's inline scripts

    @classmethod
    def from_settings(cls, settings: Settings, inline_scripts: tuple[str, ...] = ()) -> BrowserPolicy:
        return cls(
            public_origin=origin_of(settings.public_url) if settings.public_url else "",
            listen_host=bracketed(settings.host.lower()),
            port=settings.port,
            extra_origins=frozenset(settings.allowed_origins),
            extra_hosts=tuple(bracketed(host.lower()) for host in settings.allowed_hosts),
            inline_scripts=inline_scripts,
        )

    def _default_names(self) -> list[str]:
        named = self.listen_host not in WILDCARD_HOSTS and self.listen_host not in LOOPBACK_HOSTS
        return [self.listen_host, *LOOPBACK_HOSTS] if named else list(LOOPBACK_HOSTS)

    def hosts(self) -> list[str]:
        """The Host names served (compared without the port): the public URL's, loopback, extras."""
        own = [bracketed(urlsplit(self.public_origin).hostname or "")] if self.public_origin else []
        names = [*own, *self._default_names(), *self.extra_hosts]
        return list(dict.fromkeys(names))

    def own_origins(self, port: int) -> tuple[str, ...]:
        """The origins of the server's own pages: the public URL's, or loopback at the port."""
        if self.public_origin:
            return (self.public_origin,)
        port = self.port or port
        if not port:
            return ()
        return tuple(origin_of(f"http://{name}:{port}") for name in self._default_names())

    def origin_allowed(self, origin: str | None, port: int) -> bool:
        """May a page of ``origin`` open the WebSocket that arrived on ``port``?"""
        if origin is None:  # not a browser: origins protect browsers, not programs
            return True
        if origin in self.extra_origins or "*" in self.extra_origins:
            return True
        return origin in self.own_origins(port)

    def content_security_policy(self, port: int) -> str:
        """The page's CSP: only the server's own files, and sockets only to its own origins.

        ``'self'`` covers the page's own ``ws:``/``wss:`` origin in CSP 3 browsers; the
        explicit socket origins are for the others. IPv6 literals cannot be written in a CSP
        source, so ``[::1]`` relies on ``'self'`` alone.
        """
        sockets = [
            "ws" + origin.removeprefix("http") for origin in self.own_origins(port) if "[" not in origin
        ]
        return "; ".join(
            [
                "default-src 'self'",
                " ".join(["script-src 'self'", *self.inline_scripts]),
                "style-src 'self'",
                "img-src 'self' data:",
                " ".join(["connect-src 'self'", *sockets]),
                "frame-ancestors 'none'",
                "base-uri 'none'",
                "form-action 'self'",
                "object-src 'none'",
            ]
        )

    def headers(self, port: int) -> list[tuple[bytes, bytes]]:
        """The headers added to every HTTP answer, encoded for ASGI."""
        return [
            (b"content-security-policy", self.content_security_policy(port).encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"x-frame-options", b"DENY"),
            (b"referrer-policy", b"no-referrer"),
        ]


class SecurityHeaders:
    """Pure ASGI middleware adding the policy's headers to every HTTP response.

    Pure rather than Starlette's ``BaseHTTPMiddleware``: no task or stream per request, only
    the start message rewritten; the encoded headers are built once per port.
    """

    def __init__(self, app: ASGIApp, policy: BrowserPolicy) -> None:
        self.app = app
        self.policy = policy
        self._by_port: dict[int, list[tuple[bytes, bytes]]] = {}

    def _headers(self, port: int) -> list[tuple[bytes, bytes]]:
        port = self.policy.port or port  # the ports the server listens on: a handful at most
        headers = self._by_port.get(port)
        if headers is None:
            headers = self._by_port[port] = self.policy.headers(port)
        return headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = self._headers(arrival_port(scope))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":  # a copy: a response may reuse its list
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
