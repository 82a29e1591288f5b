"""Heart to Heart in the browser: the heart's geometry, the touch model, placement help,
move errors, the stalemate dialog and a whole deal played to a win (clicking a card for each
kind of move and the winning pair; the moves between go through the page's own session, as
those clicks send them)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from engine import Game
from tests.browser.helpers import (
    act_all,
    at,
    board,
    box,
    card_words,
    hh_shapes,
    open_code,
    play_hh_action,
    play_hh_line,
    seq,
    set_setting,
    wait_seq,
)
from tests.browser.search import hh_stalemate_deal, hh_winning_deal

pytestmark = pytest.mark.browser

SELECTED = re.compile(r"\bselected\b")
FRAMED = re.compile(r"\bframed\b")
DIMMED = re.compile(r"\bdimmed\b")


def test_heart_follows_the_deal_geometry(page: Page, site: str) -> None:
    open_code(page, site, "HH1-N-AAAAAAM")
    deal = Game.new("HH1-N-AAAAAAM").view()["board"]
    boxes = {}
    for slot in deal["heart"]:
        card = at(page, f"heart:{slot['pos']}")
        expect(card).to_have_attribute("data-card", slot["card"])
        boxes[slot["pos"]] = box(card)
    width = boxes[25]["width"]
    height = boxes[25]["height"]
    # Row 1's first card (x=0) and row 0's first (x=1): half a card apart, half a card lower.
    assert boxes[1]["x"] - boxes[5]["x"] == pytest.approx(width / 2, abs=1.5)
    assert boxes[5]["y"] - boxes[1]["y"] == pytest.approx(height / 2, abs=1.5)
    assert boxes[25]["y"] - boxes[1]["y"] == pytest.approx(3 * height, abs=2)
    # The tip is the only free card and it is drawn over the cards it covers.
    expect(at(page, "heart:25")).to_have_attribute("aria-label", "8♥, 8 of hearts, free")
    expect(at(page, "heart:1")).to_have_attribute("aria-label", "J♥, jack of hearts, covered")
    top = page.evaluate(
        "() => { const r = document.querySelector('[data-loc=\"heart:23\"]').getBoundingClientRect();"
        ' return document.elementFromPoint(r.right - 3, r.bottom - 3).closest("[data-loc]").dataset.loc; }'
    )
    assert top == "heart:25"
    expect(page.locator(".pile-stock .count")).to_have_text("26")
    expect(page.locator(".pile-waste .count")).to_have_text("1")


def test_share_gives_the_code_and_links(page: Page, context: BrowserContext, site: str) -> None:
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    game_id = open_code(page, site, "HH1-N-AAAAAAM")
    page.locator("#btn-share").click()
    dialog = page.locator("#dlg-share")
    expect(dialog.locator("#share-code")).to_have_value("HH1-N-AAAAAAM")
    expect(dialog.locator("#share-deal")).to_have_value(f"{site}/#code=HH1-N-AAAAAAM")
    expect(dialog.locator("#share-watch")).to_have_value(f"{site}/#game={game_id}")
    dialog.get_by_role("button", name="Copy code").click()
    expect(dialog.locator("#share-status")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == "HH1-N-AAAAAAM"
    dialog.get_by_role("button", name="Done").click()
    # The deal link deals the same cards again, as a new game.
    page.goto(str(dialog.locator("#share-deal").input_value()))
    expect(page).not_to_have_url(re.compile(game_id))
    expect(at(page, "heart:25")).to_have_attribute("data-card", "8H")


def test_touch_model_selection_help_and_move_errors(page: Page, site: str) -> None:
    code, line = hh_stalemate_deal()
    open_code(page, site, code)
    tip = at(page, "heart:25")
    tip.click()
    wait_seq(page, 1)
    expect(tip).to_have_class(SELECTED)
    expect(tip).to_have_attribute("aria-pressed", "true")
    expect(at(page, "heart:1")).to_have_class(DIMMED)
    tip.click()  # HH-15: touching it again deselects
    wait_seq(page, 2)
    expect(tip).not_to_have_class(SELECTED)
    expect(at(page, "heart:1")).not_to_have_class(DIMMED)

    # Move errors are off by default: a refused touch shows no text, but the card shakes.
    covered = at(page, "heart:1")
    covered_name = card_words(str(covered.get_attribute("data-card")))
    covered.click(position={"x": 20, "y": 6})
    expect(covered).to_have_class(re.compile(r"\brefused\b"))
    covered_text = f"The {covered_name} is covered: only a free card can be paired."
    expect(page.locator("#status-line")).to_have_text(covered_text)
    expect(page.locator("#toast")).to_be_hidden()
    set_setting(page, "moveErrors", True)
    covered.click(position={"x": 20, "y": 6})
    # Cards are named in words, never as wire codes.
    expect(page.locator("#toast-text")).to_have_text(covered_text)
    page.locator("#toast-close").click()  # errors can be dismissed
    expect(page.locator("#toast")).to_be_hidden()
    wait_seq(page, 2)

    # HH-16: touching a card of another rank selects it instead, and says why.
    deal = Game.new(code).view()["board"]
    assert deal["waste_top"][0] != deal["heart"][24]["card"][0], "the deal's tip and waste must differ"
    tip.click()
    wait_seq(page, 3)
    at(page, "waste").click()
    wait_seq(page, 4)
    tip_name, waste_name = card_words(deal["heart"][24]["card"]), card_words(deal["waste_top"])
    expect(page.locator("#toast-text")).to_have_text(
        f"The {tip_name} and the {waste_name} are not the same rank: a pair is two cards of one rank."
    )
    expect(at(page, "waste")).to_have_class(SELECTED)
    expect(tip).not_to_have_class(SELECTED)
    at(page, "waste").click()  # deselect again
    wait_seq(page, 5)

    # Placement help frames the cards that have a partner; turning it off removes the frames.
    game, upto = Game.new(code), 0
    while not game.view()["hints"]["framed"]:
        game = game.apply(line[upto]).game
        upto += 1
    act_all(page, line[:upto])
    hints = game.view()["hints"]["framed"]
    assert hints
    expect(at(page, hints[0])).to_have_class(FRAMED)
    set_setting(page, "placementHelp", False)
    expect(at(page, hints[0])).not_to_have_class(FRAMED)
    set_setting(page, "placementHelp", True)
    expect(at(page, hints[0])).to_have_class(FRAMED)


def test_stalemate_dialog_offers_undo_and_new_game(page: Page, site: str) -> None:
    code, line = hh_stalemate_deal()
    open_code(page, site, code)
    play_hh_line(page, line, {len(line) - 1})  # the last move, into the stalemate, clicked
    dialog = page.locator("#dlg-end")
    expect(dialog).to_be_visible()
    expect(dialog.locator("h2")).to_have_text("No more possible moves")
    expect(board(page)).to_have_attribute("data-status", "stalemate")
    expect(page.locator("#banner")).to_contain_text("No more possible moves")
    before = seq(page)
    dialog.get_by_role("button", name="Undo").click()
    wait_seq(page, before + 1)
    expect(board(page)).to_have_attribute("data-status", "playing")
    expect(dialog).to_be_hidden()
    # Redo the last pair: the dialog comes back, and "New game" opens the new game dialog.
    play_hh_action(page, line[-1])
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="New game").click()
    expect(page.locator("#dlg-new")).to_be_visible()


def test_play_a_deal_to_a_win(page: Page, site: str) -> None:
    code, line = hh_winning_deal()
    open_code(page, site, code)
    play_hh_line(page, line, hh_shapes(code, line) | {len(line) - 1})
    game = Game.new(code)
    for action in line:
        game = game.apply(action).game
    assert game.status == "won"
    expect(board(page)).to_have_attribute("data-status", "won")
    expect(page.locator("#info-score")).to_have_text("250")
    expect(page.locator("#info-moves")).to_have_text(str(game.moves))
    expect(page.locator("#info-progress")).to_have_text("25 / 25")
    dialog = page.locator("#dlg-end")
    expect(dialog).to_be_visible()
    expect(dialog.locator("h2")).to_have_text("You won!")
    expect(dialog.locator("#end-stats")).to_contain_text("250")
    expect(dialog.locator("#end-rank")).to_have_text(f"Rank #1 on the {code} leaderboard.")
    expect(page.locator("#board .heart .card:not([hidden])")).to_have_count(0)


def test_keyboard_play(page: Page, site: str) -> None:
    code, line = hh_winning_deal()
    open_code(page, site, code)
    game = Game.new(code)
    first_pair = next(n for n, a in enumerate(line) if a.kind == "pair")
    # D draws from the stock, wherever the focus is.
    page.locator("body").press("d")
    wait_seq(page, 1)
    for action in line[1:first_pair]:
        assert action.kind == "draw"
        page.keyboard.press("d")
    wait_seq(page, first_pair)
    for action in line[:first_pair]:
        game = game.apply(action).game
    # Enter on a focused card touches it: the pair is made with two key presses.
    a, b = (str(x) for x in line[first_pair].args)
    at(page, a).focus()
    page.keyboard.press("Enter")
    wait_seq(page, first_pair + 1)
    expect(at(page, a)).to_have_class(SELECTED)
    if b == "waste":
        page.keyboard.press("w")
        expect(at(page, "waste")).to_be_focused()
    else:
        at(page, b).focus()
    page.keyboard.press("Space")
    wait_seq(page, first_pair + 2)
    expect(page.locator("#info-progress")).to_have_text(f"{game.apply(line[first_pair]).game.progress} / 25")
    # U undoes the pair; arrow keys walk between cards by their place on screen.
    page.keyboard.press("u")
    wait_seq(page, first_pair + 3)
    expect(page.locator("#info-progress")).to_have_text(f"{game.progress} / 25")
    at(page, "heart:25").focus()
    page.keyboard.press("ArrowUp")
    focused = page.evaluate("document.activeElement.dataset.loc")
    assert focused in ("heart:23", "heart:24")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.dataset.loc") != focused
