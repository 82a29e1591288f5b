"""A faultfs mount for a test or a bench: its own process, commanded over its stdin, always unmounted."""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from tests import processes

ROOT = Path(__file__).resolve().parents[2]
MOUNT_TIMEOUT_S = 20.0
ANSWER_TIMEOUT_S = 30.0  # a command waits for the operation in progress (an fsync may be slowed)


class Mount:
    """A running ``python -m tests.faultfs``: :meth:`drop`, :meth:`sync` and the fault settings."""

    def __init__(self, backing: Path, path: Path, proc: subprocess.Popen[bytes]) -> None:
        self.backing, self.path, self.proc = backing, path, proc
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        with contextlib.suppress(ValueError, OSError):
            for line in iter(self.proc.stdout.readline, b""):
                self._lines.put(line)
        self._lines.put(b"")

    def line(self, timeout: float) -> str:
        """The next line it prints, within ``timeout``."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"faultfs printed nothing in {timeout} s") from None
        if not line:
            raise EOFError(f"faultfs exited ({self.proc.poll()})")
        return line.decode().strip()

    def command(self, text: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()
        answer = self.line(ANSWER_TIMEOUT_S)
        if answer.startswith("error"):
            raise ValueError(answer)
        return answer

    def drop(self) -> int:
        """Lose every unsynced byte and name, as a power cut; the blocks put back."""
        return int(self.command("drop").split()[1])

    def sync(self) -> None:
        self.command("sync")

    def pending(self) -> tuple[int, int]:
        _, blocks, names = self.command("pending").split()
        return int(blocks), int(names)

    def torn(self, on: bool) -> None:
        self.command(f"torn {'on' if on else 'off'}")

    def fsync_delay(self, ms: int) -> None:
        self.command(f"fsync-delay {ms}")

    def limit(self, size: int) -> None:
        """The disk's size in bytes (0: the backing disk's own)."""
        self.command(f"limit {size}")

    def headroom(self, size: int) -> int:
        """Make the disk fill once ``size`` more bytes are written; returns its new size."""
        return int(self.command(f"headroom {size}").split()[1])


def unmount(path: Path) -> None:
    """Unmount if mounted (lazily when busy): a mount left by a killed faultfs goes too."""
    if os.path.ismount(path):
        for argv in (["fusermount3", "-u", str(path)], ["fusermount3", "-u", "-z", str(path)]):
            if subprocess.run(argv, capture_output=True, timeout=30).returncode == 0:
                return


@contextlib.contextmanager
def mounted(backing: Path, path: Path, *, torn: bool = False, limit_bytes: int = 0) -> Iterator[Mount]:
    """Mount ``backing`` on ``path`` (both made if missing) until the block ends; the
    mount is gone afterwards, however the block ended."""
    backing.mkdir(parents=True, exist_ok=True)
    path.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "tests.faultfs", str(backing), str(path), "--limit-bytes", str(limit_bytes)]
    if torn:
        argv.append("--torn")
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    with processes.started(
        argv, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as proc:
        try:
            mount = Mount(backing, path, proc)
            deadline = time.monotonic() + MOUNT_TIMEOUT_S
            while mount.line(max(0.0, deadline - time.monotonic())) != "mounted":
                pass
            yield mount
        finally:
            processes.end(proc)  # SIGTERM: it unmounts and exits
            unmount(path)
