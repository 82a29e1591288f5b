"""Seahaven Towers rules, exactly as ``docs/rules/seahaven-towers.md`` states them (SH-1..SH-21).

The state is a frozen :class:`State`: ten columns (tuples of card text such as
``"7H"``, bottom card first), the variant's cells (4 for ``C4``, 2 for ``C2``,
1 for ``C1``; ``None`` is a free cell) and four foundation counts in the order
S, H, D, C (0 = empty, 13 = complete). A move replaces only the tuples it
touches, so states are cheap to keep for undo.

Locations
    ``col:1`` .. ``col:10``; ``cell:1`` .. ``cell:<cells>``; ``found:S``,
    ``found:H``, ``found:D``, ``found:C``. As a destination, ``found`` means
    "the moved card's own foundation" and is reported as ``found:<suit>``.

Actions (``engine.api.ACTION_FIELDS``)
    ``move from to count``  the top ``count`` cards of a column (a same-suit run,
                            SH-9..SH-12), or the one card of a cell or a
                            foundation top (SH-17), to a column, a free cell or
                            a foundation. Cells and foundations take one card.
    ``tap at``              SH-15: the card at ``col:N``/``cell:N`` to its
                            foundation, or refused saying why.
    ``double_tap at count`` SH-16 and its Decision: the card (heading ``count``
                            cards) goes to its foundation, else the one column
                            that accepts it, else the leftmost empty column (a
                            king), else the leftmost free cell. Pointless moves
                            are skipped: a cell card never goes to another
                            cell, a king-led run that is a whole column never
                            goes to another empty column.
    Every accepted action is a move (``Step.is_move``); undo lives in
    :class:`engine.game.Game` and :meth:`SeahavenRules.clear_selection` is the
    identity (there is no selection).

:meth:`SeahavenRules.legal_actions` lists every accepted ``move``, with the
foundation always spelled ``found:<suit>`` (``found`` is only another spelling
of the same move), every count of a run and every accepting destination (all
free cells, all empty columns). A won position has none: a win is final, so
the rules refuse every action on it (``game_over``), SH-17 take-backs included.

Refusals (``IllegalAction.code``, members of :class:`~engine.vocabulary.Refusal`;
stable, for clients and the server docs)

=================== ============================================================
code                when
=================== ============================================================
game_over           the position is won (SH-13): a win is final
bad_action          not a Seahaven action (``touch``, ``pair``, ``draw``) or
                    wrong number of arguments
bad_location        unknown location, a cell the variant does not have,
                    ``found`` without a suit as a source, tapping a foundation
bad_count           count is not a whole number from 1 up
empty_source        the column, cell or foundation is empty
not_enough_cards    the column holds fewer cards than ``count``
not_a_run           the top ``count`` cards are not a same-suit run (SH-9)
single_card         more than one card from a cell or foundation, or into a
                    cell or foundation (SH-5, SH-6)
same_place          source and destination are the same place
wrong_suit_or_rank  the column's top card is not the same suit, one rank
                    higher (SH-4)
kings_only          an empty column takes only a king or a king-led run (SH-8)
too_many_cards      the group exceeds (free cells + 1) x 2^(empty columns)
                    (SH-10, SH-11); the reason states the limit
cell_full           the destination cell holds a card (SH-5)
wrong_foundation    ``found:X`` named for a card of another suit (SH-6)
foundation_order    the foundation needs another card first (SH-6; SH-15 tap)
no_target           double tap: no place takes the card (SH-16)
pointless           double tap: the only places left are pointless (Decision)
=================== ============================================================

``engine.game.Game`` also refuses with ``game_over`` (undo included) and adds
``nothing_to_undo``.

Events (``Step.events``): one per accepted action, whatever its kind::

    {"kind": "move", "from": "col:3", "to": "found:H", "cards": ["AH"], "points": 10}

``cards`` are bottom first; ``points`` follow SH-20: +10 onto a foundation,
+5 from a cell onto a column, 0 otherwise (a card taken off a foundation and
put back scores again, per the Decision).

Statuses (:class:`~engine.vocabulary.Status`): ``playing``; ``won`` (52 cards
on the foundations, SH-13; final); ``stuck`` when no legal move exists other
than cell-to-cell moves and moves off a foundation (Decision on SH-13; any
other legal move, even a king-led column moving to another empty column,
keeps the game ``playing``).

Board (``view``): ``columns`` (lists, bottom first), ``cells`` (card or null,
one per cell of the variant), ``foundations`` (``{"S": "5S" or null, ...}``,
the top card), ``cell_count``, ``free_cells``, ``empty_columns``,
``group_limit`` (SH-10, onto a non-empty column) and ``group_limit_to_empty``
(SH-11, into an empty column; null when there is none).

Hints (``hints``): ``tappable`` (``col:N``/``cell:N`` whose card a tap sends to
its foundation now), ``movable`` (every location, foundations included, that
is the source of at least one legal move), ``runs`` (``{"col:N": length}``
of the same-suit run on top of each non-empty column, before the SH-10 limit),
``targets`` and ``counts``::

    "targets": {"col:3": ["col:5", "found:H", "cell:2"], "cell:1": ["col:7"], ...}
    "counts":  {"col:3": {"col:5": 2}, ...}

``targets`` maps each ``movable`` location (same keys, same order) to the
distinct destinations of its legal moves now, in :meth:`SeahavenRules.legal_actions`
order, the foundation spelled ``found:<suit>``. Each source and destination
pair has exactly one legal count: only one card of a run fits onto a given
column top (its same-suit successor is unique, SH-4), only the run's king fits
into an empty column (SH-8), and cells and foundations take one card (SH-5,
SH-6). ``counts`` gives that count where it is more than one (a group move,
SH-9..SH-11): ``{"col:3": {"col:5": 2}}`` means the top two cards of column 3
move onto column 5. Every other target takes the source's top card alone, so
``move src dst counts.get(src, {}).get(dst, 1)`` is always accepted.

A won position (SH-13) offers nothing: ``tappable`` and ``movable`` are empty
lists, ``targets`` and ``counts`` empty objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from engine.api import Action, IllegalAction, RefusalParams, Rules, Step, json_cards, json_strings
from engine.codes import RANKS, SUITS, GameCode, shuffled_deck
from engine.vocabulary import ActionKind, Refusal, Status

# Names read on every action, bound once (why: engine/game.py).
_DOUBLE_TAP = ActionKind.DOUBLE_TAP.value
_MOVE = ActionKind.MOVE.value
_TAP = ActionKind.TAP.value
_PLAYING = Status.PLAYING
_STUCK = Status.STUCK
_WON = Status.WON

NCOLS = 10
SORTED_SUITS = tuple(sorted(SUITS))  # key order of the canonical snapshot JSON
KING = 13
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
CELLS_BY_VARIANT = {"C4": 4, "C2": 2, "C1": 1}

# Card tables: every rule check is a dictionary lookup on card text.
CARD_AT: tuple[tuple[str, ...], ...] = tuple(
    ("", *(rank + suit for rank in RANKS)) for suit in SUITS
)  # CARD_AT[suit][rank]; rank 1..13, index 0 unused
RANK: dict[str, int] = {CARD_AT[s][r]: r for s in range(4) for r in range(1, 14)}
SUIT: dict[str, int] = {CARD_AT[s][r]: s for s in range(4) for r in range(1, 14)}
UP: dict[str, str | None] = {
    card: (CARD_AT[SUIT[card]][RANK[card] + 1] if RANK[card] < KING else None) for card in RANK
}  # the one card this card may be put onto in a column (SH-4)

# Location kinds, and the parsed form of every location text.
COL, CELL, FOUND, FOUND_ANY = 0, 1, 2, 3
COL_NAMES = tuple(f"col:{i + 1}" for i in range(NCOLS))
CELL_NAMES = tuple(f"cell:{i + 1}" for i in range(4))
FOUND_NAMES = tuple(f"found:{s}" for s in SUITS)
NAMES = (COL_NAMES, CELL_NAMES, FOUND_NAMES)
LOCATIONS: dict[str, tuple[int, int]] = {
    **{name: (COL, i) for i, name in enumerate(COL_NAMES)},
    **{name: (CELL, i) for i, name in enumerate(CELL_NAMES)},
    **{name: (FOUND, i) for i, name in enumerate(FOUND_NAMES)},
    "found": (FOUND_ANY, -1),
}

Plan = tuple[int, int, int, int, tuple[str, ...]]  # src kind, src index, dst kind, dst index, cards
Move = tuple[str, str, int]  # an explicit move's arguments: source, destination, card count


@dataclass(frozen=True, slots=True)
class State:
    """A Seahaven position; equal positions compare equal (undo and replay tests rely on it)."""

    columns: tuple[tuple[str, ...], ...]
    cells: tuple[str | None, ...]
    foundations: tuple[int, ...]


def group_limit(free_cells: int, empty_columns: int) -> int:
    """SH-10: how many cards may move together; callers leave out an empty destination (SH-11)."""
    return (free_cells + 1) << empty_columns


def run_length(column: tuple[str, ...]) -> int:
    """Length of the same-suit descending run at the top of a column (SH-9)."""
    n = len(column)
    k = 1 if n else 0
    while k < n and UP[column[-k]] == column[-k - 1]:
        k += 1
    return k


def _limits(state: State) -> tuple[int, int]:
    """Group limits now: onto a non-empty column, and into an empty column (SH-10, SH-11)."""
    free = state.cells.count(None)
    empty = state.columns.count(())
    return group_limit(free, empty), group_limit(free, empty - 1) if empty else 0


def _refuse(code: Refusal, reason: str, params: RefusalParams | None = None) -> IllegalAction:
    """Build (not raise) a refusal, so double tap can keep the best one for later."""
    return IllegalAction(code, reason, params)


def _too_many(limit: int) -> IllegalAction:
    """SH-10's refusal names the limit, so the player knows what would fit."""
    cards = "card" if limit == 1 else "cards"
    return _refuse(Refusal.TOO_MANY_CARDS, f"At most {limit} {cards} can move together now", {"count": limit})


