"""The solver in the browser: a Seahaven position proven lost opens the dead-end notice (with
Undo and Give up), and a finished game shows its deal's solution as a list of moves to step
through, or says the deal cannot be won, or shows the server's refusal (a daily still running)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from engine import Game
from engine.solver import solve
from server.solutions import LOST_BUDGET, SOLUTION_BUDGET
from tests.browser.helpers import WsPlayer, board, open_code, wait_seq
from tests.browser.search import hh_winning_deal, seahaven_lost_line, seahaven_solution_deals

pytestmark = pytest.mark.browser

SUITS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def short(card: str) -> str:
    return ("10" if card[0] == "T" else card[0]) + SUITS[card[1]]


def place(loc: str) -> str:
    kind, _, n = loc.partition(":")
    return {"col": f"column {n}", "cell": f"cell {n}"}.get(kind, f"the {SUITS.get(n, '')} foundation")


SH_BOARD_JS = """() => {
  const root = document.querySelector('#solution-board');
  const cards = (sel) => [...root.querySelectorAll(sel)].map(e => [e.dataset.loc, e.dataset.card]);
  const column = (c) => [...c.querySelectorAll('.card')].map(e => e.dataset.card);
  return {
    step: Number(root.dataset.step),
    columns: [...root.querySelectorAll('.column')].map(column),
    cells: cards('.cells .card'),
    foundations: cards('.foundations .card'),
  };
}"""

HH_BOARD_JS = """() => {
  const root = document.querySelector('#solution-board');
  const heart = [...root.querySelectorAll('.heart .card')].filter(e => !e.hidden);
  return {
    step: Number(root.dataset.step),
    heart: heart.map(e => [e.dataset.loc, e.dataset.card, !e.classList.contains('covered')]),
    stock: root.querySelector('.pile-stock .count').textContent,
    waste: root.querySelector('.pile-waste .card').dataset.card || null,
  };
}"""


def seahaven_position(game: Game) -> dict[str, Any]:
    """What the solution board must show for an engine position."""
    view = game.view()["board"]
    return {
        "columns": view["columns"],
        "cells": [[f"cell:{i + 1}", c] for i, c in enumerate(view["cells"]) if c],
        "foundations": [[f"found:{s}", c] for s, c in view["foundations"].items() if c],
    }


def hearts_position(game: Game) -> dict[str, Any]:
    view = game.view()["board"]
    return {
        "heart": [[f"heart:{h['pos']}", h["card"], h["free"]] for h in view["heart"] if h["card"]],
        "stock": str(view["stock_count"]),
        "waste": view["waste_top"],
    }


def shown(page: Page, script: str, step: int) -> dict[str, Any]:
    """The solution board's position once it shows ``step`` (0: the deal)."""
    page.wait_for_function(f"() => document.querySelector('#solution-board').dataset.step === '{step}'")
    result: dict[str, Any] = page.evaluate(script)
    del result["step"]
    return result


def act(page: Page, action: dict[str, Any]) -> None:
    """An action through the page's own session (the same `act` a drag or a tap sends)."""
    page.evaluate("action => window.solitaire.session.act(action)", action)


def expected_seahaven_steps(code: str) -> list[str]:
    """The server's solution replayed with the engine: what each step of the list must say."""
    answer = solve(code, SOLUTION_BUDGET)
    assert answer.actions is not None
    game, texts = Game.new(code), []
    for action in answer.actions:
        outcome = game.apply(action)
        move = outcome.events[0]
        cards = list(move["cards"])
        what = (
            short(cards[0])
            if len(cards) == 1
            else f"{short(cards[0])}–{short(cards[-1])} ({len(cards)} cards)"
        )
        texts.append(f"Move {what} from {place(str(move['from']))} to {place(str(move['to']))}")
        game = outcome.game
    assert game.status == "won"
    return texts


