"""Keyboard play without a pointer: focus is on the board once a deal is shown, and a Seahaven
move takes two key presses wherever the focus is (a key for the source column or cell, one for
the destination; docs/browser.md, "Keyboard"). The presses are counted, move by move, over the
first moves of a solver's winning line, and the board is compared with the engine's after each."""

from __future__ import annotations

import functools
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from engine import Action, Game
from engine.solver import solve
from tests.browser.helpers import board, column_cards, open_code, wait_seq
from tests.browser.search import codes

pytestmark = pytest.mark.browser

CELL_KEYS = "qwer"
MOST_PRESSES = 3  # for a typical Seahaven move
BUDGET = 50_000


@functools.cache
def won_line() -> tuple[str, tuple[Action, ...]]:
    """A C4 deal the solver wins, with its line."""
    for n, code in enumerate(codes("SH1-C4-", 5)):
        assert n < 200, "no winnable Seahaven deal found"
        answer = solve(code, BUDGET)
        if answer.result == "won" and answer.actions:
            return code, tuple(answer.actions)
    raise AssertionError("unreachable")


def place_key(loc: str) -> str:
    """The key that names a place: 1-9 and 0 the columns, Q W E R the cells, F a foundation."""
    if loc.startswith("col:"):
        return str(int(loc[4:]) % 10)
    if loc.startswith("cell:"):
        return CELL_KEYS[int(loc[5:]) - 1]
    assert loc.startswith("found"), loc
    return "f"


def keyed_count(game: Game, src: str, dst: str) -> int:
    """How many cards the page moves for a keyed column-to-column move (seahaven.js countFor)."""
    view = game.view()
    if not (src.startswith("col:") and dst.startswith("col:")):
        return 1
    columns = view["board"]["columns"]
    cards, dest = columns[int(src[4:]) - 1], columns[int(dst[4:]) - 1]
    run = max(1, int(view["hints"]["runs"].get(src, 0)))
    if not dest:
        limit = view["board"]["group_limit_to_empty"]
        return max(1, min(run, run if limit is None else int(limit)))
    ranks = "A23456789TJQK"
    top = dest[-1]
    for k in range(1, min(run, len(cards)) + 1):
        card = cards[-k]
        if card[1] == top[1] and ranks.index(card[0]) + 1 == ranks.index(top[0]):
            return k
    return 1


def keys_for(game: Game, action: Action) -> list[str] | None:
    """The presses that make a solver's move, or None when the keys choose another count."""
    if action.kind == "tap":
        return [place_key(str(action.args[0])), "f"]
    if action.kind != "move":
        return None
    src, dst, count = str(action.args[0]), str(action.args[1]), int(action.args[2])
    if keyed_count(game, src, dst) != count:
        return None
    return [place_key(src), place_key(dst)]


def shown(page: Page) -> dict[str, list[str]]:
    """The columns as the page shows them."""
    return {f"col:{n}": column_cards(page, n) for n in range(1, 11)}


class Presses:
    """page.keyboard.press, counted."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.count = 0

    def __call__(self, key: str) -> None:
        self.count += 1
        self.page.keyboard.press(key)


@pytest.fixture
def dealt(page: Page, site: str) -> Iterator[tuple[Page, str, tuple[Action, ...]]]:
    code, line = won_line()
    open_code(page, site, code)
    yield page, code, line


def test_focus_is_on_the_board_after_a_deal(dealt: tuple[Page, str, tuple[Action, ...]]) -> None:
    page, _, _ = dealt
    inside = "() => document.activeElement?.closest('#board [data-loc]') !== null"
    page.wait_for_function(inside, timeout=5_000)
    # A new deal from the dialog, by keyboard alone: N, then Enter on its first button.
    page.keyboard.press("n")
    expect(page.locator("#dlg-new")).to_be_visible()
    page.locator("#new-random").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#dlg-new")).to_be_hidden()
    page.wait_for_function(inside, timeout=5_000)


def test_seahaven_moves_take_two_presses(dealt: tuple[Page, str, tuple[Action, ...]]) -> None:
    page, code, line = dealt
    game = Game.new(code)
    press = Presses(page)
    played, per_move = 0, []
    for action in line[:15]:
        keys = keys_for(game, action)
        if keys is None:
            break
        before = press.count
        for key in keys:
            press(key)
        game = game.apply(action).game
        played += 1
        wait_seq(page, played)
        per_move.append(press.count - before)
        expected = {f"col:{n + 1}": list(cards) for n, cards in enumerate(game.view()["board"]["columns"])}
        assert shown(page) == expected, f"after {action}"
    assert played >= 5, f"only {played} moves of the line could be keyed"
    assert max(per_move) <= MOST_PRESSES
    assert per_move == [2] * played


def test_same_key_twice_escape_and_help(dealt: tuple[Page, str, tuple[Action, ...]]) -> None:
    page, code, _ = dealt
    game = Game.new(code)
    # Escape puts a picked card back; nothing is sent.
    page.keyboard.press("1")
    expect(page.locator("#board .card.picked")).to_have_count(1)
    page.keyboard.press("Escape")
    expect(page.locator("#board .card.picked")).to_have_count(0)
    assert board(page).get_attribute("data-seq") == "0"
    # The same key twice is a double tap: the server picks the place (as for a pointer).
    for n in range(1, 11):
        try:
            after = game.apply(Action("double_tap", (f"col:{n}", 1))).game
        except Exception:  # no place for that card: try the next column
            continue
        page.keyboard.press(str(n % 10))
        page.keyboard.press(str(n % 10))
        wait_seq(page, 1)
        expected = {f"col:{k + 1}": list(cards) for k, cards in enumerate(after.view()["board"]["columns"])}
        assert shown(page) == expected
        break
    else:
        pytest.fail("no column's card has a place")
    # The help's keys page names the place keys.
    page.keyboard.press("?")
    page.locator('#dlg-help [data-help="keys"]').click()
    expect(page.locator('#dlg-help [data-help-page="keys"]')).to_contain_text("Q W E R the cells")
