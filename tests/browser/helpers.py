"""Page helpers for the browser tests: every wait is on page state, never on time."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import FloatRect, Locator, Page, expect

from engine import Action


def board(page: Page) -> Locator:
    return page.locator("#board")


def at(page: Page, loc: str) -> Locator:
    """The card (or empty slot) at a location such as ``heart:25``, ``col:3`` (top) or ``waste``."""
    return page.locator(f'#board [data-loc="{loc}"]:not([hidden])').last


def card(page: Page, text: str) -> Locator:
    """A Seahaven card by its text, such as ``7S``."""
    return page.locator(f'#board .card[data-card="{text}"]')


def wait_seq(page: Page, seq: int) -> None:
    expect(board(page)).to_have_attribute("data-seq", str(seq))


def seq(page: Page) -> int:
    return int(board(page).get_attribute("data-seq") or "-1")


def open_code(page: Page, base: str, code: str) -> str:
    """Deal a code through its share link; returns the new game's id."""
    page.goto(f"{base}/#code={code}")
    expect(board(page)).to_have_attribute("data-seq", "0")
    expect(page.locator("#info-code")).to_have_text(code)
    expect(page).to_have_url(re.compile(r"#game=g_"))
    return str(board(page).get_attribute("data-game-id"))


def set_setting(page: Page, name: str, on: bool) -> None:
    page.locator("#btn-settings").click()
    box = page.locator(f'#form-settings input[name="{name}"]')
    box.set_checked(on)
    page.locator('#form-settings button[value="close"]').click()
    expect(page.locator("#dlg-settings")).not_to_be_visible()


def column_cards(page: Page, n: int) -> list[str]:
    cards: Any = page.locator(f"#board .column:nth-child({n}) .card").evaluate_all(
        "els => els.map(e => e.dataset.card)"
    )
    return list(cards)


def play_hh_action(page: Page, action: Action) -> None:
    """Play one explicit Heart to Heart action with the touch model, as a player clicks."""
    before = seq(page)
    if action.kind == "draw":
        at(page, "stock").click()
        wait_seq(page, before + 1)
        return
    assert action.kind == "pair", action
    first, second = (str(a) for a in action.args)
    at(page, first).click()
    wait_seq(page, before + 1)
    expect(at(page, first)).to_have_class(re.compile(r"\bselected\b"))
    at(page, second).click()
    wait_seq(page, before + 2)


def box(locator: Locator) -> FloatRect:
    rect = locator.bounding_box()
    assert rect is not None, f"{locator} is not visible"
    return rect


def drag(page: Page, source: Locator, target: Locator, steps: int = 12) -> None:
    """Drag with the mouse from the top strip of ``source`` to the middle of ``target``."""
    start = box(source)
    goal = box(target)
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + min(10, start["height"] / 4))
    page.mouse.down()
    page.mouse.move(goal["x"] + goal["width"] / 2, goal["y"] + goal["height"] / 2, steps=steps)
    page.mouse.up()
