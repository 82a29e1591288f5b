"""Desktop and phone layouts: both games fit the screen, touch drags work on a phone, and the
screenshots in docs/screenshots/ (shown by the README) are taken from these pages
(``SOLITAIRE_UPDATE_SCREENSHOTS=1`` writes them there)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from engine import Game
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.helpers import (
    at,
    board,
    box,
    boxes,
    card,
    column_cards,
    open_code,
    wait_seq,
)
from tests.browser.search import hh_winning_deal, seahaven_scenario

pytestmark = pytest.mark.browser

DOC_SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where screenshots go: docs/screenshots/ with SOLITAIRE_UPDATE_SCREENSHOTS=1, else a temporary
    folder, so a test run never changes the repository."""
    return DOC_SHOTS if os.environ.get("SOLITAIRE_UPDATE_SCREENSHOTS") == "1" else tmp_path


LOCALES = {"hu": "hu-HU", "ro": "ro-RO"}


@pytest.fixture(params=["desktop", "phone", "desktop-hu", "phone-hu", "desktop-ro", "phone-ro"])
def device(request: pytest.FixtureRequest, browser: Browser) -> Iterator[tuple[str, BrowserContext]]:
    """A desktop or a phone, in English, Hungarian or Romanian; the name is the screenshot's
    suffix."""
    locale = LOCALES.get(request.param.rsplit("-", 1)[-1], "en-GB")
    if request.param.startswith("desktop"):
        context = browser.new_context(viewport=DESKTOP, locale=locale, reduced_motion="reduce")
    else:
        context = browser.new_context(
            viewport=PHONE,
            device_scale_factor=2,
            is_mobile=True,
            has_touch=True,
            locale=locale,
            reduced_motion="reduce",
        )
    yield request.param, context
    context.close()


