"""Seahaven Towers in the browser: drag and drop (a group move), tap, double tap, an illegal
drop that snaps back with its reason, undo, the cells of each variant, and keyboard moves."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Page, expect

from engine import Action, Game
from engine.solver import solve
from server.features.solutions.model import LOST_BUDGET
from tests.browser.helpers import (
    at,
    board,
    box,
    card,
    column_cards,
    drag,
    open_code,
    set_setting,
    wait_seq,
)
from tests.browser.search import seahaven_scenario, seahaven_stuck_line

pytestmark = pytest.mark.browser


def col_number(loc: str) -> int:
    return int(loc.split(":")[1])


def column(page: Page, n: int) -> Locator:
    return page.locator("#board .column").nth(n - 1)


def test_cells_follow_the_variant(page: Page, site: str) -> None:
    open_code(page, site, "SH1-C1-AAAAAJ2")
    expect(page.locator("#board .cells .slot-wrap")).to_have_count(1)
    expect(page.locator("#board .foundations .slot-wrap")).to_have_count(4)
    expect(page.locator("#board .column")).to_have_count(10)
    assert column_cards(page, 2) == ["AH", "9S", "AC", "8S", "9D", "4H"]
    expect(card(page, "3C")).to_have_attribute("aria-label", "3♣, 3 of clubs, cell 1")
    open_code(page, site, "SH1-C2-AAAAAJ2")
    expect(page.locator("#board .cells .slot-wrap")).to_have_count(2)
    open_code(page, site, "SH1-C4-AAAAAJ2")
    expect(page.locator("#board .cells .slot-wrap")).to_have_count(4)
    expect(page.locator('#board [data-loc="cell:3"].slot')).to_have_attribute("aria-label", "Cell 3, free")


def test_drag_group_tap_double_tap_bad_drop_and_undo(page: Page, site: str) -> None:
    s = seahaven_scenario()
    game = Game.new(s.code)
    open_code(page, site, s.code)
    set_setting(page, "moveErrors", True)

    # A group move by dragging the run's first card onto the destination column.
    src, dst, count = str(s.group.args[0]), str(s.group.args[1]), int(s.group.args[2])
    moved = column_cards(page, col_number(src))[-count:]
    target_before = column_cards(page, col_number(dst))
    source, goal = box(card(page, moved[0])), box(column(page, col_number(dst)))
    page.mouse.move(source["x"] + source["width"] / 2, source["y"] + 5)
    page.mouse.down()
    page.mouse.move(source["x"] + source["width"] / 2 + 30, source["y"] + 40, steps=5)
    limit = game.view()["board"]["group_limit"]  # while dragging, the badge says SH-10's limit
    expect(page.locator(".ghost .ghost-badge")).to_contain_text(f"{count} cards: up to {limit} may move")
    expect(page.locator(".ghost .ghost-badge")).not_to_have_class(re.compile(r"\bover\b"))
    page.mouse.move(goal["x"] + goal["width"] / 2, goal["y"] + goal["height"] / 2, steps=8)
    page.mouse.up()
    wait_seq(page, 1)
    game = game.apply(s.group).game
    expect(page.locator("#info-moves")).to_have_text("1")
    assert column_cards(page, col_number(dst)) == [*target_before, *moved]
    assert column_cards(page, col_number(src)) == [c for c in game.state.columns[col_number(src) - 1]]

    # A single tap sends a top card to its foundation.
    tapped = column_cards(page, col_number(s.tap_at))[-1]
    card(page, tapped).click()
    wait_seq(page, 2)
    game = game.apply(Action("tap", (s.tap_at,))).game
    expect(page.locator(f'#board [data-loc="found:{tapped[1]}"].card')).to_have_attribute("data-card", tapped)
    expect(page.locator("#info-score")).to_have_text(str(game.score))

    # A double tap sends a card to the best place the rules find (here not a foundation).
    doubled = column_cards(page, col_number(s.double_tap_at))[-1]
    card(page, doubled).dblclick()
    wait_seq(page, 3)
    expect(card(page, doubled)).to_have_attribute("data-loc", s.double_tap_to)

    # An illegal drop snaps back and, with move errors on, says why.
    bad_src, bad_dst = s.bad_drop
    bad_card = column_cards(page, col_number(bad_src))[-1]
    drag(page, card(page, bad_card), page.locator("#board .column").nth(col_number(bad_dst) - 1))
    expect(page.locator("#toast")).to_be_visible()
    expect(page.locator("#toast")).to_have_text(re.compile(r"\S"))
    expect(page.locator(".ghost")).to_have_count(0)
    expect(card(page, bad_card)).to_have_attribute("data-loc", bad_src)
    expect(card(page, bad_card)).not_to_have_class(re.compile(r"\blifted\b"))
    wait_seq(page, 3)

    # Undo three times: back to the deal.
    for n in (4, 5, 6):
        page.locator("#btn-undo").click()
        wait_seq(page, n)
    expect(page.locator("#info-moves")).to_have_text("6")
    expect(page.locator("#btn-undo")).to_be_disabled()
    deal = Game.new(s.code).state
    for i in range(10):
        assert column_cards(page, i + 1) == list(deal.columns[i])


def test_double_tap_moves_a_run_with_its_count(page: Page, site: str) -> None:
    s = seahaven_scenario()
    open_code(page, site, s.code)
    src, count = str(s.group.args[0]), int(s.group.args[2])
    moved = column_cards(page, col_number(src))[-count:]
    outcome = Game.new(s.code).apply(Action("double_tap", (src, count)))
    to = str(outcome.events[0]["to"])
    card(page, moved[0]).dblclick(position={"x": 12, "y": 6})
    wait_seq(page, 1)
    for text in moved:
        expect(card(page, text)).to_have_attribute("data-loc", to)


def test_keyboard_play(page: Page, site: str) -> None:
    s = seahaven_scenario()
    open_code(page, site, s.code)
    # Enter on a top card taps it to its foundation.
    tapped = column_cards(page, col_number(s.tap_at))[-1]
    card(page, tapped).focus()
    page.keyboard.press("Enter")
    wait_seq(page, 1)
    expect(card(page, tapped)).to_have_attribute("data-loc", re.compile(r"^found:"))
    # M picks a run up, M on the destination column drops it there.
    src, dst, count = str(s.group.args[0]), str(s.group.args[1]), int(s.group.args[2])
    moved = column_cards(page, col_number(src))[-count:]
    card(page, moved[0]).focus()
    page.keyboard.press("m")
    expect(card(page, moved[-1])).to_have_class(re.compile(r"\bpicked\b"))
    at(page, dst).focus()
    page.keyboard.press("m")
    wait_seq(page, 2)
    for text in moved:
        expect(card(page, text)).to_have_attribute("data-loc", dst)
    # U undoes; the arrow keys move the focus between cards.
    page.keyboard.press("u")
    wait_seq(page, 3)
    expect(card(page, moved[0])).to_have_attribute("data-loc", src)
    card(page, moved[0]).focus()
    page.keyboard.press("ArrowRight")
    focused = page.evaluate("document.activeElement.dataset.loc")
    assert focused != src and str(focused).startswith(("col:", "cell:", "found:"))
    expect(board(page)).to_have_attribute("data-status", "playing")


def test_stuck_notice_offers_undo(page: Page, site: str) -> None:
    code, line = seahaven_stuck_line()
    open_code(page, site, code)
    for n, action in enumerate(line):
        # Set up through the page's own session (the same `act` a drag sends).
        page.evaluate("action => window.solitaire.session.act(action)", action.to_json())
        wait_seq(page, n + 1)
    expect(board(page)).to_have_attribute("data-status", "stuck")
    expect(page.locator("#banner")).to_contain_text("Stuck")
    dialog = page.locator("#dlg-end")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Undo").click()
    wait_seq(page, len(line) + 1)
    # Back one move: playing, unless the server's solver proves that position lost as well
    # (its answer is deterministic, so the test knows which).
    before = Game.replay(code, line[:-1])
    if solve(before, LOST_BUDGET).result == "impossible":
        expect(board(page)).to_have_attribute("data-status", "lost")
        expect(page.locator("#banner")).to_contain_text("No winning line remains")
    else:
        expect(board(page)).to_have_attribute("data-status", "playing")
        expect(page.locator("#banner")).to_be_hidden()