def _location(state: State, text: Any, role: str) -> tuple[int, int]:
    """Parse a location text; cells beyond the variant's count do not exist (SH-14)."""
    loc = LOCATIONS.get(text) if isinstance(text, str) else None
    if loc is None:
        hint = "use col:N, cell:N or found:S"
        raise _refuse(Refusal.BAD_LOCATION, f"Unknown {role} location {text!r}: {hint}")
    if loc[0] == CELL and loc[1] >= len(state.cells):
        raise _refuse(Refusal.BAD_LOCATION, f"This game has only {len(state.cells)} cell(s)")
    return loc


def _check_count(count: Any) -> int:
    """Actions built in code skip ``Action.from_json``'s checks, so validate again."""
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise _refuse(Refusal.BAD_COUNT, "The count must be a whole number from 1 up")
    return count


def _source_cards(state: State, kind: int, index: int, count: int) -> tuple[str, ...]:
    """The cards a move would lift (SH-3, SH-9, SH-17), or the reason it cannot."""
    if kind == COL:
        column = state.columns[index]
        if not column:
            raise _refuse(Refusal.EMPTY_SOURCE, f"Column {index + 1} is empty", {"at": f"col:{index + 1}"})
        if count > len(column):
            held = f"Column {index + 1} holds only {len(column)} card(s)"
            raise _refuse(Refusal.NOT_ENOUGH_CARDS, held, {"at": f"col:{index + 1}", "count": len(column)})
        cards = column[-count:]
        for upper, lower in pairwise(cards):
            if UP[lower] != upper:
                raise _refuse(Refusal.NOT_A_RUN, "Those cards are not a same-suit run")
        return cards
    if kind == CELL:
        card = state.cells[index]
        if card is None:
            raise _refuse(Refusal.EMPTY_SOURCE, f"Cell {index + 1} is empty", {"at": f"cell:{index + 1}"})
    else:
        top = state.foundations[index]
        if not top:
            reason = f"The {SUIT_NAMES[index]} foundation is empty"
            raise _refuse(Refusal.EMPTY_SOURCE, reason, {"at": f"found:{SUITS[index]}"})
        card = CARD_AT[index][top]
    if count != 1:
        raise _refuse(Refusal.SINGLE_CARD, "Only one card at a time leaves a cell or a foundation")
    return (card,)


