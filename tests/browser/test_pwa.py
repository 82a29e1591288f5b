"""Installable: the web app manifest and its icons, and a service worker that keeps the client's
own files, so a second visit opens from the cache even without the network (under the server's
Content Security Policy, unchanged)."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from server.edge import facts
from server.edge.bundle import FIRST
from server.edge.static import EARLY_INLINE, ClientBundle
from tests.browser.helpers import wait_seq

pytestmark = pytest.mark.browser

STATIC = Path(__file__).resolve().parents[2] / "server" / "static"


def fetch_file(url: str) -> tuple[int, str, bytes]:
    """A static file as the server sends it: status, content type, bytes."""
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, str(response.headers["content-type"]), response.read()


def test_the_manifest_and_its_icons_are_served(site: str) -> None:
    status, kind, body = fetch_file(f"{site}/manifest.webmanifest")
    assert status == 200 and kind.startswith("application/manifest+json")
    manifest = json.loads(body)
    assert manifest["display"] == "standalone" and manifest["start_url"] == "./"
    sizes = {icon["sizes"] for icon in manifest["icons"]}
    assert {"192x192", "512x512"} <= sizes
    assert any(icon.get("purpose") == "maskable" for icon in manifest["icons"])
    for icon in manifest["icons"]:
        status, kind, data = fetch_file(f"{site}/{icon['src']}")
        assert status == 200 and kind.startswith(icon["type"]), icon
        if icon["type"] == "image/png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
            width = int.from_bytes(data[16:20], "big")
            assert f"{width}x{width}" == icon["sizes"]


def test_the_service_worker_lists_every_client_file(site: str) -> None:
    """A file missing from sw.js's list would not open offline; a listed file that is gone
    would make its install fail. The server lists the build's files (under their build URL)."""
    _, _, body = fetch_file(f"{site}/sw.js")
    listed = set(re.findall(r'^\s+"([^"]+)",$', body.decode(), re.M))
    build = {name for name in listed if name.startswith("a/")}
    (prefix,) = {"/".join(name.split("/")[:2]) + "/" for name in build}
    bundled = {name.removeprefix(prefix) for name in build}
    files = {
        str(path.relative_to(STATIC)) for path in STATIC.rglob("*") if path.is_file() and path.name != "sw.js"
    }
    # The server writes two files (the facts, the first screen's modules joined), no longer
    # serves the modules it joined, and writes the early socket's script into the page itself.
    built = ClientBundle(STATIC, facts.generated())
    written = {facts.PATH.removeprefix("/"), FIRST}
    assert listed - build - {"./"} | bundled == (files | written) - set(built.members) - {EARLY_INLINE}
    for name in build:
        assert fetch_file(f"{site}/{name}")[0] == 200


def test_a_second_visit_opens_from_the_cache_offline(context: BrowserContext, page: Page, site: str) -> None:
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(site)
    expect(page.locator("#dlg-new")).to_be_visible()
    page.wait_for_function("navigator.serviceWorker.ready.then(r => !!r.active)", timeout=15_000, polling=100)
    page.reload()  # now controlled by the worker
    page.wait_for_function("!!navigator.serviceWorker.controller", timeout=15_000, polling=100)
    page.locator("#new-random").click()
    wait_seq(page, 0)

    context.set_offline(True)
    try:
        page.reload()
        expect(page.locator("#btn-help")).to_have_text("Help", use_inner_text=True)  # the page, its catalog
        expect(page.locator("#conn")).not_to_have_text("Online")  # but play needs the server
        # The pages loaded after the first screen are kept too: a leaderboard's page opens.
        page.evaluate("location.hash = 'leaderboards'")
        expect(page.locator("#boards-title")).to_have_text("Leaderboards")
        expect(page.locator("#view-boards")).to_be_visible()
    finally:
        context.set_offline(False)
    expect(page.locator("#conn")).to_have_text("Online")
    assert violations == []
