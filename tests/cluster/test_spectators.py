"""Spectators that stay: ``solitaire watch`` through the balancer outlives its instance.

Two instances behind HAProxy with the repository's configuration; the
watcher (the real command, a subprocess) reaches instance A, the only one up
when it starts. The player plays on instance B directly. Then A is ended,
by SIGKILL (a crash: the socket is cut) or SIGTERM (a stop: ``bye``, then
close 1001); the watcher reconnects through the balancer, lands on B, says
that it caught up, and then prints the game's next moves as they are played.
Before, the command waited for its next push for good.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from client import SolitaireClient
from tests.cluster.fleet import BEHIND_BALANCER, Fleet, Instance, balancer, private_redis
from tests.processes import started
from tests.support import RECEIVED, free_port, http

ROOT = Path(__file__).resolve().parents[2]
CODE = "HH1-N-AAAAAAM"


def watch_argv(front: str, game_id: str) -> list[str]:
    return [sys.executable, "-m", "client.cli", "--server", front, "watch", game_id]


class Lines:
    """The lines a process prints, read on one thread, each wait with a deadline."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.stdout = proc.stdout
        self.queue: queue.Queue[bytes] = queue.Queue()
        self.seen: list[bytes] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        with contextlib.suppress(ValueError, OSError):
            for line in iter(self.stdout.readline, b""):
                self.queue.put(line)

    async def wait_for(self, contains: bytes, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = await asyncio.to_thread(self.queue.get, True, max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(
                    f"no line with {contains!r} in {timeout} s; got {self.seen[-20:]!r}"
                ) from None
            self.seen.append(line)
            if contains in line:
                return line


async def ready_behind(front: str, instance: Instance, timeout: float = 20) -> None:
    """Until ``instance`` is ready and the balancer has had time to see it (two checks of
    deploy/haproxy.cfg's 1 s interval)."""
    del front
    deadline = time.monotonic() + timeout
    while (await asyncio.to_thread(http, "GET", f"{instance.url}/ready"))[0] != 200:
        assert time.monotonic() < deadline, "the instance never became ready"
        await asyncio.sleep(0.1)
    await asyncio.sleep(2.5)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["sigkill", "sigterm"])
async def test_a_watcher_resumes_on_another_instance_and_sees_the_next_moves(
    fleet: Fleet, how: signal.Signals, tmp_path: Path
) -> None:
    first = fleet.start(env=BEHIND_BALANCER)  # behind a balancer: SIGTERM says draining before bye
    second_port = free_port()
    with balancer([first.port, second_port]) as front:  # the second is down: all reach the first
        token = (await SolitaireClient.create_player(front, "Player")).token
        async with SolitaireClient(front, token, trace=RECEIVED.append) as player:
            game = await player.new_game(CODE)
            env = {**os.environ, "SOLITAIRE_CONFIG": str(tmp_path / "config.json"), "NO_COLOR": "1"}
            argv = watch_argv(front, game.id)
            with started(
                argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
            ) as watcher:
                lines = Lines(watcher)
                await lines.wait_for(b"watching ", 30)
                await game.draw()
                await lines.wait_for(b"#0 Player: draw", 10)
                second = fleet.start(port=second_port)
                await ready_behind(front, second)
                os.killpg(first.proc.pid, how)
                await asyncio.to_thread(first.proc.wait, 20)
                await game.draw()  # played while the watcher is away (the player reconnects too)
                await lines.wait_for(b"reconnected", 30)
                await game.draw()  # the next moves, pushed to the watcher on the second instance
                await game.draw()
                await lines.wait_for(b"#2 Player: draw", 10)
                await lines.wait_for(b"#3 Player: draw", 10)
                said = b"".join(lines.seen)
                # seq 1, played meanwhile: caught up on (re)watching, or pushed if it came back first
                assert b"caught up from #1 to #2" in said or b"#1 Player: draw" in said, said
                assert watcher.poll() is None
                assert player.connects == 2  # the player came back through the balancer as well


async def test_a_watcher_comes_back_after_the_bye_of_a_redis_return(pg_url: str, tmp_path: Path) -> None:
    """Redis restarts: every instance says ``bye`` to its clients once it is back (pushes may
    have been missed); the watcher reconnects, catches up and sees the next moves."""
    with private_redis() as redis:
        fleet = Fleet(pg_url, redis.url)
        try:
            instance = fleet.start()
            token = (await SolitaireClient.create_player(instance.url, "Player")).token
            async with SolitaireClient(instance.url, token, trace=RECEIVED.append) as player:
                game = await player.new_game(CODE)
                env = {**os.environ, "SOLITAIRE_CONFIG": str(tmp_path / "config.json"), "NO_COLOR": "1"}
                out = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}
                with started(watch_argv(instance.url, game.id), cwd=ROOT, env=env, **out) as watcher:
                    lines = Lines(watcher)
                    await lines.wait_for(b"watching ", 30)
                    await game.draw()
                    await lines.wait_for(b"#0 Player: draw", 10)
                    redis.stop()
                    await asyncio.sleep(1)
                    redis.start()
                    await lines.wait_for(b"reconnected", 30)  # after the instance's bye
                    await game.draw()  # the player's own client reconnects on its request
                    await lines.wait_for(b"#1 Player: draw", 20)
                    assert watcher.poll() is None
        finally:
            fleet.close()
