"""Browser fixtures: one headless Chromium for the browser tests (ended with them: the
sync API's event loop must not outlive them), a fresh context per test, and a real server
(uvicorn + SQLite) per module, on the wall clock that a test may move ahead (``clock``).

Chromium is Debian's (``/usr/bin/chromium``, or ``SOLITAIRE_CHROMIUM``); no browser is ever
downloaded. Without it the browser tests are skipped, unless ``SOLITAIRE_REQUIRE_BROWSER=1``.

Headless, that is the whole browser, which draws its own omnibox popup as a page of its own
(``chrome://omnibox-popup.top-chrome``) for every new window, so for every context: about a
second of processor each time, taken from the pages under test on a small machine, for a
popup nobody sees. :func:`launch` turns those features off (``BROWSER_UI_OFF``); the pages
tested are not concerned.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import psutil
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
from tests.browser.helpers import EXPECT_TIMEOUT_MS, strict_page
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
BROWSER_UI_OFF = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup"]  # the omnibox popup's page
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


def disabled_features() -> list[str]:
    """The ``--disable-features=…`` arguments of the Chromium browsers this process runs."""
    found = []
    for process in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            line = process.cmdline()
            if line and "chrom" in Path(line[0]).name and not any(a.startswith("--type=") for a in line):
                found += [a for a in line if a.startswith("--disable-features=")]
    return found


def launch(playwright: Playwright) -> Browser:
    """Chromium with Playwright's arguments, ``CHROMIUM_ARGS`` and ``BROWSER_UI_OFF`` too.

    Chromium reads only the last ``--disable-features``, and Playwright passes its own list
    (the features it needs off): a first launch reads that list, the second one passes it with
    ours added, in its place."""
    first = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    theirs = disabled_features()
    if len(theirs) != 1:  # not found: keep Playwright's list as it is
        return first
    first.close()
    features = [f for f in theirs[0].split("=", 1)[1].split(",") if f]
    ours = "--disable-features=" + ",".join([*features, *BROWSER_UI_OFF])
    browser = playwright.chromium.launch(
        executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, ours], ignore_default_args=[theirs[0]]
    )
    assert ours in disabled_features()
    return browser


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = launch(playwright)
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
    with strict_page(browser, viewport=DESKTOP, locale="hu-HU") as page:
        yield page
