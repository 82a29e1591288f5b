"""The solver's worker process (real processes): the same answers as in the server's own
process; ``close`` really ends the worker, and so does the server's death; signals to the whole
process group are left to the server; a worker that dies while idle is replaced, one that dies
during a solve fails that solve; every answer reaches its own request."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import psutil
import pytest

from engine import Game, parse_code
from engine.solver import SolveResult, solve, solve_position
from server.errors import ProtocolError
from server.features.play import proven_code
from server.solver.deals import Deals
from server.solver.pool import SolverLost, SolverPool
from server.solver.worker import HEAD, answer
from tests import processes
from wire import ErrorCode

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 30.0
CODES = ["SH1-C4-AAAAAJ2", "HH1-N-AAAAAAD", "SH1-C1-AAAAAAB", "HH1-N-AAAAAAM"]  # won, won, impossible x2


@pytest.fixture
async def pool() -> AsyncIterator[SolverPool]:
    pool = SolverPool()
    try:
        yield pool
    finally:
        await pool.close()


def worker_pid(pool: SolverPool) -> int:
    pid = pool.worker_pid
    assert pid is not None, "a worker is running"
    return pid


def gone(pid: int) -> bool:
    """Ended: no such process, or one that only waits to be reaped."""
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


async def until(what: str, done: Callable[[], object]) -> None:
    """Poll ``done()`` until it is true; fails past the deadline."""
    deadline = time.monotonic() + DEADLINE_S
    while not done():
        assert time.monotonic() < deadline, f"{what} within {DEADLINE_S} s"
        await asyncio.sleep(0.01)


def same(a: SolveResult, b: SolveResult) -> bool:
    """Equal answers (``ms`` is how long it took, which differs)."""
    return (a.result, a.actions, a.nodes) == (b.result, b.actions, b.nodes)


async def test_a_solve_in_the_worker_answers_as_in_process(pool: SolverPool) -> None:
    loaded = await pool.run(eval, "sorted(__import__('sys').modules)")  # a builtin: imports nothing
    assert "server.app" not in loaded and "sqlalchemy" not in loaded  # the solver only, not the server
    for text in CODES:
        code = parse_code(text)
        assert same(await pool.run(solve, code, 20_000), solve(code, 20_000)), text
        game = Game.new(code)
        for _ in range(2):  # a position two moves into the deal
            game = game.apply(game.legal_actions()[0]).game
        here = await pool.run(solve_position, code.game, game.state, 20_000)
        assert same(here, solve_position(code.game, game.state, 20_000)), text
    worker = psutil.Process(worker_pid(pool))
    assert worker.ppid() == os.getpid()
    assert worker.cmdline()[1:3] == ["-m", "server.solver.worker"]  # never a fork


async def test_close_ends_the_worker_without_waiting_for_its_solve(pool: SolverPool) -> None:
    running = asyncio.create_task(pool.run(time.sleep, 3600))  # a solve that would not end
    await until("the worker started", lambda: pool.worker_pid)
    pid = worker_pid(pool)
    await pool.close()
    await until("the worker ended after close", lambda: gone(pid))
    with pytest.raises(SolverLost):
        await asyncio.wait_for(running, DEADLINE_S)
    assert pool.worker_pid is None


async def test_signals_to_the_whole_process_group_are_left_to_the_server(pool: SolverPool) -> None:
    """A terminal's Ctrl-C or a SIGTERM to the group reaches the worker too: it goes on solving
    until the server, shutting down in order, ends it."""
    code = parse_code(CODES[0])
    first = await pool.run(solve, code, 20_000)
    pid = worker_pid(pool)
    for sig in (signal.SIGINT, signal.SIGTERM):
        os.kill(pid, sig)
    await asyncio.sleep(0.2)
    assert not gone(pid)
    assert same(await asyncio.wait_for(pool.run(solve, code, 20_000), DEADLINE_S), first)
    assert worker_pid(pool) == pid


async def test_a_worker_ends_with_a_server_killed_without_closing_it() -> None:
    """SIGKILL to the server's process alone (an out-of-memory kill): the worker does not stay."""
    script = (
        "import asyncio, time\n"
        "from engine.solver import solve\n"
        "from server.solver.pool import SolverPool\n"
        "async def main():\n"
        "    pool = SolverPool()\n"
        "    await pool.run(solve, 'SH1-C1-AAAAAAB', 1000)\n"
        "    print(pool.worker_pid, flush=True)\n"
        "    time.sleep(3600)\n"
        "asyncio.run(main())\n"
    )
    with processes.started([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE) as server:
        pid = int(await asyncio.to_thread(processes.read_line, server, DEADLINE_S))
        assert not gone(pid)
        os.kill(server.pid, signal.SIGKILL)  # the server only, not its group
        await until("the worker ended with its server", lambda: gone(pid))


async def test_a_worker_killed_while_idle_is_replaced_without_losing_a_solve(pool: SolverPool) -> None:
    code = parse_code(CODES[0])
    first = await pool.run(solve, code, 20_000)
    pid = worker_pid(pool)
    os.kill(pid, signal.SIGKILL)
    await until("the pool saw its worker end", lambda: pool.worker_pid is None)
    again = await asyncio.wait_for(pool.run(solve, code, 20_000), DEADLINE_S)
    assert same(again, first)
    assert worker_pid(pool) != pid


async def test_a_worker_killed_during_a_solve_is_lost_then_replaced(pool: SolverPool) -> None:
    running = asyncio.create_task(pool.run(time.sleep, 3600))
    await until("the worker started", lambda: pool.worker_pid)
    os.kill(worker_pid(pool), signal.SIGKILL)
    with pytest.raises(SolverLost):
        await asyncio.wait_for(running, DEADLINE_S)
    code = parse_code(CODES[1])
    assert same(await asyncio.wait_for(pool.run(solve, code, 20_000), DEADLINE_S), solve(code, 20_000))


async def test_a_request_meeting_a_lost_worker_answers_unavailable(pool: SolverPool) -> None:
    """ "Winnable deals only" refuses with ``unavailable`` (try again), not an internal error."""
    await pool.run(solve, parse_code(CODES[2]), 1_000)
    pid = worker_pid(pool)
    os.kill(pid, signal.SIGSTOP)  # it cannot answer: the request below is surely lost with it
    asking = asyncio.create_task(proven_code(parse_code("SH1-C1-AAAAAAA"), Deals(pool)))
    await asyncio.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(ProtocolError) as refused:
        await asyncio.wait_for(asking, DEADLINE_S)
    assert refused.value.code == ErrorCode.UNAVAILABLE
    assert "try again" in refused.value.message
    winnable = parse_code(CODES[1])  # the next request is served by a fresh worker
    assert await asyncio.wait_for(Deals(pool).winnable_among([winnable]), DEADLINE_S) == winnable


async def test_the_worker_runs_at_the_lowest_priority(pool: SolverPool) -> None:
    """A search takes a core only when serving does not need it."""
    await pool.run(os.getpid)
    assert psutil.Process(worker_pid(pool)).nice() == 19
    assert psutil.Process().nice() < 19  # the server itself keeps its priority


async def test_a_cancelled_solve_leaves_its_answer_to_nobody(pool: SolverPool) -> None:
    """Each answer reaches the request it answers: a caller cancelled meanwhile does not hand
    its late answer to the next one."""
    first = asyncio.create_task(pool.run(time.sleep, 0.3))
    await until("the worker started", lambda: pool.worker_pid)
    await asyncio.sleep(0.05)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert await asyncio.wait_for(pool.run(abs, -3), DEADLINE_S) == 3


async def test_an_error_in_the_worker_is_raised_to_its_caller(pool: SolverPool) -> None:
    with pytest.raises(ValueError, match="invalid literal"):
        await pool.run(int, "not a number")
    assert await pool.run(abs, -4) == 4  # the worker goes on serving


def test_an_error_that_does_not_pickle_is_sent_by_name() -> None:
    class Odd(Exception):  # a local class: pickle cannot name it
        pass

    def fail() -> None:
        raise Odd("odd")

    data = answer((7, fail, (), {}))
    (size,) = HEAD.unpack(data[: HEAD.size])
    rid, ok, value = pickle.loads(data[HEAD.size :])
    assert size == len(data) - HEAD.size
    assert (rid, ok) == (7, False) and isinstance(value, RuntimeError) and "Odd: odd" in str(value)