def fits_the_screen(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    viewport = page.viewport_size
    assert viewport is not None and width <= viewport["width"]
    for rect in boxes(page.locator("#board .card:not([hidden])")):
        assert rect["x"] >= 0 and rect["x"] + rect["width"] <= viewport["width"] + 0.5
        assert rect["y"] + rect["height"] <= viewport["height"] + 0.5


def hearts_mid_game(page: Page, site: str) -> None:
    """Stop where the winning line shows the most placement help, a few pairs in."""
    code, line = hh_winning_deal()
    game, best, stop = Game.new(code), -1, 0
    for n, action in enumerate(line):
        framed = len(game.view()["hints"]["framed"])
        if 4 <= game.progress <= 14 and framed > best:
            best, stop = framed, n
        game = game.apply(action).game
    open_code(page, site, code)
    # Through the page's own session, as the clicks would send them (test_hearts_page clicks).
    page.evaluate(
        "async (actions) => { for (const a of actions) await window.solitaire.session.act(a); }",
        [action.to_json() for action in line[:stop]],
    )
    wait_seq(page, stop)
    expect(page.locator("#board .card.framed:not([hidden])").first).to_be_visible()


def seahaven_mid_game(page: Page, site: str) -> None:
    s = seahaven_scenario()
    open_code(page, site, s.code)
    page.locator('#board [data-loc="col:1"]').last.wait_for()
    for n, action in enumerate(
        [
            {"type": "move", "from": s.group.args[0], "to": s.group.args[1], "count": s.group.args[2]},
            {"type": "tap", "at": s.tap_at},
            {"type": "double_tap", "at": s.double_tap_at, "count": 1},
        ]
    ):
        # Through the page's own session, as a click or drag would send them.
        page.evaluate("action => window.solitaire.session.act(action)", action)
        wait_seq(page, n + 1)


def test_heart_to_heart_layout(device: tuple[str, BrowserContext], site: str, shots: Path) -> None:
    name, context = device
    page = context.new_page()
    hearts_mid_game(page, site)
    fits_the_screen(page)
    page.screenshot(path=str(shots / f"heart-to-heart-{name}.png"))


def test_seahaven_layout(device: tuple[str, BrowserContext], site: str, shots: Path) -> None:
    name, context = device
    page = context.new_page()
    seahaven_mid_game(page, site)
    fits_the_screen(page)
    page.screenshot(path=str(shots / f"seahaven-{name}.png"))


def touch_drag(page: Page, start: tuple[float, float], end: tuple[float, float], steps: int = 10) -> None:
    """A finger drag, sent as real touch events through the DevTools protocol."""
    cdp = page.context.new_cdp_session(page)

    def touch(kind: str, x: float, y: float) -> None:
        points = [] if kind == "touchEnd" else [{"x": x, "y": y, "id": 1}]
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    touch("touchStart", *start)
    for i in range(1, steps + 1):
        x = start[0] + (end[0] - start[0]) * i / steps
        y = start[1] + (end[1] - start[1]) * i / steps
        touch("touchMove", x, y)
    touch("touchEnd", *end)
    cdp.detach()


def test_touch_drag_and_tap_on_a_phone(browser: Browser, site: str) -> None:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        s = seahaven_scenario()
        open_code(page, site, s.code)
        src, dst, count = str(s.group.args[0]), str(s.group.args[1]), int(s.group.args[2])
        moved = column_cards(page, int(src.split(":")[1]))[-count:]
        head = box(card(page, moved[0]))
        target = box(page.locator("#board .column").nth(int(dst.split(":")[1]) - 1))
        touch_drag(
            page,
            (head["x"] + head["width"] / 2, head["y"] + 4),
            (target["x"] + target["width"] / 2, target["y"] + target["height"] / 2),
        )
        wait_seq(page, 1)
        for text in moved:
            expect(card(page, text)).to_have_attribute("data-loc", dst)
        # A tap with a finger sends a card to its foundation.
        top = column_cards(page, int(s.tap_at.split(":")[1]))[-1]
        card(page, top).tap()
        wait_seq(page, 2)
        expect(card(page, top)).to_have_attribute("data-loc", re.compile(r"^found:"))
        at(page, "col:1").wait_for()
        expect(board(page)).to_have_attribute("data-status", "playing")
    finally:
        context.close()


def test_seahaven_fills_a_phone_in_portrait(browser: Browser, site: str) -> None:
    """Two rows of five columns: cards almost twice as wide as ten columns across would allow,
    the board reaching down the screen, and a growing column's overlap tightening to stay on it."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        s = seahaven_scenario()
        open_code(page, site, s.code)
        at(page, "col:1").wait_for()
        width = box(page.locator("#board .column .card").first)["width"]
        assert width >= 55, f"cards are {width} px wide"  # ten across: about 35 px
        lowest = max(rect["y"] + rect["height"] for rect in boxes(page.locator("#board .column .card")))
        assert lowest > PHONE["height"] * 0.75
        dst = str(s.group.args[1])
        column = page.locator("#board .column").nth(int(dst.split(":")[1]) - 1)
        fan = float(column.evaluate("el => parseFloat(el.style.getPropertyValue('--fan'))"))
        page.evaluate(
            "a => window.solitaire.session.act(a)",
            {"type": "move", "from": s.group.args[0], "to": dst, "count": s.group.args[2]},
        )
        wait_seq(page, 1)
        tighter = float(column.evaluate("el => parseFloat(el.style.getPropertyValue('--fan'))"))
        assert tighter < fan
        fits_the_screen(page)
        # Touch targets: the buttons above the board are at least 44 px high.
        for button in page.locator(".nav .btn, .actions .btn:visible").all():
            assert box(button)["height"] >= 44, button
    finally:
        context.close()


def test_a_phone_held_sideways(browser: Browser, site: str) -> None:
    context = browser.new_context(viewport={"width": 844, "height": 390}, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        seahaven_mid_game(page, site)
        wait_seq(page, 3)
        fits_the_screen(page)
        hearts_page = context.new_page()
        open_code(hearts_page, site, "HH1-N-AAAAAC5")
        fits_the_screen(hearts_page)
    finally:
        context.close()


def test_tables_fit_a_360_px_screen(browser: Browser, site: str) -> None:
    """The leaderboard folds its columns into labelled lines: nothing is cut off on the right."""
    context = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        code = "HH1-N-AAAAAC5"
        open_code(page, site, code)
        page.evaluate("window.solitaire.session.resign()")
        expect(board(page)).to_have_attribute("data-status", "resigned")
        page.goto(f"{site}/#board={code}")
        row = page.locator("#board-table tbody tr.me")
        expect(row).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        for cell in row.locator("td").all():
            rect = box(cell)
            assert rect["x"] >= 0 and rect["x"] + rect["width"] <= 360, cell
        expect(row.locator("td").nth(2)).to_have_attribute("data-label", "Result")
    finally:
        context.close()


def test_seahaven_keeps_two_rows_on_a_phone_under_the_daily_line_and_a_banner(
    browser: Browser, site: str
) -> None:
    """A daily given up on a phone shows the daily line and a banner above the board (in
    Hungarian, whose daily line takes four lines): the board keeps its two rows of five columns
    and its cards their size."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, locale="hu-HU")
    try:
        page = context.new_page()
        open_code(page, site, seahaven_scenario().code)
        at(page, "col:1").wait_for()
        plain = box(page.locator("#board .column .card").first)["width"]
        page.goto(f"{site}/#daily=SH1-C4")
        expect(page.locator("#daily-context")).to_be_visible()
        page.locator("#btn-give-up").click()
        page.locator("#confirm-yes").click()
        expect(board(page)).to_have_attribute("data-status", "resigned")
        page.keyboard.press("Escape")  # the end dialog, if any
        expect(page.locator("#banner")).to_be_visible()
        expect(page.locator("#board .sh")).to_have_class(re.compile(r"\bportrait\b"))
        under_lines = box(page.locator("#board .column .card").first)["width"]
        assert abs(under_lines - plain) < 0.5, (plain, under_lines)
        fits_the_screen(page)
    finally:
        context.close()
