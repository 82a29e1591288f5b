"""axe-core on every page of the client, in English, Hungarian and Romanian, at desktop and phone
sizes: no serious or critical finding. The rule comparing a control's label with its visible text
(label-content-name-mismatch, "label in name") runs too, although axe counts it experimental.

axe comes from tests/browser/vendor/ (see its README); it is injected as an init script, which the
page's Content Security Policy does not govern, so the pages are checked as served."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from tests.browser.conftest import PHONE
from tests.browser.helpers import board, open_code, strict_page, wait_attribute

pytestmark = pytest.mark.browser

AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
RUN_AXE = """async () => {
  const result = await axe.run(document, {
    resultTypes: ["violations"],
    rules: { "label-content-name-mismatch": { enabled: true } },
  });
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, count: v.nodes.length,
                   nodes: v.nodes.slice(0, 4).map((n) => n.target.join(" ") + " :: " + n.failureSummary) }));
}"""
SIZES: dict[str, ViewportSize] = {"desktop": {"width": 1366, "height": 768}, "phone": PHONE}
LOCALES = {"en": "en-GB", "hu": "hu-HU", "ro": "ro-RO"}


@pytest.fixture(params=[(lang, size) for lang in LOCALES for size in SIZES], ids=lambda p: f"{p[0]}-{p[1]}")
def checked(request: pytest.FixtureRequest, browser: Browser) -> Iterator[tuple[Page, str]]:
    lang, size = request.param
    phone = size == "phone"
    with strict_page(
        browser,
        init_script=AXE.read_text(),
        viewport=SIZES[size],
        locale=LOCALES[lang],
        is_mobile=phone,
        has_touch=phone,
        reduced_motion="reduce",
    ) as page:
        yield page, lang


def findings(page: Page, where: str) -> list[str]:
    found: list[dict[str, Any]] = page.evaluate(RUN_AXE)
    return [f"{where}: {v['count']} {v['impact']} {v['id']} ({v['help']}) {v['nodes']}" for v in found]


def test_no_serious_findings_on_any_page(checked: tuple[Page, str], site: str) -> None:
    page, lang = checked
    problems: list[str] = []
    # A fresh visit: the new game dialog over an empty board.
    page.goto(site)
    wait_attribute(page, "#conn", "data-state", "online")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    expect(page.locator("#dlg-new")).to_be_visible()
    problems += findings(page, "new game dialog")
    page.keyboard.press("Escape")

    # Both games mid-deal, with the information bar, the daily line and the buttons.
    open_code(page, site, "HH1-N-AAAAAC5")
    page.locator('#board [data-loc="heart:25"]').click()  # a selection: framed, dimmed, pressed
    expect(board(page)).to_have_attribute("data-seq", "1")
    problems += findings(page, "Heart to Heart")
    open_code(page, site, "SH1-C2-AAAAAJ2")
    problems += findings(page, "Seahaven Towers")

    for button, dialog in (
        ("#btn-settings", "#dlg-settings"),
        ("#btn-help", "#dlg-help"),
        ("#btn-give-up", "#dlg-confirm"),
        ("#btn-share", "#dlg-share"),
    ):
        page.locator(button).click()
        expect(page.locator(dialog)).to_be_visible()
        problems += findings(page, dialog)
        page.keyboard.press("Escape")
        expect(page.locator(dialog)).to_be_hidden()

    page.goto(f"{site}/#daily=HH1-N")
    expect(page.locator("#daily-context")).to_be_visible()
    problems += findings(page, "a daily challenge")
    page.locator("#btn-give-up").click()  # an entry of ours on the daily's board
    page.locator("#confirm-yes").click()
    expect(board(page)).to_have_attribute("data-status", "resigned")
    page.locator("#btn-solution").click()
    expect(page.locator("#dlg-solution")).to_have_attribute("data-state", "refused")
    problems += findings(page, "solution dialog")
    page.keyboard.press("Escape")
    game_id = board(page).get_attribute("data-game-id")
    page.goto(f"{site}/#replay={game_id}")
    expect(page.locator("#replay-step")).to_be_visible()
    problems += findings(page, "a replay")
    page.goto(f"{site}/#profile")
    expect(page.locator("#profile-title")).to_be_visible()
    problems += findings(page, "profile")
    page.goto(f"{site}/#leaderboards")
    expect(page.locator("#board-table tbody tr.me").first).to_be_visible()
    problems += findings(page, "leaderboards")
    page.goto(f"{site}/#races")
    expect(page.locator("#race-lobby")).to_be_visible()
    problems += findings(page, "races")
    page.locator("#race-lobby button[type=submit]").first.click()  # open a race: its own page
    expect(page.locator("#race-status")).to_be_visible()
    problems += findings(page, "a race")
    assert not problems, "\n".join(problem[:160] for problem in problems)
    # The check itself works: a button without a name is a critical finding.
    page.evaluate("document.body.append(Object.assign(document.createElement('button'), {id: 'nameless'}))")
    assert any("button-name" in problem for problem in findings(page, "a broken page"))


def test_the_vendored_axe_is_the_locked_version(browser: Browser) -> None:
    """vendor/axe.min.js is the axe-core that tests/browser/package-lock.json names: its banner,
    its own axe.version, and its SHA-256 as the package's sri-history.json gives it."""
    here = Path(__file__).resolve().parent
    lock = json.loads((here / "package-lock.json").read_text(encoding="utf-8"))
    wanted = json.loads((here / "package.json").read_text(encoding="utf-8"))["devDependencies"]["axe-core"]
    locked = lock["packages"]["node_modules/axe-core"]["version"]
    assert locked == wanted and lock["packages"][""]["devDependencies"]["axe-core"] == wanted
    body = AXE.read_bytes()
    assert body.startswith(f"/*! axe v{locked}\n".encode())
    sri = json.loads((here / "vendor" / "axe-core-sri.json").read_text(encoding="utf-8"))
    digest = "sha256-" + base64.b64encode(hashlib.sha256(body).digest()).decode()
    assert sri[locked]["axe.min.js"] == digest
    major, minor = (int(part) for part in locked.split(".")[:2])
    assert (major, minor) >= (4, 10)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.add_script_tag(content=body.decode("utf-8"))
        assert page.evaluate("axe.version") == locked
        rules = page.evaluate("axe.getRules().map((r) => r.ruleId)")
        assert "label-content-name-mismatch" in rules
    finally:
        context.close()


