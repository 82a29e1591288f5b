"""The safe finish of Seahaven (``finishes``, ``hints.finish``): foundation moves alone win."""

from __future__ import annotations

from engine import Game
from engine.seahaven import RULES, finishes
from engine.solver import solve
from tests.engine.test_seahaven import board, game_at, tap


def test_cards_that_only_go_up_finish_in_any_order() -> None:
    """SH-6: QD lies on KD, the kings of spades and clubs wait in cells: each goes up in turn."""
    state = board("KD QD", "KS", cells=("KH", "KC", None, None), found=(12, 12, 11, 12))
    assert finishes(state) and RULES.hints(state)["finish"] is True
    game = game_at(state)
    while game.status == "playing":  # the client's finish: a tap on any tappable card
        assert game.hints()["finish"] is True
        game = game.apply(tap(game.hints()["tappable"][0])).game
    assert game.status == "won" and game.hints()["finish"] is False


def test_a_card_on_a_lower_card_of_its_suit_never_finishes() -> None:
    state = board("QD KD", "KS", cells=("KH", "KC", None, None), found=(12, 12, 11, 12))
    assert RULES.hints(state)["tappable"] == ["col:2", "cell:1", "cell:2"]
    assert not finishes(state) and RULES.hints(state)["finish"] is False


def test_two_suits_that_block_each_other_never_finish() -> None:
    """3H waits for 2H under KS, and KS for QS under 3H: no column is out of order alone."""
    hearts = " ".join(f"{r}H" for r in "KQJT987654")  # the king at the base, 4H on top
    state = board("QS 3H", "2H KS", hearts, found=(11, 1, 13, 13))
    assert not finishes(state)
    assert not finishes(board("QS 3H", "KS 2H", hearts, found=(10, 1, 13, 13)))  # JS is missing
    assert finishes(board("QS 3H", "KS 2H", hearts, found=(11, 1, 13, 13)))


def test_a_finish_is_a_win_the_solver_agrees_with() -> None:
    """Along a solved deal, the first position that finishes is won by taps alone."""
    code = "SH1-C4-AAAAAAA"
    answer = solve(code, 200_000)
    assert answer.result == "won" and answer.actions
    game, offered = Game.new(code), []
    for action in answer.actions:
        offered.append(game.hints()["finish"])
        game = game.apply(action).game
    first = offered.index(True)
    assert 0 < first < len(answer.actions) and all(offered[first:])  # once safe, safe to the end
    game = Game.replay(code, answer.actions[:first])
    while game.status == "playing":
        game = game.apply(tap(game.hints()["tappable"][0])).game
    assert game.status == "won"


def test_no_finish_is_offered_at_the_deal_of_a_fresh_game() -> None:
    assert Game.new("SH1-C4-AAAAAAA").hints()["finish"] is False
