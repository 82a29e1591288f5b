"""Processes that tests start: each in its own process group, each ended when the test ends.

Every wait here has a deadline. A process still running when its test is done
(passed, failed or timed out) gets SIGTERM for its whole group, then SIGKILL,
so nothing a test started outlives it, not even what that process started.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

STOP_TIMEOUT_S = 10.0  # after SIGTERM, before SIGKILL


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def end(proc: subprocess.Popen[Any], graceful: bool = True, timeout: float = STOP_TIMEOUT_S) -> int:
    """End a process started with :func:`started` (and its group); returns its exit code."""
    if graceful and proc.poll() is None:
        _signal_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=timeout)
    _signal_group(proc.pid, signal.SIGKILL)  # the process if still there, and whatever it started
    return proc.wait(timeout=timeout)


@contextmanager
def started(argv: Sequence[str], **popen: Any) -> Iterator[subprocess.Popen[Any]]:
    """``Popen`` in a new process group, ended (:func:`end`) when the block exits."""
    proc: subprocess.Popen[Any] = subprocess.Popen(list(argv), start_new_session=True, **popen)
    try:
        yield proc
    finally:
        end(proc)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def run(argv: Sequence[str], timeout: float, **popen: Any) -> subprocess.CompletedProcess[str]:
    """Run to the end with text output captured; past ``timeout`` the group is ended and
    ``TimeoutError`` says what it had printed."""
    with started(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            end(proc)
            out, err = proc.communicate(timeout=STOP_TIMEOUT_S)
            raise TimeoutError(
                f"{' '.join(argv)} did not finish in {timeout} s\n"
                f"--- stdout ---\n{(out or '')[-2000:]}\n--- stderr ---\n{(err or '')[-2000:]}"
            ) from None
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)


def read_line(proc: subprocess.Popen[bytes], timeout: float, contains: bytes = b"") -> bytes:
    """The first line of the process's stdout containing ``contains``, within ``timeout``
    (a line is read on a helper thread, so a silent process cannot block the test)."""
    assert proc.stdout is not None
    stdout = proc.stdout
    deadline = time.monotonic() + timeout
    seen: list[bytes] = []
    with _Reader(stdout) as lines:
        while True:
            line = lines.get(max(0.0, deadline - time.monotonic()))
            got = b"".join(seen)[-2000:]
            if line is None:
                raise TimeoutError(f"no line with {contains!r} in {timeout} s; got {got!r}")
            if line == b"":
                raise EOFError(f"stdout closed before a line with {contains!r}; got {got!r}")
            seen.append(line)
            if contains in line:
                return line


class _Reader:
    """Reads lines of a stream on a daemon thread; :meth:`get` waits for one with a deadline."""

    def __init__(self, stream: Any) -> None:
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._stream = stream
        self._thread = threading.Thread(target=self._pump, daemon=True)

    def __enter__(self) -> _Reader:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        pass  # the thread ends at the stream's end, when the process is ended

    def _pump(self) -> None:
        with contextlib.suppress(ValueError, OSError):
            for line in iter(self._stream.readline, b""):
                self._lines.put(line)
        self._lines.put(b"")

    def get(self, timeout: float) -> bytes | None:
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            return None


async def end_async(process: asyncio.subprocess.Process, timeout: float = STOP_TIMEOUT_S) -> int:
    """End an asyncio subprocess started with :func:`async_started` (and its group)."""
    if process.returncode is None:
        _signal_group(process.pid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), timeout)
    if process.returncode is None:
        _signal_group(process.pid, signal.SIGKILL)
    return await asyncio.wait_for(process.wait(), timeout)


@asynccontextmanager
async def async_started(*argv: str, **kwargs: Any) -> AsyncIterator[asyncio.subprocess.Process]:
    """``create_subprocess_exec`` in a new process group, ended when the block exits."""
    process = await asyncio.create_subprocess_exec(*argv, start_new_session=True, **kwargs)
    try:
        yield process
    finally:
        await end_async(process)


async def communicate(
    process: asyncio.subprocess.Process, timeout: float, stdin: bytes | None = None
) -> bytes:
    """The process's whole stdout, once it has exited within ``timeout``; past that it is ended."""
    try:
        out, _ = await asyncio.wait_for(process.communicate(stdin), timeout)
    except TimeoutError:
        await end_async(process)
        raise TimeoutError(f"process {process.pid} did not finish in {timeout} s") from None
    return out or b""
