"""Seahaven Towers rules (docs/rules/seahaven-towers.md): one test per rule, citing SH-n."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from engine import Action, Game, IllegalAction, Refusal, Status
from engine.api import Step
from engine.codes import RANKS, SUITS
from engine.seahaven import RULES, State, group_limit, run_length
from engine.solver import solve

ALL_CARDS = [r + s for s in SUITS for r in RANKS]
CELL_FILL = ("9C", "TC", "JC", "QC")


def board(
    *columns: str, cells: tuple[str | None, ...] = (None,) * 4, found: tuple[int, ...] = (0,) * 4
) -> State:
    """A state from column strings (bottom first); missing columns are empty."""
    cols = [tuple(c.split()) for c in columns]
    cols += [()] * (10 - len(cols))
    return State(tuple(cols), tuple(cells), tuple(found))


def move(src: str, dst: str, count: int = 1) -> Action:
    return Action("move", (src, dst, count))


def tap(at: str) -> Action:
    return Action("tap", (at,))


def dtap(at: str, count: int = 1) -> Action:
    return Action("double_tap", (at, count))


def ok(state: State, action: Action) -> Step[State]:
    return RULES.apply(state, action)


def refused(state: State, action: Action, code: str) -> IllegalAction:
    with pytest.raises(IllegalAction) as info:
        RULES.apply(state, action)
    assert info.value.code == code, info.value.reason
    assert info.value.reason
    return info.value


def game_at(state: State, code: str = "SH1-C4-AAAAAAA") -> Game:
    """A Game whose rules state is a constructed position."""
    return replace(Game.new(code), state=state)


def fillers(n: int) -> list[str]:
    """Single-card columns that take part in no move of these tests."""
    return ["5D", "7D", "9D", "JD", "3D", "4S", "6S", "8S"][:n]


# ---------------------------------------------------------------- deal (SH-2, SH-14, SH-19)

VECTORS = {
    "SH1-C4-AAAAAAA": (
        "8C JS AD QS 9C | JD 7S 6S JH 7H | 9S 9D 4C 3C JC | 2C 8S TH 4H 6D | 2H QC 5H 2D KC | "
        "QH KD 8D 9H 4S | 6C 5D 8H 3S 7D | TS 2S AH KH 5C | 3H 3D QD AC 6H | AS 5S TC 7C 4D",
        ("KS", "TD", None, None),
    ),
    "SH1-C4-AAAAAJ2": (
        "KD 3S 4C QC 6D | AH 9S AC 8S 9D | KH 2S 5S 5H QD | 2H 7S AD JD KC | 6C JC 4D TD 2D | "
        "QS 7H 7C 5D 3H | AS 5C 3D JH 7D | QH JS 8C 9H 8D | KS 4S 8H 9C TC | TH 6S 2C TS 6H",
        ("3C", "4H", None, None),
    ),
    # Long seeds (deal.md, "Long seeds"): 0xDEADBEEFCAFEBABE and 2^35, the smallest long seed.
    "SH1-C4-N5LN657FP5OV6": (
        "8D QH 3S 9S KH | 2D 7C 3D 7H JD | 7S 5C QD 3C KD | JH KS JC 5H AC | AH 2H 9D 8S 2S | "
        "4S 6C 5S 4D JS | 4H 3H 7D 2C 8C | AD 9C 5D TD QS | 9H KC TC 4C 8H | 6S 6D QC AS TS",
        ("TH", "6H", None, None),
    ),
    "SH1-C4-AAAAABAAAAAAA": (
        "TH 9S 2C JH 9C | 6D 9D 3C KD JD | JC 9H QC 7C JS | QS 4S 7D 8D 7S | 8H AD 4H 3H 5C | "
        "4D 7H AC AS AH | 2H 2S QH TC TD | 8C 8S TS KC 5S | 4C 3D 6C 2D 5D | QD KH 6S 3S KS",
        ("5H", "6H", None, None),
    ),
    "SH1-C2-AAAAAJ2": (
        "KD 3S 4C QC 6D | AH 9S AC 8S 9D | KH 2S 5S 5H QD | 2H 7S AD JD KC | 6C JC 4D TD 2D | "
        "QS 7H 7C 5D 3H | AS 5C 3D JH 7D | QH JS 8C 9H 8D | KS 4S 8H 9C TC | TH 6S 2C TS 6H",
        ("3C", "4H"),
    ),
    "SH1-C1-AAAAAJ2": (
        "KD 3S 4C QC 6D | AH 9S AC 8S 9D 4H | KH 2S 5S 5H QD | 2H 7S AD JD KC | 6C JC 4D TD 2D | "
        "QS 7H 7C 5D 3H | AS 5C 3D JH 7D | QH JS 8C 9H 8D | KS 4S 8H 9C TC | TH 6S 2C TS 6H",
        ("3C",),
    ),
}


@pytest.mark.parametrize("code", sorted(VECTORS))
def test_sh2_sh14_deal_vectors(code: str) -> None:
    """SH-2/SH-14/SH-19: deal.md's vectors, including C1's 52nd card on column 2."""
    columns_text, cells = VECTORS[code]
    state = Game.new(code).state
    assert state.columns == tuple(tuple(c.split()) for c in columns_text.split(" | "))
    assert state.cells == cells
    assert state.foundations == (0, 0, 0, 0)
    cards = [c for col in state.columns for c in col] + [c for c in state.cells if c]
    assert sorted(cards) == sorted(ALL_CARDS)


def test_sh19_same_code_same_deal_and_lower_case() -> None:
    """SH-19: a code reproduces its deal identically."""
    assert Game.new("sh1-c2-aaaaaj2 ").state == Game.new("SH1-C2-AAAAAJ2").state


def test_sh14_missing_cells_do_not_exist() -> None:
    """SH-14: with 2 cells, cell:3 is no location at all."""
    state = Game.new("SH1-C2-AAAAAJ2").state
    refused(state, move("col:1", "cell:3"), "bad_location")
    assert len(RULES.view(state)["cells"]) == 2


def test_rules_object_shape() -> None:
    assert RULES.game == "SH"
    assert RULES.statuses == ("playing", "won", "stuck")
    assert RULES.statuses == (Status.PLAYING, Status.WON, Status.STUCK)
    assert all(isinstance(status, Status) for status in RULES.statuses)
    assert RULES.progress_total == 52


# ---------------------------------------------------------------- single moves (SH-3..SH-7)


def test_sh3_top_card_or_cell_card_moves() -> None:
    """SH-3: the last card of a column or a cell card can move; a covered card alone cannot."""
    state = board("8H", "2D 5C", "6C", cells=("7H", None, None, None))
    step = ok(state, move("col:2", "col:3"))
    assert step.state.columns[1:3] == (("2D",), ("6C", "5C"))
    assert ok(state, move("cell:1", "col:1", 1)).state.cells[0] is None
    refused(state, move("col:2", "col:3", 2), "not_a_run")


def test_sh4_same_suit_one_rank_lower_only() -> None:
    """SH-4: 7H goes only onto 8H, never onto 8D, a black 8 or 9H."""
    state = board("8H", "8D", "8S", "9H", "7H")
    assert ok(state, move("col:5", "col:1")).state.columns[0] == ("8H", "7H")
    for target in ("col:2", "col:3", "col:4"):
        error = refused(state, move("col:5", target), "wrong_suit_or_rank")
        assert "same suit, one rank higher" in error.reason


def test_sh5_cell_takes_one_card_when_free() -> None:
    """SH-5: any card into an empty cell; a cell holds one card."""
    state = board("QH JH", "2C", cells=("5S", None, None, None))
    assert ok(state, move("col:2", "cell:2")).state.cells == ("5S", "2C", None, None)
    refused(state, move("col:2", "cell:1"), "cell_full")
    refused(state, move("col:1", "cell:2", 2), "single_card")


def test_sh5_cell_to_cell_is_legal_and_scores_zero() -> None:
    """Decision: cell to cell moves are legal and score 0."""
    state = board("2C", cells=("5S", None, None, None))
    step = ok(state, move("cell:1", "cell:4"))
    assert step.state.cells == (None, None, None, "5S")
    assert step.points == 0
    refused(state, move("cell:1", "cell:1"), "same_place")


def test_sh6_foundation_ace_first_then_in_order() -> None:
    """SH-6: ace first, then 2, 3 ... of the same suit, one card at a time."""
    state = board("2H AH", "3H", "AS", cells=("2S", None, None, None))
    refused(state, move("col:2", "found"), "foundation_order")
    first = ok(state, move("col:1", "found:H"))
    assert first.state.foundations == (0, 1, 0, 0)
    second = ok(first.state, move("col:1", "found"))
    assert second.state.foundations == (0, 2, 0, 0)
    refused(second.state, move("col:3", "found:H"), "wrong_foundation")
    refused(second.state, move("cell:1", "found:S"), "foundation_order")
    refused(board("3H 2H AH"), move("col:1", "found", 2), "single_card")
    refused(board("AH 2H 3H"), move("col:1", "found:H", 2), "not_a_run")


def test_sh6_found_alias_is_reported_with_its_suit() -> None:
    """ "found" as a destination is the moved card's own foundation."""
    step = ok(board("AD"), move("col:1", "found"))
    assert step.events[0]["to"] == "found:D"


