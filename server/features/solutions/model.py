"""Deal answers, cached: what the solver says of a deal within a node budget.

Every solve runs in a worker thread (``asyncio.to_thread``) and is bounded by
a node budget, never by time, so the same code gets the same answer on every
instance (two instances choosing a day's code agree). Answers depend only on
(code, budget), so the caches are shared by every app in the process (tests
run several servers in threads: hence the lock).
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from engine import Game, GameCode, random_code
from engine.solver import SolveResult, solve
from engine.vocabulary import Status

DAILY_BUDGET = 50_000  # nodes per daily candidate: a winnable deal is nearly always proven well within
SOLUTION_BUDGET = 200_000  # nodes for the after-game answer (cached per code)
LOST_BUDGET = 20_000  # nodes per dead-end check
WINNABLE_BUDGET = 20_000  # nodes per candidate of a "winnable deals only" game
WINNABLE_TRIES = 400  # candidates at most (about 2% of one-cell Seahaven deals are winnable)
DEAL_CACHE = 512
VERDICT_CACHE = 20_000
LOST_GAMES = ("SH",)  # HH-25: no solver verdict for Heart to Heart during play

_deals: OrderedDict[str, tuple[int, SolveResult]] = OrderedDict()  # code -> (budget, answer)
_daily_lengths: OrderedDict[str, int] = OrderedDict()
_cache_lock = threading.Lock()


def remember(cache: OrderedDict[Any, Any], key: Any, value: Any, size: int) -> None:
    """Put into a bounded LRU cache (thread-safe)."""
    with _cache_lock:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > size:
            cache.popitem(last=False)


async def solve_deal(code: GameCode, budget: int) -> SolveResult:
    """The answer for a deal, cached: ``won`` and ``impossible`` hold whatever the budget."""
    text = str(code)
    cached = _deals.get(text)
    if cached is not None and (cached[1].result != "unknown" or cached[0] >= budget):
        return cached[1]
    answer = await asyncio.to_thread(solve, code, budget)
    remember(_deals, text, (budget, answer), DEAL_CACHE)
    return answer


async def daily_length(code: GameCode) -> int | None:
    """The solution length when the solver proves the deal winnable within DAILY_BUDGET, else None."""
    answer = await solve_deal(code, DAILY_BUDGET)
    if answer.length is None:
        return None
    remember(_daily_lengths, str(code), answer.length, DEAL_CACHE)
    return answer.length


def proven_length(code: GameCode | str) -> int | None:
    """The length :func:`daily_length` found for a code (None if it never proved it)."""
    return _daily_lengths.get(str(code))


def winnable_among(candidates: Iterable[GameCode], budget: int = WINNABLE_BUDGET) -> GameCode | None:
    """The first code the solver proves winnable within ``budget`` nodes each, or None.

    Runs in a worker thread (see :func:`winnable_code`); each answer is cached like any deal's.
    """
    for code in candidates:
        cached = _deals.get(str(code))
        answer = cached[1] if cached is not None else solve(code, budget)
        if cached is None:
            remember(_deals, str(code), (budget, answer), DEAL_CACHE)
        if answer.result == "won":
            return code
    return None


async def winnable_code(game: str, variant: str, tries: int = WINNABLE_TRIES) -> GameCode | None:
    """A random code of ``game`` and ``variant`` proven winnable, or None after ``tries`` codes.

    The "winnable deals only" start option; it goes beyond the original apps, which never say
    whether a deal can be won (HH-25). Bounded by nodes and tries, never by time.
    """
    candidates = (random_code(game, variant) for _ in range(tries))
    return await asyncio.to_thread(winnable_among, candidates)


def may_be_lost(game: Game) -> bool:
    """Only a Seahaven position still ``playing`` can become ``lost``."""
    return game.code.game in LOST_GAMES and game.status == Status.PLAYING
