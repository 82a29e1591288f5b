"""Browser fixtures: one headless Chromium for the browser tests (ended with them: the
sync API's event loop must not outlive them), a fresh context per test, and a real server
(uvicorn + SQLite) per module, on the wall clock that a test may move ahead (``clock``).

Chromium is Debian's (``/usr/bin/chromium``, or ``SOLITAIRE_CHROMIUM``); no browser is ever
downloaded. Without it the browser tests are skipped, unless ``SOLITAIRE_REQUIRE_BROWSER=1``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Playwright,
    ViewportSize,
    expect,
    sync_playwright,
)

from server.clock import wall_clock_ms
from server.config import Settings
from tests.browser.helpers import EXPECT_TIMEOUT_MS
from tests.support import ONE_ADDRESS, UNSCREENED, running_server

CHROMIUM = os.environ.get("SOLITAIRE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}

expect.set_options(timeout=EXPECT_TIMEOUT_MS)


def sqlite_settings(path: Path) -> Settings:
    return Settings(
        database_url=f"sqlite+aiosqlite:///{path}",
        secret="test-secret",
        limits=ONE_ADDRESS,
        screening=UNSCREENED,
    )


@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        if os.environ.get("SOLITAIRE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"Chromium is required but missing at {CHROMIUM}")
        pytest.skip(f"no Chromium at {CHROMIUM} (install Debian's chromium)")
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


class AheadClock:
    """The wall clock, which a test can move ahead: a race's countdown, say, is then over at
    once instead of being waited out (the server waits on its clock, not on real time)."""

    def __init__(self) -> None:
        self.ahead_ms = 0

    def __call__(self) -> int:
        return wall_clock_ms() + self.ahead_ms

    def skip(self, ms: int) -> None:
        self.ahead_ms += ms


@pytest.fixture(scope="module")
def clock() -> AheadClock:
    """The clock of the module's server (``site``)."""
    return AheadClock()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, clock: AheadClock) -> Iterator[str]:
    """A real server on a free port with its own SQLite database: its base URL."""
    path = tmp_path_factory.mktemp("browser-db") / "solitaire.db"
    with running_server(sqlite_settings(path), clock) as base:
        yield base


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context(viewport=DESKTOP)
    yield context
    context.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    """A page that fails the test on any uncaught script error."""
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    assert not errors, f"script errors in the page: {errors}"


@pytest.fixture
def hungarian(browser: Browser) -> Iterator[Page]:
    """A page of a browser set to Hungarian."""
    context = browser.new_context(viewport=DESKTOP, locale="hu-HU")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, errors
