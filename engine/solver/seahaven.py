"""Seahaven Towers solver: depth-first search with a transposition table and safe foundation moves.

Representation (private, for speed): a card is one byte, ``suit * 16 + rank``
(suits S H D C as in the engine, rank 1..13), so the card a card goes onto is
``card + 1`` and a same-suit run is a run of consecutive bytes. A column is a
``bytes`` (bottom first), the cells are a sorted ``bytes`` (a multiset: which
cell holds a card never matters), the foundations four ranks. The solution is
recorded per card ("move the group headed by X to column 4 / a cell / its
foundation") and :func:`to_actions` turns it into engine ``move`` actions on
the engine's own state, so the result is exactly what the engine accepts.

Why moves off a foundation (SH-17) are never searched
    A proof of ``impossible`` that ignores them is still a proof. Take any
    win that uses them and call a card *spent* once it has reached its
    foundation. A spent card can only ever carry its same-suit predecessor,
    which is spent too, so spent cards sit on top of their columns and cards
    never rest on them. Erase the moves of spent cards and keep every spent
    card on its foundation: each remaining move is still legal (its group
    loses only spent cards on top, cells and columns are at least as free, so
    SH-10's limit is at least as large) and the game still ends won.

Why every foundation move is played at once, without branching
    FreeCell needs a rank rule (a red 5 is still useful while black 4s are
    out); here a column card can carry only its same-suit predecessor. When
    card X can go up, that predecessor is already on the foundation, so X in
    the tableau is only ever in the way: by the argument above (treat X as
    spent) any win from before the move gives a win from after it. So the
    search plays every possible foundation move automatically (they are still
    returned as actions, since the engine never moves cards by itself,
    SH-15).

Other moves
    A card goes onto a non-empty column only onto its successor, which is
    unique, so only a whole top run (SH-9) can move onto a column: a part of
    it would need its successor, which is the run's next card. An empty
    column takes a king-led top run (never a run that is already a whole
    column: pointless). All empty columns are alike and so are all free
    cells, so one of each is tried. Top cards go to a cell. Cell-to-cell
    moves are never useful.

Transposition table: the position key is the sorted columns plus the sorted
cells (the foundations follow from them), since columns in any order and
cells in any order are the same position for the rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.api import Action
from engine.seahaven import CELL_NAMES, COL_NAMES, FOUND_NAMES, RANK, SUIT, State
from engine.vocabulary import ActionKind

COL, CELL, FOUND = 0, 1, 2
KING = 13
SEP = b"\xff"
CELL_SEP = b"\xfe"

Cols = tuple[bytes, ...]
# A search move: source kind, source (column index, or the card for a cell), count,
# destination kind, destination column index (unused for cells and foundations).
Move = tuple[int, int, int, int, int]
# A solution step: the head card of the moved group, the count, destination kind and index.
Step = tuple[int, int, int, int]


def encode(card: str) -> int:
    return SUIT[card] * 16 + RANK[card]


def decode(card: int) -> str:
    return "A23456789TJQK"[(card & 15) - 1] + "SHDC"[card >> 4]


class BudgetExceeded(Exception):
    """The node budget ran out: the answer is ``unknown``."""


@dataclass(frozen=True, slots=True)
class SeaAnswer:
    """``won`` with its steps, ``impossible``, or ``unknown``; ``nodes`` positions expanded."""

    result: str
    steps: list[Step] | None
    nodes: int


def from_state(state: State) -> tuple[Cols, bytes, tuple[int, ...]]:
    cols = tuple(bytes(encode(c) for c in column) for column in state.columns)
    cells = bytes(sorted(encode(c) for c in state.cells if c is not None))
    return cols, cells, tuple(state.foundations)


def solve_state(state: State, budget: int, traditional: bool = False) -> SeaAnswer:
    """Search from an engine state (any position, cards off the foundation included).

    ``traditional`` limits groups to free cells + 1, ignoring empty columns, as
    classic Seahaven programs do (see the spec's Decision on SH-10): only for
    comparing win rates, since the engine allows more.
    """
    cols, cells, found = from_state(state)
    search = SeaSearch(len(state.cells), budget, traditional)
    try:
        steps = search.run(cols, cells, found)
    except BudgetExceeded:
        return SeaAnswer("unknown", None, search.nodes)
    if steps is None:
        return SeaAnswer("impossible", None, search.nodes)
    return SeaAnswer("won", steps, search.nodes)


def auto_found(
    cols: Cols, cells: bytes, found: tuple[int, ...], path: list[Step]
) -> tuple[Cols, bytes, tuple[int, ...]]:
    """Play every foundation move (safe, see the module doc), recording them."""
    found_list = list(found)
    col_list = list(cols)
    moved = True
    while moved:
        moved = False
        for card in cells:
            if found_list[card >> 4] == (card & 15) - 1:
                found_list[card >> 4] += 1
                cells = cells.replace(bytes((card,)), b"")
                path.append((card, 1, FOUND, card >> 4))
                moved = True
        for i, col in enumerate(col_list):
            while col and found_list[col[-1] >> 4] == (col[-1] & 15) - 1:
                card = col[-1]
                found_list[card >> 4] += 1
                col = col[:-1]
                col_list[i] = col
                path.append((card, 1, FOUND, card >> 4))
                moved = True
    return tuple(col_list), cells, tuple(found_list)


def playable(col: bytes, found: tuple[int, ...]) -> bool:
    """Can the top card of this column go to its foundation?"""
    return bool(col) and found[col[-1] >> 4] == (col[-1] & 15) - 1


def position_key(cols: Cols, cells: bytes) -> bytes:
    """Columns in any order, cells in any order: the same position (see the module doc)."""
    return SEP.join(sorted(cols)) + CELL_SEP + cells


def run_length(col: bytes) -> int:
    """Length of the same-suit descending run on top of a non-empty column (SH-9)."""
    n = len(col)
    k = 1
    while k < n and col[-k - 1] == col[-k] + 1:
        k += 1
    return k


def next_needed_depth(col: bytes, found: tuple[int, ...]) -> int:
    """Cards above the shallowest card its foundation needs next (99 when there is none)."""
    n = len(col)
    for depth in range(n):
        card = col[n - 1 - depth]
        if found[card >> 4] == (card & 15) - 1:
            return depth
    return 99


def gen_moves(
    cols: Cols, cells: bytes, found: tuple[int, ...], ncells: int, traditional: bool = False
) -> list[Move]:
    """Every useful move (module doc), most promising first; group limits per SH-10."""
    free = ncells - len(cells)
    tops: dict[int, int] = {}
    empty = -1
    nempty = 0
    for i, col in enumerate(cols):
        if col:
            tops[col[-1]] = i
        else:
            nempty += 1
            if empty < 0:
                empty = i
    if traditional:
        cap_full = cap_empty = free + 1
    else:
        cap_full = (free + 1) << nempty
        cap_empty = (free + 1) << (nempty - 1) if nempty else 0
    first: list[Move] = []
    kings: list[Move] = []
    for card in cells:
        if card & 15 == KING:
            if nempty:
                kings.append((CELL, card, 1, COL, empty))
        else:
            target = tops.get(card + 1)
            if target is not None:
                first.append((CELL, card, 1, COL, target))
    for i, col in enumerate(cols):
        if not col:
            continue
        length = run_length(col)
        head = col[-length]
        if head & 15 == KING:
            if length < len(col) and nempty and length <= cap_empty:
                kings.append((COL, i, length, COL, empty))
        else:
            target = tops.get(head + 1)
            if target is not None and length <= cap_full:
                first.append((COL, i, length, COL, target))
    moves = first + kings
    if free:
        ranked = sorted((next_needed_depth(col, found), len(col), i) for i, col in enumerate(cols) if col)
        moves.extend((COL, i, 1, CELL, 0) for _, _, i in ranked)
    return moves


def apply_move(cols: Cols, cells: bytes, move: Move) -> tuple[Cols, bytes, int]:
    """The position after a search move, and the moved group's head card."""
    src_kind, src, count, dst_kind, dst = move
    col_list = list(cols)
    if src_kind == COL:
        col = cols[src]
        group = col[-count:]
        col_list[src] = col[:-count]
    else:
        group = bytes((src,))
        cells = cells.replace(group, b"")
    if dst_kind == COL:
        col_list[dst] = col_list[dst] + group
    else:
        cells = bytes(sorted(cells + group))
    return tuple(col_list), cells, group[0]


class SeaSearch:
    """Iterative depth-first search; ``nodes`` counts the distinct positions expanded."""

    def __init__(self, ncells: int, budget: int, traditional: bool = False) -> None:
        self.ncells = ncells
        self.traditional = traditional
        self.budget = budget
        self.nodes = 0
        self.seen: set[bytes] = set()

    def run(self, cols: Cols, cells: bytes, found: tuple[int, ...]) -> list[Step] | None:
        """A winning list of steps, or None once every reachable position failed."""
        path: list[Step] = []
        cols, cells, found = auto_found(cols, cells, found, path)
        if sum(found) == 52:
            return path
        self.seen.add(position_key(cols, cells))
        # Frames: position, its moves, the next move's index, the path length at the position.
        stack: list[tuple[Cols, bytes, tuple[int, ...], list[Move], list[int], int]] = [
            (cols, cells, found, gen_moves(cols, cells, found, self.ncells, self.traditional), [0], len(path))
        ]
        seen = self.seen
        ncells, traditional = self.ncells, self.traditional
        while stack:
            cols, cells, found, moves, index, mark = stack[-1]
            if index[0] == len(moves):
                stack.pop()
                continue
            move = moves[index[0]]
            index[0] += 1
            del path[mark:]
            new_cols, new_cells, head = apply_move(cols, cells, move)
            path.append((head, move[2], move[3], move[4]))
            new_found = found
            # Only a column's newly exposed top can have become playable (module doc).
            if move[0] == COL and playable(new_cols[move[1]], found):
                new_cols, new_cells, new_found = auto_found(new_cols, new_cells, found, path)
                if new_found[0] + new_found[1] + new_found[2] + new_found[3] == 52:
                    return path
            key = SEP.join(sorted(new_cols)) + CELL_SEP + new_cells
            if key in seen:
                continue
            seen.add(key)
            self.nodes += 1
            if self.nodes > self.budget:
                raise BudgetExceeded
            new_moves = gen_moves(new_cols, new_cells, new_found, ncells, traditional)
            stack.append((new_cols, new_cells, new_found, new_moves, [0], len(path)))
        return None


def to_actions(state: State, steps: Sequence[Step]) -> list[Action]:
    """Engine ``move`` actions for solution steps, located on the engine's own state.

    Columns keep their positions in the search, so column destinations carry
    over; a cell destination is the engine's leftmost free cell.
    """
    columns = [list(col) for col in state.columns]
    cells = list(state.cells)
    actions: list[Action] = []
    for head, count, dst_kind, dst in steps:
        card = decode(head)
        if card in cells:
            source = CELL_NAMES[cells.index(card)]
            cells[cells.index(card)] = None
            group = [card]
        else:
            i = next(i for i, col in enumerate(columns) if card in col[-count:][:1])
            source = COL_NAMES[i]
            group = columns[i][-count:]
            del columns[i][-count:]
        if dst_kind == COL:
            target = COL_NAMES[dst]
            columns[dst].extend(group)
        elif dst_kind == CELL:
            free = cells.index(None)
            target = CELL_NAMES[free]
            cells[free] = card
        else:
            target = FOUND_NAMES[dst]
        actions.append(Action(ActionKind.MOVE, (source, target, count)))
    return actions
