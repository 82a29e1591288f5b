"""The stack's floors for bench/floor.py: a Starlette WebSocket echo on uvicorn, and the same
echo acknowledging each message only after a group commit to SQLite (WAL, synchronous=FULL).

It speaks just enough of the protocol for bench/load.py's clients (hello, auth, new_game, act,
``POST /api/players``, ``GET /health``), with none of the server's work: no schema, no engine,
no state. Each reply is built from the request's id; the act reply starts with
``{"type":"result"`` as the server's does.

    python bench/echo_app.py --port 8000                       # echo
    python bench/echo_app.py --port 8000 --durable /tmp/e.db   # echo + group commit

The uvicorn settings are the server's own (``server.cli.uvicorn_config``: its WebSocket
transport, uvloop, no compression), so the floor is the stack the server runs on, not a
different one.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sqlite3
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from server.cli import run_loop, tune_gc, uvicorn_config  # noqa: E402
from server.config import Settings  # noqa: E402

GAME_IDS = itertools.count(1)


class GroupCommit:
    """One writer: every message queued while the previous commit was on disk shares the next
    commit (one transaction, one fsync); each waiter is woken only after its commit."""

    def __init__(self, path: str) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="echo-writer")
        self._conn = self._thread.submit(self._open, path).result()
        self._queue: asyncio.Queue[tuple[str, asyncio.Future[None]]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    @staticmethod
    def _open(path: str) -> sqlite3.Connection:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        for pragma in ("journal_mode=WAL", "synchronous=FULL"):
            conn.execute(f"PRAGMA {pragma}")
        conn.execute("CREATE TABLE IF NOT EXISTS messages (n INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        return conn

    async def commit(self, body: str) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        done = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((body, done))
        await done

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = [await self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            rows = [(body,) for body, _ in batch]
            await loop.run_in_executor(self._thread, self._write, rows)
            for _, done in batch:
                if not done.done():
                    done.set_result(None)

    def _write(self, rows: list[tuple[str]]) -> None:
        self._conn.execute("BEGIN IMMEDIATE")
        self._conn.executemany("INSERT INTO messages (body) VALUES (?)", rows)
        self._conn.execute("COMMIT")


def reply_to(message: dict[str, Any]) -> dict[str, Any]:
    """The answer bench/load.py waits for, carrying the request's id."""
    kind, rid = message.get("type"), message.get("id")
    if kind == "act":
        return {"type": "result", "id": rid, "seq": message.get("seq")}
    if kind == "auth":
        return {"type": "welcome", "id": rid}
    if kind == "new_game":
        return {"type": "game", "id": rid, "game": {"id": f"g{next(GAME_IDS)}", "code": message["code"]}}
    return {"type": "pong", "id": rid}


def create_app(durable: GroupCommit | None) -> Starlette:
    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text('{"type":"hello"}')
        try:
            while True:
                text = await websocket.receive_text()
                message = json.loads(text)
                if durable is not None and message.get("type") == "act":
                    await durable.commit(text)
                await websocket.send_text(json.dumps(reply_to(message), separators=(",", ":")))
        except WebSocketDisconnect:
            return

    async def players(request: Request) -> JSONResponse:
        return JSONResponse({"token": "echo"})

    async def health(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    routes = [
        WebSocketRoute("/ws", echo),
        Route("/api/players", players, methods=["POST"]),
        Route("/health", health),
    ]
    return Starlette(routes=routes)


async def serve(port: int, durable_path: str | None) -> None:
    durable = GroupCommit(durable_path) if durable_path else None
    settings = Settings(port=port, host="127.0.0.1")
    config = uvicorn_config(create_app(durable), settings, "warning")
    config.lifespan = "off"
    tune_gc()
    await uvicorn.Server(config).serve()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--durable", help="SQLite file: acknowledge each act after its group commit")
    args = parser.parse_args()
    run_loop(serve(args.port, args.durable))


if __name__ == "__main__":
    main()
