"""Abuse: what flooding clients cost a well-behaved one.

A server process is started (its default limits), then well-behaved clients
ping it at a steady pace (one ping in flight each, well inside their frame
budget) and their round trips are measured in three phases of ``--seconds``
each: alone, beside one flooder, beside five. Each flooder is a process of
its own (so its CPU is not the measuring client's) that sends as fast as its
socket takes it:

- ``ping``: id-less ``{"type":"ping"}`` frames over one WebSocket;
- ``garbage``: frames that are not JSON, and binary frames;
- ``new_game``: ``new_game`` requests with an id (each refusal is answered);
- ``http``: eight keep-alive connections asking for ``/api/daily`` and
  creating players, each as fast as the answers come.

One flooder is ``ping``; five are ``ping``, ``garbage``, ``new_game``,
``http`` and ``ping`` again. The flooders read whatever comes back, so the
server is never held back by a flooder that stops reading. Target: the
well-behaved clients' p99 grows by less than 10%, or by at most 1 ms where
10% is less than that (``target_met``).

The server's whole process group and every flooder are ended however the
run ends; every wait has a deadline. The last line printed is one JSON
object (see docs/performance.md).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import psutil
import websockets
from serverproc import child_preexec, end_process_group, started_server

STOP_TIMEOUT_S = 10.0
REPLY_TIMEOUT_S = 10.0  # a good client's pong; far above any sane latency
FLOODER_READY_TIMEOUT_S = 30.0
ONE = ["ping"]
FIVE = ["ping", "garbage", "new_game", "http", "ping"]
HTTP_CONNECTIONS = 8


# -- processes ------------------------------------------------------------------------


@contextmanager
def server_process(folder: str) -> Iterator[tuple[str, int]]:
    """``solitaire-server`` with its default limits on a fresh SQLite file; ended on exit."""
    with started_server({"SOLITAIRE_DATABASE_URL": f"sqlite+aiosqlite:///{folder}/abuse.db"}) as server:
        yield server


def create_player(base: str, name: str) -> str:
    request = urllib.request.Request(
        f"{base}/api/players", data=json.dumps({"name": name}).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=REPLY_TIMEOUT_S) as response:
        return str(json.loads(response.read())["token"])


class Flooder:
    """A flooder process: started, told to go, told to stop, its count read, always ended."""

    def __init__(self, kind: str, base: str, token: str, max_s: float) -> None:
        argv = [sys.executable, str(Path(__file__).resolve()), "--flooder", kind, "--url", base]
        argv += ["--token", token, "--max-seconds", str(max_s)]
        self.kind = kind
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            preexec_fn=child_preexec,
            start_new_session=True,
        )

    def line(self, timeout: float) -> str:
        """The next line the flooder prints, within ``timeout`` (read on a helper thread)."""
        assert self.proc.stdout is not None
        stdout = self.proc.stdout
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        if not got or not got[0]:
            raise RuntimeError(f"the {self.kind} flooder said nothing within {timeout} s")
        return got[0].decode().strip()

    def tell(self, word: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(word.encode() + b"\n")
        self.proc.stdin.flush()

    def end(self) -> None:
        end_process_group(self.proc, STOP_TIMEOUT_S)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with suppress(OSError):
                    stream.close()


# -- the well-behaved clients -----------------------------------------------------------


class Samples:
    """Round trips of the current phase (None between phases)."""

    def __init__(self) -> None:
        self.phase: list[float] | None = None
        self.errors = 0


async def good_client(base: str, token: str, pace_s: float, samples: Samples, stop: asyncio.Event) -> None:
    """Ping at a steady pace, one in flight, and time each pong."""
    ws = await websockets.connect(
        base.replace("http", "ws", 1) + "/ws", compression=None, open_timeout=REPLY_TIMEOUT_S
    )
    try:
        await asyncio.wait_for(ws.recv(), REPLY_TIMEOUT_S)  # hello
        await ws.send(json.dumps({"type": "auth", "id": "auth", "token": token}))
        assert "welcome" in str(await asyncio.wait_for(ws.recv(), REPLY_TIMEOUT_S))
        count = 0
        next_at = time.monotonic() + pace_s * (hash(token) % 1000) / 1000
        while not stop.is_set():
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            next_at += pace_s
            count += 1
            rid = f"p{count}"
            started = time.perf_counter()
            await ws.send(f'{{"type":"ping","id":"{rid}"}}')
            try:
                answer = str(await asyncio.wait_for(ws.recv(), REPLY_TIMEOUT_S))
            except TimeoutError:
                samples.errors += 1
                continue
            elapsed_ms = (time.perf_counter() - started) * 1000
            if samples.phase is not None:
                if '"pong"' in answer and rid in answer:
                    samples.phase.append(elapsed_ms)
                else:
                    samples.errors += 1
    finally:
        await ws.close()


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))], 3)


async def phase(
    kinds: list[str],
    args: argparse.Namespace,
    base: str,
    tokens: list[str],
    server: psutil.Process,
    samples: Samples,
) -> dict[str, Any]:
    """Start the flooders, measure for ``args.seconds``, stop them: the phase's figures."""
    flooders: list[Flooder] = []
    try:
        for kind, token in zip(kinds, tokens, strict=False):
            flooders.append(Flooder(kind, base, token, max_s=args.seconds + 60))
        for flooder in flooders:
            ready = await asyncio.to_thread(flooder.line, FLOODER_READY_TIMEOUT_S)
            assert ready == "ready", f"{flooder.kind}: {ready}"
        for flooder in flooders:
            flooder.tell("go")
        errors_before, cpu = samples.errors, server.cpu_times()
        samples.phase = []
        started = time.monotonic()
        await asyncio.sleep(args.seconds)
        elapsed = time.monotonic() - started
        rtts, samples.phase = samples.phase, None
        cpu_after = server.cpu_times()
        sent = 0
        for flooder in flooders:
            flooder.tell("stop")
            sent += json.loads(await asyncio.to_thread(flooder.line, STOP_TIMEOUT_S))["sent"]
    finally:
        for flooder in flooders:
            flooder.end()
    used = cpu_after.user + cpu_after.system - cpu.user - cpu.system
    figures: dict[str, Any] = {
        "p50_ms": percentile(rtts, 50),
        "p99_ms": percentile(rtts, 99),
        "samples": len(rtts),
        "errors": samples.errors - errors_before,
        "server_cpu_pct": round(100 * used / elapsed, 1),
    }
    if kinds:
        figures["flood_sent_per_s"] = round(sent / elapsed)
    return figures


