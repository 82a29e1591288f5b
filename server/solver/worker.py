"""The solver's worker process: ``python -m server.solver.worker SERVER_PID``.

It reads requests from its standard input and writes answers to its
standard output, one at a time, each a pickle behind its length
(:func:`frame`): a request is ``(id, fn, args, kwargs)``, an answer ``(id,
ok, value)`` with the result or the exception raised. Anything the searches
print goes to the standard error, never among the answers. It imports only
what the pickled functions need (the engine's solver), not the server.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
import sys
import threading
import time
from typing import Any, BinaryIO

LOWEST_PRIORITY = 19  # nice(1): the worker yields the cores to every other process of the machine
WATCH_S = 1.0  # how often a worker without pidfd_open looks whether its server is still there
HEAD = struct.Struct(">I")  # a frame's length, before its pickle


def frame(value: object) -> bytes:
    """One message on the pipe: its pickle's length, then the pickle."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return HEAD.pack(len(data)) + data


def follow_server(server: int) -> None:
    """Run at the lowest priority: a search takes a core only when serving does not need it, so
    on a busy machine proofs wait, never players. A terminal's Ctrl-C and a SIGTERM to the whole
    process group are the server's to handle: it ends the worker itself (the worker runs in a
    session of its own, so they do not reach it; one sent to it alone is ignored). A server that dies
    without doing so (SIGKILL, out of memory) takes the worker with it."""
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


def answer(request: tuple[int, Any, tuple[Any, ...], dict[str, Any]]) -> bytes:
    """Run one request; its answer as a frame (an exception that does not pickle is named)."""
    rid, fn, args, kwargs = request
    try:
        return frame((rid, True, fn(*args, **kwargs)))
    except Exception as exc:
        try:
            return frame((rid, False, exc))
        except Exception:
            return frame((rid, False, RuntimeError(f"{type(exc).__name__}: {exc}")))


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """Answer requests until the server closes the pipe."""
    while len(head := requests.read(HEAD.size)) == HEAD.size:
        (size,) = HEAD.unpack(head)
        body = requests.read(size)
        if len(body) < size:
            return
        answers.write(answer(pickle.loads(body)))
        answers.flush()


def main() -> None:
    follow_server(int(sys.argv[1]))
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a print goes to the log, not the pipe
    serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