def _check_column(state: State, index: int, cards: tuple[str, ...]) -> None:
    """SH-4, SH-8, SH-10, SH-11: may these cards go onto column ``index``?"""
    column = state.columns[index]
    head = cards[0]
    if column:
        if UP[head] != column[-1]:
            rule = "A card goes onto the same suit, one rank higher"
            reason = f"{rule}: {head} does not fit on {column[-1]}"
            raise _refuse(Refusal.WRONG_SUIT_OR_RANK, reason, {"card": head, "target": column[-1]})
    elif RANK[head] != KING:
        raise _refuse(Refusal.KINGS_ONLY, "An empty column takes only a king", {"card": head})
    if len(cards) > 1:
        to_full, to_empty = _limits(state)
        limit = to_full if column else to_empty
        if len(cards) > limit:
            raise _too_many(limit)


def _check_foundation(state: State, suit: int, card: str) -> None:
    """SH-6: ace first, then each next rank of the same suit."""
    if SUIT[card] != suit:
        name = SUIT_NAMES[suit]
        reason = f"The {name} foundation takes only {name}"
        raise _refuse(Refusal.WRONG_FOUNDATION, reason, {"card": card, "suit": SUITS[suit]})
    top = state.foundations[suit]
    if top != RANK[card] - 1:
        raise _foundation_need(suit, top, card)


