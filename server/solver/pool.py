"""The solver's worker process: every search of the server runs there.

A pure-Python search holds the GIL. In a worker thread it would make the
event loop wait up to ``sys.getswitchinterval()`` each time the loop wants
the GIL back, a stall added to every request while the dead-end prover
solves; in its own process a search shares only the machine's cores. One
worker and one solve at a time per server: the callers' caches stay in the
server's process, and a solve's arguments and answer travel pickled.

Nor does the server keep a thread for it: requests and answers cross the
worker's pipes (:mod:`server.solver.worker`), written and read by
the event loop itself. Through ``concurrent.futures``' process pool every
solve passed through two helper threads of the server (a queue's feeder and
the pool's manager), and each hand-over of the GIL between them and the loop
could hold the loop up to the switch interval: the tail of every request
grew with the prover's work.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import pickle
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar, cast

from server.errors import ProtocolError
from server.solver.worker import HEAD, frame
from wire import ErrorCode

P = ParamSpec("P")
R = TypeVar("R")
CLOSE_WAIT_S = 5.0  # for a killed worker to be gone
WORKER = "server.solver.worker"
SOURCE_ROOT = Path(__file__).resolve().parents[2]  # where ``server`` is imported from
log = logging.getLogger(__name__)


class SolverLost(Exception):
    """The worker process ended during a solve (killed, out of memory); the next solve starts
    a new one."""


def as_unavailable(lost: SolverLost) -> ProtocolError:
    """What a request waiting for a solve answers when the worker was lost: try again."""
    return ProtocolError(ErrorCode.UNAVAILABLE, f"{lost}; try again")


# uvloop lets one event loop of a process spawn at a time (another loop's spawn meanwhile is a
# RuntimeError, "Racing with another loop to spawn a process"): servers in threads of one process
# (the tests') take turns here. One server's loop never waits on it.
_SPAWNING = threading.Lock()


class _Worker:
    """One worker process and the task reading its answers, matched to requests by id."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._ids = itertools.count()
        self._waiting: dict[int, asyncio.Future[tuple[bool, object]]] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read(), name="solver-answers")

    @classmethod
    async def start(cls) -> _Worker:
        path = os.pathsep.join(p for p in (str(SOURCE_ROOT), os.environ.get("PYTHONPATH")) if p)
        while not _SPAWNING.acquire(blocking=False):  # another loop of this process is spawning
            await asyncio.sleep(0.005)
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                WORKER,
                str(os.getpid()),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": path},
                start_new_session=True,  # a signal to the server's group never reaches it, even as it starts
            )
        finally:
            _SPAWNING.release()
        return cls(process)

    @property
    def alive(self) -> bool:
        return not self._reader.done() and self.process.returncode is None

    async def call(
        self, fn: Callable[..., object], args: tuple[object, ...], kwargs: dict[str, object]
    ) -> object:
        """The answer of one request (an exception raised in the worker is raised here).

        A caller cancelled meanwhile leaves its answer to be dropped when it comes.
        """
        rid = next(self._ids)
        answer: asyncio.Future[tuple[bool, object]] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = answer
        try:
            stdin = self.process.stdin
            assert stdin is not None
            if stdin.is_closing():  # the worker is gone: its pipe cannot take the request
                raise ConnectionResetError("the worker's pipe is closed")
            stdin.write(frame((rid, fn, args, kwargs)))
            await stdin.drain()
            ok, value = await answer
        except ConnectionError as exc:  # the pipe broke: the worker is gone
            raise SolverLost("the solver's worker process ended during a solve") from exc
        finally:
            self._waiting.pop(rid, None)
        if not ok:
            raise cast(BaseException, value)
        return value

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                (size,) = HEAD.unpack(await stdout.readexactly(HEAD.size))
                rid, ok, value = pickle.loads(await stdout.readexactly(size))
                answer = self._waiting.get(rid)
                if answer is not None and not answer.done():
                    answer.set_result((ok, value))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the worker ended
        except Exception as exc:  # an answer that does not read: this worker is done with
            log.warning("solver: an answer from the worker could not be read (%s)", exc)
        finally:
            for answer in self._waiting.values():
                if not answer.done():
                    answer.set_exception(SolverLost("the solver's worker process ended during a solve"))

    async def end(self) -> None:
        """SIGKILL (the worker leaves SIGTERM to the server), then wait until it is gone."""
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), CLOSE_WAIT_S)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(self._reader, CLOSE_WAIT_S)


class SolverPool:
    """One worker process, started on first use, running one solve at a time.

    The worker is a new interpreter running :mod:`server.solver.worker`:
    never a fork of the server (the server has threads, and a forked child
    inherits their locks in whatever state they were), and it imports only the
    solver, not the server. A worker that ended while idle is replaced by the
    next solve; one that ends during a solve fails that solve with
    :class:`SolverLost`.
    """

    def __init__(self) -> None:
        self._worker: _Worker | None = None
        self._slot = asyncio.Semaphore(1)  # one long solve at a time per server

    @property
    def worker_pid(self) -> int | None:
        """The running worker's process id (None before the first solve, and once it ended)."""
        worker = self._worker
        return worker.process.pid if worker is not None and worker.alive else None

    async def run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """``fn(*args, **kwargs)`` in the worker; ``fn`` is a module-level function and its
        arguments and result pickle. Raises :class:`SolverLost` if the worker dies meanwhile."""
        async with self._slot:
            worker = self._worker
            if worker is None or not worker.alive:
                if worker is not None:
                    await worker.end()
                worker = self._worker = await _Worker.start()
            try:
                return cast(R, await worker.call(fn, args, kwargs))
            except SolverLost:
                if self._worker is worker:
                    self._worker = None
                await worker.end()
                raise

    async def close(self) -> None:
        """End the worker now, a running solve included (nobody is left to wait for its answer).
        A later :meth:`run` starts a new one."""
        worker, self._worker = self._worker, None
        if worker is not None:
            await worker.end()
