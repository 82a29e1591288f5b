"""Heart to Heart properties over random deals and random play (hypothesis).

Every accepted or refused action is checked against an independent model of
the rules written here from ``deal.md``'s geometry table, not from the engine.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Action, Game, IllegalAction
from engine.codes import MAX_SEED, RANKS, make_code
from engine.hearts import RULES

# deal.md, "The heart's geometry": rows from the top, card centres in half widths.
ROW_CENTRES = [(1, 3, 7, 9), (0, 2, 4, 6, 8, 10), (1, 3, 5, 7, 9), (2, 4, 6, 8), (3, 5, 7)]
ROW_CENTRES += [(4, 6), (5,)]


def _covers() -> dict[int, list[int]]:
    """Position -> the positions of the row below at centre x-1 and x+1."""
    pos: dict[tuple[int, int], int] = {}
    for r, xs in enumerate(ROW_CENTRES):
        for x in xs:
            pos[(r, x)] = len(pos) + 1
    return {p: [pos[(r + 1, x + d)] for d in (-1, 1) if (r + 1, x + d) in pos] for (r, x), p in pos.items()}


COVERS = _covers()
LOCATIONS = [f"heart:{p}" for p in range(1, 26)] + ["waste", "stock"]
FULL_DECK = Counter({r + "H": 4 for r in RANKS})
UNDO = Action("undo")


def my_free(heart: tuple[str | None, ...]) -> set[int]:
    """Free positions (1-based): present and every covering card gone (HH-4)."""
    return {
        p for p in range(1, 26) if heart[p - 1] is not None and all(heart[c - 1] is None for c in COVERS[p])
    }


def card_at(state: Any, free: set[int], loc: str) -> str | None:
    """The playable card at a pairable location, or None when there is none."""
    if loc == "waste":
        return state.waste[-1] if state.waste else None
    if loc.startswith("heart:") and loc[6:].isdigit() and 1 <= int(loc[6:]) <= 25:
        p = int(loc[6:])
        return state.heart[p - 1] if p in free else None
    return None


def my_legal(state: Any, action: Action, history: int, free: set[int] | None = None) -> bool:
    """Whether the rules accept ``action`` (touch, pair, draw, undo), judged independently."""
    free = my_free(state.heart) if free is None else free
    if action.kind == "undo":
        return history > 0
    if action.kind == "draw" or (action.kind == "touch" and action.args[0] == "stock"):
        return bool(state.stock or state.waste)
    if action.kind == "touch":
        return card_at(state, free, str(action.args[0])) is not None
    if action.kind == "pair":
        a, b = str(action.args[0]), str(action.args[1])
        ca, cb = card_at(state, free, a), card_at(state, free, b)
        return a != b and ca is not None and cb is not None and ca[0] == cb[0]
    return False


def my_status(state: Any) -> str:
    """HH-20 / HH-21 from scratch."""
    if all(c is None for c in state.heart):
        return "won"
    free = [state.heart[p - 1][0] for p in my_free(state.heart)]
    pile = {c[0] for c in (*state.stock, *state.waste)}
    for i, r in enumerate(free):
        if r in pile or r in free[:i] + free[i + 1 :]:
            return "playing"
    return "stalemate"


def check_invariants(game: Game) -> None:
    state = game.state
    cards = [c for c in state.heart if c is not None] + [*state.stock, *state.waste, *state.removed]
    assert Counter(cards) == FULL_DECK  # 52 cards accounted for
    removed_from_heart = sum(c is None for c in state.heart)
    assert game.progress == removed_from_heart
    assert game.score == 10 * removed_from_heart  # HH-19
    assert game.status == my_status(state)
    view = RULES.view(state)
    free = my_free(state.heart)
    assert [c["free"] for c in view["heart"]] == [p in free for p in range(1, 26)]
    assert [c["card"] for c in view["heart"]] == list(state.heart)
    # HH-6: the view and hints do not depend on the stock's order.
    shuffled = replace(state, stock=tuple(random.Random(7).sample(state.stock, len(state.stock))))
    assert RULES.view(shuffled) == view and RULES.hints(shuffled) == RULES.hints(state)
    assert view["waste_top"] == (state.waste[-1] if state.waste else None)
    json.dumps(game.view())


def random_action(game: Game, rng: random.Random) -> Action:
    """Mostly useful play (so games progress), with refusable junk mixed in."""
    roll = rng.random()
    if roll < 0.35:
        legal = game.legal_actions()
        pairs = [a for a in legal if a.kind == "pair"]
        if pairs and rng.random() < 0.7:
            return rng.choice(pairs)
        if legal:
            return rng.choice(legal)
    if roll < 0.7:
        framed = RULES.hints(game.state)["framed"]
        return Action("touch", (rng.choice([*framed, "stock", "waste"]),))
    if roll < 0.9:
        return Action("touch", (rng.choice([*LOCATIONS, "heart:0", "col:1"]),))
    if roll < 0.95:
        return Action("pair", (rng.choice(LOCATIONS), rng.choice(LOCATIONS)))
    return UNDO


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, MAX_SEED), play=st.integers(0, 2**32), steps=st.integers(50, 400))
def test_random_play_keeps_the_rules(seed: int, play: int, steps: int) -> None:
    """HH-1..HH-22 invariants along random play, then HH-24 replay of the log."""
    code = make_code("HH", "N", seed)
    rng = random.Random(play)
    game = Game.new(code)
    mine: list[tuple[Any, int]] = []  # my own undo stack: (state, score) before each move
    log: list[Action] = []
    check_invariants(game)
    for _ in range(steps):
        if game.status == "won":
            break
        action = random_action(game, rng)
        expected = my_legal(game.state, action, len(mine))
        try:
            out = game.apply(action)
        except IllegalAction:
            assert not expected, action
            continue
        assert expected, action
        if action.kind == "undo":
            state, score = mine.pop()
            assert out.game.state == replace(state, selection=None)  # HH-22
            assert out.game.score == score
        elif out.is_move:
            mine = [*mine[-99:], (game.state, game.score)]
            assert out.game.state.selection is None  # pairs, draws, redeals clear it
        else:
            assert action.kind == "touch" and out.game.state.stock == game.state.stock
        assert out.game.moves == game.moves + (1 if out.is_move else 0)
        log.append(action)
        game = out.game
        check_invariants(game)
    again = Game.replay(code, log)
    assert (again.state, again.score, again.moves) == (game.state, game.score, game.moves)
    assert again.fingerprint() == game.fingerprint()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, MAX_SEED))
def test_legal_actions_are_exactly_the_possible_pairs_and_draw(seed: int) -> None:
    """Every explicit pair once (HH-7) plus draw, compared with a brute force over locations."""
    game = Game.new(make_code("HH", "N", seed))
    rng = random.Random(seed)
    for _ in range(60):
        state = game.state
        listed = RULES.legal_actions(state)
        as_sets = [frozenset(a.args) for a in listed if a.kind == "pair"]
        assert len(as_sets) == len(set(as_sets))
        pairable = LOCATIONS[:-1]
        free = my_free(state.heart)
        brute = {
            frozenset((a, b))
            for i, a in enumerate(pairable)
            for b in pairable[i:]
            if my_legal(state, Action("pair", (a, b)), 0, free)
        }
        assert set(as_sets) == brute
        assert any(a.kind == "draw" for a in listed) == bool(state.stock or state.waste)
        if game.status == "won" or not listed:
            break
        game = game.apply(rng.choice(listed)).game
