"""Heart to Heart: the rules of ``docs/rules/heart-to-heart.md`` (HH-1 .. HH-25).

The state is a frozen :class:`HeartState`; :data:`RULES` is the module's
:class:`~engine.api.Rules` object. Score, move counter and undo live in
:class:`engine.game.Game`, so here a step only reports its points and whether
it is a move (HH-12, HH-19).

Locations: ``heart:1`` .. ``heart:25`` (row by row from the top, ``deal.md``),
``waste`` (its top card) and ``stock``.

Actions (``engine.api.ACTION_FIELDS``):

- ``touch at`` -- the original's interaction model (HH-10/11, HH-13..HH-16).
  Touching a free heart card or the waste selects it; touching it again
  deselects it; touching a card of the same rank removes the pair; touching a
  card of another rank selects that card instead (accepted, not a move, with
  the reason "Must be the same rank"). Touching the stock draws or redeals.
- ``pair a b`` -- an explicit pair: two free heart cards, or a free heart card
  and ``waste``. Same validation as touches, but a rank mismatch is refused.
- ``draw`` -- draw the stock's top card onto the waste, or redeal when the
  stock is empty.

Refusals (:class:`~engine.api.IllegalAction` codes, members of
:class:`~engine.vocabulary.Refusal`; a refusal changes nothing):

====================== ==================================================
code                   when
====================== ==================================================
``game_over``          the position is won (HH-20): a win is final, so even
                       a draw from a stock that still holds cards is refused
``unsupported_action`` an action kind Heart to Heart does not have
``bad_location``       not ``heart:1``..``heart:25`` / ``waste`` / ``stock``
                       (``stock`` is also refused as half of a pair)
``empty_position``     the heart position's card was already removed (HH-8)
``not_free``           "That card is covered" (HH-4, HH-14)
``waste_empty``        the waste has no card to play
``same_card``          both halves of an explicit pair are the same location
``rank_mismatch``      "Must be the same rank": explicit pair of two ranks
``nothing_to_draw``    stock and waste are both empty (a stock touch or draw)
====================== ==================================================

``engine.game.Game`` adds ``nothing_to_undo``.

Statuses (:class:`~engine.vocabulary.Status`): ``playing``, ``won`` (HH-20)
and ``stalemate`` (HH-21, still undoable). Once won, ``legal_actions`` is
empty and ``hints`` offer nothing.

Events (``Step.events``; small JSON-ready dicts):

- ``{"kind": "select", "at": loc, "card": card}`` -- a touch selected a card
  (also the HH-16 reselect, which carries ``Step.reason``).
- ``{"kind": "deselect", "at": loc}`` -- the selected card was touched again.
- ``{"kind": "pair", "cards": [{"at": loc, "card": card}, ...], "points": p,
  "freed": [loc, ...]}`` -- a pair left the game; ``freed`` lists the heart
  positions it uncovered (HH-9).
- ``{"kind": "draw", "card": card}`` -- the stock's top card went onto the waste.
- ``{"kind": "redeal", "cards": n}`` -- the waste (n cards) became the stock.
- ``{"kind": "won"}`` / ``{"kind": "stalemate", "message": "No more possible
  moves"}`` -- appended to the pair that ended the game or stalled it (HH-20/21).

Redeal (Decision): the waste is turned over as one pile, so its bottom card
(the first one that went onto it in the last pass; at the first redeal, the
dealt waste card ``deck[51]``) is the stock's new top and every later pass
draws the remaining cards in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from engine.api import Action, IllegalAction, Rules, Step, json_cards, json_strings
from engine.codes import GameCode, shuffled_deck
from engine.vocabulary import ActionKind, Refusal, Status

# Names read on every action, bound once (why: engine/game.py).
_DRAW = ActionKind.DRAW.value
_PAIR = ActionKind.PAIR.value
_TOUCH = ActionKind.TOUCH.value
_PLAYING = Status.PLAYING
_STALEMATE = Status.STALEMATE
_WON = Status.WON

HEART_SIZE = 25
HEART_PAIR_POINTS = 20  # HH-19: 10 for each heart card
WASTE_PAIR_POINTS = 10  # HH-19: the waste card scores nothing
SAME_RANK = "Must be the same rank"
NO_MORE_MOVES = "No more possible moves"

# deal.md, "The heart's geometry": each row from the top, the centre x of its cards in half-card
# widths; positions are numbered row by row, left to right. Every drawing of the heart reads it.
HEART_ROWS: tuple[tuple[int, ...], ...] = (
    (1, 3, 7, 9),
    (0, 2, 4, 6, 8, 10),
    (1, 3, 5, 7, 9),
    (2, 4, 6, 8),
    (3, 5, 7),
    (4, 6),
    (5,),
)

# deal.md: "Covered by" table, positions 1..25 -> the positions covering them.
COVERED_BY: dict[int, tuple[int, ...]] = {
    1: (5, 6), 2: (6, 7), 3: (8, 9), 4: (9, 10),
    5: (11,), 6: (11, 12), 7: (12, 13), 8: (13, 14), 9: (14, 15), 10: (15,),
    11: (16,), 12: (16, 17), 13: (17, 18), 14: (18, 19), 15: (19,),
    16: (20,), 17: (20, 21), 18: (21, 22), 19: (22,),
    20: (23,), 21: (23, 24), 22: (24,),
    23: (25,), 24: (25,),
    25: (),
}  # fmt: skip

# The same tables on 0-based indexes, which is how the state stores the heart.
_COVERS_IDX: tuple[tuple[int, ...], ...] = tuple(
    tuple(c - 1 for c in COVERED_BY[p]) for p in range(1, HEART_SIZE + 1)
)
# index -> the indexes it covers (the cards that may become free when it leaves)
_COVERING_IDX: tuple[tuple[int, ...], ...] = tuple(
    tuple(q for q in range(HEART_SIZE) if i in _COVERS_IDX[q]) for i in range(HEART_SIZE)
)
HEART_LOCATIONS: tuple[str, ...] = tuple(f"heart:{p}" for p in range(1, HEART_SIZE + 1))
WASTE = "waste"
STOCK = "stock"
_HEART_INDEX: dict[str, int] = {loc: i for i, loc in enumerate(HEART_LOCATIONS)}


@dataclass(frozen=True, slots=True)
class HeartState:
    """One position of the game.

    ``stock`` lists the face-down stock from its top (next drawn) down, exactly
    like ``deal.md``'s vectors; ``waste`` lists the waste from the bottom up, so
    its top is the last item. ``removed`` holds every card that left the game,
    in order. ``free`` (0-based free heart indexes) and ``status`` are derived
    from the rest and cached, because ``Game.apply`` asks for the status on
    every action; build states with :func:`make_state` to keep them right.
    """

    heart: tuple[str | None, ...]
    stock: tuple[str, ...]
    waste: tuple[str, ...]
    selection: str | None = None
    removed: tuple[str, ...] = ()
    free: tuple[int, ...] = ()
    status: Status = Status.PLAYING


def free_indexes(heart: tuple[str | None, ...]) -> tuple[int, ...]:
    """0-based indexes of the heart cards nothing covers any more (HH-3, HH-4)."""
    return tuple(
        i for i in range(HEART_SIZE) if heart[i] is not None and all(heart[c] is None for c in _COVERS_IDX[i])
    )


def compute_status(
    heart: tuple[str | None, ...],
    free: tuple[int, ...],
    stock: tuple[str, ...],
    waste: tuple[str, ...],
) -> Status:
    """``won`` (HH-20), ``stalemate`` (HH-21) or ``playing``.

    Stalemate counts a partner anywhere in the stock or waste, not only the
    waste top: drawing can still bring it up.
    """
    if heart.count(None) == HEART_SIZE:
        return _WON
    ranks = [cast(str, heart[i])[0] for i in free]
    if len(set(ranks)) < len(ranks):
        return _PLAYING
    pile = {card[0] for card in stock}
    pile.update(card[0] for card in waste)
    return _PLAYING if any(r in pile for r in ranks) else _STALEMATE


def make_state(
    heart: tuple[str | None, ...] | list[str | None],
    stock: tuple[str, ...] | list[str] = (),
    waste: tuple[str, ...] | list[str] = (),
    selection: str | None = None,
    removed: tuple[str, ...] | list[str] = (),
) -> HeartState:
    """A state with its derived fields (free cards, status) filled in."""
    heart_t = tuple(heart)
    if len(heart_t) != HEART_SIZE:
        raise ValueError(f"the heart has {HEART_SIZE} positions, got {len(heart_t)}")
    stock_t, waste_t = tuple(stock), tuple(waste)
    free = free_indexes(heart_t)
    status = compute_status(heart_t, free, stock_t, waste_t)
    return HeartState(heart_t, stock_t, waste_t, selection, tuple(removed), free, status)


class HeartRules:
    """The :class:`~engine.api.Rules` of Heart to Heart."""

    game = "HH"
    statuses: tuple[Status, ...] = (Status.PLAYING, Status.WON, Status.STALEMATE)
    progress_total = HEART_SIZE

    # -- dealing -----------------------------------------------------------

    def deal(self, code: GameCode) -> HeartState:
        """HH-2 and deal.md: 25 heart cards, 26 in the stock, the last on the waste."""
        deck = shuffled_deck(code)
        return make_state(tuple(deck[:25]), tuple(deck[25:51]), (deck[51],))

    # -- actions -----------------------------------------------------------

    def apply(self, state: HeartState, action: Action) -> Step[HeartState]:
        """Apply a touch, pair or draw; raise IllegalAction and change nothing otherwise.

        A win is final (HH-20): a won position refuses everything, even a draw
        from a stock that still holds cards.
        """
        if state.status is _WON:
            raise IllegalAction(Refusal.GAME_OVER, "The game is won")
        kind = action.kind
        if kind == _TOUCH:
            return _touch(state, action.args[0])
        if kind == _PAIR:
            return _explicit_pair(state, action.args[0], action.args[1])
        if kind == _DRAW:
            return _draw(state)
        raise IllegalAction(Refusal.UNSUPPORTED_ACTION, f"Heart to Heart has no {kind!r} action")

    def legal_actions(self, state: HeartState) -> list[Action]:
        """Every explicit pair (each unordered pair once, heart first) and draw; none once won."""
        if state.status is _WON:
            return []
        by_rank: dict[str, list[int]] = {}
        for i, card in _free_cards(state):
            by_rank.setdefault(card[0], []).append(i)
        actions: list[Action] = []
        for group in by_rank.values():
            for n, i in enumerate(group):
                for j in group[n + 1 :]:
                    actions.append(Action(_PAIR, (HEART_LOCATIONS[i], HEART_LOCATIONS[j])))
        if state.waste:
            for i in by_rank.get(state.waste[-1][0], ()):
                actions.append(Action(_PAIR, (HEART_LOCATIONS[i], WASTE)))
        if state.stock or state.waste:
            actions.append(Action(_DRAW))
        return actions

    # -- queries -----------------------------------------------------------

    def status(self, state: HeartState) -> Status:
        return state.status

    def progress(self, state: HeartState) -> int:
        """Heart cards removed (HH-19: ten points each)."""
        return state.heart.count(None)

    def clear_selection(self, state: HeartState) -> HeartState:
        if state.selection is None:
            return state
        return HeartState(
            state.heart, state.stock, state.waste, None, state.removed, state.free, state.status
        )

    def view(self, state: HeartState) -> dict[str, Any]:
        """The public board: heart cards, counts, the waste top; never the stock (HH-6)."""
        free = set(state.free)
        return {
            "heart": [{"pos": i + 1, "card": card, "free": i in free} for i, card in enumerate(state.heart)],
            "stock_count": len(state.stock),
            "waste_top": state.waste[-1] if state.waste else None,
            "waste_count": len(state.waste),
            "selection": state.selection,
        }

    def hints(self, state: HeartState) -> dict[str, Any]:
        """Placement help (HH-18).

        ``framed``: free heart cards with a free partner or a partner on the
        waste top, and the waste itself when a free heart card matches it.
        ``matches``: while something is selected, the free heart cards and the
        waste top of its rank (the selection itself excluded). ``dimmed``: every
        other heart card and the waste top; the stock is a pile to draw from,
        not a card to pair, so it is never dimmed. A won position (HH-20) offers
        nothing: all three are empty.
        """
        if state.status is _WON:
            return {"framed": [], "matches": [], "dimmed": []}
        waste = state.waste
        free_cards = _free_cards(state)
        counts: dict[str, int] = {}
        for _, card in free_cards:
            counts[card[0]] = counts.get(card[0], 0) + 1
        top = waste[-1][0] if waste else None
        framed = [HEART_LOCATIONS[i] for i, card in free_cards if counts[card[0]] > 1 or card[0] == top]
        if top is not None and top in counts:
            framed.append(WASTE)
        matches: list[str] = []
        dimmed: list[str] = []
        selected = _selected_card(state)
        if selected is not None:
            matches, dimmed = _matches_and_dimmed(state, state.selection, selected[0])
        return {"framed": framed, "matches": matches, "dimmed": dimmed}

    def snapshot(self, state: HeartState) -> dict[str, Any]:
        """The whole state, stock order included: for fingerprints, never for clients."""
        return {
            "heart": list(state.heart),
            "stock": list(state.stock),
            "waste": list(state.waste),
            "selection": state.selection,
            "removed": list(state.removed),
        }

    def snapshot_json(self, state: HeartState) -> str:
        selection = "null" if state.selection is None else f'"{state.selection}"'
        return (
            f'{{"heart":{json_cards(state.heart)},"removed":{json_strings(state.removed)},'
            f'"selection":{selection},"stock":{json_strings(state.stock)},'
            f'"waste":{json_strings(state.waste)}}}'
        )


# -- helpers ---------------------------------------------------------------


def _free_cards(state: HeartState) -> list[tuple[int, str]]:
    """(index, card) of every free heart card; free positions always hold a card."""
    heart = state.heart
    return [(i, cast(str, heart[i])) for i in state.free]


def _matches_and_dimmed(state: HeartState, selection: str | None, rank: str) -> tuple[list[str], list[str]]:
    """Split the face-up cards into matches of ``rank`` and dimmed ones (Decision, HH-18)."""
    free = set(state.free)
    matches: list[str] = []
    dimmed: list[str] = []
    for i, card in enumerate(state.heart):
        loc = HEART_LOCATIONS[i]
        if card is None or loc == selection:
            continue
        (matches if i in free and card[0] == rank else dimmed).append(loc)
    if state.waste and selection != WASTE:
        (matches if state.waste[-1][0] == rank else dimmed).append(WASTE)
    return matches, dimmed


def _selected_card(state: HeartState) -> str | None:
    """The selected card's text, or None when nothing (valid) is selected."""
    sel = state.selection
    if sel is None:
        return None
    if sel == WASTE:
        return state.waste[-1] if state.waste else None
    index = _HEART_INDEX.get(sel)
    return None if index is None else state.heart[index]


