"""Test support: real servers on local ports and a small WebSocket test client.

Every message a test client receives is recorded in ``RECEIVED`` so that the
contract test can check all of them against the published schema.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
import websockets

from server.app import create_app
from server.cli import uvicorn_config
from server.clock import Clock, wall_clock_ms
from server.config import Limits, Screening, Settings
from tests.contract import SENT

RECEIVED: list[dict[str, Any]] = []  # every server message seen by any test client
OPEN_CLIENTS: set[Client] = set()  # connected and not closed yet: closed after each test (conftest)
_ids = itertools.count(1)
# A test module's clients all come from 127.0.0.1: its shared server does not count them per
# address (tests/server/test_limits.py checks those limits on servers of its own).
ONE_ADDRESS = Limits(players_per_hour=0, http_rate_per_s=0, connections_per_address=0)
# The shared servers play scripted lines faster than any person: their results would all be
# flagged. Screening is tested on servers of its own (tests/server/test_integrity.py).
UNSCREENED = Screening(enabled=False)
PG_ADMIN_URL = os.environ.get("SOLITAIRE_TEST_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ManualClock:
    """An injectable clock (milliseconds) that tests move by hand."""

    def __init__(self, start_ms: int | None = None) -> None:
        self.now = start_ms if start_ms is not None else wall_clock_ms()

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


@contextmanager
def running_server(
    settings: Settings, clock: Clock = wall_clock_ms, port: int | None = None
) -> Iterator[str]:
    """Run the real app under uvicorn in a thread; yields ``http://127.0.0.1:PORT``.

    ``port`` pins the port, to restart a server where its clients expect it.
    """
    port = port or free_port()
    settings = Settings(**{**settings.__dict__, "host": "127.0.0.1", "port": port})
    app = create_app(settings, clock)
    config = uvicorn_config(app, settings, "warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start on port {port}")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        if thread.is_alive():  # connections that would not close: stop without waiting for them
            server.force_exit = True
            thread.join(timeout=10)


def http(method: str, url: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    """A blocking HTTP JSON request; returns (status, parsed body)."""
    return http_raw(method, url, None if body is None else json.dumps(body).encode(), token)


async def ahttp(method: str, url: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    return await asyncio.to_thread(http, method, url, body, token)


def http_bytes(
    method: str, url: str, data: bytes | None = None, token: str | None = None
) -> tuple[int, bytes]:
    """A blocking HTTP request with the body sent as given; returns (status, the answer's bytes)."""
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def http_raw(method: str, url: str, data: bytes | None = None, token: str | None = None) -> tuple[int, Any]:
    """Like :func:`http`, with the body sent as given (not JSON-encoded here): for malformed bodies."""
    status, answer = http_bytes(method, url, data, token)
    return status, json.loads(answer or b"null")


async def ahttp_raw(
    method: str, url: str, data: bytes | None = None, token: str | None = None
) -> tuple[int, Any]:
    return await asyncio.to_thread(http_raw, method, url, data, token)


class ErrorRecords(logging.Handler):
    """Every record at ERROR or above, from any logger (uvicorn's do not reach the root)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def lines(self) -> list[str]:
        return [
            f"{r.name}: {r.getMessage()}" + (" (with a traceback)" if r.exc_info else "")
            for r in self.records
        ]


@contextmanager
def logged_errors() -> Iterator[ErrorRecords]:
    """Collect what the server logs at ERROR (a traceback included) while the block runs."""
    handler = ErrorRecords()
    loggers = [logging.getLogger()] + [
        logger
        for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger) and not logger.propagate
    ]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


async def new_player(base: str, name: str | None = None) -> dict[str, Any]:
    status, body = await ahttp("POST", f"{base}/api/players", {"name": name} if name else {})
    assert status == 201, body
    return dict(body)


class Client:
    """A WebSocket test client: requests with ids, pushes collected on the side."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.pushed: list[dict[str, Any]] = []
        self.hello: dict[str, Any] = {}

    @classmethod
    async def connect(cls, base: str, token: str | None = None, **headers: str) -> Client:
        ws = await websockets.connect(
            base.replace("http", "ws", 1) + "/ws",
            additional_headers=headers or None,
            compression=None,
            max_size=2**22,
            max_queue=None,  # unread pushes never stall reading: close() gets the server's close at once
        )
        client = cls(ws)
        OPEN_CLIENTS.add(client)
        client.hello = await client.recv()
        assert client.hello["type"] == "hello"
        if token is not None or headers.get("anonymous") is None:
            auth: dict[str, Any] = {"token": token} if token else {}
            welcome = await client.request("auth", **auth)
            assert welcome["type"] == "welcome", welcome
        return client

    async def recv(self, timeout: float = 10) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.ws.recv(), timeout)
        message: dict[str, Any] = json.loads(raw)
        RECEIVED.append(json.loads(raw))  # a copy: tests may change what they got
        return message

    async def send(self, message: dict[str, Any] | str) -> None:
        if isinstance(message, dict):
            SENT.append(message)  # the contract check counts the request types tests send
        await self.ws.send(message if isinstance(message, str) else json.dumps(message))

    async def request(self, kind: str, timeout: float = 10, **fields: Any) -> dict[str, Any]:
        """Send a request with a fresh id; return the reply carrying that id."""
        rid = next(_ids)
        await self.send({"type": kind, "id": rid, **fields})
        return await self.reply_to(rid, timeout)

    async def reply_to(self, rid: Any, timeout: float = 10) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = await self.recv(max(0.01, deadline - time.monotonic()))
            if message.get("id") == rid:
                return message
            self.pushed.append(message)

    async def next_push(self, kind: str, timeout: float = 10) -> dict[str, Any]:
        """The next pushed message of a type (already received ones first)."""
        for i, message in enumerate(self.pushed):
            if message["type"] == kind:
                return self.pushed.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            message = await self.recv(max(0.01, deadline - time.monotonic()))
            if message["type"] == kind and "id" not in message:
                return message
            self.pushed.append(message)

    async def act(self, game_id: str, seq: int, **action: Any) -> dict[str, Any]:
        return await self.request("act", game_id=game_id, seq=seq, action=action)

    async def close(self) -> None:
        OPEN_CLIENTS.discard(self)
        await self.ws.close()


def game_values(game_id: str, player_id: str, code: str = "HH1-N-AAAAAC5") -> dict[str, Any]:
    """A new game's row as the writer takes it (``Write(new_game=...)``), for storage tests."""
    return {
        "id": game_id,
        "player_id": player_id,
        "code": code,
        "status": "playing",
        "result": None,
        "score": 0,
        "moves": 0,
        "seq": 0,
        "progress": 0,
        "undos": 0,
        "elapsed_ms": 0,
        "fingerprint": "0" * 16,
        "created_ms": 1,
        "last_action_ms": None,
        "finished_ms": None,
        "daily_day": None,
        "ranked": True,
        "race_id": None,
    }
