"""Feedback and context in real Chromium: refusals worded in the player's language with cards in
words, the daily challenge's line (day, family, ranked or practice, countdown, rank), winnable
deals only, and sounds (off by default)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from engine import Game, parse_code
from engine.solver import solve
from tests.browser.conftest import PHONE
from tests.browser.helpers import at, board, box, open_code, seq, set_setting, wait_seq
from tests.browser.search import seahaven_scenario

pytestmark = pytest.mark.browser

WIRE_CARD = re.compile(r"\b(?:10|[2-9TJQKA])[SHDC]\b")
HU_SUITS = {"S": "pikk", "H": "kőr", "D": "káró", "C": "treff"}
HU_RANKS = dict(
    zip(
        "A23456789TJQK",
        [
            "ász",
            "kettes",
            "hármas",
            "négyes",
            "ötös",
            "hatos",
            "hetes",
            "nyolcas",
            "kilences",
            "tízes",
            "bubi",
            "dáma",
            "király",
        ],
        strict=True,
    )
)
HU_ONTO = dict(
    zip(
        "A23456789TJQK",
        [
            "ászra",
            "kettesre",
            "hármasra",
            "négyesre",
            "ötösre",
            "hatosra",
            "hetesre",
            "nyolcasra",
            "kilencesre",
            "tízesre",
            "bubira",
            "dámára",
            "királyra",
        ],
        strict=True,
    )
)


def test_a_refusal_speaks_hungarian_with_cards_in_words(hungarian: Page, site: str) -> None:
    s = seahaven_scenario()
    open_code(hungarian, site, s.code)
    set_setting(hungarian, "moveErrors", True)
    source, target = s.bad_drop
    game = Game.new(s.code)
    columns = game.view()["board"]["columns"]
    moving, onto = columns[int(source.split(":")[1]) - 1][-1], columns[int(target.split(":")[1]) - 1][-1]
    hungarian.evaluate(
        "a => window.solitaire.session.act(a)", {"type": "move", "from": source, "to": target, "count": 1}
    )
    toast = hungarian.locator("#toast-text")
    expected = (
        f"A {HU_SUITS[moving[1]]} {HU_RANKS[moving[0]]} nem tehető a {HU_SUITS[onto[1]]} {HU_ONTO[onto[0]]}"
    )
    expect(toast).to_contain_text(expected)
    assert not WIRE_CARD.search(toast.inner_text())
    # The refused card shakes (or flashes) even with move errors off.
    top = hungarian.locator(f'#board .card[data-card="{moving}"]')
    expect(top).to_have_class(re.compile(r"\brefused\b"))
    # A page change takes its errors away with it.
    hungarian.goto(f"{site}/#races")
    expect(hungarian.locator("#toast")).to_be_hidden()


def test_a_refusal_on_a_phone_is_short_and_clear_of_the_stock(browser: Browser, site: str) -> None:
    """On a phone (in Hungarian, whose refusals are long) a refusal takes the status line's place
    at the bottom, the whole width, in at most two lines: it covers neither the stock nor the
    board's buttons, and the status line under it is not seen saying the same again. The next
    game takes it away."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, locale="hu-HU")
    try:
        page = context.new_page()
        code = "HH1-N-AAAAAAM"
        open_code(page, site, code)
        set_setting(page, "moveErrors", True)
        at(page, "heart:1").click(position={"x": 12, "y": 6})  # a covered card: refused
        toast = page.locator("#toast")
        expect(toast).to_be_visible()
        shown = box(toast)
        for covered in (box(at(page, "stock")), box(page.locator("#infobar"))):
            apart = (
                shown["y"] >= covered["y"] + covered["height"]
                or covered["y"] >= shown["y"] + shown["height"]
                or shown["x"] >= covered["x"] + covered["width"]
                or covered["x"] >= shown["x"] + shown["width"]
            )
            assert apart, (shown, covered)
        line = box(page.locator("#status-line"))
        assert shown["y"] <= line["y"] and shown["y"] + shown["height"] >= line["y"] + line["height"] - 1
        assert shown["width"] >= PHONE["width"] - 16, shown
        text = page.locator("#toast-text")
        lines = text.evaluate("e => e.clientHeight / parseFloat(getComputedStyle(e).lineHeight)")
        assert lines <= 2.05, lines
        # A new game from the New game dialog: the last game's refusal goes with it.
        game_id = board(page).get_attribute("data-game-id")
        page.locator("#btn-new").click()
        page.locator("#new-random").click()
        expect(board(page)).not_to_have_attribute("data-game-id", str(game_id))
        expect(toast).to_be_hidden(timeout=1000)
    finally:
        context.close()