def _locate(state: HeartState, loc: Any) -> str:
    """Validate a pairable location (HH-7, HH-14) and return its card."""
    index = _HEART_INDEX.get(loc) if isinstance(loc, str) else None
    if index is not None:
        card = state.heart[index]
        if card is None:
            raise IllegalAction(Refusal.EMPTY_POSITION, f"There is no card at {loc} any more", {"at": loc})
        if index not in state.free:
            raise IllegalAction(Refusal.NOT_FREE, "That card is covered", {"at": loc, "card": card})
        return card
    if loc == WASTE:
        if not state.waste:
            raise IllegalAction(Refusal.WASTE_EMPTY, "The waste is empty")
        return state.waste[-1]
    if loc == STOCK:
        raise IllegalAction(Refusal.BAD_LOCATION, "The stock is drawn from, not paired")
    raise IllegalAction(Refusal.BAD_LOCATION, f"Unknown location {loc!r}: use heart:1..25, waste, stock")


def _touch(state: HeartState, loc: Any) -> Step[HeartState]:
    """HH-13..HH-16 (and HH-10/11 for the stock); selecting is never a move."""
    if loc == STOCK:
        return _draw(state)
    card = _locate(state, loc)
    sel = state.selection
    if sel == loc:  # HH-15
        return _select(state, None, ({"kind": "deselect", "at": loc},))
    selected = _selected_card(state)
    if sel is None or selected is None:  # HH-13: first card
        return _select(state, loc, ({"kind": "select", "at": loc, "card": card},))
    if selected[0] == card[0]:  # HH-13: same rank removes the pair
        return _remove_pair(state, sel, loc)
    # HH-16: accepted, the touched card becomes the selection.
    event = {"kind": "select", "at": loc, "card": card}
    return _select(state, loc, (event,), reason=SAME_RANK)