def _foundation_need(suit: int, top: int, card: str) -> IllegalAction:
    """Why ``card`` cannot go up now: its suit needs another card first."""
    needed = CARD_AT[suit][top + 1]
    reason = f"{card} cannot go to its foundation yet: {SUIT_NAMES[suit]} need {needed} next"
    return _refuse(Refusal.FOUNDATION_ORDER, reason, {"card": card, "need": needed})


def _check_destination(state: State, plan: Plan) -> None:
    """SH-4..SH-8, SH-10, SH-11: does the destination take the lifted cards?"""
    _, _, kind, index, cards = plan
    if kind == COL:
        _check_column(state, index, cards)
        return
    if len(cards) > 1:
        raise _refuse(Refusal.SINGLE_CARD, "A cell or a foundation takes one card at a time")
    if kind == CELL:
        if state.cells[index] is not None:
            raise _refuse(Refusal.CELL_FULL, f"Cell {index + 1} is not free", {"at": f"cell:{index + 1}"})
    else:
        _check_foundation(state, index, cards[0])


def _plan_move(state: State, src: Any, dst: Any, count: Any) -> Plan:
    """Validate an explicit move and say exactly what it moves where."""
    src_kind, src_index = _location(state, src, "source")
    dst_kind, dst_index = _location(state, dst, "destination")
    count = _check_count(count)
    if src_kind == FOUND_ANY:
        raise _refuse(Refusal.BAD_LOCATION, "Name the foundation to take from, for example found:H")
    cards = _source_cards(state, src_kind, src_index, count)
    if dst_kind == FOUND_ANY:
        dst_kind, dst_index = FOUND, SUIT[cards[0]]
    if src_kind == dst_kind and src_index == dst_index:
        raise _refuse(Refusal.SAME_PLACE, "The source and the destination are the same place")
    plan = (src_kind, src_index, dst_kind, dst_index, cards)
    _check_destination(state, plan)
    return plan


def _execute(state: State, plan: Plan) -> Step[State]:
    """Carry out a validated plan; SH-20 points; only touched tuples are rebuilt."""
    src_kind, src_index, dst_kind, dst_index, cards = plan
    columns, cells, foundations = state.columns, state.cells, state.foundations
    if src_kind == COL or dst_kind == COL:
        new_columns = list(columns)
        if src_kind == COL:
            new_columns[src_index] = columns[src_index][: -len(cards)]
        if dst_kind == COL:
            new_columns[dst_index] = columns[dst_index] + cards
        columns = tuple(new_columns)
    if src_kind == CELL or dst_kind == CELL:
        new_cells = list(cells)
        if src_kind == CELL:
            new_cells[src_index] = None
        if dst_kind == CELL:
            new_cells[dst_index] = cards[0]
        cells = tuple(new_cells)
    if src_kind == FOUND or dst_kind == FOUND:
        new_found = list(foundations)
        if src_kind == FOUND:
            new_found[src_index] -= 1
        if dst_kind == FOUND:
            new_found[dst_index] += 1
        foundations = tuple(new_found)
    points = 10 if dst_kind == FOUND else 5 if src_kind == CELL and dst_kind == COL else 0
    event = {
        "kind": "move",
        "from": NAMES[src_kind][src_index],
        "to": NAMES[dst_kind][dst_index],
        "cards": list(cards),
        "points": points,
    }
    return Step(State(columns, cells, foundations), points, True, (event,))


def _tap_source(state: State, at: Any, count: Any) -> tuple[int, int, tuple[str, ...]]:
    """Taps act on a column's top cards or a cell card, never on a foundation."""
    kind, index = _location(state, at, "tap")
    if kind not in (COL, CELL):
        raise _refuse(Refusal.BAD_LOCATION, "Tap a column or a cell")
    return kind, index, _source_cards(state, kind, index, _check_count(count))


