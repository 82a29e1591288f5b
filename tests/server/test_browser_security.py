"""Browser-facing security: DNS rebinding is refused, and every HTTP answer carries the headers.

A rebinding page names its own domain in both ``Host`` and ``Origin``; the server checks both
against its configuration (the public URL, or loopback at its port), never against each other.
Handshakes here go to 127.0.0.1 while claiming any ``Host``, as a rebound name would.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Origin

from server.app import STATIC_DIR
from server.cli import READY_LINE, build_parser, settings_from_args
from server.config import Settings, origin_of
from server.edge.security import BrowserPolicy
from server.edge.static import EARLY_INLINE, csp_hash
from server.edge.ws_transport import IMPL_CHOICES
from tests import processes
from tests.support import free_port, running_server
from wire import CloseCode

HEADERS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


# The page's one inline script (the early socket, written into its head): allowed by its hash.
EARLY = csp_hash((STATIC_DIR / EARLY_INLINE).read_text(encoding="utf-8"))


def csp(sockets: str, scripts: str = "") -> str:
    return (
        f"default-src 'self'; script-src 'self'{scripts}; style-src 'self'; img-src 'self' data:; "
        f"connect-src 'self' {sockets}; frame-ancestors 'none'; base-uri 'none'; "
        "form-action 'self'; object-src 'none'"
    ).replace(" ;", ";")


def sqlite(tmp: Path, **changes: object) -> Settings:
    return Settings(database_url=f"sqlite+aiosqlite:///{tmp / 'sec.db'}", secret="test-secret", **changes)  # type: ignore[arg-type]


def port_of(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


def get(port: int, path: str, host: str | None = None) -> tuple[int, dict[str, str]]:
    """A GET to 127.0.0.1:port claiming ``host``: the status and the headers (names lowercased)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={"Host": host or f"127.0.0.1:{port}"})
        response = conn.getresponse()
        response.read()
        return response.status, {name.lower(): value for name, value in response.getheaders()}
    finally:
        conn.close()