def _select(
    state: HeartState,
    selection: str | None,
    events: tuple[dict[str, Any], ...],
    reason: str | None = None,
) -> Step[HeartState]:
    nxt = HeartState(
        state.heart, state.stock, state.waste, selection, state.removed, state.free, state.status
    )
    return Step(nxt, 0, False, events, reason)


def _explicit_pair(state: HeartState, a: Any, b: Any) -> Step[HeartState]:
    """HH-7 as an explicit action; a rank mismatch is refused here, unlike a touch."""
    card_a = _locate(state, a)
    card_b = _locate(state, b)
    if a == b:
        raise IllegalAction(Refusal.SAME_CARD, "A pair needs two different cards")
    if card_a[0] != card_b[0]:
        raise IllegalAction(Refusal.RANK_MISMATCH, SAME_RANK, {"first": card_a, "second": card_b})
    return _remove_pair(state, a, b)


def _remove_pair(state: HeartState, a: str, b: str) -> Step[HeartState]:
    """HH-8, HH-19: both cards leave; 20 points for two heart cards, 10 with the waste."""
    heart = list(state.heart)
    waste = state.waste
    cards: list[dict[str, Any]] = []
    removed = list(state.removed)
    gone: list[int] = []
    for loc in (a, b):
        if loc == WASTE:
            card = waste[-1]
            waste = waste[:-1]
        else:
            index = _HEART_INDEX[loc]
            card = cast(str, heart[index])
            heart[index] = None
            gone.append(index)
        cards.append({"at": loc, "card": card})
        removed.append(card)
    heart_t = tuple(heart)
    free = _refree(heart_t, state.free, gone)
    status = compute_status(heart_t, free, state.stock, waste)
    old_free = set(state.free)
    freed = [HEART_LOCATIONS[i] for i in free if i not in old_free]
    points = HEART_PAIR_POINTS if len(gone) == 2 else WASTE_PAIR_POINTS
    events: list[dict[str, Any]] = [{"kind": "pair", "cards": cards, "points": points, "freed": freed}]
    if status is _WON:
        events.append({"kind": "won"})  # event kinds are not statuses, though these two share the words
    elif status is _STALEMATE:
        events.append({"kind": "stalemate", "message": NO_MORE_MOVES})
    nxt = HeartState(heart_t, state.stock, waste, None, tuple(removed), free, status)
    return Step(nxt, points, True, tuple(events))