def test_sh7_rank_order_ten_jack_queen_king() -> None:
    """SH-7: ... 9, 10, J, Q, K."""
    state = board("KS QS JS TS 9S", "2C")
    assert run_length(state.columns[0]) == 5
    assert ok(board("TS", "9S"), move("col:2", "col:1")).state.columns[0] == ("TS", "9S")


# ---------------------------------------------------------------- empty columns (SH-8)


def test_sh8_empty_column_takes_only_a_king() -> None:
    """SH-8: a king (alone or heading its run) may go into an empty column, nothing else."""
    state = board("2C KD", "3C QD", *fillers(7), cells=("QS", None, None, None))
    assert ok(state, move("col:1", "col:10")).state.columns[9] == ("KD",)
    error = refused(state, move("col:2", "col:10"), "kings_only")
    assert error.reason == "An empty column takes only a king"
    refused(state, move("cell:1", "col:10"), "kings_only")


def test_sh8_kings_only_also_for_runs() -> None:
    """SH-8: K♠ Q♠ J♠ may go to an empty column; Q♠ J♠ may not."""
    state = board("2C KS QS JS", *fillers(8))
    assert ok(state, move("col:1", "col:10", 3)).state.columns[9] == ("KS", "QS", "JS")
    refused(state, move("col:1", "col:10", 2), "kings_only")


