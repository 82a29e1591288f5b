"""Help at the table (assist.js): a hint from the server's solver highlights a move and plays it,
is disabled with its reason in a ranked daily and absent from Heart to Heart; Redo plays an
undone move again until another move is made; Finish plays Seahaven's safe finish to the win."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from engine import Game
from engine.solver import solve
from tests.browser.helpers import act_all, board, open_code, wait_attribute, wait_seq
from tests.browser.search import hh_winning_deal

pytestmark = pytest.mark.browser

WON_SH = "SH1-C4-AAAAAAA"  # the solver wins it in a few hundred nodes


def solver_line(code: str) -> list[Any]:
    answer = solve(code, 200_000)
    assert answer.result == "won" and answer.actions
    return answer.actions


def shown_board(page: Page) -> Any:
    return page.evaluate("window.solitaire.session.state.board")


def test_a_hint_highlights_the_next_move_of_a_winning_line_and_plays_it(page: Page, site: str) -> None:
    open_code(page, site, WON_SH)
    line = solver_line(WON_SH)  # the server solves the same position with the same budget
    first, second = line[0].to_json(), line[1].to_json()
    page.locator("#btn-hint").click()
    wait_attribute(page, "#board", "data-hint", f"{first['from']}>{first['to']}")
    hinted = page.locator("#board .card.hinted")
    expect(hinted).to_have_count(1)
    expect(hinted).to_have_attribute("data-loc", str(first["from"]))
    expect(page.locator(f'#board .hint-target[data-loc="{first["to"]}"]')).to_have_count(1)
    expect(page.locator("#hint-text")).to_contain_text("Hint: ")
    page.locator("#btn-hint-play").click()
    wait_seq(page, 1)
    expect(page.locator("#board .card.hinted")).to_have_count(0)
    expect(page.locator("#hint-line")).to_be_hidden()
    page.keyboard.press("h")  # the key asks too, for the next position (kept on the server)
    wait_attribute(page, "#board", "data-hint", f"{second['from']}>{second['to']}")


def test_no_hint_in_a_ranked_daily_says_why_and_none_in_heart_to_heart(page: Page, site: str) -> None:
    page.goto(f"{site}/#daily=SH1-C4")
    wait_seq(page, 0)
    expect(page.locator("#btn-hint")).to_be_visible()
    expect(page.locator("#btn-hint")).to_be_disabled()
    expect(page.locator("#hint-line")).to_be_visible()
    reason = "No hints in a ranked daily challenge: it is played unaided."
    expect(page.locator("#hint-text")).to_have_text(reason)
    expect(page.locator("#btn-hint")).to_have_attribute("aria-describedby", "hint-text")
    code, _ = hh_winning_deal()
    open_code(page, site, code)
    expect(page.locator("#btn-hint")).to_be_hidden()
    expect(page.locator("#hint-line")).to_be_hidden()


def test_redo_plays_the_undone_moves_again_until_another_move(page: Page, site: str) -> None:
    open_code(page, site, WON_SH)
    line = solver_line(WON_SH)
    redo = page.locator("#btn-redo")
    expect(redo).to_be_disabled()
    act_all(page, line[:2])
    after_two = shown_board(page)
    page.locator("#btn-undo").click()
    wait_seq(page, 3)
    page.locator("#btn-undo").click()
    wait_seq(page, 4)
    expect(redo).to_be_enabled()
    page.keyboard.press("Control+y")  # the first undone move comes back first
    wait_seq(page, 5)
    redo.click()
    wait_seq(page, 6)
    assert shown_board(page) == after_two
    expect(redo).to_be_disabled()
    page.locator("#btn-undo").click()
    wait_seq(page, 7)
    page.keyboard.press("Shift+Control+Z")
    wait_seq(page, 8)
    assert shown_board(page) == after_two
    page.locator("#btn-undo").click()
    wait_seq(page, 9)
    expect(redo).to_be_enabled()
    act_all(page, [line[1]])  # any other move clears the redo list (here the same move, sent anew)
    expect(redo).to_be_disabled()


def test_finish_plays_the_safe_finish_to_the_win(page: Page, site: str) -> None:
    line = solver_line(WON_SH)
    game, first = Game.new(WON_SH), None
    for n, action in enumerate(line):
        if game.hints()["finish"]:
            first = n
            break
        game = game.apply(action).game
    assert first is not None and first < len(line)
    open_code(page, site, WON_SH)
    finish = page.locator("#btn-finish")
    act_all(page, line[: first - 1])
    expect(finish).to_be_hidden()
    act_all(page, line[first - 1 : first])
    expect(finish).to_be_visible()
    expect(finish).to_have_text("Finish")
    finish.click()
    expect(board(page)).to_have_attribute("data-status", "won", timeout=30_000)
    assert page.evaluate("window.solitaire.session.state.progress") == 52
