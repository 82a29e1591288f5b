"""Nothing acknowledged is lost: SIGKILL the real server process, restart it, compare.

Also: SIGTERM says goodbye (``bye`` then close 1001) and flushes writes.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from websockets.exceptions import ConnectionClosed

from tests import processes
from tests.support import Client, ahttp, free_port, http, new_player


@contextmanager
def server_process(database_url: str, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """The real ``solitaire-server`` command in its own process group, killed (if still
    running) when the block exits; its output goes to a file, so it never blocks on a pipe."""
    env = {**os.environ, "SOLITAIRE_DATABASE_URL": database_url, "SOLITAIRE_PORT": str(port)}
    argv = [sys.executable, "-m", "server.cli", "--log-level", "warning"]
    with (
        tempfile.TemporaryFile() as log,
        processes.started(argv, env=env, stdout=log, stderr=subprocess.STDOUT) as proc,
    ):
        deadline = time.monotonic() + 60
        while True:
            try:
                if http("GET", f"http://127.0.0.1:{port}/health")[0] == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                processes.end(proc, graceful=False)
                log.seek(0)
                pytest.fail(f"server did not start: {log.read().decode(errors='replace')[-4000:]}")
            time.sleep(0.1)
        try:
            yield proc
        finally:
            processes.end(proc, graceful=False)


async def _play(base: str, token: str) -> tuple[str, list[dict[str, object]]]:
    """Play a Seahaven game with moves and undos; return its id and the acknowledged states."""
    client = await Client.connect(base, token)
    game = await client.request("new_game", code="SH1-C4-AAAAAJ2")
    game_id = game["game"]["id"]
    acked = []
    seq = 0
    for _ in range(3):
        reply = await client.act(game_id, seq, type="move", **{"from": "col:1", "to": "cell:3"})
        if reply["type"] == "result":
            acked.append(reply["state"])
            seq += 1
        reply = await client.act(game_id, seq, type="undo")
        if reply["type"] == "result":
            acked.append(reply["state"])
            seq += 1
        reply = await client.act(game_id, seq, type="move", **{"from": "col:2", "to": "cell:3"})
        if reply["type"] == "result":
            acked.append(reply["state"])
            seq += 1
        await asyncio.sleep(0.05)
    return game_id, acked


async def test_sigkill_loses_nothing_acknowledged(database_url: str) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with server_process(database_url, port) as proc:
        player = await new_player(base)
        game_id, acked = await _play(base, player["token"])
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert len(acked) >= 3
    with server_process(database_url, port):
        client = await Client.connect(base, player["token"])
        reopened = await client.request("open_game", game_id=game_id)
        state = reopened["state"]
        last = acked[-1]
        for key in ("board", "score", "moves", "seq", "undo_depth", "elapsed_ms", "fingerprint"):
            assert state[key] == last[key], key
        undone = await client.act(game_id, state["seq"], type="undo")
        assert undone["type"] == "result"
        assert undone["state"]["board"] == acked[-2]["board"]


async def test_sigterm_says_goodbye_and_flushes(database_url: str) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with server_process(database_url, port) as proc:
        player = await new_player(base)
        client = await Client.connect(base, player["token"])
        game = await client.request("new_game", code="HH1-N-AAAAAAM")
        game_id = game["game"]["id"]
        result = await client.act(game_id, 0, type="draw")
        proc.send_signal(signal.SIGTERM)
        bye = await client.recv(timeout=15)
        assert bye["type"] == "bye"
        with pytest.raises(ConnectionClosed):
            await client.recv(timeout=15)
        assert client.ws.close_code == 1001
        assert proc.wait(timeout=30) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal
    with server_process(database_url, port):
        status, body = await ahttp("GET", f"{base}/api/games/{game_id}")
        assert status == 200 and body["state"]["fingerprint"] == result["state"]["fingerprint"]