@pytest.mark.parametrize("theme", ["ocean", "wine", "contrast"])
def test_every_theme_has_no_serious_findings(browser: Browser, site: str, theme: str) -> None:
    """The themes (js/appearance.js) keep the contrast axe asks for, on both boards."""
    context = browser.new_context(viewport=SIZES["desktop"], reduced_motion="reduce")
    context.add_init_script(path=str(AXE))
    settings = json.dumps({"theme": theme})
    context.add_init_script(f"localStorage.setItem('solitaire.settings', {json.dumps(settings)})")
    try:
        page = context.new_page()
        problems: list[str] = []
        for code in ("HH1-N-AAAAAC5", "SH1-C2-AAAAAJ2"):
            open_code(page, site, code)
            expect(page.locator("html")).to_have_attribute("data-theme", theme)
            problems += findings(page, f"{code} in {theme}")
        assert not problems, "\n".join(problem[:160] for problem in problems)
    finally:
        context.close()


@pytest.mark.parametrize("classic", [False, True], ids=["own-letters", "classic-letters"])
def test_the_boards_in_hungarian_with_either_letters(browser: Browser, site: str, classic: bool) -> None:
    """Á B D K on the cards (or A J Q K with the setting): each card's name still opens with
    what it shows (label in name)."""
    context = browser.new_context(viewport=PHONE, locale="hu-HU", is_mobile=True, has_touch=True)
    context.add_init_script(path=str(AXE))
    # The setting is in place before the page's own scripts read it (set after a first load,
    # it raced the boot's own reading of the settings).
    settings = json.dumps({"classicLetters": classic})
    context.add_init_script(f"localStorage.setItem('solitaire.settings', {json.dumps(settings)})")
    try:
        page = context.new_page()
        open_code(page, site, "HH1-N-AAAAAAM")
        queen = page.locator('#board .card[data-card="QH"] .corner').first
        expect(queen).to_have_text("Q♥" if classic else "D♥")
        problems = findings(page, "Heart to Heart")
        open_code(page, site, "SH1-C2-AAAAAJ2")
        expect(page.locator("#board .column .card").first).to_be_visible()
        problems += findings(page, "Seahaven Towers")
        assert problems == [], "\n".join(problems)
    finally:
        context.close()
