"""Heart to Heart rules (engine/hearts.py), example by example; test names cite HH-n."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest

from engine import Action, Game, IllegalAction, Refusal, Status
from engine.codes import RANKS, parse_code, shuffled_deck
from engine.hearts import COVERED_BY, RULES, HeartState, make_state
from engine.solver import solve

CODE = "HH1-N-AAAAAAA"

VECTORS = {
    "HH1-N-AAAAAAA": (
        "8H JH 9H 2H 2H QH 6H TH 3H AH JH 7H 9H 8H QH KH 5H 2H 3H 5H AH 6H 4H TH 5H",
        "8H 8H AH QH TH QH JH 3H 4H 2H 9H 3H KH AH 7H 9H 7H JH 6H KH 4H 7H 5H 6H 4H KH",
        "TH",
    ),
    "HH1-N-AAAAAAM": (
        "JH QH 8H AH JH TH 8H KH 2H TH 9H 6H 4H QH 2H AH JH AH KH 4H 9H 2H 5H 7H 8H",
        "6H QH KH 2H 6H QH KH 7H 5H 9H 6H 3H 3H 3H 4H AH 5H 9H 4H 7H JH 3H 8H TH TH 5H",
        "7H",
    ),
    "HH1-N-7777777": (
        "QH KH 7H 6H KH 2H AH 4H 5H 7H 5H 9H TH AH 4H JH QH 4H 9H QH TH JH AH 3H 8H",
        "JH AH 3H 7H 8H TH 6H 8H 4H 2H KH 6H 3H KH 8H TH 9H 5H 5H JH 6H 2H 7H 9H 3H QH",
        "2H",
    ),
    # Long seeds (deal.md, "Long seeds"): 0xDEADBEEFCAFEBABE and 2^64 - 1.
    "HH1-N-N5LN657FP5OV6": (
        "8H 2H 7H JH AH 4H 4H AH 9H 6H QH 7H 5H KH 2H 6H 3H 9H KH 6H 3H 3H QH JH 9H",
        "5H 7H 5H TH QH 9H 7H 3H 5H 8H 4H 2H TH 4H AH KH JH KH AH 2H JH 8H QH 8H TH TH",
        "6H",
    ),
    "HH1-N-P777777777777": (
        "JH KH 7H 4H AH JH 5H 2H AH 7H 6H 6H 4H AH 4H 7H 3H 2H 9H QH 8H 3H 5H 9H AH",
        "8H QH TH 7H QH 9H 4H JH KH KH 6H 9H 8H 8H TH 6H KH 2H 3H QH JH 3H 5H TH 2H TH",
        "5H",
    ),
}


def touch(at: str) -> Action:
    return Action("touch", (at,))


def pair(a: str, b: str) -> Action:
    return Action("pair", (a, b))


DRAW = Action("draw")
UNDO = Action("undo")


def board(cards: dict[int, str], stock: str = "", waste: str = "", **kw: object) -> HeartState:
    """A state holding only ``cards`` (position -> card) in the heart."""
    heart = [cards.get(p) for p in range(1, 26)]
    return make_state(heart, stock.split(), waste.split(), **kw)  # type: ignore[arg-type]


def game_at(state: HeartState) -> Game:
    return replace(Game.new(CODE), state=state)


def refused(game: Game, action: Action) -> IllegalAction:
    with pytest.raises(IllegalAction) as info:
        game.apply(action)
    return info.value


# -- deal ------------------------------------------------------------------


@pytest.mark.parametrize("code", sorted(VECTORS))
def test_hh2_deal_vectors(code: str) -> None:
    """HH-2 / deal.md vectors: heart 1..25, stock from the top, then the waste."""
    heart, stock, waste = VECTORS[code]
    state = Game.new(code).state
    assert list(state.heart) == heart.split()
    assert list(state.stock) == stock.split()
    assert list(state.waste) == waste.split()
    assert state.selection is None and state.removed == ()


@pytest.mark.parametrize("code", sorted(VECTORS))
def test_hh1_deck_is_four_hearts_of_each_rank(code: str) -> None:
    state = Game.new(code).state
    cards = Counter([*state.heart, *state.stock, *state.waste])
    assert cards == Counter({r + "H": 4 for r in RANKS})


def test_deal_uses_the_shuffled_deck_in_order() -> None:
    deck = shuffled_deck(parse_code("HH1-N-AAAAAJ2"))
    state = Game.new("HH1-N-AAAAAJ2").state
    assert (*state.heart, *state.stock, *state.waste) == tuple(deck)


# -- geometry and free cards -----------------------------------------------

ROWS = [(1, 3, 7, 9), (0, 2, 4, 6, 8, 10), (1, 3, 5, 7, 9), (2, 4, 6, 8), (3, 5, 7), (4, 6), (5,)]


def test_hh3_covering_table_follows_the_geometry() -> None:
    """HH-3: row r, centre x is covered by row r+1 at x-1 and x+1 (deal.md)."""
    place: dict[tuple[int, int], int] = {}
    for r, xs in enumerate(ROWS):
        for x in xs:
            place[(r, x)] = len(place) + 1
    expected = {
        pos: tuple(place[(r + 1, x + d)] for d in (-1, 1) if (r + 1, x + d) in place)
        for (r, x), pos in place.items()
    }
    assert expected == COVERED_BY


def test_hh4_only_the_tip_is_free_at_the_start() -> None:
    view = RULES.view(Game.new(CODE).state)
    assert [c["pos"] for c in view["heart"] if c["free"]] == [25]


def test_hh4_removing_the_tip_frees_23_and_24() -> None:
    state = board({p: "9H" for p in range(1, 26)} | {25: "4H"}, waste="4H")
    step = RULES.apply(state, pair("heart:25", "waste"))
    assert step.state.free == (22, 23)


def test_hh5_edge_cards_free_up_sooner() -> None:
    """HH-5: position 20 has only 23 below it; 21 needs 23 and 24 gone."""
    cards = {p: "9H" for p in range(1, 26)} | {25: "2H", 23: "3H", 24: "5H"}
    state = board(cards, waste="2H")
    state = RULES.apply(state, pair("heart:25", "waste")).state
    state = RULES.apply(replace(state, waste=("3H",)), pair("heart:23", "waste")).state
    free = {c["pos"] for c in RULES.view(state)["heart"] if c["free"]}
    assert free == {20, 24}


def test_hh9_waste_pairs_with_the_tip_and_frees_two_cards() -> None:
    """HH-9: waste 4H pairs with the tip 4H; the two cards it covered are free."""
    cards = {p: "KH" for p in range(1, 26)} | {23: "7H", 24: "8H", 25: "4H"}
    game = game_at(board(cards, stock="AH", waste="4H"))
    out = game.apply(touch("heart:25"))
    assert out.game.state.selection == "heart:25" and not out.is_move
    out = out.game.apply(touch("waste"))
    assert out.is_move and out.points == 10
    pair_event = out.events[0]
    assert pair_event["kind"] == "pair"
    assert pair_event["cards"] == [
        {"at": "heart:25", "card": "4H"},
        {"at": "waste", "card": "4H"},
    ]
    assert pair_event["freed"] == ["heart:23", "heart:24"]
    assert out.game.state.heart[24] is None and out.game.state.waste == ()


def test_hh8_an_emptied_position_stays_empty() -> None:
    game = game_at(board({25: "4H", 24: "6H"}, waste="4H"))
    game = game.apply(pair("heart:25", "waste")).game
    assert game.state.heart[24] is None
    err = refused(game, touch("heart:25"))
    assert err.code == "empty_position"
    assert refused(game, pair("heart:25", "heart:24")).code == "empty_position"


# -- touch model -----------------------------------------------------------


def test_hh13_touch_selects_and_is_not_a_move() -> None:
    game = Game.new(CODE)
    out = game.apply(touch("heart:25"))
    assert out.game.state.selection == "heart:25"
    assert not out.is_move and out.game.moves == 0 and out.game.seq == 1
    assert out.events == ({"kind": "select", "at": "heart:25", "card": "5H"},)


def test_hh13_touching_the_waste_selects_it() -> None:
    out = Game.new(CODE).apply(touch("waste"))
    assert out.game.state.selection == "waste" and out.events[0]["card"] == "TH"


def test_hh14_touching_a_covered_card_is_refused_and_changes_nothing() -> None:
    game = Game.new(CODE).apply(touch("heart:25")).game
    err = refused(game, touch("heart:1"))
    assert (err.code, err.reason) == ("not_free", "That card is covered")
    assert err.params == {"at": "heart:1", "card": game.state.heart[0]}
    assert refused(game, pair("heart:24", "heart:25")).code == "not_free"


def test_refusals_name_their_cards() -> None:
    """A translation needs the cards a refusal is about (``params``), not only its code."""
    game = game_at(board({25: "4H", 1: "KH"}, stock="2H", waste="AH"))
    mismatch = refused(game, pair("heart:25", "waste"))
    assert (mismatch.code, mismatch.params) == ("rank_mismatch", {"first": "4H", "second": "AH"})
    gone = game.apply(touch("heart:25")).game
    assert refused(gone, pair("heart:2", "waste")).params == {"at": "heart:2"}
    assert refused(game, touch("stock:9")).params == {}


def test_hh15_touching_the_selection_again_deselects() -> None:
    game = Game.new(CODE).apply(touch("waste")).game
    out = game.apply(touch("waste"))
    assert out.game.state.selection is None and not out.is_move
    assert out.events == ({"kind": "deselect", "at": "waste"},)


def test_hh16_other_rank_becomes_the_selection_with_a_reason() -> None:
    """HH-16: tip 4H selected, then waste AH touched: the waste is selected."""
    game = game_at(board({25: "4H", 1: "KH"}, stock="2H", waste="AH"))
    game = game.apply(touch("heart:25")).game
    out = game.apply(touch("waste"))
    assert out.reason == "Must be the same rank"
    assert not out.is_move and out.points == 0
    assert out.game.state.selection == "waste"
    assert out.game.state.heart == game.state.heart and out.game.state.waste == ("AH",)


def test_hh13_two_free_heart_cards_pair_by_touch() -> None:
    game = game_at(board({23: "7H", 24: "7H", 1: "KH"}, stock="KH", waste="2H"))
    game = game.apply(touch("heart:23")).game
    out = game.apply(touch("heart:24"))
    assert out.is_move and out.points == 20 and out.game.score == 20
    assert out.game.state.selection is None
    assert out.game.state.removed == ("7H", "7H")


def test_hh13_selected_waste_then_heart_card_pairs() -> None:
    game = game_at(board({25: "4H", 1: "KH"}, stock="KH", waste="4H"))
    out = game.apply(touch("waste")).game.apply(touch("heart:25"))
    assert out.points == 10 and out.game.state.waste == ()


def test_touch_bad_locations_are_refused() -> None:
    game = Game.new(CODE)
    for loc in ("heart:0", "heart:26", "heart", "col:1", "HEART:25", "cell:1"):
        assert refused(game, touch(loc)).code == "bad_location"


def test_touch_empty_waste_is_refused() -> None:
    game = game_at(board({25: "4H"}, stock="KH"))
    assert refused(game, touch("waste")).code == "waste_empty"
    assert refused(game, pair("heart:25", "waste")).code == "waste_empty"


def test_hh10_touching_the_stock_draws_and_clears_the_selection() -> None:
    game = Game.new(CODE).apply(touch("heart:25")).game
    out = game.apply(touch("stock"))
    assert out.is_move and out.points == 0
    assert out.events == ({"kind": "draw", "card": "8H"},)
    assert out.game.state.selection is None
    assert out.game.state.waste == ("TH", "8H") and len(out.game.state.stock) == 25


def test_touching_an_empty_stock_and_waste_does_nothing_and_keeps_selection() -> None:
    """Decision: nothing to draw is refused (not a move) and the selection stays."""
    game = game_at(board({25: "4H", 1: "KH"})).apply(touch("heart:25")).game
    err = refused(game, touch("stock"))
    assert err.code == "nothing_to_draw"
    assert refused(game, DRAW).code == "nothing_to_draw"
    assert game.state.selection == "heart:25" and game.moves == 0


# -- explicit actions ------------------------------------------------------


def test_explicit_pair_rank_mismatch_is_refused_with_the_reason() -> None:
    """HH-17 / Decision: only an explicit pair is refused for a rank mismatch."""
    game = game_at(board({25: "4H", 1: "KH"}, stock="KH", waste="AH"))
    err = refused(game, pair("heart:25", "waste"))
    assert (err.code, err.reason) == ("rank_mismatch", "Must be the same rank")


def test_explicit_pair_of_one_card_or_with_the_stock_is_refused() -> None:
    game = game_at(board({25: "4H", 1: "KH"}, stock="KH", waste="4H"))
    assert refused(game, pair("heart:25", "heart:25")).code == "same_card"
    assert refused(game, pair("waste", "waste")).code == "same_card"
    assert refused(game, pair("heart:25", "stock")).code == "bad_location"
    assert refused(game, pair("heart:25", "nowhere")).code == "bad_location"


def test_explicit_pair_clears_the_selection_and_scores() -> None:
    game = game_at(board({23: "7H", 24: "7H", 1: "KH"}, stock="KH", waste="2H"))
    game = game.apply(touch("waste")).game
    out = game.apply(pair("heart:24", "heart:23"))
    assert out.points == 20 and out.game.state.selection is None


def test_unknown_action_kinds_are_refused() -> None:
    game = Game.new(CODE)
    assert refused(game, Action("tap", ("col:1",))).code == "unsupported_action"
    assert refused(game, Action("move", ("col:1", "col:2", 1))).code == "unsupported_action"


def test_legal_actions_list_each_pair_once_and_draw() -> None:
    state = board({19: "7H", 22: "KH", 23: "7H", 24: "7H"}, waste="7H")
    # free: 23 and 24; 22 lies under 24 and 19 under 22.
    actions = {(a.kind, a.args) for a in RULES.legal_actions(state)}
    assert actions == {
        ("pair", ("heart:23", "heart:24")),
        ("pair", ("heart:23", "waste")),
        ("pair", ("heart:24", "waste")),
        ("draw", ()),
    }


# -- stock, waste and redeal -----------------------------------------------


def test_hh11_redeal_turns_the_waste_over_as_one_pile() -> None:
    """HH-11 and the redeal Decision: every later pass draws in the same order."""
    game = Game.new(CODE)
    deck = shuffled_deck(parse_code(CODE))
    first_pass = []
    for _ in range(26):
        out = game.apply(DRAW)
        first_pass.append(out.events[0]["card"])
        game = out.game
    assert first_pass == deck[25:51]
    assert game.state.stock == () and game.state.waste == (deck[51], *deck[25:51])
    out = game.apply(touch("stock"))
    assert out.is_move and out.events == ({"kind": "redeal", "cards": 27},)
    game = out.game
    assert game.state.waste == () and game.state.stock == (deck[51], *deck[25:51])
    passes = []
    for _ in range(2):
        drawn = []
        for _ in range(27):
            out = game.apply(DRAW)
            drawn.append(out.events[0]["card"])
            game = out.game
        passes.append(drawn)
        game = game.apply(DRAW).game  # redeal again: unlimited (HH-11)
    assert passes[0] == passes[1] == [deck[51], *deck[25:51]]
    assert game.moves == 26 + 1 + 2 * 28


def test_hh10_only_the_waste_top_can_be_played() -> None:
    game = game_at(board({25: "4H", 1: "KH"}, stock="KH", waste="4H 9H"))
    assert refused(game, pair("heart:25", "waste")).code == "rank_mismatch"


def test_hh12_draws_redeals_and_pairs_are_moves() -> None:
    game = game_at(board({25: "4H", 1: "KH"}, stock="4H", waste="9H"))
    game = game.apply(DRAW).game
    game = game.apply(pair("heart:25", "waste")).game
    game = game.apply(DRAW).game  # redeal of the single 9H
    assert game.moves == 3 and game.score == 10


# -- scoring and the end of the game ---------------------------------------


def test_hh19_heart_pair_20_waste_pair_10() -> None:
    cards = {23: "7H", 24: "7H", 25: "5H"} | {p: "KH" for p in range(1, 23)}
    game = game_at(board(cards, stock="QH", waste="5H"))
    out = game.apply(pair("heart:25", "waste"))
    assert out.points == 10
    out = out.game.apply(pair("heart:23", "heart:24"))
    assert out.points == 20 and out.game.score == 30 and out.game.progress == 3


def test_hh20_win_when_all_25_heart_cards_are_gone_even_with_a_stock() -> None:
    game = game_at(board({25: "4H"}, stock="KH QH", waste="4H"))
    assert game.status == "playing"
    out = game.apply(touch("waste")).game.apply(touch("heart:25"))
    assert out.game.status == "won" and out.game.progress == 25
    assert out.events[-1] == {"kind": "won"}
    assert refused(out.game, DRAW).code == "game_over"
    assert refused(out.game, UNDO).code == "game_over"


def test_hh20_a_won_game_offers_nothing_even_with_cards_in_the_stock() -> None:
    """HH-20 and the Decision "A win is final": once won, no hint, no legal action, no draw."""
    game = game_at(board({25: "4H"}, stock="KH QH", waste="4H"))
    won = game.apply(pair("heart:25", "waste")).game
    assert won.status == Status.WON and won.state.stock == ("KH", "QH")
    for hints in (won.hints(), RULES.hints(won.state), won.view()["hints"]):
        assert hints == {"framed": [], "matches": [], "dimmed": []}
    assert RULES.legal_actions(won.state) == [] and won.legal_actions() == []
    for action in (DRAW, touch("stock"), touch("waste")):
        with pytest.raises(IllegalAction) as info:
            RULES.apply(won.state, action)
        assert info.value.code == Refusal.GAME_OVER and str(info.value.code) == "game_over"


def test_hh20_a_solved_deal_ends_with_nothing_offered() -> None:
    """HH-20 on a real deal: the solver's winning line ends with empty hints."""
    code = "HH1-N-AAAAAAD"  # the solver wins it in a few nodes
    answer = solve(code, 200_000)
    assert answer.result == "won" and answer.actions
    game = Game.replay(code, answer.actions)
    assert game.status == "won"
    assert game.hints() == {"framed": [], "matches": [], "dimmed": []}
    assert game.legal_actions() == [] and RULES.legal_actions(game.state) == []