def _plan_tap(state: State, at: Any) -> Plan:
    """SH-15: to its foundation if allowed, otherwise refused with the reason."""
    kind, index, cards = _tap_source(state, at, 1)
    card = cards[0]
    suit = SUIT[card]
    top = state.foundations[suit]
    if top != RANK[card] - 1:
        raise _foundation_need(suit, top, card)
    return kind, index, FOUND, suit, cards


def _plan_double_tap(state: State, at: Any, count: Any) -> Plan:
    """SH-16 order with the Decisions: foundation, accepting column, empty column, free cell."""
    kind, index, cards = _tap_source(state, at, count)
    head, n = cards[0], len(cards)
    to_full, to_empty = _limits(state)
    blocked: IllegalAction | None = None
    pointless: IllegalAction | None = None
    if n == 1 and state.foundations[SUIT[head]] == RANK[head] - 1:
        return kind, index, FOUND, SUIT[head], cards
    target = _accepting_column(state, head)
    if target >= 0:
        if n <= to_full:
            return kind, index, COL, target, cards
        blocked = _too_many(to_full)
    if RANK[head] == KING and () in state.columns:
        if kind == COL and n == len(state.columns[index]):
            reason = f"The run headed by {head} already heads its column"
            pointless = _refuse(Refusal.POINTLESS, reason, {"card": head})
        elif n <= to_empty:
            return kind, index, COL, state.columns.index(()), cards
        else:
            blocked = _too_many(to_empty)
    if n == 1 and None in state.cells:
        if kind != CELL:
            return kind, index, CELL, state.cells.index(None), cards
        pointless = pointless or _refuse(Refusal.POINTLESS, f"{head} is already in a cell", {"card": head})
    raise blocked or pointless or _refuse(Refusal.NO_TARGET, f"There is no place for {head}", {"card": head})


def _accepting_column(state: State, head: str) -> int:
    """The one non-empty column whose top takes ``head`` (SH-4), or -1."""
    up = UP[head]
    if up is not None:
        for i, column in enumerate(state.columns):
            if column and column[-1] == up:
                return i
    return -1


def _won(state: State) -> bool:
    """SH-13: all 52 cards are on the foundations."""
    found = state.foundations
    return found[0] + found[1] + found[2] + found[3] == 52


def _args(action: Action, n: int) -> tuple[Any, ...]:
    """The action's arguments, refused rather than crashing when their number is wrong."""
    if len(action.args) != n:
        raise _refuse(Refusal.BAD_ACTION, f"{action.kind} takes {n} argument(s)")
    return action.args


def _moves_for_card(
    out: list[Move],
    src: str,
    head: str,
    count: int,
    ok_full: bool,
    ok_empty: bool,
    tops: dict[str, int],
    empties: list[int],
) -> None:
    """Append the column destinations of one group (SH-4, SH-8, SH-10, SH-11)."""
    up = UP[head]
    if up is not None:
        target = tops.get(up)
        if target is not None and ok_full:
            out.append((src, COL_NAMES[target], count))
    elif ok_empty:
        out.extend((src, COL_NAMES[j], count) for j in empties)


def _has_move(state: State) -> bool:
    """Is there a legal move other than cell-to-cell and off a foundation? Exits early."""
    columns, cells, found = state.columns, state.cells, state.foundations
    if None in cells and any(columns):
        return True  # any top card can go to a free cell (SH-5)
    tops = {column[-1]: i for i, column in enumerate(columns) if column}
    has_empty = len(tops) < NCOLS
    for card in cells:
        if card is not None and (
            found[SUIT[card]] == RANK[card] - 1 or UP[card] in tops or (has_empty and RANK[card] == KING)
        ):
            return True
    to_full, to_empty = _limits(state)
    for column in columns:
        if column and _column_has_move(column, found, tops, has_empty, to_full, to_empty):
            return True
    return False


def _column_has_move(
    column: tuple[str, ...],
    found: tuple[int, ...],
    tops: dict[str, int],
    has_empty: bool,
    to_full: int,
    to_empty: int,
) -> bool:
    """A column's top card to its foundation, or any run it tops within the limits."""
    top = column[-1]
    if found[SUIT[top]] == RANK[top] - 1:
        return True
    for k in range(1, run_length(column) + 1):
        head = column[-k]
        if k <= to_full and UP[head] in tops:
            return True
        if has_empty and RANK[head] == KING and k <= to_empty:
            return True
    return False