async def measure(args: argparse.Namespace, base: str, pid: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"{base}/api/daily", timeout=60):  # the day's codes, made on first use
        pass
    good = [create_player(base, f"good{i}") for i in range(args.good)]
    five = args.five.split(",")
    flooding = [create_player(base, f"flood{i}") for i in range(len(five))]
    samples, stop = Samples(), asyncio.Event()
    server = psutil.Process(pid)
    pace_s = 1 / args.pings_per_s
    clients = [asyncio.create_task(good_client(base, t, pace_s, samples, stop)) for t in good]
    try:
        await asyncio.sleep(1.0)  # every good client connected and pinging
        for task in clients:
            if task.done():
                task.result()  # a client that failed to start says why
        result = {
            "alone": await phase([], args, base, flooding, server, samples),
            "flooders_1": await phase(ONE, args, base, flooding, server, samples),
            "flooders_5": await phase(five, args, base, flooding, server, samples),
        }
    finally:
        stop.set()
        done = await asyncio.wait_for(asyncio.gather(*clients, return_exceptions=True), 2 * REPLY_TIMEOUT_S)
    failures = [d for d in done if isinstance(d, BaseException)]
    if failures:
        raise failures[0]
    alone = result["alone"]["p99_ms"]
    allowed = max(0.1 * alone, 1.0)
    for n in (1, 5):
        result[f"p99_growth_ms_{n}"] = round(result[f"flooders_{n}"]["p99_ms"] - alone, 3)
    result["p99_allowed_growth_ms"] = round(allowed, 3)
    result["target_met"] = all(result[f"p99_growth_ms_{n}"] <= allowed for n in (1, 5))
    return result


# -- the flooders (each in its own process) --------------------------------------------------


def ws_frame(payload: bytes, opcode: int = 0x1) -> bytes:
    """A client frame, masked with the zero key (legal, and the payload stays as it is)."""
    size = len(payload)
    if size < 126:
        header = bytes([0x80 | opcode, 0x80 | size])
    else:
        header = bytes([0x80 | opcode, 0x80 | 126]) + size.to_bytes(2, "big")
    return header + b"\x00\x00\x00\x00" + payload


def read_frame(sock: socket.socket, buffer: bytearray) -> bytes:
    """One server frame's payload (unmasked, as servers send), during the handshake only."""

    def need(n: int) -> None:
        while len(buffer) < n:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed during the handshake")
            buffer.extend(chunk)

    need(2)
    size, start = buffer[1] & 0x7F, 2
    if size == 126:
        need(4)
        size, start = int.from_bytes(buffer[2:4], "big"), 4
    elif size == 127:
        need(10)
        size, start = int.from_bytes(buffer[2:10], "big"), 10
    need(start + size)
    payload = bytes(buffer[start : start + size])
    del buffer[: start + size]
    return payload