async def handshake(port: int, host: str, origin: str | None) -> str | int:
    """Open /ws on 127.0.0.1:port claiming ``host`` and ``origin``: ``"hello"`` when served,
    else the HTTP status that refused the handshake or the close code that ended the socket."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        async with websockets.connect(
            f"ws://{host}/ws",
            sock=sock,
            origin=None if origin is None else Origin(origin),
            open_timeout=10,
            close_timeout=5,
        ) as ws:
            try:
                message = json.loads(await asyncio.wait_for(ws.recv(), 10))
            except ConnectionClosed:
                return ws.close_code or 0
            return str(message["type"])
    except InvalidStatus as exc:
        return exc.response.status_code
    finally:
        sock.close()


# -- the policy, pure ------------------------------------------------------------------------


def test_default_policy_is_loopback_at_the_port() -> None:
    policy = BrowserPolicy.from_settings(Settings(port=8000))
    assert policy.hosts() == ["127.0.0.1", "localhost", "[::1]"]
    assert policy.own_origins(0) == ("http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000")
    assert policy.origin_allowed("http://localhost:8000", 0)
    assert policy.origin_allowed(None, 0)  # not a browser
    assert not policy.origin_allowed("http://localhost:9000", 0)  # another local site
    assert not policy.origin_allowed("http://evil.example:8000", 0)
    assert policy.content_security_policy(0) == csp("ws://127.0.0.1:8000 ws://localhost:8000")


def test_port_0_uses_the_port_each_connection_arrived_on() -> None:
    policy = BrowserPolicy.from_settings(Settings(port=0))
    assert policy.origin_allowed("http://127.0.0.1:41234", 41234)
    assert not policy.origin_allowed("http://127.0.0.1:41234", 41235)
    assert not policy.origin_allowed("http://127.0.0.1:41234", 0)  # no port known: no own origin
    assert policy.content_security_policy(41234) == csp("ws://127.0.0.1:41234 ws://localhost:41234")


def test_a_named_listening_host_is_an_own_origin_and_a_wildcard_is_not() -> None:
    named = BrowserPolicy.from_settings(Settings(host="192.168.1.20", port=9000))
    assert named.hosts() == ["192.168.1.20", "127.0.0.1", "localhost", "[::1]"]
    assert named.origin_allowed("http://192.168.1.20:9000", 0)
    every = BrowserPolicy.from_settings(Settings(host="0.0.0.0", port=9000))
    assert every.hosts() == ["127.0.0.1", "localhost", "[::1]"]
    assert not every.origin_allowed("http://0.0.0.0:9000", 0)


def test_public_url_replaces_the_loopback_origins() -> None:
    policy = BrowserPolicy.from_settings(
        Settings(
            public_url="https://Solitaire.Example:443/play/",
            allowed_origins=("https://friend.example",),
            allowed_hosts=("lan.example", "::2"),
        )
    )
    assert policy.own_origins(8000) == ("https://solitaire.example",)
    assert policy.hosts() == ["solitaire.example", "127.0.0.1", "localhost", "[::1]", "lan.example", "[::2]"]
    assert policy.origin_allowed("https://solitaire.example", 8000)
    assert policy.origin_allowed("https://friend.example", 8000)
    assert not policy.origin_allowed("http://127.0.0.1:8000", 8000)
    assert policy.content_security_policy(8000) == csp("wss://solitaire.example")


def test_origin_of_normalizes_and_refuses() -> None:
    assert origin_of("http://example.com:80") == "http://example.com"
    assert origin_of("https://example.com:8443/x?y") == "https://example.com:8443"
    assert origin_of("http://[::1]:8000") == "http://[::1]:8000"
    for bad in ("example.com", "ftp://example.com", "http://", "http://example.com:port"):
        with pytest.raises(ValueError):
            origin_of(bad)
    with pytest.raises(ValueError):
        Settings(public_url="solitaire.example")


def test_settings_from_environment_and_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {
        "SOLITAIRE_PUBLIC_URL": "https://solitaire.example",
        "SOLITAIRE_ALLOWED_HOSTS": "lan.example, other.example",
    }
    settings = Settings.from_env(env)
    assert settings.public_url == "https://solitaire.example"
    assert settings.allowed_hosts == ("lan.example", "other.example")
    for name in ("SOLITAIRE_PUBLIC_URL", "SOLITAIRE_ALLOWED_HOSTS", "SOLITAIRE_ALLOWED_ORIGINS"):
        monkeypatch.delenv(name, raising=False)
    args = build_parser().parse_args(
        ["--public-url", "http://box.lan:9000", "--allowed-host", "a.lan", "--allowed-host", "b.lan"]
    )
    flagged = settings_from_args(args)
    assert flagged.public_url == "http://box.lan:9000"
    assert flagged.allowed_hosts == ("a.lan", "b.lan")


# -- a real server ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def default_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_server(sqlite(tmp_path_factory.mktemp("sec"))) as base:
        yield base


@pytest.mark.parametrize("impl", IMPL_CHOICES)
async def test_rebinding_handshake_is_refused_on_every_transport(impl: str, tmp_path: Path) -> None:
    with running_server(sqlite(tmp_path, ws_impl=impl)) as base:
        port = port_of(base)
        evil = f"evil.example:{port}"
        assert await handshake(port, evil, f"http://{evil}") == 400  # the Host check
        assert await handshake(port, evil, None) == 400  # a program claiming the name too
        assert await handshake(port, f"127.0.0.1:{port}", f"http://{evil}") == CloseCode.ORIGIN
        assert await handshake(port, f"127.0.0.1:{port}", base) == "hello"


async def test_default_serves_loopback_names_at_its_own_port(default_site: str) -> None:
    port = port_of(default_site)
    assert await handshake(port, f"localhost:{port}", f"http://localhost:{port}") == "hello"
    assert await handshake(port, f"[::1]:{port}", f"http://[::1]:{port}") == "hello"
    assert await handshake(port, f"127.0.0.1:{port}", f"http://127.0.0.1:{port + 1}") == CloseCode.ORIGIN
    assert await handshake(port, f"127.0.0.1:{port}", f"https://127.0.0.1:{port}") == CloseCode.ORIGIN
    assert (await asyncio.to_thread(get, port, "/health", "evil.example"))[0] == 400


PATHS = ["/", "/index.html", "/js/main.js", "/app.css", "/health", "/api/schema/openapi.json", "/api/nope"]


@pytest.mark.parametrize("path", PATHS)
def test_every_answer_carries_the_security_headers(default_site: str, path: str) -> None:
    port = port_of(default_site)
    status, headers = get(port, path)
    assert status == (404 if path == "/api/nope" else 200)
    sockets = f"ws://127.0.0.1:{port} ws://localhost:{port}"
    assert headers["content-security-policy"] == csp(sockets, f" {EARLY}")
    for name, value in HEADERS.items():
        assert headers[name] == value


def test_a_refused_host_still_carries_the_headers(default_site: str) -> None:
    status, headers = get(port_of(default_site), "/", host="evil.example")
    assert status == 400
    assert headers["x-frame-options"] == "DENY"
    assert "content-security-policy" in headers


async def test_a_configured_public_url_is_served(tmp_path: Path) -> None:
    settings = sqlite(
        tmp_path,
        public_url="https://solitaire.example",
        allowed_hosts=("lan.example",),
        allowed_origins=("https://friend.example",),
    )
    with running_server(settings) as base:
        port = port_of(base)
        public = "solitaire.example"
        assert await handshake(port, public, "https://solitaire.example") == "hello"
        assert await handshake(port, "lan.example", "https://friend.example") == "hello"
        assert await handshake(port, public, base) == CloseCode.ORIGIN  # loopback is no longer own
        assert await handshake(port, "evil.example", "http://evil.example") == 400
        status, headers = await asyncio.to_thread(get, port, "/", public)
        assert status == 200
        assert headers["content-security-policy"] == csp("wss://solitaire.example", f" {EARLY}")
        assert (await asyncio.to_thread(get, port, "/health"))[0] == 200  # loopback health checks


async def test_port_0_from_the_command_line(tmp_path: Path) -> None:
    """With ``--port 0`` the bound port is known only after binding: the default origins follow
    the port each connection arrived on."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SOLITAIRE_")},
        "SOLITAIRE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}",
    }
    argv = [sys.executable, "-m", "server.cli", "--port", "0", "--log-level", "warning"]
    with processes.started(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        line = await asyncio.to_thread(processes.read_line, proc, 60, READY_LINE.encode())
        port = port_of(line.decode().split(READY_LINE, 1)[1].split()[0].rstrip("/"))
        assert await handshake(port, f"localhost:{port}", f"http://localhost:{port}") == "hello"
        assert await handshake(port, f"127.0.0.1:{port}", f"http://127.0.0.1:{free_port()}") == (
            CloseCode.ORIGIN
        )
        assert await handshake(port, f"evil.example:{port}", f"http://evil.example:{port}") == 400
