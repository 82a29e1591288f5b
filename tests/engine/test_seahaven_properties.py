"""Property tests for Seahaven Towers: random play on random deals, checked by an independent model.

The model below re-implements the rules (SH-4..SH-12, SH-15..SH-17, SH-20 and the
Decisions) from the spec text alone, on plain lists, without importing anything from
``engine.seahaven``; the engine must agree with it on every action, accepted or refused.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Action, Game, IllegalAction
from engine.codes import make_code
from engine.seahaven import RULES, State  # only to build positions and call the rules under test

RANKS = "A23456789TJQK"
SUITS = "SHDC"
ALL_CARDS = sorted(r + s for s in SUITS for r in RANKS)
UNDO = Action("undo")
UNDO_LIMIT = 100


def rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


@dataclass
class Model:
    """A position as plain lists: columns bottom first, cells, foundation counts by suit."""

    cols: list[list[str]]
    cells: list[str | None]
    found: dict[str, int]


def model_of(state: Any) -> Model:
    return Model(
        [list(c) for c in state.columns], list(state.cells), dict(zip(SUITS, state.foundations, strict=True))
    )


def locate(text: Any, ncells: int) -> tuple[str, Any] | None:
    """("col", 0..9) / ("cell", 0..n-1) / ("found", suit) / ("found", None) or None."""
    if not isinstance(text, str):
        return None
    if text == "found":
        return ("found", None)
    kind, _, rest = text.partition(":")
    if kind == "found" and rest in SUITS and len(rest) == 1:
        return ("found", rest)
    if kind in ("col", "cell") and rest.isdigit() and not rest.startswith("0"):
        index = int(rest) - 1
        size = 10 if kind == "col" else ncells
        if 0 <= index < size:
            return (kind, index)
    return None


def lift(model: Model, src: tuple[str, Any], count: int) -> list[str] | None:
    """SH-3, SH-9, SH-17: the cards a move would take, or None."""
    kind, where = src
    if kind == "col":
        col = model.cols[where]
        if count > len(col):
            return None
        cards = col[len(col) - count :]
        for a, b in pairwise(cards):
            if a[1] != b[1] or rank(a) != rank(b) + 1:
                return None
        return cards
    if count != 1:
        return None
    if kind == "cell":
        card = model.cells[where]
        return None if card is None else [card]
    if where is None or model.found[where] == 0:
        return None
    return [RANKS[model.found[where] - 1] + where]


def check_move(model: Model, src_text: Any, dst_text: Any, count: Any) -> tuple[Model, int] | None:
    """The model's verdict on an explicit move: the next position and SH-20 points, or None."""
    ncells = len(model.cells)
    src, dst = locate(src_text, ncells), locate(dst_text, ncells)
    if src is None or dst is None or src == ("found", None):
        return None
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        return None
    cards = lift(model, src, count)
    if not cards:
        return None
    head = cards[0]
    if dst == ("found", None):
        dst = ("found", head[1])
    if dst == src:
        return None
    kind: str
    where: Any  # an index, or a suit for a foundation
    kind, where = dst
    if kind == "found":
        if count != 1 or head[1] != where or model.found[where] != rank(head) - 1:
            return None
    elif kind == "cell":
        if count != 1 or model.cells[where] is not None:
            return None
    else:
        target = model.cols[where]
        if target:
            if target[-1][1] != head[1] or rank(target[-1]) != rank(head) + 1:
                return None
        elif rank(head) != 13:
            return None
        free = model.cells.count(None)
        empty = sum(1 for i, c in enumerate(model.cols) if not c and i != where)
        if count > (free + 1) * 2**empty:
            return None
    return carry_out(model, src, dst, cards), score_of(src[0], kind)


def score_of(src_kind: str, dst_kind: str) -> int:
    """SH-20, straight from the spec text."""
    if dst_kind == "found":
        return 10
    if src_kind == "cell" and dst_kind == "col":
        return 5
    return 0


def carry_out(model: Model, src: tuple[str, Any], dst: tuple[str, Any], cards: list[str]) -> Model:
    new = Model([list(c) for c in model.cols], list(model.cells), dict(model.found))
    if src[0] == "col":
        del new.cols[src[1]][-len(cards) :]
    elif src[0] == "cell":
        new.cells[src[1]] = None
    else:
        new.found[src[1]] -= 1
    if dst[0] == "col":
        new.cols[dst[1]].extend(cards)
    elif dst[0] == "cell":
        new.cells[dst[1]] = cards[0]
    else:
        new.found[dst[1]] += 1
    return new


