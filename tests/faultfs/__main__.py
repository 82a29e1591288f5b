"""``python -m tests.faultfs BACKING_DIR MOUNT_DIR``: mount in the foreground until SIGTERM.

Prints ``mounted`` once the kernel has the mount. SIGUSR1 drops every unsynced
byte and prints ``dropped``; SIGTERM (or Ctrl-C) unmounts cleanly and exits 0.
Lines on standard input are commands, each answered by one line:

    drop                 -> dropped BLOCKS    (as SIGUSR1)
    sync                 -> synced            (everything durable now)
    pending              -> pending BLOCKS NAMES
    torn on|off          -> ok                (a drop keeps half of each file's last write)
    fsync-delay MS       -> ok                (every fsync takes that long)
    limit BYTES          -> ok                (the disk's size; 0: the backing disk's)
    headroom BYTES       -> limit LIMIT       (the disk's size made what it holds now and BYTES more)
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import subprocess
import sys
import threading

from tests.faultfs.fs import FaultFS, mount

_out = threading.Lock()
STOPS = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}


def say(line: str) -> None:
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def command(fs: FaultFS, line: str) -> str:
    """One command of standard input; its answer."""
    words = line.split()
    match words:
        case ["drop"]:
            return f"dropped {fs.drop()}"
        case ["sync"]:
            fs.sync()
            return "synced"
        case ["pending"]:
            blocks, names = fs.pending()
            return f"pending {blocks} {names}"
        case ["torn", ("on" | "off") as state]:
            fs.torn = state == "on"
            return "ok"
        case ["fsync-delay", ms] if ms.isdigit():
            fs.fsync_delay_s = int(ms) / 1000
            return "ok"
        case ["limit", size] if size.isdigit():
            fs.limit_bytes = int(size)
            return "ok"
        case ["headroom", size] if size.isdigit():
            return f"limit {fs.leave(int(size))}"
    return f"error unknown command {line.strip()!r}"


def read_commands(fs: FaultFS) -> None:
    for line in sys.stdin:
        if line.strip():
            say(command(fs, line))


def unmount(mountpoint: str) -> None:
    """Unmount, lazily if something still has a file open there: the serving loop then ends."""
    if subprocess.run(["fusermount3", "-u", mountpoint], capture_output=True).returncode != 0:
        subprocess.run(["fusermount3", "-u", "-z", mountpoint], capture_output=True)


def wait_for_signals(fs: FaultFS, mountpoint: str) -> None:
    while True:
        received = signal.sigwait({signal.SIGUSR1, *STOPS})
        if received == signal.SIGUSR1:
            fs.drop()
            say("dropped")
        else:
            unmount(mountpoint)
            return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.faultfs", description=__doc__.splitlines()[0])
    parser.add_argument("backing")
    parser.add_argument("mountpoint")
    parser.add_argument("--torn", action="store_true", help="a drop keeps half of each file's last write")
    parser.add_argument("--fsync-delay-ms", type=int, default=0)
    parser.add_argument("--limit-bytes", type=int, default=0)
    args = parser.parse_args(argv)
    fs = FaultFS(args.backing)
    fs.torn, fs.fsync_delay_s, fs.limit_bytes = args.torn, args.fsync_delay_ms / 1000, args.limit_bytes
    fs.on_mounted = lambda: say("mounted")
    # The signals are taken by a thread of ours (sigwait), never by libfuse's handlers: blocked
    # here, before any other thread starts, they stay blocked in every thread.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, *STOPS})
    threading.Thread(target=wait_for_signals, args=(fs, args.mountpoint), daemon=True).start()
    threading.Thread(target=read_commands, args=(fs,), daemon=True).start()
    with contextlib.suppress(RuntimeError):  # libfuse's exit code when unmounted from outside
        mount(args.backing, args.mountpoint, fs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