def _refree(heart: tuple[str | None, ...], free: tuple[int, ...], gone: list[int]) -> tuple[int, ...]:
    """Free indexes after removing ``gone``: only the cards they covered can change."""
    result = set(free).difference(gone)
    for g in gone:
        for q in _COVERING_IDX[g]:
            if heart[q] is not None and all(heart[c] is None for c in _COVERS_IDX[q]):
                result.add(q)
    return tuple(sorted(result))


def _draw(state: HeartState) -> Step[HeartState]:
    """HH-10 draw or HH-11 redeal; both moves (HH-12) that clear the selection (Decision)."""
    stock, waste = state.stock, state.waste
    if stock:
        card = stock[0]
        nxt = HeartState(
            state.heart, stock[1:], (*waste, card), None, state.removed, state.free, state.status
        )
        return Step(nxt, 0, True, ({"kind": "draw", "card": card},))
    if waste:
        # Decision: the waste turns over as one pile, bottom card on top of the stock.
        nxt = HeartState(state.heart, waste, (), None, state.removed, state.free, state.status)
        return Step(nxt, 0, True, ({"kind": "redeal", "cards": len(waste)},))
    raise IllegalAction(Refusal.NOTHING_TO_DRAW, "The stock and the waste are both empty")


RULES: Rules[HeartState] = HeartRules()