def _explicit_moves(state: State) -> list[Move]:
    """What :meth:`SeahavenRules.legal_actions` lists, as plain (source, destination, count)."""
    out: list[Move] = []
    if _won(state):
        return out  # SH-13: a win is final, so a foundation card no longer comes back down
    columns, cells, found = state.columns, state.cells, state.foundations
    free = [CELL_NAMES[i] for i, card in enumerate(cells) if card is None]
    empties = [i for i, column in enumerate(columns) if not column]
    tops = {column[-1]: i for i, column in enumerate(columns) if column}
    to_full, to_empty = _limits(state)
    for i, column in enumerate(columns):
        if not column:
            continue
        src = COL_NAMES[i]
        for k in range(1, run_length(column) + 1):
            _moves_for_card(out, src, column[-k], k, k <= to_full, k <= to_empty, tops, empties)
        _single_moves(out, src, column[-1], found, free)
    for i, card in enumerate(cells):
        if card is not None:
            src = CELL_NAMES[i]
            _moves_for_card(out, src, card, 1, True, bool(empties), tops, empties)
            _single_moves(out, src, card, found, [c for c in free if c != src])
    for suit, top in enumerate(found):
        if top:
            card = CARD_AT[suit][top]
            _moves_for_card(out, FOUND_NAMES[suit], card, 1, True, bool(empties), tops, empties)
            out.extend((FOUND_NAMES[suit], c, 1) for c in free)
    return out


def _single_moves(out: list[Move], src: str, card: str, found: tuple[int, ...], free: list[str]) -> None:
    """A single card to its foundation (SH-6) and to each free cell (SH-5)."""
    if found[SUIT[card]] == RANK[card] - 1:
        out.append((src, FOUND_NAMES[SUIT[card]], 1))
    out.extend((src, cell, 1) for cell in free)