def check_tap(model: Model, at: Any) -> tuple[Model, int] | None:
    """SH-15: a column top or cell card to its own foundation."""
    src = locate(at, len(model.cells))
    if src is None or src[0] == "found":
        return None
    return check_move(model, at, "found", 1)


def check_double_tap(model: Model, at: Any, count: Any) -> tuple[Model, int] | None:
    """SH-16 and the Decisions: foundation, accepting column, empty column, free cell."""
    src = locate(at, len(model.cells))
    if src is None or src[0] == "found" or not isinstance(count, int) or count < 1:
        return None
    cards = lift(model, src, count)
    if not cards:
        return None
    head = cards[0]
    candidates: list[str] = ["found"] if count == 1 else []
    candidates += [f"col:{i + 1}" for i, c in enumerate(model.cols) if c]
    whole_king_column = src[0] == "col" and count == len(model.cols[src[1]])
    if not (rank(head) == 13 and whole_king_column):
        candidates += [f"col:{i + 1}" for i, c in enumerate(model.cols) if not c]
    if src[0] != "cell" and count == 1:
        candidates += [f"cell:{i + 1}" for i, c in enumerate(model.cells) if c is None]
    for dst in candidates:
        result = check_move(model, at, dst, count)
        if result is not None:
            return result
    return None


def check(model: Model, action: Action) -> tuple[Model, int] | None:
    if action.kind == "move" and len(action.args) == 3:
        return check_move(model, *action.args)
    if action.kind == "tap" and len(action.args) == 1:
        return check_tap(model, action.args[0])
    if action.kind == "double_tap" and len(action.args) == 2:
        return check_double_tap(model, *action.args)
    return None


def all_locations(ncells: int) -> list[str]:
    return [
        *(f"col:{i}" for i in range(1, 11)),
        *(f"cell:{i}" for i in range(1, ncells + 1)),
        *(f"found:{s}" for s in SUITS),
    ]


def all_candidate_moves(ncells: int) -> list[Action]:
    locs = all_locations(ncells)
    return [
        Action("move", (src, dst, count))
        for src in locs
        for dst in locs
        for count in range(1, 14)
        if src != dst
    ]


def model_status(model: Model) -> str:
    """Decision on SH-13, from the model: moves off foundations and cell to cell do not count."""
    if sum(model.found.values()) == 52:
        return "won"
    ncells = len(model.cells)
    sources = [(f"col:{i + 1}", len(col)) for i, col in enumerate(model.cols)]
    sources += [(f"cell:{i}", 1) for i in range(1, ncells + 1)]
    for src, most in sources:
        dests = [f"col:{i}" for i in range(1, 11)] + ["found"]
        if src.startswith("col"):
            dests += [f"cell:{i}" for i in range(1, ncells + 1)]
        for dst in dests:
            for count in range(1, most + 1):
                if check_move(model, src, dst, count) is not None:
                    return "playing"
    return "stuck"


def cards_in_view(view: dict[str, Any]) -> list[str]:
    """Every card the view shows or implies (a foundation top implies the cards below it)."""
    cards = [c for col in view["columns"] for c in col]
    cards += [c for c in view["cells"] if c is not None]
    for top in view["foundations"].values():
        if top is not None:
            cards += [r + top[1] for r in RANKS[: rank(top)]]
    return cards


def check_invariants(game: Game) -> None:
    """52 cards accounted for, in the state and in the view."""
    state = game.state
    cards = [c for col in state.columns for c in col] + [c for c in state.cells if c]
    for suit, top in zip(SUITS, state.foundations, strict=True):
        cards += [r + suit for r in RANKS[:top]]
    assert sorted(cards) == ALL_CARDS
    view_cards = cards_in_view(game.rules.view(state))
    assert sorted(view_cards) == ALL_CARDS
    assert max(Counter(view_cards).values()) == 1
    assert game.progress == sum(state.foundations)


def random_action(rnd: random.Random, game: Game, can_undo: bool) -> Action | None:
    """Legal moves mostly, plus taps, double taps, arbitrary moves and undos."""
    ncells = len(game.state.cells)
    locs = [*all_locations(ncells), "found", "col:11", "cell:5"]
    roll = rnd.random()
    if roll < 0.15 and can_undo:
        return UNDO
    if roll < 0.27:
        return Action("tap", (rnd.choice(locs),))
    if roll < 0.40:
        return Action("double_tap", (rnd.choice(locs), rnd.choice((1, 1, 1, 2, 3))))
    if roll < 0.45:
        return Action("move", (rnd.choice(locs), rnd.choice(locs), rnd.randint(1, 4)))
    legal = game.rules.legal_actions(game.state)
    if legal:
        return rnd.choice(legal)
    return UNDO if can_undo else None


