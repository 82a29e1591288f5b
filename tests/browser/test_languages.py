"""The client's three languages in real Chromium: the browser's language is followed, a picked
language is remembered and wins over the browser's, and <html lang> follows."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import DESKTOP
from tests.browser.helpers import at, open_code

pytestmark = pytest.mark.browser


def test_the_browser_language_is_followed(hungarian: Page, site: str) -> None:
    hungarian.goto(site)
    expect(hungarian.locator("html")).to_have_attribute("lang", "hu")
    expect(hungarian.locator("#btn-settings")).to_have_text("Beállítások", use_inner_text=True)
    expect(hungarian.locator("#dlg-new-title")).to_have_text("Új játék")
    expect(hungarian.locator("#conn")).to_have_text("Online")


def test_a_picked_language_is_remembered(hungarian: Page, site: str) -> None:
    hungarian.goto(site)
    expect(hungarian.locator("#dlg-new")).to_be_visible()
    hungarian.keyboard.press("Escape")
    hungarian.locator("#btn-settings").click()
    hungarian.locator("#lang-select").select_option("ro")
    expect(hungarian.locator("html")).to_have_attribute("lang", "ro")
    expect(hungarian.locator("#dlg-settings-title")).to_have_text("Setări")
    hungarian.reload()
    expect(hungarian.locator("html")).to_have_attribute("lang", "ro")
    expect(hungarian.locator("#btn-help")).to_have_text("Ajutor", use_inner_text=True)


def test_english_for_a_language_the_client_does_not_speak(browser: Browser, site: str) -> None:
    context = browser.new_context(viewport=DESKTOP, locale="de-DE")
    try:
        page = context.new_page()
        page.goto(site)
        expect(page.locator("#btn-help")).to_have_text("Help", use_inner_text=True)
        expect(page.locator("html")).to_have_attribute("lang", "en")
    finally:
        context.close()


def test_switching_mid_game_translates_the_board(page: Page, site: str) -> None:
    open_code(page, site, "HH1-N-AAAAAC5")
    expect(at(page, "stock")).to_have_attribute("aria-label", "Stock, 26 cards: draw")
    page.locator("#btn-settings").click()
    page.locator("#lang-select").select_option("hu")
    page.keyboard.press("Escape")
    expect(at(page, "stock")).to_have_attribute("aria-label", "Húzópakli, 26 lap: húzás")
    expect(page.locator(".heart")).to_have_attribute("aria-label", "A szív")
    expect(page.locator("#infobar dt").first).to_have_text("Idő")
    at(page, "stock").click()  # still playable, in the new language
    expect(page.locator("#status-line")).to_contain_text("Húzott lap: kőr")


def test_the_rules_of_the_game_on_screen_in_hungarian(hungarian: Page, site: str) -> None:
    open_code(hungarian, site, "SH1-C4-AAAAAJ2")
    hungarian.keyboard.press("?")
    dialog = hungarian.locator("#dlg-help")
    expect(dialog.locator("h2")).to_have_text("Játékszabályok")
    seahaven = dialog.locator('[data-help-page="SH"]')
    expect(seahaven).to_be_visible()  # the game on screen first
    expect(seahaven).to_contain_text("Üres oszlopba csak király kerülhet")
    dialog.locator('[data-help="HH"]').click()
    expect(dialog.locator('[data-help-page="HH"]')).to_contain_text("Azonos értékű lappárokat kell levenni")
    expect(seahaven).to_be_hidden()
    expect(dialog.locator('[data-help="HH"]')).to_have_attribute("aria-pressed", "true")
