"""The solver's worker process: every search of the server runs there.

A pure-Python search holds the GIL. In a worker thread it would make the
event loop wait up to ``sys.getswitchinterval()`` each time the loop wants
the GIL back, a stall added to every request while the dead-end prover
solves; in its own process a search shares only the machine's cores. One
worker and one solve at a time per server: the callers' caches stay in the
server's process, and a solve's arguments and answer travel pickled.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import multiprocessing
import os
import select
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import ParamSpec, TypeVar

from server.errors import ProtocolError
from server.vocabulary import ErrorCode

P = ParamSpec("P")
R = TypeVar("R")
LOWEST_PRIORITY = 19  # nice(1): the worker yields the cores to every other process of the machine
WATCH_S = 1.0  # how often a worker without pidfd_open looks whether its server is still there
CLOSE_WAIT_S = 5.0  # for a killed worker to be gone


class SolverLost(Exception):
    """The worker process ended during a solve (killed, out of memory); the next solve starts
    a new one."""


def refusal(lost: SolverLost) -> ProtocolError:
    """What a request waiting for a solve answers when the worker was lost: try again."""
    return ProtocolError(ErrorCode.UNAVAILABLE, f"{lost}; try again")


def follow_server(server: int) -> None:
    """The worker's set-up. It runs at the lowest priority: a search takes a core only when
    serving does not need it, so on a busy machine proofs wait, never players. A terminal's
    Ctrl-C and a SIGTERM to the whole process group are the server's to handle: it ends the
    worker itself (:meth:`SolverPool.close`). A server that dies without doing so (SIGKILL,
    out of memory) takes the worker with it."""
    with contextlib.suppress(AttributeError, OSError):  # no os.nice (Windows): the usual priority
        os.nice(LOWEST_PRIORITY - os.nice(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=_end_with, args=(server,), name="server-watch", daemon=True).start()


def _end_with(server: int) -> None:
    """Wait until the server's process ends, then end this one."""
    with contextlib.suppress(AttributeError, OSError):  # no pidfd_open (not Linux): look now and then
        select.select([os.pidfd_open(server)], [], [])
        os._exit(0)
    while True:
        try:
            os.kill(server, 0)
        except ProcessLookupError:
            os._exit(0)
        time.sleep(WATCH_S)


def _warm(executor: ProcessPoolExecutor) -> None:
    """Start the worker and wait until it serves (it imports the server's main module)."""
    executor.submit(os.getpid).result()


class SolverPool:
    """One worker process, started on first use, running one solve at a time.

    The worker is spawned: never forked (the server has threads, and a forked
    child inherits their locks in whatever state they were), nor started from
    a fork server, whose death (a SIGTERM to the whole process group) the
    executor would take for the worker's. It starts once per server, so the
    spawn's imports cost little.
    """

    def __init__(self) -> None:
        self._executor: ProcessPoolExecutor | None = None
        self._slot = asyncio.Semaphore(1)  # one long solve at a time per server

    async def run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """``fn(*args, **kwargs)`` in the worker; ``fn`` is a module-level function and its
        arguments and result pickle. Raises :class:`SolverLost` if the worker dies meanwhile."""
        async with self._slot:
            executor, starting = self._executor, self._executor is None
            if executor is None:
                executor = self._executor = ProcessPoolExecutor(
                    max_workers=1,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=follow_server,
                    initargs=(os.getpid(),),
                )
            try:
                if starting:  # a start waits for the new process's imports: in a thread
                    await asyncio.to_thread(_warm, executor)
                loop = asyncio.get_running_loop()
                return await loop.run_in_executor(executor, functools.partial(fn, *args, **kwargs))
            except BrokenProcessPool as exc:
                self._drop(executor)
                raise SolverLost("the solver's worker process ended during a solve") from exc

    def _drop(self, executor: ProcessPoolExecutor) -> None:
        """Forget a broken executor, so that the next solve starts a new worker."""
        if self._executor is executor:
            self._executor = None
        executor.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """End the worker now, a running solve included (nobody is left to wait for its answer);
        SIGKILL, since it leaves SIGTERM to the server. A later :meth:`run` starts a new one."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        workers = list(executor._processes.values())  # shutdown(wait=False) lets a solve finish
        executor.shutdown(wait=False, cancel_futures=True)
        for worker in workers:
            worker.kill()
        for worker in workers:
            worker.join(CLOSE_WAIT_S)
        # The executor's queues hold named semaphores: released here, not left for the
        # resource tracker to find (and warn of) when the server exits.
        executor.shutdown(wait=True)
