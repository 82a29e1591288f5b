"""Guards of the browser client against acting on the wrong game: a dialog belongs to the game
and the page that opened it and closes when either changes, a give-up names the game it
resigns, and Enter in the code field plays that code."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import board, open_code, play_hh_line, wait_attribute
from tests.browser.search import hh_stalemate_deal
from tests.support import http

pytestmark = pytest.mark.browser


def game_status(base: str, game_id: str) -> str:
    status, body = http("GET", f"{base}/api/games/{game_id}")
    assert status == 200, body
    return str(body["state"]["status"])


def test_a_dead_end_dialog_does_not_follow_back_to_the_daily(page: Page, site: str) -> None:
    page.goto(f"{site}/#daily=HH1-N")
    expect(page.locator("#info-code")).to_have_text("Heart to Heart daily")
    expect(page).to_have_url(re.compile(r"#game=g_"))
    daily = str(board(page).get_attribute("data-game-id"))
    code, line = hh_stalemate_deal()
    open_code(page, site, code)
    play_hh_line(page, line, {len(line) - 1})
    dialog = page.locator("#dlg-end")
    expect(dialog.locator("h2")).to_have_text("No more possible moves")
    page.go_back()  # to the untouched ranked daily
    wait_attribute(page, "#board", "data-game-id", daily)
    expect(dialog).to_be_hidden()
    expect(page.locator("#dlg-confirm")).to_be_hidden()
    expect(board(page)).to_have_attribute("data-status", "playing")
    expect(page.locator("#info-moves")).to_have_text("0")


def test_give_up_from_a_dead_end_asks_naming_the_game(page: Page, site: str) -> None:
    code, line = hh_stalemate_deal()
    game = open_code(page, site, code)
    play_hh_line(page, line, {len(line) - 1})
    page.locator("#dlg-end").get_by_role("button", name="Give up").click()
    confirm = page.locator("#dlg-confirm")
    expect(confirm).to_be_visible()
    expect(confirm.locator("#confirm-text")).to_contain_text(code)
    # Leaving the page answers no: nothing is given up.
    page.evaluate("location.hash = '#leaderboards'")
    expect(confirm).to_be_hidden()
    assert game_status(site, game) == "stalemate"
    page.go_back()
    wait_attribute(page, "#board", "data-game-id", game)
    expect(board(page)).to_have_attribute("data-status", "stalemate")
    page.locator("#btn-give-up").click()
    expect(confirm.locator("#confirm-text")).to_contain_text(code)
    confirm.get_by_role("button", name="Give up").click()
    expect(board(page)).to_have_attribute("data-status", "resigned")


def test_the_new_game_dialog_closes_over_a_game_dealt_from_a_link(page: Page, site: str) -> None:
    page.goto(site)  # a first visit: no game, the new game dialog offers one
    expect(page.locator("#dlg-new")).to_be_visible()
    page.evaluate("location.hash = '#code=HH1-N-AAAAAAM'")
    expect(page.locator("#info-code")).to_have_text("HH1-N-AAAAAAM")
    expect(page.locator("#dlg-new")).to_be_hidden()


def test_enter_in_the_code_field_plays_that_code(page: Page, site: str) -> None:
    page.goto(site)
    field = page.locator("#new-code")
    field.fill("SH1-C4-AAAAAJ2")
    field.press("Enter")
    expect(page.locator("#info-code")).to_have_text("SH1-C4-AAAAAJ2")
    expect(page.locator("#dlg-new")).to_be_hidden()