def test_hh19_a_won_game_scores_250() -> None:
    """HH-19: play a whole constructed game out: 250 points however it is won."""
    ranks = "A23456789TJQK"
    heart = {p: ranks[(p - 1) // 2] + "H" for p in range(1, 25)} | {25: "KH"}
    game = game_at(board(heart, stock="KH", waste="QH"))
    for _ in range(200):
        if game.status == "won":
            break
        actions = game.rules.legal_actions(game.state)
        pairs = [a for a in actions if a.kind == "pair"]
        game = game.apply(pairs[0] if pairs else DRAW).game
    assert game.status == "won" and game.score == 250


def test_hh21_stalemate_when_no_free_card_has_a_partner() -> None:
    state = board({25: "4H", 24: "4H", 23: "5H"} | {p: "KH" for p in range(1, 23)}, waste="9H")
    # free: 25 only (23, 24 under it); no other 4 anywhere free, in stock or waste.
    assert RULES.status(state) == "stalemate"


def test_hh21_a_partner_anywhere_in_the_stock_or_waste_is_not_a_stalemate() -> None:
    base = {25: "4H", 24: "4H"} | {p: "KH" for p in range(1, 24)}
    assert RULES.status(board(base, stock="9H 9H 4H", waste="2H")) == "playing"
    assert RULES.status(board(base, stock="9H", waste="4H 2H")) == "playing"
    assert RULES.status(board(base, stock="9H", waste="2H")) == "stalemate"


def test_hh21_two_free_heart_cards_of_a_rank_are_not_a_stalemate() -> None:
    cards = {23: "7H", 24: "7H"} | {p: "KH" for p in range(1, 23)}
    assert RULES.status(board(cards, waste="2H")) == "playing"


def test_hh21_pair_into_stalemate_reports_it_and_draw_and_undo_stay_allowed() -> None:
    cards = {25: "5H", 23: "4H", 24: "3H"} | {p: "KH" for p in range(1, 23)}
    game = game_at(board(cards, stock="9H", waste="5H"))
    out = game.apply(pair("heart:25", "waste"))
    assert out.game.status == "stalemate"
    assert out.events[-1] == {"kind": "stalemate", "message": "No more possible moves"}
    drawn = out.game.apply(DRAW).game
    assert drawn.status == "stalemate" and drawn.moves == 2
    undone = out.game.apply(UNDO).game
    assert undone.status == "playing" and undone.score == 0


# -- placement help --------------------------------------------------------


def test_hh18_framed_cards_have_a_free_partner_or_one_on_the_waste() -> None:
    cards = {20: "2H", 21: "6H", 22: "6H", 23: "9H", 24: "6H"} | {p: "KH" for p in range(1, 20)}
    game = game_at(board(cards, stock="KH", waste="9H"))
    # free: 23, 24 (nothing below them) -> 9H partners the waste; 6H alone.
    hints = RULES.hints(game.state)
    assert hints == {"framed": ["heart:23", "waste"], "matches": [], "dimmed": []}


def test_hh18_selection_dims_what_does_not_match() -> None:
    cards = {21: "9H", 22: "6H", 23: "9H", 24: "9H"}
    state = board(cards, stock="KH", waste="9H", selection="heart:23")
    hints = RULES.hints(state)
    assert hints["matches"] == ["heart:24", "waste"]
    # 21 is a 9H but covered: only free cards match (Decision).
    assert hints["dimmed"] == ["heart:21", "heart:22"]
    assert set(hints["framed"]) == {"heart:23", "heart:24", "waste"}


def test_hh18_selected_waste_matches_free_heart_cards() -> None:
    state = board({23: "2H", 24: "5H"}, stock="KH", waste="5H", selection="waste")
    hints = RULES.hints(state)
    assert hints["matches"] == ["heart:24"] and hints["dimmed"] == ["heart:23"]


# -- undo (HH-22, through Game) --------------------------------------------


def test_hh22_undo_restores_cards_and_points_and_clears_the_selection() -> None:
    game = game_at(board({23: "7H", 24: "7H", 1: "KH"}, stock="KH", waste="7H"))
    before = game
    game = game.apply(pair("heart:23", "heart:24")).game
    game = game.apply(touch("waste")).game
    assert game.score == 20 and game.state.selection == "waste"
    out = game.apply(UNDO)
    assert out.is_move and out.points == -20
    assert out.game.state == before.state and out.game.score == 0
    assert out.game.moves == 2  # undo counts and the counter never goes down


def test_hh22_undo_of_a_draw_clears_the_selection_made_after_it() -> None:
    game = Game.new(CODE).apply(DRAW).game.apply(touch("waste")).game
    undone = game.apply(UNDO).game
    assert undone.state == Game.new(CODE).state and undone.state.selection is None


def test_hh22_undo_reaches_back_100_moves_only() -> None:
    game = Game.new(CODE)
    states = [game.state]
    for _ in range(101):
        game = game.apply(DRAW).game
        states.append(game.state)
    for k in range(100):
        game = game.apply(UNDO).game
        assert game.state == states[100 - k]
    assert refused(game, UNDO).code == "nothing_to_undo"
    assert game.moves == 201


def test_clear_selection_keeps_everything_else() -> None:
    state = replace(Game.new(CODE).state, selection="heart:25")
    assert RULES.clear_selection(state) == Game.new(CODE).state


# -- what clients see (HH-6) -----------------------------------------------


def test_hh6_view_never_holds_the_stock_order() -> None:
    state = Game.new(CODE).apply(DRAW).game.state
    view = RULES.view(state)
    assert set(view) == {"heart", "stock_count", "waste_top", "waste_count", "selection"}
    assert view["stock_count"] == 25 and view["waste_top"] == "8H" and view["waste_count"] == 2
    shuffled = replace(state, stock=tuple(reversed(state.stock)))
    assert RULES.view(shuffled) == view and RULES.hints(shuffled) == RULES.hints(state)
    full = Game.new(CODE).apply(DRAW).game.view()
    assert "stock" not in json.dumps(full["board"]).replace("stock_count", "")


def test_view_heart_positions() -> None:
    view = RULES.view(Game.new(CODE).state)
    assert view["heart"][0] == {"pos": 1, "card": "8H", "free": False}
    assert view["heart"][24] == {"pos": 25, "card": "5H", "free": True}
    assert len(view["heart"]) == 25


def test_snapshot_holds_the_whole_state_for_fingerprints() -> None:
    state = Game.new(CODE).state
    snap = RULES.snapshot(state)
    assert snap["stock"] == list(state.stock) and snap["waste"] == ["TH"]
    json.dumps(snap)
    other = replace(Game.new(CODE), state=replace(state, stock=tuple(reversed(state.stock))))
    assert other.fingerprint() != Game.new(CODE).fingerprint()


def test_hh24_replay_reproduces_a_game() -> None:
    log = [DRAW, touch("heart:25"), touch("waste"), DRAW, UNDO, touch("stock")]
    game = Game.new(CODE)
    for action in log:
        game = game.apply(action).game
    again = Game.replay(CODE, log)
    assert (again.state, again.score, again.moves) == (game.state, game.score, game.moves)