# ---------------------------------------------------------------- groups (SH-9..SH-12)


def test_sh9_only_same_suit_consecutive_runs_move_together() -> None:
    """SH-9: 9♣ 8♣ 7♣ moves as one group; mixed suits or gaps do not."""
    state = board("TC", "9C 8C 7C", "9D 8C 7C", "9C 7C", "7C 8C", cells=(None,) * 4)
    assert ok(state, move("col:2", "col:1", 3)).state.columns[0] == ("TC", "9C", "8C", "7C")
    for src in ("col:3", "col:4", "col:5"):
        error = refused(state, move(src, "col:1", 2 if src != "col:3" else 3), "not_a_run")
        assert error.reason == "Those cards are not a same-suit run"
    refused(state, move("col:2", "col:1", 4), "not_enough_cards")


def test_sh10_group_limit_formula() -> None:
    """SH-10: (free cells + 1) x 2^(empty columns)."""
    assert [group_limit(f, 0) for f in range(5)] == [1, 2, 3, 4, 5]
    assert [group_limit(2, e) for e in range(4)] == [3, 6, 12, 24]


# The SH-10/SH-11 table, literally: free cells -> (to a non-empty column with 0, 1, 2 empty
# columns; king-led run to an empty column with 1, 2 empty columns in all).
TABLE = {
    0: (1, 2, 4, 1, 2),
    1: (2, 4, 8, 2, 4),
    2: (3, 6, 12, 3, 6),
    3: (4, 8, 16, 4, 8),
    4: (5, 10, 20, 5, 10),
}
REACHABLE = [(cells, free) for cells in (4, 2, 1) for free in range(cells + 1)]
HEARTS = ["AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH"]
SPADES_DOWN = ["KS", "QS", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S", "3S", "2S", "AS"]


def too_many_reason(limit: int) -> str:
    return f"At most {limit} {'card' if limit == 1 else 'cards'} can move together now"


def _cells(ncells: int, free: int) -> tuple[str | None, ...]:
    return tuple(CELL_FILL[: ncells - free]) + (None,) * free


def _onto_column_state(ncells: int, free: int, empty: int, count: int) -> State:
    """A hearts run of ``count`` cards (rank count down to A) and a column topped by its successor."""
    run = " ".join(reversed(HEARTS[:count]))
    columns = ["2C " + run, "3C " + HEARTS[count], *fillers(8 - empty)]
    return board(*columns, cells=_cells(ncells, free))


def _king_run_state(ncells: int, free: int, empty_in_all: int, count: int) -> State:
    columns = ["2C " + " ".join(SPADES_DOWN[:count]), *fillers(9 - empty_in_all)]
    return board(*columns, cells=_cells(ncells, free))


@pytest.mark.parametrize(("ncells", "free"), REACHABLE)
@pytest.mark.parametrize("empty", [0, 1, 2])
def test_sh10_table_onto_a_non_empty_column(ncells: int, free: int, empty: int) -> None:
    """SH-10 table, columns 2-4, for every reachable cell count of C4, C2 and C1."""
    limit = TABLE[free][empty]
    assert RULES.view(_onto_column_state(ncells, free, empty, 1))["group_limit"] == limit
    moved = min(limit, 12)  # a run onto a column holds at most Q..A
    state = _onto_column_state(ncells, free, empty, moved)
    assert ok(state, move("col:1", "col:2", moved)).state.columns[1][-moved:] == state.columns[0][1:]
    if limit + 1 <= 12:
        state = _onto_column_state(ncells, free, empty, limit + 1)
        error = refused(state, move("col:1", "col:2", limit + 1), "too_many_cards")
        assert error.reason == too_many_reason(limit)


@pytest.mark.parametrize(("ncells", "free"), REACHABLE)
@pytest.mark.parametrize("empty_in_all", [1, 2])
def test_sh11_table_king_run_into_an_empty_column(ncells: int, free: int, empty_in_all: int) -> None:
    """SH-11 table, columns 5-6: the destination column is not counted as empty."""
    limit = TABLE[free][2 + empty_in_all]
    view = RULES.view(_king_run_state(ncells, free, empty_in_all, 1))
    assert view["group_limit_to_empty"] == limit
    state = _king_run_state(ncells, free, empty_in_all, limit)
    assert ok(state, move("col:1", "col:10", limit)).state.columns[9] == state.columns[0][1:]
    state = _king_run_state(ncells, free, empty_in_all, limit + 1)
    error = refused(state, move("col:1", "col:10", limit + 1), "too_many_cards")
    assert error.reason == too_many_reason(limit)


def test_sh12_example() -> None:
    """SH-12: 1 free cell, 2 empty columns: 8 onto a column, but only 4 king-led into one."""
    cells = ("9C", "TC", "JC", None)
    state = board("2C " + " ".join(reversed(HEARTS[:8])), "3C 9H", *fillers(6), cells=cells)
    assert ok(state, move("col:1", "col:2", 8)).state.columns[1][-8:] == tuple(reversed(HEARTS[:8]))
    state = board("2C " + " ".join(reversed(HEARTS[:9])), "3C TH", *fillers(6), cells=cells)
    refused(state, move("col:1", "col:2", 9), "too_many_cards")
    kings = board("2C " + " ".join(SPADES_DOWN[:4]), *fillers(7), cells=cells)
    assert len(ok(kings, move("col:1", "col:10", 4)).state.columns[9]) == 4
    kings = board("2C " + " ".join(SPADES_DOWN[:5]), *fillers(7), cells=cells)
    refused(kings, move("col:1", "col:10", 5), "too_many_cards")


def test_sh10_missing_cells_do_not_count() -> None:
    """SH-14: removed cells do not count towards group size (C2 with both free: 3)."""
    state = board("KC", *fillers(8), "2C", cells=(None, None))
    assert RULES.view(state)["group_limit"] == 3


def test_sh10_source_column_emptied_by_the_move_is_not_empty_yet() -> None:
    """SH-10 counts the empty columns there are before the move."""
    state = board("2H AH", "3H", *fillers(8), cells=CELL_FILL)
    refused(state, move("col:1", "col:2", 2), "too_many_cards")


# ---------------------------------------------------------------- foundation take-back (SH-17)


def test_sh17_take_back_to_column_or_free_cell() -> None:
    """SH-17: the foundation's top card goes onto an accepting column or into a free cell."""
    state = board("4H", "4D", *fillers(8), cells=("QC", None, None, None), found=(0, 3, 0, 0))
    onto = ok(state, move("found:H", "col:1"))
    assert onto.state.columns[0] == ("4H", "3H")
    assert onto.state.foundations == (0, 2, 0, 0)
    assert onto.points == 0
    assert ok(state, move("found:H", "cell:2")).state.cells == ("QC", "3H", None, None)
    refused(state, move("found:H", "col:2"), "wrong_suit_or_rank")
    refused(state, move("found:H", "cell:1"), "cell_full")
    refused(state, move("found:S", "cell:2"), "empty_source")
    refused(state, move("found:H", "cell:2", 2), "single_card")
    refused(state, move("found:H", "found"), "same_place")
    refused(state, move("found:H", "found:S"), "wrong_foundation")
    refused(state, move("found", "cell:2"), "bad_location")


def test_sh17_take_back_king_only_to_an_empty_column() -> None:
    """SH-8 applies to take-back too."""
    state = board("2C", found=(13, 3, 0, 0))
    assert ok(state, move("found:S", "col:5")).state.columns[4] == ("KS",)
    refused(state, move("found:H", "col:5"), "kings_only")


# ---------------------------------------------------------------- tap (SH-15)


def test_sh15_tap_sends_card_to_its_foundation() -> None:
    """SH-15: a single tap moves a top card or a cell card to its foundation."""
    state = board("5C AS", cells=("AD", None, None, None))
    step = ok(state, tap("col:1"))
    assert step.state.foundations == (1, 0, 0, 0)
    assert step.events == ({"kind": "move", "from": "col:1", "to": "found:S", "cards": ["AS"], "points": 10},)
    assert ok(state, tap("cell:1")).state.foundations == (0, 0, 1, 0)


def test_sh15_tap_that_cannot_go_says_why() -> None:
    """Decision: a refused tap moves nothing and names the card its suit needs."""
    state = board("5C 3H", "", "2C", found=(0, 1, 0, 0))
    error = refused(state, tap("col:1"), "foundation_order")
    assert "2H" in error.reason
    refused(state, tap("col:2"), "empty_source")
    refused(state, tap("found:H"), "bad_location")
    refused(state, tap("cell:1"), "empty_source")
    refused(state, Action("tap", ("col:11",)), "bad_location")


# ---------------------------------------------------------------- double tap (SH-16)


def test_sh16_foundation_comes_first() -> None:
    """SH-16: AH goes up even though 2H would take it and a cell is free."""
    state = board("5C AH", "2H")
    assert ok(state, dtap("col:1")).events[0]["to"] == "found:H"


def test_sh16_then_the_accepting_column() -> None:
    """SH-16: then the (only) column that accepts it, before an empty column or a cell."""
    state = board("5C 6H", "2C", "7H")
    assert ok(state, dtap("col:1")).events[0]["to"] == "col:3"


def test_sh16_then_leftmost_empty_column_for_a_king() -> None:
    """SH-16: a king goes to the leftmost empty column before a free cell."""
    state = board("5C KH", "", "2C", "")
    assert ok(state, dtap("col:1")).events[0]["to"] == "col:2"


def test_sh16_then_leftmost_free_cell() -> None:
    """SH-16: last, the leftmost free cell; a non-king never goes to an empty column."""
    state = board("5C 6H", *fillers(7), cells=("QC", None, None, None))
    assert ok(state, dtap("col:1")).events[0]["to"] == "cell:2"


def test_sh16_run_moves_with_its_head() -> None:
    """Decision: double tap on a run head moves the run, within the SH-10 limit."""
    state = board("5C 6H 5H 4H", "7H", *fillers(8), cells=(None, None, "QC", "JC"))
    step = ok(state, dtap("col:1", 3))
    assert step.state.columns[1] == ("7H", "6H", "5H", "4H")
    blocked = board("5C 6H 5H 4H", "7H", *fillers(8), cells=CELL_FILL)
    error = refused(blocked, dtap("col:1", 3), "too_many_cards")
    assert error.reason == "At most 1 card can move together now"
    refused(board("5C 6H 5D"), dtap("col:1", 2), "not_a_run")


def test_sh16_runs_never_go_to_cells_or_foundations() -> None:
    """Decision: foundation and cell targets take single cards only."""
    state = board("5C 2H AH", *fillers(7))
    refused(state, dtap("col:1", 2), "no_target")


def test_sh16_king_run_into_empty_column() -> None:
    state = board("5C KS QS", "", *fillers(7))
    assert ok(state, dtap("col:1", 2)).state.columns[1] == ("KS", "QS")


def test_sh16_cell_card_not_moved_to_another_cell() -> None:
    """Decision: a cell card is not moved to another cell; refused as pointless."""
    state = board(*fillers(8), "6C", "8D", cells=("5H", None, None, None))
    error = refused(state, dtap("cell:1"), "pointless")
    assert "cell" in error.reason
    refused(state, dtap("cell:1", 2), "single_card")


def test_sh16_cell_king_goes_to_empty_column() -> None:
    state = board("2C", cells=("KH", None, None, None))
    assert ok(state, dtap("cell:1")).events[0]["to"] == "col:2"


def test_sh16_king_run_at_bottom_not_moved_to_another_empty_column() -> None:
    """Decision: a king-led run that is the whole column stays; pointless with no other target."""
    state = board("KS QS", "", *fillers(8), cells=CELL_FILL)
    error = refused(state, dtap("col:1", 2), "pointless")
    assert "KS" in error.reason
    single = board("KS", "", *fillers(8), cells=CELL_FILL)
    refused(single, dtap("col:1"), "pointless")


def test_sh16_lone_bottom_king_may_still_go_to_a_free_cell() -> None:
    """SH-16 order: only the empty-column target is pointless, so a free cell is next."""
    state = board("KS", "", *fillers(8), cells=("9C", None, None, None))
    assert ok(state, dtap("col:1")).events[0]["to"] == "cell:2"


def test_sh16_covered_king_run_does_go_to_empty_column() -> None:
    state = board("2C KS QS", "", *fillers(8), cells=("9C", None, None, None))
    assert ok(state, dtap("col:1", 2)).events[0]["to"] == "col:2"


def test_sh16_no_target() -> None:
    state = board("5C 6H", *fillers(8), cells=CELL_FILL)
    error = refused(state, dtap("col:1"), "no_target")
    assert "6H" in error.reason
    refused(state, dtap("found:H"), "bad_location")


# ---------------------------------------------------------------- refusals in general


def test_malformed_actions_are_refused() -> None:
    state = board("5C 6H")
    refused(state, Action("draw"), "bad_action")
    refused(state, Action("move", ("col:1", "col:2")), "bad_action")
    refused(state, move("col:1", "cell:1", 0), "bad_count")
    refused(state, Action("move", ("col:1", "cell:1", "2")), "bad_count")
    refused(state, move("col:0", "cell:1"), "bad_location")
    refused(state, move("col:1", "heap"), "bad_location")
    refused(state, move("col:2", "cell:1"), "empty_source")
    refused(state, move("col:1", "col:1"), "same_place")


def test_refusal_changes_nothing_in_game() -> None:
    game = Game.new("SH1-C4-AAAAAAA")
    with pytest.raises(IllegalAction):
        game.apply(move("col:1", "col:2"))
    assert game.moves == 0 and game.score == 0


# ---------------------------------------------------------------- score (SH-20, SH-21)


def test_sh20_points_per_move_kind() -> None:
    """SH-20: +10 onto a foundation, +5 from a cell onto the tableau, 0 otherwise."""
    state = board("AH", "4C", "3D", "KC", cells=("3C", "2H", None, None))
    assert ok(state, move("col:1", "found")).points == 10
    assert ok(state, move("cell:1", "col:2")).points == 5
    assert ok(state, move("col:3", "cell:3")).points == 0
    assert ok(state, move("cell:1", "cell:3")).points == 0
    assert ok(board("4D", "3C 2D", "3D"), move("col:3", "col:1", 1)).points == 0
    assert ok(state, move("col:4", "col:5")).points == 0


def test_sh21_take_back_rescores_and_undo_takes_points_back() -> None:
    """SH-20/21 and the Decisions: re-placing a taken-back card scores again; undo repays."""
    state = board("2C AH", "5C", *fillers(8))
    game = game_at(state)
    game = game.apply(tap("col:1")).game
    assert game.score == 10
    game = game.apply(move("found:H", "cell:1")).game
    assert game.score == 10
    game = game.apply(move("cell:1", "found")).game
    assert game.score == 20
    undo = game.apply(Action("undo"))
    assert undo.points == -10 and undo.game.score == 10
    assert undo.game.moves == 4  # undo counts as a move
    assert undo.game.state.cells[0] == "AH"


def test_sh21_cell_to_tableau_then_undo() -> None:
    state = board("6H", *fillers(8), cells=("5H", None, None, None))
    game = game_at(state).apply(move("cell:1", "col:1")).game
    assert game.score == 5
    back = game.apply(Action("undo")).game
    assert back.score == 0 and back.state == state


# ---------------------------------------------------------------- end of game (SH-13)


def _almost_won() -> State:
    return board("KC", found=(13, 13, 13, 12))


def test_sh13_win_is_final() -> None:
    """SH-13: won with 52 on the foundations; a win is final."""
    game = game_at(_almost_won())
    assert game.status == "playing" and game.progress == 51
    game = game.apply(tap("col:1")).game
    assert game.status == "won" and game.progress == 52
    with pytest.raises(IllegalAction) as info:
        game.apply(Action("undo"))
    assert info.value.code == "game_over"
    assert game.legal_actions() == []


def _stuck_board() -> State:
    """A full 52-card C1 position where no card can move anywhere."""
    tops = ["2S", "2H", "2D", "2C", "5S", "5H", "5D", "5C", "8S", "8H"]
    cell = "8D"
    rest = [c for c in ALL_CARDS if c not in tops and c != cell]
    columns = []
    for i, top in enumerate(tops):
        size = 4 if i != 1 else 5
        columns.append(" ".join([*rest[:size], top]))
        rest = rest[size:]
    assert not rest
    return board(*columns, cells=(cell,))


def test_sh13_stuck_when_no_move_at_all() -> None:
    """Decision: `stuck` when no legal move exists; undo is still allowed."""
    state = _stuck_board()
    assert RULES.status(state) == "stuck"
    assert RULES.legal_actions(state) == []
    cols = list(state.columns)
    cols[0] = (*cols[0], "8D")
    before = State(tuple(cols), (None,), state.foundations)
    game = game_at(before, "SH1-C1-AAAAAAA").apply(move("col:1", "cell:1")).game
    assert game.status == "stuck"
    game = game.apply(Action("undo")).game
    assert game.status == "playing" and game.state == before


def test_sh13_stuck_ignores_cell_to_cell_and_foundation_moves() -> None:
    """Decision: cell-to-cell moves and moves off a foundation do not count as useful."""
    state = board(cells=("5D", None), found=(13, 0, 3, 0))
    assert RULES.legal_actions(state)  # KS may come down, 5D may change cells
    assert RULES.status(state) == "stuck"
    assert RULES.status(board(cells=("KD", None))) == "playing"


def test_sh13_playing_when_a_run_can_move() -> None:
    """SH-10 in `stuck`: a run that fits the limit is a move; one that does not is none."""
    state = board("5C 3H 2H", "9H 4H", *fillers(7), cells=CELL_FILL)
    assert RULES.status(state) == "playing"  # one empty column: limit 2
    blocked = board("5C 3H 2H", "9H 4H", *fillers(8), cells=CELL_FILL)
    assert RULES.status(blocked) == "stuck"  # the 2-card run exceeds the limit of 1


# ---------------------------------------------------------------- undo (SH-18)


def test_sh18_undo_keeps_the_last_100_moves() -> None:
    """SH-18: 100 undos work after 120 moves; the 101st is refused."""
    game = Game.new("SH1-C4-AAAAAAA")
    start_moves = []
    for i in range(120):
        action = move("cell:1", "cell:3") if i % 2 == 0 else move("cell:3", "cell:1")
        start_moves.append(game.state)
        game = game.apply(action).game
    for _ in range(100):
        game = game.apply(Action("undo")).game
    assert game.state == start_moves[20]
    with pytest.raises(IllegalAction) as info:
        game.apply(Action("undo"))
    assert info.value.code == "nothing_to_undo"
    assert game.moves == 220


# ---------------------------------------------------------------- legal actions, view, hints


def test_legal_actions_lists_every_destination_and_count() -> None:
    """Every accepting destination is listed: all free cells, all empty columns, all counts."""
    state = board("2C KS QS", "KH", "", "", *fillers(6), cells=("9C", None, None, None))
    listed = {a.args for a in RULES.legal_actions(state)}
    assert ("col:1", "col:3", 2) in listed and ("col:1", "col:4", 2) in listed
    assert ("col:1", "col:3", 1) not in listed  # QS is no king
    assert {("col:1", f"cell:{i}", 1) for i in (2, 3, 4)} <= listed
    assert ("cell:1", "cell:2", 1) in listed
    assert ("col:2", "col:3", 1) in listed  # a bottom king may still move (a legal move)


def test_view_and_snapshot_shape() -> None:
    state = board("KS QS", "", cells=("AH", None), found=(0, 0, 2, 0))
    view = RULES.view(state)
    assert view["columns"][0] == ["KS", "QS"]
    assert view["cells"] == ["AH", None]
    assert view["foundations"] == {"S": None, "H": None, "D": "2D", "C": None}
    assert view["group_limit"] == 2 * 2**9
    assert view["group_limit_to_empty"] == 2 * 2**8
    snap = RULES.snapshot(state)
    assert snap["foundations"] == {"S": 0, "H": 0, "D": 2, "C": 0}
    assert RULES.clear_selection(state) is state


def test_hints_tappable_and_movable() -> None:
    state = board("2C AS", "3H", *fillers(8), cells=("AH", "KD", "QD", "JD"))
    hints: dict[str, Any] = RULES.hints(state)
    assert hints["tappable"] == ["col:1", "cell:1"]
    assert "col:1" in hints["movable"] and "col:2" not in hints["movable"]
    assert hints["runs"]["col:1"] == 1


def test_hints_targets_name_every_destination_and_group_counts() -> None:
    """SH-4..SH-11 in the hints: each movable location maps to where it can go now, exactly."""
    state = board("2C KS QS", "KH", "", "", *fillers(6), cells=("9C", None, None, None))
    hints: dict[str, Any] = RULES.hints(state)
    targets, counts = hints["targets"], hints["counts"]
    assert list(targets) == hints["movable"]
    # SH-8/SH-9: the KS-led run of two goes into either empty column; QS alone goes to cells (SH-5).
    assert targets["col:1"] == ["col:3", "col:4", "cell:2", "cell:3", "cell:4"]
    assert counts["col:1"] == {"col:3": 2, "col:4": 2}
    # SH-8: a lone bottom king may still move to another empty column (a legal move).
    assert targets["col:2"] == ["col:3", "col:4", "cell:2", "cell:3", "cell:4"]
    assert "col:2" not in counts
    # SH-5 and the Decision: cell to cell is legal.
    assert targets["cell:1"] == ["cell:2", "cell:3", "cell:4"]
    for src, dsts in targets.items():
        assert len(dsts) == len(set(dsts)), src
        for dst in dsts:
            ok(state, move(src, dst, counts.get(src, {}).get(dst, 1)))


def test_hints_targets_include_foundations_and_take_backs() -> None:
    """SH-6 and SH-17 in the hints: ``found:<suit>`` as a target, a foundation top as a source."""
    state = board("KH 2H", "3H", *fillers(8), cells=("AS", None, None, None), found=(0, 1, 0, 0))
    targets = RULES.hints(state)["targets"]
    # 2H onto 3H (SH-4) or onto the hearts foundation holding AH (SH-6), or into a free cell.
    assert targets["col:1"] == ["col:2", "found:H", "cell:2", "cell:3", "cell:4"]
    assert targets["cell:1"] == ["found:S", "cell:2", "cell:3", "cell:4"]  # AS goes up first
    # SH-17: the AH on its foundation may come back onto 2H or into a free cell.
    assert targets["found:H"] == ["col:1", "cell:2", "cell:3", "cell:4"]
    assert RULES.hints(state)["counts"] == {}


def test_sh13_a_won_game_offers_nothing_to_tap_or_move() -> None:
    """SH-13 (Decision "A win is final"): after a real win, hints offer no tap and no move.

    Before the fix ``movable`` still listed the foundations: SH-17 take-backs
    into the free cells were offered on a finished game.
    """
    answer = solve("SH1-C2-QPRWMR3", 200_000)
    assert answer.result == "won" and answer.actions
    game = Game.replay("SH1-C2-QPRWMR3", answer.actions)
    assert game.status == Status.WON
    for hints in (game.hints(), RULES.hints(game.state), game.view()["hints"]):
        assert hints["tappable"] == [] and hints["movable"] == []
        assert hints["targets"] == {} and hints["counts"] == {}
    assert RULES.legal_actions(game.state) == [] and game.legal_actions() == []
    for action in (move("found:S", "cell:1"), tap("col:1"), dtap("cell:1")):
        with pytest.raises(IllegalAction) as info:
            RULES.apply(game.state, action)
        assert info.value.code == Refusal.GAME_OVER and str(info.value.code) == "game_over"


def test_game_view_is_json_ready() -> None:
    import json

    game = Game.new("SH1-C2-AAAAAJ2")
    text = json.dumps(game.view())
    assert "group_limit" in text
    assert game.view()["status"] == "playing"


def test_refusals_name_their_cards_places_and_limits() -> None:
    """Every refusal that involves a card, a place or a limit names it in ``params`` (wire
    texts), so that a client can word it in its player's language."""
    state = board("8H", "8D", "9H", "7H", "KS 4C", cells=("5S", None, None, None))
    assert refused(state, move("col:4", "col:2"), "wrong_suit_or_rank").params == {
        "card": "7H",
        "target": "8D",
    }
    assert refused(state, move("col:4", "found"), "foundation_order").params == {"card": "7H", "need": "AH"}
    assert refused(state, tap("cell:1"), "foundation_order").params == {"card": "5S", "need": "AS"}
    assert refused(state, move("col:4", "found:S"), "wrong_foundation").params == {"card": "7H", "suit": "S"}
    assert refused(state, move("col:2", "cell:1"), "cell_full").params == {"at": "cell:1"}
    assert refused(state, move("cell:2", "col:1"), "empty_source").params == {"at": "cell:2"}
    assert refused(state, move("col:1", "col:3", 3), "not_enough_cards").params == {"at": "col:1", "count": 1}
    assert refused(state, move("col:5", "col:6", 1), "kings_only").params == {"card": "4C"}
    assert refused(state, move("found:H", "col:1"), "empty_source").params == {"at": "found:H"}
    full = ("5S", "6S", "7S", "8S")
    assert refused(board("9H", cells=full), dtap("col:1"), "no_target").params == {"card": "9H"}
    assert refused(board("KS", cells=full), dtap("col:1"), "pointless").params == {"card": "KS"}
    assert refused(state, move("cell:1", "cell:1"), "same_place").params == {}
    crowded = board("9H", "8H 7H 6H", "5C", "4C", "3C", "2C", "KC", "QD", "JD", "TD", cells=full)
    assert refused(crowded, move("col:2", "col:1", 3), "too_many_cards").params == {"count": 1}