def test_lost_position_opens_the_dead_end_notice(page: Page, site: str) -> None:
    code, move = seahaven_lost_line(budget=LOST_BUDGET)
    open_code(page, site, code)
    act(page, move.to_json())
    wait_seq(page, 1)
    # The verdict arrives on its own (a `status` push), after the move's own result.
    expect(board(page)).to_have_attribute("data-status", "lost")
    notice = "No winning line remains from here — undo or start a new game."
    expect(page.locator("#banner")).to_have_text(notice)
    expect(page.locator("#banner")).to_have_attribute("data-kind", "dead-end")
    expect(page.locator("#status-line")).to_have_text(notice)
    dialog = page.locator("#dlg-end")
    expect(dialog).to_be_visible()
    expect(dialog.locator("h2")).to_have_text("No winning line left")
    expect(dialog.locator("#end-text")).to_contain_text(notice)
    for name in ("Undo", "Give up", "Keep looking", "New game"):
        expect(dialog.get_by_role("button", name=name, exact=True)).to_be_visible()
    expect(dialog.get_by_role("button", name="Show a solution")).to_be_hidden()
    expect(page.locator("#btn-solution")).to_be_hidden()  # HH-25: nothing while the game is open

    # Undo goes back to the winnable deal: playing again, the notice goes away.
    dialog.get_by_role("button", name="Undo").click()
    wait_seq(page, 2)
    expect(board(page)).to_have_attribute("data-status", "playing")
    expect(page.locator("#banner")).to_be_hidden()
    expect(dialog).to_be_hidden()

    # The same move again is lost again; giving up from the notice ends the game, and then the
    # deal's solution may be seen.
    act(page, move.to_json())
    wait_seq(page, 3)
    expect(board(page)).to_have_attribute("data-status", "lost")
    dialog.get_by_role("button", name="Give up").click()
    expect(board(page)).to_have_attribute("data-status", "resigned")
    expect(page.locator("#banner")).to_have_text("This game was given up.")
    page.locator("#btn-solution").click()
    solution = page.locator("#dlg-solution")
    expect(solution).to_have_attribute("data-state", "won")
    expect(solution.locator("#solution-summary")).to_contain_text("This deal can be won")
    steps = expected_seahaven_steps(code)
    expect(solution.locator("#solution-steps li")).to_have_text(steps)


def test_step_through_a_solution_of_a_finished_game_opened_by_link(page: Page, site: str) -> None:
    won, _ = seahaven_solution_deals()
    owner = WsPlayer(site, "Finisher")
    try:
        game = owner.request("new_game", code=won)
        game_id = game["game"]["id"]
        # Still open: nobody may see the solution (HH-25).
        assert owner.request("solution", game_id=game_id)["code"] == "conflict"
        assert owner.request("resign", game_id=game_id)["type"] == "game"
    finally:
        owner.close()

    page.goto(f"{site}/#game={game_id}")
    expect(board(page)).to_have_attribute("data-role", "spectator")
    expect(board(page)).to_have_attribute("data-status", "resigned")
    page.locator("#btn-solution").click()
    dialog = page.locator("#dlg-solution")
    expect(dialog).to_be_visible()
    expect(dialog).to_have_attribute("data-state", "won")
    steps = expected_seahaven_steps(won)
    items = dialog.locator("#solution-steps li")
    expect(items).to_have_text(steps)
    current = dialog.locator('#solution-steps li[aria-current="step"]')
    expect(current).to_have_count(0)  # the deal, before the first move
    prev, nxt = dialog.get_by_role("button", name="Previous"), dialog.get_by_role("button", name="Next")
    expect(prev).to_be_disabled()

    # The board beside the list shows the position after the current move, as the engine has it.
    answer = solve(won, SOLUTION_BUDGET)
    assert answer.actions is not None
    positions = [Game.new(won)]
    for action in answer.actions:
        positions.append(positions[-1].apply(action).game)
    assert shown(page, SH_BOARD_JS, 0) == seahaven_position(positions[0])

    nxt.click()
    expect(current).to_have_text(steps[0])
    expect(dialog.locator("#solution-step")).to_contain_text(f"Move 1 of {len(steps)}")
    assert shown(page, SH_BOARD_JS, 1) == seahaven_position(positions[1])
    nxt.click()
    expect(current).to_have_text(steps[1])
    assert shown(page, SH_BOARD_JS, 2) == seahaven_position(positions[2])
    prev.click()
    expect(current).to_have_text(steps[0])
    assert shown(page, SH_BOARD_JS, 1) == seahaven_position(positions[1])
    expect(items.first).to_have_class(re.compile(r"\bcurrent\b"))
    # A click on a step goes to it; Play steps on by itself to the last move and stops there.
    items.nth(len(steps) - 3).click()
    expect(current).to_have_text(steps[-3])
    dialog.get_by_role("button", name="Play").click()
    expect(dialog.get_by_role("button", name="Pause")).to_be_visible()
    expect(current).to_have_text(steps[-1])
    assert shown(page, SH_BOARD_JS, len(steps)) == seahaven_position(positions[-1])
    assert positions[-1].status == "won"
    expect(dialog.get_by_role("button", name="Play")).to_be_visible()
    expect(nxt).to_be_disabled()
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()


