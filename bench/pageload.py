"""Page load on a throttled phone: how long until the client is ready, on a first visit and a warm one.

A real server (its own process, SQLite) and Debian's Chromium at a phone's size, with the
processor slowed 4x (CDP ``Emulation.setCPUThrottlingRate``) and the network at 1.6 Mbit/s each
way with 150 ms of latency (``Network.emulateNetworkConditions``). Ready is the first moment
the page is connected (``#conn`` online) and shows what a visitor can use: the new game dialog
or a dealt board; a script in the page notes it (``performance.now()``, from the navigation's
start), so polling costs nothing. The first visit starts from an empty profile; the warm one
is the next visit in the same profile (HTTP cache and service worker), and the third visit the
one after (the browser has then compiled the scripts twice). Prints one JSON line:
both ready times (ms, the median of ``--runs``), and the first visit's requests and bytes on
the wire (encoded, as the network carried them).

    .venv/bin/python bench/pageload.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, CDPSession, Page, sync_playwright
from serverproc import started_server

CHROMIUM = os.environ.get("SOLITAIRE_CHROMIUM", "/usr/bin/chromium")
CPU_SLOWDOWN = 4
LATENCY_MS = 150
BYTES_PER_S = 1_600_000 / 8
READY_TIMEOUT_MS = 60_000
PHONE = {"width": 390, "height": 844}
NOTE_READY = (Path(__file__).resolve().parent / "ready.js").read_text()  # also tests/browser/test_assets.py


class Wire:
    """The requests a page makes and the bytes they take, from the DevTools protocol."""

    def __init__(self, cdp: CDPSession) -> None:
        self.requests = 0
        self.bytes = 0
        cdp.on("Network.requestWillBeSent", self.sent)
        cdp.on("Network.loadingFinished", self.finished)

    def sent(self, _event: dict[str, Any]) -> None:
        self.requests += 1

    def finished(self, event: dict[str, Any]) -> None:
        self.bytes += int(event.get("encodedDataLength", 0))


def throttled(page: Page) -> Wire:
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {
            "offline": False,
            "latency": LATENCY_MS,
            "downloadThroughput": BYTES_PER_S,
            "uploadThroughput": BYTES_PER_S,
        },
    )
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
    return Wire(cdp)


def visit(page: Page, base: str) -> float:
    """Load the page; the ms from the navigation's start until it is ready."""
    page.goto(base, wait_until="commit", timeout=READY_TIMEOUT_MS)
    page.wait_for_function("() => window.__ready !== undefined", timeout=READY_TIMEOUT_MS, polling=200)
    return float(page.evaluate("window.__ready"))


def one_run(browser: Browser, base: str) -> dict[str, float]:
    """A first visit in a fresh profile, then a warm one in the same profile."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)  # type: ignore[arg-type]
    context.add_init_script(NOTE_READY)
    try:
        page = context.new_page()
        wire = throttled(page)
        first = visit(page, base)
        # The service worker installs and fills its cache in the background: let it finish.
        page.wait_for_function(
            "async () => (await navigator.serviceWorker?.getRegistration())?.active?.state === 'activated'",
            timeout=READY_TIMEOUT_MS,
            polling=200,
        )
        requests, sent = wire.requests, wire.bytes
        page.close()
        page = context.new_page()
        throttled(page)
        warm = visit(page, base)
        page.close()
        page = context.new_page()  # the visit after: the browser has compiled the scripts twice
        throttled(page)
        again = visit(page, base)
        return {"first_ms": first, "warm_ms": warm, "again_ms": again, "requests": requests, "bytes": sent}
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = {"SOLITAIRE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/pageload.db"}
        with started_server(settings) as (base, _pid), sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            try:
                started = time.monotonic()
                runs = [one_run(browser, base) for _ in range(args.runs)]
            finally:
                browser.close()
    result = {
        "bench": "pageload",
        "profile": f"phone 390x844, CPU x{CPU_SLOWDOWN}, 1.6 Mbit/s, {LATENCY_MS} ms RTT",
        "runs": args.runs,
        "first_ready_ms": round(statistics.median(r["first_ms"] for r in runs)),
        "warm_ready_ms": round(statistics.median(r["warm_ms"] for r in runs)),
        "third_visit_ready_ms": round(statistics.median(r["again_ms"] for r in runs)),
        "first_requests": round(statistics.median(r["requests"] for r in runs)),
        "first_bytes": round(statistics.median(r["bytes"] for r in runs)),
        "seconds": round(time.monotonic() - started, 1),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
