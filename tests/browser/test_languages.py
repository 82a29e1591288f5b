"""The client's three languages in real Chromium: the browser's language is followed, a picked
language is remembered and wins over the browser's, and <html lang> follows."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, FloatRect, Page, expect

from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.helpers import WsPlayer, at, box, boxes, open_code, set_setting
from tests.browser.search import hh_winning_deal

pytestmark = pytest.mark.browser

STATIC = Path(__file__).resolve().parents[2] / "server" / "static"


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


LONG_NAME = "MMMMWWWWMMMMWWWWMMMMWWWW"  # 24 characters, the most a name may have, wide ones, no space
RAW_FAMILY = re.compile(r"\b(?:HH|SH)1-(?:N|C\d)\b")


def catalog(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    return data


@dataclass(frozen=True)
class LongNamed:
    """A player with the longest name there may be: a win, a Seahaven game given up, a game
    being played and a race waiting for racers."""

    id: str
    won: str
    live: str
    race: str


@pytest.fixture(scope="module")
def long_named(site: str) -> LongNamed:
    code, line = hh_winning_deal()
    player = WsPlayer(site, LONG_NAME)
    try:
        won = player.request("new_game", code=code)["game"]["id"]
        assert player.play(won, line)["status"] == "won"
        given_up = player.request("new_game", game="SH", variant="C2")["game"]["id"]
        assert player.request("resign", game_id=given_up)["type"] == "game"
        live = player.request("new_game", game="SH", variant="C4")["game"]["id"]
        race = player.request("race_open", code=code)["race"]["id"]
        return LongNamed(player.id, won, live, race)
    finally:
        player.close()


def phone_page(browser: Browser, locale: str) -> tuple[BrowserContext, Page]:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, locale=locale)
    return context, context.new_page()


# The texts of the page that run past the screen's right edge (each text node's box, not only
# its element's: a text overflowing a box that keeps its width is cut or scrolls, unseen).
TEXTS_PAST_THE_EDGE = """() => {
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!node.textContent.trim() || !parent) continue;
    if (parent.closest("[hidden], thead, .sr-only, .offscreen, svg")) continue;
    if (!parent.getClientRects().length) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const rect of range.getClientRects()) {
      if (rect.width && rect.right > innerWidth + 0.5) found.push(`${parent.tagName}: ${node.textContent}`);
    }
  }
  return found;
}"""


def within(rect: FloatRect, frame: FloatRect) -> bool:
    return (
        rect["x"] >= frame["x"] - 0.5
        and rect["y"] >= frame["y"] - 0.5
        and rect["x"] + rect["width"] <= frame["x"] + frame["width"] + 0.5
        and rect["y"] + rect["height"] <= frame["y"] + frame["height"] + 0.5
    )


def apart(a: FloatRect, b: FloatRect) -> bool:
    return (
        a["x"] + a["width"] <= b["x"] + 0.5
        or b["x"] + b["width"] <= a["x"] + 0.5
        or a["y"] + a["height"] <= b["y"] + 0.5
        or b["y"] + b["height"] <= a["y"] + 0.5
    )


@pytest.mark.parametrize("locale", ["hu-HU", "ro-RO"])
def test_a_days_board_offers_its_daily_in_the_pages_language(
    browser: Browser, site: str, locale: str
) -> None:
    context, page = phone_page(browser, locale)
    try:
        day = page.request.get(f"{site}/api/daily").json()["day"]
        page.goto(f"{site}/#board={day}/HH1-N")
        play = page.locator('#view-boards a[href="#daily=HH1-N"]')
        expect(play).to_have_text(catalog(locale[:2])["boards.play_daily"])
    finally:
        context.close()


@pytest.mark.parametrize("locale", ["hu-HU", "ro-RO"])
def test_the_charts_name_variants_in_words_and_fit_a_phone(
    browser: Browser, site: str, long_named: LongNamed, locale: str
) -> None:
    words = catalog(locale[:2])
    context, page = phone_page(browser, locale)
    try:
        page.goto(f"{site}/#profile={long_named.id}")
        bars = page.locator("#chart-rate svg g.bar-row")
        expect(bars).to_have_count(4)
        expect(page.locator('#chart-rate g[data-key="SH1-C2"] .label')).to_have_text(
            words["home.variant.SH1-C2"]
        )
        expect(page.locator("#chart-moves svg g.series")).to_have_count(1)
        for chart in ("#chart-rate svg", "#chart-moves svg"):
            texts = page.locator(f"{chart} text").all_text_contents()
            assert not [text for text in texts if RAW_FAMILY.search(text)], texts
            frame = box(page.locator(chart))
            placed = boxes(page.locator(f"{chart} text"))
            assert all(within(rect, frame) for rect in placed), (chart, frame, placed)
            for n, a in enumerate(placed):  # and no text over another
                assert all(apart(a, b) for b in placed[n + 1 :]), (chart, a, placed)
            assert frame["x"] + frame["width"] <= PHONE["width"]
    finally:
        context.close()


def test_a_long_name_without_a_space_stays_on_a_phone(
    browser: Browser, site: str, long_named: LongNamed
) -> None:
    context, page = phone_page(browser, "hu-HU")
    try:
        for where, ready in (
            (f"#profile={long_named.id}", "#profile-title"),
            (f"#replay={long_named.won}", "#replay-title"),
            (f"#race={long_named.race}", "#race-status"),
            (f"#game={long_named.live}", "#banner"),
        ):
            page.goto(f"{site}/{where}")
            expect(page.locator(ready)).to_be_visible()
            expect(page.locator("body")).to_contain_text(LONG_NAME)
            assert page.evaluate(TEXTS_PAST_THE_EDGE) == [], where
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], where
    finally:
        context.close()


@pytest.mark.parametrize(
    ("locale", "letters"),
    [
        ("hu-HU", {"AH": "Á", "KH": "K", "QH": "D", "JH": "B"}),
        ("ro-RO", {"AH": "A", "KH": "R", "QH": "D", "JH": "V"}),
    ],
)
def test_the_court_cards_show_the_languages_letters(
    browser: Browser, site: str, locale: str, letters: dict[str, str]
) -> None:
    """A queen is D in Hungarian (dáma), a jack V in Romanian (valet); the card's accessible name
    opens with what it shows. With the setting on, every language shows A, J, Q and K."""
    context = browser.new_context(viewport=DESKTOP, locale=locale)
    try:
        page = context.new_page()
        open_code(page, site, "HH1-N-AAAAAAM")  # every rank of hearts, twice
        for shown in (letters, {card: card[0] for card in letters}):
            for card, letter in shown.items():
                face = page.locator(f'#board .card[data-card="{card}"]').first
                expect(face.locator(".corner").first).to_have_text(f"{letter}♥")
                expect(face).to_have_attribute("aria-label", re.compile(f"^{letter}♥, "))
            if shown is letters:
                set_setting(page, "classicLetters", True)
    finally:
        context.close()
