"""Heart to Heart solver: is there a way to clear the heart from this position, and which?

Why the stock is not searched draw by draw
    Draws and redeals are unlimited (HH-11), so from any position every card
    of the stock and the waste can be brought to the waste top: draw to it,
    redealing once if it lies behind. Reachability therefore does not depend
    on the order of the pile or where the waste ends: for winnability the
    pile is a multiset of ranks, and a pile card is "any card of that rank".
    The search state is (heart cards still present, pile count per rank),
    packed into one int; the transposition table is keyed on it. Only the
    returned solution needs the real order: :func:`expand` replays the
    abstract pairs on the real stock/waste cycle, drawing to the nearest card
    of the needed rank, and emits the engine's ``draw`` / ``pair`` actions.

Why some pairs are played without branching (each keeps a won position won)
    Four cards share each rank, so for rank r with ``h`` cards in the heart
    and ``p`` in the pile, ``h + p`` is 4 minus an even number.

    * ``p >= h``: pairing a free heart card X with the pile is safe. In any
      win X goes with the pile (play it earlier: removing a card early only
      frees more cards, and the pile's only limit is its count) or with a
      heart card Z (pair X and, later, Z with the pile instead: that uses
      at most ``h <= p`` pile cards of rank r in all).
    * two free heart cards X, Y with ``h <= 3``: pairing them is safe. With
      ``h == 2`` any win removes both, so doing it now only saves pile cards.
      With ``h == 3`` every win spends at least one pile card on rank r
      (three cards cannot pair among themselves); pair X with Y now and the
      third with the pile when the win removes it: at most as many pile
      cards, and it is free then.
    * all four cards of a rank free: pair any two; the other two stay free.

Why some positions are dead without search
    Two heart cards can pair only if neither covers the other, directly or
    through other cards (``BLOCKERS``; see :func:`is_closed`). A rank with no pile card left must pair
    off inside the heart: two cards that cannot pair, or four that cannot be
    split into two pairs removable one after the other, lose. Three cards and
    one pile card need one pairable couple.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from engine.api import Action
from engine.codes import RANKS
from engine.hearts import COVERED_BY, HEART_LOCATIONS, HEART_SIZE, WASTE, HeartState
from engine.vocabulary import ActionKind

ALL = (1 << HEART_SIZE) - 1
COUNT_BITS = 3  # pile count of one rank: 0..4
COUNT_MASK = 7
DRAW = Action(ActionKind.DRAW)

# COVER[i]: bitmask of the cards directly covering heart index i (deal.md).
COVER: tuple[int, ...] = tuple(sum(1 << (c - 1) for c in COVERED_BY[p]) for p in range(1, HEART_SIZE + 1))


def _blockers(i: int) -> int:
    """Every card that must leave before index i is free: the covering cards, transitively."""
    todo, seen = COVER[i], 0
    while todo:
        bit = todo & -todo
        todo ^= bit
        if not seen & bit:
            seen |= bit
            todo |= COVER[bit.bit_length() - 1]
    return seen


BLOCKERS: tuple[int, ...] = tuple(_blockers(i) for i in range(HEART_SIZE))


# A move of the abstract search: (a, b) pairs heart indexes a and b; (a, -1) pairs a with the pile.
Move = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Layout:
    """One deal's heart ranks, fixed for the whole search."""

    ranks: tuple[int, ...]  # rank 0..12 of each heart index (-1 once removed at the start)
    rank_masks: tuple[int, ...]  # per rank: bitmask of the heart indexes holding it


def _layout(heart: Sequence[str | None]) -> Layout:
    ranks = tuple(RANKS.index(card[0]) if card is not None else -1 for card in heart)
    masks = [0] * 13
    for i, r in enumerate(ranks):
        if r >= 0:
            masks[r] |= 1 << i
    return Layout(ranks, tuple(masks))


def pack_pile(cards: Sequence[str]) -> int:
    """Pile counts per rank, three bits each: the order is irrelevant (see the module doc)."""
    packed = 0
    for card in cards:
        packed += 1 << (COUNT_BITS * RANKS.index(card[0]))
    return packed


def _pile(packed: int, rank: int) -> int:
    return (packed >> (COUNT_BITS * rank)) & COUNT_MASK