def test_a_deal_that_cannot_be_won_says_so(page: Page, site: str) -> None:
    _, impossible = seahaven_solution_deals()
    open_code(page, site, impossible)
    expect(page.locator("#btn-solution")).to_be_hidden()
    page.evaluate("window.solitaire.session.resign()")
    expect(board(page)).to_have_attribute("data-status", "resigned")
    page.locator("#btn-solution").click()
    dialog = page.locator("#dlg-solution")
    expect(dialog).to_have_attribute("data-state", "impossible")
    expect(dialog.locator("#solution-summary")).to_contain_text("This deal cannot be won")
    expect(dialog.locator("#solution-walk")).to_be_hidden()


def test_a_running_daily_shows_the_servers_refusal(page: Page, site: str) -> None:
    page.goto(f"{site}/#daily=SH1-C4")
    expect(board(page)).to_have_attribute("data-seq", "0")
    page.evaluate("window.solitaire.session.resign()")
    expect(board(page)).to_have_attribute("data-status", "resigned")
    page.locator("#btn-solution").click()
    dialog = page.locator("#dlg-solution")
    expect(dialog).to_have_attribute("data-state", "refused")
    expect(dialog.locator("#solution-summary")).to_have_text(
        re.compile(r"daily challenge.*after its day ends")
    )


def test_the_win_screen_offers_a_solution(page: Page, site: str) -> None:
    code, line = hh_winning_deal()
    open_code(page, site, code)
    for n, action in enumerate(line):
        act(page, action.to_json())
        wait_seq(page, n + 1)
    expect(board(page)).to_have_attribute("data-status", "won")
    end = page.locator("#dlg-end")
    end.get_by_role("button", name="Show a solution").click()
    dialog = page.locator("#dlg-solution")
    expect(dialog).to_have_attribute("data-state", "won")
    answer = solve(code, SOLUTION_BUDGET)
    assert answer.actions is not None
    items = dialog.locator("#solution-steps li")
    expect(items).to_have_count(len(answer.actions))
    # Each step names its cards, replayed from the deal in the page.
    game = Game.new(code)
    for n, action in enumerate(answer.actions[:12]):
        outcome = game.apply(action)
        event = outcome.events[0]
        if event["kind"] == "draw":
            expect(items.nth(n)).to_have_text(f"Draw ({short(str(event['card']))} onto the waste)")
        elif event["kind"] == "pair":
            for half in event["cards"]:
                expect(items.nth(n)).to_contain_text(short(str(half["card"])))
        game = outcome.game
        items.nth(n).click()  # the board follows: heart cards (free or covered), stock, waste
        assert shown(page, HH_BOARD_JS, n + 1) == hearts_position(game)
    expect(page.locator("#btn-solution")).to_be_visible()


@pytest.mark.parametrize("code", ["HH1-N-AAAAAAM", "SH1-C4-AAAAAJ2", "SH1-C2-QWERTY2", "SH1-C1-AAAAAJ2"])
def test_the_page_deals_like_the_engine(page: Page, site: str, code: str) -> None:
    page.goto(f"{site}/#leaderboards")
    deal = page.evaluate("code => import('/js/solution.js').then(m => m.dealOf(code))", code)
    state: Any = Game.new(code).state
    if code.startswith("HH"):
        assert (deal["heart"], deal["stock"], deal["waste"]) == (
            list(state.heart),
            list(state.stock),
            list(state.waste),
        )
    else:
        assert deal["columns"] == [list(col) for col in state.columns]
        assert deal["cells"] == list(state.cells)