class Ledger:
    """The expected score and undo history, kept independently of Game (SH-18, SH-20, SH-21)."""

    def __init__(self) -> None:
        self.banked = 0  # points of moves that fell out of the undo window
        self.recent: list[tuple[Any, int, int]] = []  # (state before, score before, points)

    @property
    def score(self) -> int:
        return self.banked + sum(points for _, _, points in self.recent)

    def push(self, state: Any, score: int, points: int) -> None:
        self.recent.append((state, score, points))
        if len(self.recent) > UNDO_LIMIT:
            self.banked += self.recent.pop(0)[2]

    def pop(self) -> tuple[Any, int]:
        state, score, _ = self.recent.pop()
        return state, score


def play_undo(game: Game, ledger: Ledger) -> Game:
    """Undo restores the exact previous state and score."""
    if not ledger.recent:
        try:
            game.apply(UNDO)
        except IllegalAction as error:
            assert error.code == "nothing_to_undo"
            return game
        raise AssertionError("undo accepted with nothing to undo")
    state, score = ledger.pop()
    after = game.apply(UNDO).game
    assert after.state == state
    assert after.score == score == ledger.score
    assert after.moves == game.moves + 1
    return after


def play_action(game: Game, action: Action, ledger: Ledger) -> Game | None:
    """Apply one non-undo action; the engine and the model must agree. None when refused."""
    expected = check(model_of(game.state), action)
    try:
        outcome = game.apply(action)
    except IllegalAction as error:
        assert expected is None, f"{action.to_text()} refused ({error.code}) but legal"
        assert error.code and error.reason
        return None
    assert expected is not None, f"{action.to_text()} accepted but illegal"
    model, points = expected
    assert model_of(outcome.game.state) == model
    assert outcome.points == points
    assert outcome.is_move
    assert [e["points"] for e in outcome.events] == [points]
    ledger.push(game.state, game.score, points)
    assert outcome.game.score == ledger.score
    return outcome.game


SEEDS = st.integers(min_value=0, max_value=2**35 - 1)
VARIANTS = st.sampled_from(["C4", "C2", "C1"])


@settings(max_examples=80, deadline=None)
@given(seed=SEEDS, variant=VARIANTS, rnd=st.randoms(use_true_random=False))
def test_random_play_agrees_with_the_model(seed: int, variant: str, rnd: random.Random) -> None:
    """SH-3..SH-21: every action accepted or refused as the model says; undo, score, replay."""
    code = make_code("SH", variant, seed)
    game = Game.new(code)
    ledger = Ledger()
    log: list[Action] = []
    for step in range(160):
        if game.status == "won":
            break
        action = random_action(rnd, game, bool(ledger.recent) or rnd.random() < 0.05)
        if action is None:
            break
        if action.kind == "undo":
            before = game
            game = play_undo(game, ledger)
            if game is not before:
                log.append(action)
        else:
            after = play_action(game, action, ledger)
            if after is None:
                continue
            game = after
            log.append(action)
        check_invariants(game)
        if step % 10 == 0:
            assert game.status == model_status(model_of(game.state))
    replayed = Game.replay(code, log)
    assert replayed.state == game.state
    assert (replayed.score, replayed.moves) == (game.score, game.moves)
    assert replayed.fingerprint() == game.fingerprint()
    assert game.status == model_status(model_of(game.state))


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, variant=VARIANTS, rnd=st.randoms(use_true_random=False), steps=st.integers(0, 80))
def test_legal_actions_are_exactly_the_accepted_moves(
    seed: int, variant: str, rnd: random.Random, steps: int
) -> None:
    """legal_actions lists every explicit move the engine and the model accept, and no other."""
    game = Game.new(make_code("SH", variant, seed))
    for _ in range(steps):
        legal = game.rules.legal_actions(game.state)
        if not legal or game.status == "won":
            break
        game = game.apply(rnd.choice(legal)).game
    listed = {a.args for a in game.rules.legal_actions(game.state)}
    assert len(listed) == len(game.rules.legal_actions(game.state))
    model = model_of(game.state)
    accepted = set()
    for action in all_candidate_moves(len(game.state.cells)):
        verdict = check(model, action)
        try:
            game.rules.apply(game.state, action)
        except IllegalAction:
            assert verdict is None, action.to_text()
            continue
        assert verdict is not None, action.to_text()
        accepted.add(action.args)
    assert listed == accepted
    hints = game.rules.hints(game.state)
    assert set(hints["movable"]) == {src for src, _, _ in accepted}
    sources = [f"col:{i}" for i in range(1, 11)] + [f"cell:{i}" for i in range(1, len(game.state.cells) + 1)]
    assert hints["tappable"] == [at for at in sources if check_tap(model, at) is not None]