def test_an_unknown_game_is_a_human_error_on_its_own_page(hungarian: Page, site: str) -> None:
    hungarian.goto(f"{site}/#game=g_nosuchgame")
    toast = hungarian.locator("#toast-text")
    expect(toast).to_have_text("Ilyen játék nincs ezen a szerveren.")
    hungarian.goto(f"{site}/#leaderboards")
    expect(hungarian.locator("#toast")).to_be_hidden()


def test_the_daily_line_says_day_family_ranking_reset_and_rank(page: Page, site: str) -> None:
    page.goto(f"{site}/#daily=HH1-N")
    wait_seq(page, 0)
    line = page.locator("#daily-context")
    day = r"\w+ \d+, \d{4}"  # in the browser's English: December 1, 2026
    countdown = r"New dailies in (\d+:)?\d\d?:\d\d"  # hours only while an hour or more is left
    expect(line).to_have_text(
        re.compile(rf"^Daily challenge of {day} · Heart to Heart · Ranked attempt · {countdown} · ")
    )
    expect(line).to_have_attribute("data-ranked", "true")
    first = line.inner_text()
    expect(line).not_to_have_text(first, timeout=3000)  # the countdown runs
    page.locator("#btn-give-up").click()
    page.locator("#confirm-yes").click()
    expect(board(page)).to_have_attribute("data-status", "resigned")
    expect(line).to_contain_text("Your rank now: #1")
    page.goto(f"{site}/#daily=HH1-N")  # a second attempt is practice
    expect(line).to_contain_text("Practice: not ranked")
    expect(line).to_have_attribute("data-ranked", "false")
    page.goto(f"{site}/#code=SH1-C4-AAAAAJ2")  # not a daily: no line
    expect(line).to_be_hidden()


def test_winnable_deals_only(page: Page, site: str) -> None:
    page.goto(site)
    dialog = page.locator("#dlg-new")
    expect(dialog).to_be_visible()
    assert not dialog.locator("#new-winnable").is_checked()  # off by default
    dialog.locator("#new-winnable").check()
    dialog.locator("#new-random").click()
    wait_seq(page, 0)
    code = page.locator("#info-code").inner_text()
    assert solve(parse_code(code), 200_000).result == "won"
    page.locator("#btn-new").click()
    expect(dialog.locator("#new-winnable")).to_be_checked()  # remembered


def test_sounds_are_off_by_default_and_play_when_on(page: Page, site: str) -> None:
    s = seahaven_scenario()
    open_code(page, site, s.code)
    # The page's own instance of the module: joined into the first screen's file, under its
    # build's URL (server/edge/bundle.py), which exports what each of its modules exports.
    sound = "import(document.querySelector('script[src$=\"js/first.js\"]').src)"
    played = f"() => {sound}.then((m) => m.sounds.played.slice())"
    page.evaluate("a => window.solitaire.session.act(a)", {"type": "tap", "at": s.tap_at})
    wait_seq(page, 1)
    assert page.evaluate(played) == []
    set_setting(page, "sound", True)
    before = seq(page)
    page.evaluate("a => window.solitaire.session.act(a)", {"type": "undo"})
    wait_seq(page, before + 1)
    page.evaluate(
        "a => window.solitaire.session.act(a)", {"type": "move", "from": s.bad_drop[0], "to": s.bad_drop[1]}
    )
    page.wait_for_function(f"() => {sound}.then((m) => m.sounds.played.includes('error'))")
    assert page.evaluate(played) == ["move", "error"]
    # Made with Web Audio: the page loads no sound file.
    assert (
        page.evaluate(
            "performance.getEntriesByType('resource').filter(e => /\\.(mp3|ogg|wav)/.test(e.name)).length"
        )
        == 0
    )
