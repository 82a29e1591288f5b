"""The solver in the browser: a Seahaven position proven lost opens the dead-end notice (with
Undo and Give up), and a finished game shows its deal's solution as a list of moves to step
through, or says the deal cannot be won, or shows the server's refusal (a daily still running)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from engine import Game
from engine.replay import steps_json
from engine.solver import solve
from server.features.solutions.model import LOST_BUDGET
from server.solver.deals import SOLUTION_BUDGET
from tests.browser.helpers import WsPlayer, act_all, board, open_code, wait_attribute, wait_seq
from tests.browser.search import hh_winning_deal, seahaven_lost_line, seahaven_solution_deals

pytestmark = pytest.mark.browser

SOLUTION_JS = Path(__file__).resolve().parents[2] / "server" / "static" / "js" / "solution.js"

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
    fingerprint: root.dataset.fingerprint,
    bar: document.querySelector('#solution-bar').textContent,
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
    fingerprint: root.dataset.fingerprint,
    bar: document.querySelector('#solution-bar').textContent,
    heart: heart.map(e => [e.dataset.loc, e.dataset.card, !e.classList.contains('covered')]),
    stock: root.querySelector('.pile-stock .count').textContent,
    waste: root.querySelector('.pile-waste .card').dataset.card || null,
  };
}"""


def engine_steps(code: str) -> list[dict[str, Any]]:
    """The engine's replay of the server's solution (engine.replay): what the dialog must show."""
    answer = solve(code, SOLUTION_BUDGET)
    assert answer.actions is not None
    return steps_json(code, answer.actions)


def bar(step: dict[str, Any]) -> str:
    """The information bar line of a step."""
    progress = f"{step['progress']} / {step['progress_total']}"
    text = f"Score {step['score']} · Moves {step['moves']} · Cleared {progress}"
    return text + " · won" if step["status"] == "won" else text


def seahaven_position(step: dict[str, Any]) -> dict[str, Any]:
    """What the solution board must show for an engine step."""
    view = step["view"]["board"]
    return {
        "fingerprint": step["view"]["fingerprint"],
        "bar": bar(step),
        "columns": view["columns"],
        "cells": [[f"cell:{i + 1}", c] for i, c in enumerate(view["cells"]) if c],
        "foundations": [[f"found:{s}", c] for s, c in view["foundations"].items() if c],
    }


def hearts_position(step: dict[str, Any]) -> dict[str, Any]:
    view = step["view"]["board"]
    return {
        "fingerprint": step["view"]["fingerprint"],
        "bar": bar(step),
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
    """What each step of the list must say: the moved cards, from the engine's events."""
    texts = []
    for step in engine_steps(code)[1:]:
        move = step["events"][0]
        cards = list(move["cards"])
        what = (
            short(cards[0])
            if len(cards) == 1
            else f"{short(cards[0])}–{short(cards[-1])} ({len(cards)} cards)"
        )
        texts.append(f"Move {what} from {place(str(move['from']))} to {place(str(move['to']))}")
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
    confirm = page.locator("#dlg-confirm")  # asked first, naming the game
    expect(confirm.locator("#confirm-text")).to_contain_text(code)
    confirm.get_by_role("button", name="Give up").click()
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
    wait_attribute(page, "#board", "data-role", "spectator")
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

    # The board beside the list shows the position after the current move, as the engine has it:
    # the server sent the engine's replay, and the page drew it.
    positions = engine_steps(won)
    served = page.request.get(f"{site}/api/games/{game_id}/solution").json()
    assert served["steps"] == positions
    assert positions[0]["view"]["board"] == Game.new(won).view()["board"]
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
    assert positions[-1]["status"] == "won"
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
    wait_seq(page, 0)
    page.evaluate("window.solitaire.session.resign()")
    expect(board(page)).to_have_attribute("data-status", "resigned")
    page.locator("#btn-solution").click()
    dialog = page.locator("#dlg-solution")
    expect(dialog).to_have_attribute("data-state", "refused")
    expect(dialog.locator("#solution-summary")).to_have_text(
        "A daily challenge's solution is shown after its day ends."
    )


def test_the_win_screen_offers_a_solution(page: Page, site: str) -> None:
    code, line = hh_winning_deal()
    open_code(page, site, code)
    act_all(page, line)
    expect(board(page)).to_have_attribute("data-status", "won")
    end = page.locator("#dlg-end")
    end.get_by_role("button", name="Show a solution").click()
    dialog = page.locator("#dlg-solution")
    expect(dialog).to_have_attribute("data-state", "won")
    positions = engine_steps(code)
    items = dialog.locator("#solution-steps li")
    expect(items).to_have_count(len(positions) - 1)
    # Each step names its cards (the engine's events) and the board follows the engine's
    # positions: heart cards (free or covered), stock count, waste top, information bar.
    assert shown(page, HH_BOARD_JS, 0) == hearts_position(positions[0])
    for n, step in enumerate(positions[1:13]):
        event = step["events"][0]
        if event["kind"] == "draw":
            expect(items.nth(n)).to_have_text(f"Draw ({short(str(event['card']))} onto the waste)")
        elif event["kind"] == "pair":
            for half in event["cards"]:
                expect(items.nth(n)).to_contain_text(short(str(half["card"])))
        items.nth(n).click()
        assert shown(page, HH_BOARD_JS, n + 1) == hearts_position(step)
    items.last.click()
    assert shown(page, HH_BOARD_JS, len(positions) - 1) == hearts_position(positions[-1])
    assert positions[-1]["status"] == "won"
    expect(page.locator("#btn-solution")).to_be_visible()


def test_the_solution_dialog_holds_no_rules() -> None:
    """The browser draws, the engine decides: no random numbers, deal or move application."""
    source = SOLUTION_JS.read_text(encoding="utf-8")
    lowered = source.lower()
    for banned in ("splitmix", "0x9e3779b97f4a7c15", "0xbf58476d1ce4e5b9", "bigint", "shuffle"):
        assert banned not in lowered, banned
    for banned in ("dealOf", "viewOf", "describeSolution", "heartStep", "seahavenStep", "COVERED_BY"):
        assert banned not in source, banned
    for banned in (".splice(", ".shift(", ".pop(", ".push(", "GEOMETRY", "BASE32", '"A23456789TJQK"'):
        assert banned not in source, banned  # no piles moved, no layout, no deck
    assert "step.view.board" in source  # what it draws is the server's


def test_the_page_module_exports_no_deal(page: Page, site: str) -> None:
    page.goto(f"{site}/#leaderboards")
    names = page.evaluate("import('/js/solution.js').then(m => Object.keys(m).sort())")
    assert names == [
        "SolutionDialog",
        "describeStep",
        "markStep",
    ]  # a step's wording and its mark, shared with replays