def random_position(rnd: random.Random, ncells: int) -> Any:
    """A rule-valid position (not necessarily reachable) rich in long runs and empty columns."""
    found = [min(13, int(14 * rnd.random() ** 3)) for _ in SUITS]
    left = [r + s for s, top in zip(SUITS, found, strict=True) for r in RANKS[top:]]
    rnd.shuffle(left)
    cells: list[str | None] = [left.pop() if left and rnd.random() < 0.5 else None for _ in range(ncells)]
    chunks: list[list[str]] = []
    remaining = set(left)
    for card in sorted(left, key=lambda c: rnd.random() * 6 - rank(c)):  # high cards start runs
        if card not in remaining:
            continue
        chunk = [card]
        remaining.discard(card)
        while rank(chunk[-1]) > 1 and rnd.random() < 0.85:
            lower = RANKS[rank(chunk[-1]) - 2] + card[1]
            if lower not in remaining:
                break
            chunk.append(lower)
            remaining.discard(lower)
        chunks.append(chunk)
    used = rnd.randint(min(6, len(chunks)), 10) if chunks else 0
    columns: list[list[str]] = [[] for _ in range(10)]
    targets = rnd.sample(range(10), used)
    for chunk in chunks:
        columns[rnd.choice(targets)].extend(chunk)
    return State(tuple(tuple(c) for c in columns), tuple(cells), tuple(found))


@settings(max_examples=100, deadline=None)
@given(variant=VARIANTS, rnd=st.randoms(use_true_random=False))
def test_random_positions_agree_with_the_model(variant: str, rnd: random.Random) -> None:
    """SH-4..SH-17 on arbitrary positions: moves, taps, double taps, status and legal_actions."""
    ncells = {"C4": 4, "C2": 2, "C1": 1}[variant]
    state = random_position(rnd, ncells)
    model = model_of(state)
    accepted = set()
    locs = [*all_locations(ncells), "found"]
    candidates = all_candidate_moves(ncells) + [
        Action(kind, (at, count)) if kind == "double_tap" else Action(kind, (at,))
        for kind in ("tap", "double_tap")
        for at in locs
        for count in range(1, 14)
        if kind == "double_tap" or count == 1
    ]
    for action in candidates:
        verdict = check(model, action)
        try:
            step = RULES.apply(state, action)
        except IllegalAction:
            assert verdict is None, action.to_text()
            continue
        assert verdict is not None, action.to_text()
        assert (model_of(step.state), step.points) == verdict, action.to_text()
        if action.kind == "move":
            accepted.add(action.args)
    assert {a.args for a in RULES.legal_actions(state)} == accepted
    assert RULES.status(state) == model_status(model)


@settings(max_examples=100, deadline=None)
@given(variant=VARIANTS, rnd=st.randoms(use_true_random=False))
def test_hint_targets_are_exactly_the_legal_moves(variant: str, rnd: random.Random) -> None:
    """Hints ``targets``/``counts`` (SH-4..SH-11, SH-17) list every legal move and only those.

    Every target is accepted by ``apply`` (and by the model) with the count the
    hints give; every legal move's destination is listed; and a source and a
    destination never have two legal counts, so one count per target is exact.
    """
    ncells = {"C4": 4, "C2": 2, "C1": 1}[variant]
    state = random_position(rnd, ncells)
    hints = RULES.hints(state)
    targets, counts = hints["targets"], hints["counts"]
    assert list(targets) == hints["movable"]
    listed = set()
    for src, dsts in targets.items():
        assert dsts and len(dsts) == len(set(dsts)), src
        assert set(counts.get(src, {})) <= set(dsts), src
        for dst in dsts:
            count = counts.get(src, {}).get(dst, 1)
            assert count > 1 or dst not in counts.get(src, {}), (src, dst)
            action = Action("move", (src, dst, count))
            RULES.apply(state, action)  # raises IllegalAction if the hint were wrong
            assert check(model_of(state), action) is not None, action.to_text()
            listed.add((src, dst, count))
    legal = [a.args for a in RULES.legal_actions(state)]
    assert set(legal) == listed
    assert len(legal) == len({(src, dst) for src, dst, _ in legal})  # one count per pair