def free_mask(present: int) -> int:
    """Heart cards present with no present card covering them (HH-4)."""
    free = 0
    rest = present
    while rest:
        bit = rest & -rest
        rest ^= bit
        if not COVER[bit.bit_length() - 1] & present:
            free |= bit
    return free


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        bit = mask & -mask
        out.append(bit.bit_length() - 1)
        mask ^= bit
    return out


def is_closed(present: int) -> bool:
    """Was every removed card free when it left, as in play? (``BLOCKERS`` assumes it.)

    In play a card leaves only after the cards covering it, so whatever is
    still present below a present card covers it through present cards. Test
    positions built by hand may break that; the dead-rank pruning is then off.
    """
    return all(not COVER[i] & present for i in _bits(ALL & ~present))


def _pairable(a: int, b: int) -> bool:
    """Can a and b ever be free together? Not if one must leave before the other is free."""
    return not (BLOCKERS[a] >> b) & 1 and not (BLOCKERS[b] >> a) & 1


def _couples_in_order(a: int, b: int, c: int, d: int) -> bool:
    """Can {a, b} and {c, d} both pair, one couple after the other?"""
    if not (_pairable(a, b) and _pairable(c, d)):
        return False
    first = (1 << a) | (1 << b)
    second = (1 << c) | (1 << d)
    first_needs_second = (BLOCKERS[a] | BLOCKERS[b]) & second
    second_needs_first = (BLOCKERS[c] | BLOCKERS[d]) & first
    return not (first_needs_second and second_needs_first)


def rank_dead(cards: list[int], pile: int) -> bool:
    """True when the heart cards of one rank (indexes) can no longer all leave."""
    h = len(cards)
    if h <= pile or h > 4:
        return False
    if h == 1 or (h == 3 and pile == 0):
        return True  # a card with no partner left at all
    if (h == 4 and pile >= 2) or h < 4:
        return not any(_pairable(x, y) for x, y in combinations(cards, 2))
    a, b, c, d = cards
    return not (
        _couples_in_order(a, b, c, d) or _couples_in_order(a, c, b, d) or _couples_in_order(a, d, b, c)
    )


class HeartSearch:
    """Depth-first search over (present heart cards, pile counts) with a transposition table."""

    def __init__(self, layout: Layout, budget: int, prune: bool = True) -> None:
        self.layout = layout
        self.budget = budget
        self.prune = prune
        self.nodes = 0
        self.seen: set[int] = set()
        self.dead_cache: dict[tuple[int, int], bool] = {}

    def run(self, present: int, pile: int) -> list[Move] | None:
        """A winning list of abstract moves, or None; raises BudgetExceeded on the budget."""
        path: list[Move] = []
        return path if self._search(present, pile, path) else None

    def _search(self, present: int, pile: int, path: list[Move]) -> bool:
        mark = len(path)
        present, pile = self._forced(present, pile, path)
        if not present:
            return True
        key = present | (pile << HEART_SIZE)
        if key in self.seen or (self.prune and self._dead(present, pile)):
            del path[mark:]
            return False
        self.seen.add(key)
        self.nodes += 1
        if self.nodes > self.budget:
            raise BudgetExceeded
        for move in self._moves(present, pile):
            path.append(move)
            a, b = move
            if b < 0:
                found = self._search(
                    present & ~(1 << a), pile - (1 << (COUNT_BITS * self.layout.ranks[a])), path
                )
            else:
                found = self._search(present & ~((1 << a) | (1 << b)), pile, path)
            if found:
                return True
            path.pop()
        del path[mark:]
        return False

    def _forced(self, present: int, pile: int, path: list[Move]) -> tuple[int, int]:
        """Play the safe pairs of the module doc until none is left."""
        ranks, masks = self.layout.ranks, self.layout.rank_masks
        changed = True
        while changed and present:
            changed = False
            for i in _bits(free_mask(present)):
                if not (present >> i) & 1:
                    continue  # paired earlier in this sweep
                r = ranks[i]
                same = masks[r] & present
                h = same.bit_count()
                p = _pile(pile, r)
                if p >= h:
                    path.append((i, -1))
                    present &= ~(1 << i)
                    pile -= 1 << (COUNT_BITS * r)
                    changed = True
                    continue
                mates = _bits(same & free_mask(present) & ~(1 << i))
                if mates and (h <= 3 or (h == 4 and len(mates) == 3)):
                    path.append((i, mates[0]))
                    present &= ~((1 << i) | (1 << mates[0]))
                    changed = True
        return present, pile

    def _dead(self, present: int, pile: int) -> bool:
        """Some rank can no longer leave the heart (cached per rank's cards and pile count)."""
        masks = self.layout.rank_masks
        for r in range(13):
            same = masks[r] & present
            if not same:
                continue
            p = _pile(pile, r)
            key = (same, p)
            dead = self.dead_cache.get(key)
            if dead is None:
                dead = self.dead_cache[key] = rank_dead(_bits(same), p)
            if dead:
                return True
        return False

    def _moves(self, present: int, pile: int) -> list[Move]:
        """Every pair now, heart pairs first (they spare the pile), then pile pairs."""
        ranks, masks = self.layout.ranks, self.layout.rank_masks
        free = free_mask(present)
        hearts: list[Move] = []
        piles: list[Move] = []
        for i in _bits(free):
            r = ranks[i]
            for j in _bits(masks[r] & free & ~((2 << i) - 1)):
                hearts.append((i, j))
            if _pile(pile, r):
                piles.append((i, -1))
        return hearts + piles