class SeahavenRules:
    """The :class:`engine.api.Rules` object for ``SH`` codes."""

    game: str = "SH"
    statuses: tuple[Status, ...] = (Status.PLAYING, Status.WON, Status.STUCK)
    progress_total: int = 52

    def deal(self, code: GameCode) -> State:
        """deal.md: deck[k] onto column k mod 10 + 1, then deck[50..51] to cells (SH-2, SH-14)."""
        deck = shuffled_deck(code)
        ncells = CELLS_BY_VARIANT[code.variant]
        columns = [tuple(deck[k] for k in range(i, 50, NCOLS)) for i in range(NCOLS)]
        cells: list[str | None] = [None] * ncells
        cells[0] = deck[50]
        if ncells >= 2:
            cells[1] = deck[51]
        else:
            columns[1] = (*columns[1], deck[51])
        return State(tuple(columns), tuple(cells), (0, 0, 0, 0))

    def apply(self, state: State, action: Action) -> Step[State]:
        """Every action becomes one validated plan, carried out by the same code.

        A win is final (SH-13 and its Decision): a won position refuses every
        action, even taking a card back off a foundation (SH-17).
        """
        found = state.foundations  # _won(state), inlined: this runs on every action
        if found[0] + found[1] + found[2] + found[3] == 52:
            raise _refuse(Refusal.GAME_OVER, "The game is won")
        kind = action.kind
        if kind == _MOVE:
            src, dst, count = _args(action, 3)
            return _execute(state, _plan_move(state, src, dst, count))
        if kind == _TAP:
            return _execute(state, _plan_tap(state, _args(action, 1)[0]))
        if kind == _DOUBLE_TAP:
            at, count = _args(action, 2)
            return _execute(state, _plan_double_tap(state, at, count))
        raise _refuse(Refusal.BAD_ACTION, f"Seahaven Towers has no {kind!r} action")

    def legal_actions(self, state: State) -> list[Action]:
        """Every explicit move accepted now: all run counts, all accepting destinations; none once won."""
        return [Action(_MOVE, move) for move in _explicit_moves(state)]

    def status(self, state: State) -> Status:
        """Called on every ``Game.apply``, so it stops at the first move it finds."""
        if _won(state):
            return _WON
        return _PLAYING if _has_move(state) else _STUCK

    def progress(self, state: State) -> int:
        """Cards on the foundations (leaderboards rank by this, never by score)."""
        return sum(state.foundations)

    def clear_selection(self, state: State) -> State:
        """Seahaven has no selection: the identity."""
        return state

    def view(self, state: State) -> dict[str, Any]:
        """The whole board is public (SH-1) plus the group limits a client shows while dragging."""
        free = state.cells.count(None)
        empty = state.columns.count(())
        return {
            "columns": [list(column) for column in state.columns],
            "cells": list(state.cells),
            "foundations": {s: CARD_AT[i][n] if n else None for i, (s, n) in _by_suit(state)},
            "cell_count": len(state.cells),
            "free_cells": free,
            "empty_columns": empty,
            "group_limit": group_limit(free, empty),
            "group_limit_to_empty": group_limit(free, empty - 1) if empty else None,
        }

    def hints(self, state: State) -> dict[str, Any]:
        """Placement help: where a tap works, what can move where, how long each top run is.

        ``movable``, ``targets`` and ``counts`` are all read off
        :meth:`legal_actions`, so they are exact; once won (SH-13) there is
        nothing to tap or move and every one of them is empty.
        """
        runs = {COL_NAMES[i]: run_length(c) for i, c in enumerate(state.columns) if c}
        if _won(state):
            return {"tappable": [], "movable": [], "runs": runs, "targets": {}, "counts": {}, "finish": False}
        found = state.foundations
        tops = [(COL_NAMES[i], c[-1]) for i, c in enumerate(state.columns) if c]
        cells = [(CELL_NAMES[i], card) for i, card in enumerate(state.cells) if card is not None]
        # What _plan_tap accepts (SH-15), read off directly: a top card that goes up now.
        tappable = [name for name, card in (*tops, *cells) if found[SUIT[card]] == RANK[card] - 1]
        targets: dict[str, list[str]] = {}
        counts: dict[str, dict[str, int]] = {}
        for src, dst, count in _explicit_moves(state):
            targets.setdefault(src, []).append(dst)
            if count != 1:
                counts.setdefault(src, {})[dst] = count
        return {
            "tappable": tappable,
            "movable": list(targets),
            "runs": runs,
            "targets": targets,
            "counts": counts,
            "finish": bool(tappable) and finishes(state),
        }

    def snapshot(self, state: State) -> dict[str, Any]:
        """Everything in the state (nothing is hidden in Seahaven), for fingerprints."""
        return {
            "columns": [list(column) for column in state.columns],
            "cells": list(state.cells),
            "foundations": dict(zip(SUITS, state.foundations, strict=True)),
        }

    def snapshot_json(self, state: State) -> str:
        columns = ",".join(json_strings(column) for column in state.columns)
        counts = dict(zip(SUITS, state.foundations, strict=True))
        foundations = ",".join(f'"{suit}":{counts[suit]}' for suit in SORTED_SUITS)
        return f'{{"cells":{json_cards(state.cells)},"columns":[{columns}],"foundations":{{{foundations}}}}}'


def _by_suit(state: State) -> enumerate[tuple[str, int]]:
    """(suit index, (suit letter, cards on that foundation)) in S, H, D, C order."""
    return enumerate(zip(SUITS, state.foundations, strict=True))


def finishes(state: State) -> bool:
    """Whether foundation moves alone win from here: the safe finish a client may play by itself.

    A move to a foundation only uncovers cards and covers none, so which cards reach the
    foundations this way does not depend on the order they are sent up in: sending up
    whatever can go (SH-6) until nothing can decides it. A column with a card lying
    on a lower card of its own suit can never be cleared this way, which ends most
    positions' check before any card is moved.
    """
    columns = [list(column) for column in state.columns]
    for column in columns:
        lowest = [14, 14, 14, 14]  # the lowest rank of each suit seen so far, from the base up
        for card in column:
            suit, rank = SUIT[card], RANK[card]
            if rank > lowest[suit]:
                return False
            lowest[suit] = rank
    found = list(state.foundations)
    free = [card for card in state.cells if card is not None]
    moved = True
    while moved:
        moved = False
        for column in columns:
            while column and found[SUIT[column[-1]]] == RANK[column[-1]] - 1:
                found[SUIT[column.pop()]] += 1
                moved = True
        for card in [c for c in free if found[SUIT[c]] == RANK[c] - 1]:
            free.remove(card)
            found[SUIT[card]] += 1
            moved = True
    return sum(found) == 52


RULES: Rules[State] = SeahavenRules()