def ws_connect(base: str, token: str) -> socket.socket:
    """A raw, authenticated WebSocket (the flood is written by hand, frame by frame)."""
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=REPLY_TIMEOUT_S)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET /ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    buffer = bytearray()
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed during the upgrade")
        buffer.extend(chunk)
    head, _, rest = bytes(buffer).partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 101"):
        raise ConnectionError(head.decode(errors="replace"))
    buffer = bytearray(rest)
    read_frame(sock, buffer)  # hello
    sock.sendall(ws_frame(json.dumps({"type": "auth", "id": "auth", "token": token}).encode()))
    welcome = read_frame(sock, buffer)
    if b"welcome" not in welcome:
        raise ConnectionError(welcome.decode(errors="replace"))
    return sock


FLOODS = {
    "ping": ws_frame(b'{"type":"ping"}'),
    "garbage": ws_frame(b"{not json") + ws_frame(os.urandom(24), opcode=0x2),
    "new_game": ws_frame(b'{"type":"new_game","game":"HH","id":1}'),
}


def flood_ws(sock: socket.socket, unit: bytes, stop: threading.Event, counts: list[int]) -> None:
    """Write whole frames as fast as the socket takes them; read and drop every answer."""
    frames_per_unit = 2 if unit is FLOODS["garbage"] else 1
    repeat = max(1, 65536 // len(unit))
    block = memoryview(unit * repeat)
    sock.settimeout(0.2)

    def drain() -> None:
        with suppress(OSError):
            while not stop.is_set():
                try:
                    if not sock.recv(65536):
                        return
                except TimeoutError:
                    continue

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    offset, sent_bytes = 0, 0
    with suppress(OSError):
        while not stop.is_set():
            try:
                n = sock.send(block[offset:])
            except TimeoutError:
                continue
            sent_bytes += n
            offset = (offset + n) % len(block)
    counts.append(sent_bytes // len(unit) * frames_per_unit)


def flood_http(base: str, stop: threading.Event, counts: list[int]) -> None:
    """One keep-alive connection asking as fast as the answers come."""
    host, port = base.removeprefix("http://").split(":")
    sent = 0
    connection = http.client.HTTPConnection(host, int(port), timeout=REPLY_TIMEOUT_S)
    try:
        while not stop.is_set():
            if sent % 10 == 9:
                headers = {"Content-Type": "application/json"}
                connection.request("POST", "/api/players", body=b"{}", headers=headers)
            else:
                connection.request("GET", "/api/daily")
            connection.getresponse().read()
            sent += 1
    except (OSError, http.client.HTTPException):
        pass
    finally:
        connection.close()
        counts.append(sent)


def run_flooder(args: argparse.Namespace) -> None:
    """Connect, say ready, flood from "go" to "stop" (or ``--max-seconds``), print the count."""
    signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(0))
    stop = threading.Event()
    counts: list[int] = []
    if args.flooder == "http":
        workers = [
            threading.Thread(target=flood_http, args=(args.url, stop, counts), daemon=True)
            for _ in range(HTTP_CONNECTIONS)
        ]
    else:
        sock = ws_connect(args.url, args.token)
        unit = FLOODS[args.flooder]
        workers = [threading.Thread(target=flood_ws, args=(sock, unit, stop, counts), daemon=True)]
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    for worker in workers:
        worker.start()
    timer = threading.Timer(args.max_seconds, stop.set)
    timer.daemon = True
    timer.start()
    sys.stdin.readline()  # "stop", or the end of the input
    stop.set()
    for worker in workers:
        worker.join(STOP_TIMEOUT_S)
    print(json.dumps({"kind": args.flooder, "sent": sum(counts)}), flush=True)


# -- main -------------------------------------------------------------------------------------


def on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=10, help="length of each phase")
    parser.add_argument("--good", type=int, default=4, help="well-behaved clients")
    parser.add_argument("--pings-per-s", type=float, default=25, help="each well-behaved client's pace")
    parser.add_argument(
        "--five", default=",".join(FIVE), help="the flooders of the last phase, comma separated"
    )
    parser.add_argument("--flooder", choices=[*FLOODS, "http"], help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    parser.add_argument("--max-seconds", type=float, default=120, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flooder:
        run_flooder(args)
        return
    signal.signal(signal.SIGTERM, on_sigterm)  # so that the server and the flooders are ended
    folder = tempfile.mkdtemp(prefix="solitaire-abuse-")
    budget = 3 * (args.seconds + FLOODER_READY_TIMEOUT_S + 2 * STOP_TIMEOUT_S) + 60
    with server_process(folder) as (base, pid):
        result = asyncio.run(asyncio.wait_for(measure(args, base, pid), budget))
    summary = {"seconds": args.seconds, "good_clients": args.good, "pings_per_s": args.pings_per_s, **result}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