class BudgetExceeded(Exception):
    """The node budget ran out: the answer is ``unknown``."""


@dataclass(frozen=True, slots=True)
class HeartAnswer:
    """What :func:`solve_state` found: ``won`` with moves, ``impossible``, or ``unknown``."""

    result: str
    moves: list[Move] | None
    nodes: int


def solve_state(state: HeartState, budget: int) -> HeartAnswer:
    """Search from an engine state; ``moves`` are abstract (see :func:`expand`)."""
    layout = _layout(state.heart)
    present = sum(1 << i for i, card in enumerate(state.heart) if card is not None)
    search = HeartSearch(layout, budget, prune=is_closed(present))
    try:
        moves = search.run(present, pack_pile((*state.stock, *state.waste)))
    except BudgetExceeded:
        return HeartAnswer("unknown", None, search.nodes)
    if moves is None:
        return HeartAnswer("impossible", None, search.nodes)
    return HeartAnswer("won", moves, search.nodes)


def position_key(state: HeartState) -> tuple[tuple[int, ...], int]:
    """Heart ranks by position (None as -1) and pile counts: all the search depends on."""
    return _layout(state.heart).ranks, pack_pile((*state.stock, *state.waste))


def expand(state: HeartState, moves: list[Move]) -> list[Action]:
    """Engine actions for abstract moves: draw to the nearest pile card of the rank, then pair.

    The pile is one cycle: ``waste`` bottom to top, then ``stock`` top to bottom;
    ``cursor`` cards of it are on the waste, so the waste top is
    ``cycle[cursor - 1]``. A draw with an empty stock is the redeal.
    """
    heart = list(state.heart)
    cycle = [*state.waste, *state.stock]
    cursor = len(state.waste)
    actions: list[Action] = []
    for a, b in moves:
        if b >= 0:
            actions.append(Action(ActionKind.PAIR, (HEART_LOCATIONS[a], HEART_LOCATIONS[b])))
            heart[a] = heart[b] = None
            continue
        rank = str(heart[a])[0]
        index, draws = _nearest(cycle, cursor, rank)
        actions.extend([DRAW] * draws)
        actions.append(Action(ActionKind.PAIR, (HEART_LOCATIONS[a], WASTE)))
        heart[a] = None
        del cycle[index]
        cursor = index
    return actions


def _nearest(cycle: list[str], cursor: int, rank: str) -> tuple[int, int]:
    """The pile card of ``rank`` fewest draws away, and how many draws bring it to the top."""
    best: tuple[int, int] | None = None
    size = len(cycle)
    for k, card in enumerate(cycle):
        if card[0] != rank:
            continue
        if k == cursor - 1:
            draws = 0
        elif k >= cursor:
            draws = k - cursor + 1
        else:
            draws = size - cursor + 1 + k + 1  # to the end, the redeal, then to k
        if best is None or draws < best[1]:
            best = (k, draws)
    if best is None:
        raise ValueError(f"no {rank} in the stock or the waste")
    return best
