"""engine.replay: every position of a line, as a client draws it, straight from the rules."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from engine import Action, Game, IllegalAction
from engine.replay import ReplayStep, steps, steps_json
from engine.solver import solve

HH_WON = "HH1-N-AAAAAAD"  # the solver wins it in a few nodes
SH_WON = "SH1-C4-AAAAAAA"
STEP_KEYS = {
    "index", "action", "points", "events", "status", "score", "moves", "progress",
    "progress_total", "view",
}  # fmt: skip


def solution(code: str) -> list[Action]:
    answer = solve(code)
    assert answer.result == "won" and answer.actions is not None
    return answer.actions


def a_line(code: str, length: int) -> list[Action]:
    """A few legal actions from the deal: each the first the rules offer."""
    game, line = Game.new(code), []
    for _ in range(length):
        action = game.legal_actions()[0]
        line.append(action)
        game = game.apply(action).game
    return line


def expected(code: str, actions: list[Action], index: int) -> dict[str, Any]:
    """Step ``index`` built independently: the game replayed up to it, and its last outcome."""
    before = Game.replay(code, actions[: index - 1]) if index else Game.new(code)
    outcome = before.apply(actions[index - 1]) if index else None
    game = outcome.game if outcome else before
    view = game.view()
    return {
        "index": index,
        "action": actions[index - 1].to_json() if index else None,
        "points": outcome.points if outcome else 0,
        "events": list(outcome.events) if outcome else [],
        "status": game.status,
        "score": game.score,
        "moves": game.moves,
        "progress": game.progress,
        "progress_total": view["progress_total"],
        "view": {"board": view["board"], "hints": view["hints"], "fingerprint": game.fingerprint()},
    }


@pytest.mark.parametrize("code", [HH_WON, SH_WON, "SH1-C2-AAAAAJ2", "SH1-C1-AAAAAAB"])
def test_each_step_is_the_engines_position(code: str) -> None:
    actions = solve(code, 20_000).actions or a_line(code, 5)
    found = steps_json(code, actions)
    assert len(found) == len(actions) + 1
    for index, step in enumerate(found):
        assert set(step) == STEP_KEYS
        assert step == expected(code, actions, index)
    assert json.loads(json.dumps(found)) == found  # JSON-ready as it is


def test_the_deal_comes_first() -> None:
    first = steps(SH_WON, [])
    assert first == [ReplayStep(0, Game.new(SH_WON))]
    step = first[0].to_json()
    assert (step["index"], step["action"], step["points"], step["events"]) == (0, None, 0, [])
    assert (step["score"], step["moves"], step["progress"], step["status"]) == (0, 0, 0, "playing")
    assert step["view"]["board"] == Game.new(SH_WON).view()["board"]


@pytest.mark.parametrize("code", [HH_WON, SH_WON])
def test_a_solution_ends_on_a_won_board(code: str) -> None:
    last = steps_json(code, solution(code))[-1]
    assert last["status"] == "won" and last["progress"] == last["progress_total"]
    board = last["view"]["board"]
    if code.startswith("HH"):
        assert all(slot["card"] is None for slot in board["heart"])
    else:
        assert board["foundations"] == {"S": "KS", "H": "KH", "D": "KD", "C": "KC"}
        assert not any(board["columns"]) and not any(board["cells"])


def test_heart_to_heart_steps_never_show_the_stock() -> None:
    for step in steps_json(HH_WON, solution(HH_WON)):
        board = step["view"]["board"]
        assert set(board) == {"heart", "stock_count", "waste_top", "waste_count", "selection"}
        # The only cards a step's view names are the heart's and the waste top: what a player sees.
        visible = [slot["card"] for slot in board["heart"] if slot["card"]] + [board["waste_top"]] * bool(
            board["waste_top"]
        )
        assert len(re.findall(r'"[A2-9TJQK]H"', json.dumps(step["view"]))) == len(visible)


def test_selections_and_undo_are_steps_too() -> None:
    line = [Action("touch", ("heart:25",)), Action("draw"), Action("undo")]
    found = steps_json(HH_WON, line)
    assert [s["events"][0]["kind"] for s in found[1:]] == ["select", "draw", "undo"]
    assert [s["moves"] for s in found] == [0, 0, 1, 2]  # a selection is not a move (HH-10)
    assert found[1]["view"]["board"]["selection"] == "heart:25"
    assert found[3]["view"]["board"] == found[0]["view"]["board"]  # undo clears the selection


def test_a_bad_log_is_refused() -> None:
    with pytest.raises(IllegalAction):
        steps(SH_WON, [Action("draw")])
