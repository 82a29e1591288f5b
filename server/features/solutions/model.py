"""Deal answers, cached: what the solver says of a deal within a node budget.

Every solve runs in the solver's worker process (a :class:`Runner`: the
server's :class:`~server.features.solutions.pool.SolverPool`), so a search
never holds the server's GIL, and is bounded by a node budget, never by time,
so the same code gets the same answer on every instance (two instances
choosing a day's code agree). The caches stay in the server's process; answers
depend only on (code, budget), so they are shared by every app in the process
(tests run several servers in threads: hence the lock).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, ParamSpec, Protocol, TypeVar

from engine import Game, GameCode, random_code
from engine.solver import SolveResult, solve
from engine.vocabulary import Status

DAILY_BUDGET = 50_000  # nodes per daily candidate: a winnable deal is nearly always proven well within
SOLUTION_BUDGET = 200_000  # nodes for the after-game answer (cached per code)
LOST_BUDGET = 20_000  # nodes per dead-end check
WINNABLE_BUDGET = 20_000  # nodes per candidate of a "winnable deals only" game
WINNABLE_TRIES = 400  # candidates at most (about 2% of one-cell Seahaven deals are winnable)
WINNABLE_BATCH = 50  # candidates per run of the worker: other solves wait for one batch, not all
DEAL_CACHE = 512
VERDICT_CACHE = 20_000
LOST_GAMES = ("SH",)  # HH-25: no solver verdict for Heart to Heart during play

_deals: OrderedDict[str, tuple[int, SolveResult]] = OrderedDict()  # code -> (budget, answer)
_daily_lengths: OrderedDict[str, int] = OrderedDict()
_cache_lock = threading.Lock()
P = ParamSpec("P")
R = TypeVar("R")


class Runner(Protocol):
    """Runs a module-level function in the solver's worker process (models rank below the
    services, so they name this protocol rather than the pool)."""

    async def run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R: ...


def remember(cache: OrderedDict[Any, Any], key: Any, value: Any, size: int) -> None:
    """Put into a bounded LRU cache (thread-safe)."""
    with _cache_lock:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > size:
            cache.popitem(last=False)


async def solve_deal(code: GameCode, budget: int, pool: Runner) -> SolveResult:
    """The answer for a deal, cached: ``won`` and ``impossible`` hold whatever the budget."""
    text = str(code)
    cached = _deals.get(text)
    if cached is not None and (cached[1].result != "unknown" or cached[0] >= budget):
        return cached[1]
    answer = await pool.run(solve, code, budget)
    remember(_deals, text, (budget, answer), DEAL_CACHE)
    return answer


async def daily_length(code: GameCode, pool: Runner) -> int | None:
    """The solution length when the solver proves the deal winnable within DAILY_BUDGET, else None."""
    answer = await solve_deal(code, DAILY_BUDGET, pool)
    if answer.length is None:
        return None
    remember(_daily_lengths, str(code), answer.length, DEAL_CACHE)
    return answer.length


def proven_length(code: GameCode | str) -> int | None:
    """The length :func:`daily_length` found for a code (None if it never proved it)."""
    return _daily_lengths.get(str(code))


def answers_until_won(codes: list[GameCode], budget: int) -> list[SolveResult]:
    """In the worker: each code's answer in order, up to the first ``won``."""
    answers: list[SolveResult] = []
    for code in codes:
        answers.append(solve(code, budget))
        if answers[-1].result == "won":
            break
    return answers


async def winnable_among(
    candidates: list[GameCode], pool: Runner, budget: int = WINNABLE_BUDGET
) -> GameCode | None:
    """A code the solver proves winnable within ``budget`` nodes each, or None.

    A code already known to be winnable is taken without a solve; the unknown
    ones are solved in order, in one run of the worker, and each answer is
    cached like any deal's.
    """
    for code in candidates:
        cached = _deals.get(str(code))
        if cached is not None and cached[1].result == "won":
            return code
    fresh = [code for code in candidates if str(code) not in _deals]
    answers = await pool.run(answers_until_won, fresh, budget) if fresh else []
    for code, answer in zip(fresh, answers, strict=False):  # answers stop at the first won
        remember(_deals, str(code), (budget, answer), DEAL_CACHE)
        if answer.result == "won":
            return code
    return None


async def winnable_code(
    game: str, variant: str, pool: Runner, tries: int = WINNABLE_TRIES
) -> GameCode | None:
    """A random code of ``game`` and ``variant`` proven winnable, or None after ``tries`` codes.

    The "winnable deals only" start option; it goes beyond the original apps, which never say
    whether a deal can be won (HH-25). Bounded by nodes and tries, never by time.
    """
    candidates = [random_code(game, variant) for _ in range(tries)]
    for start in range(0, tries, WINNABLE_BATCH):
        found = await winnable_among(candidates[start : start + WINNABLE_BATCH], pool)
        if found is not None:
            return found
    return None


def may_be_lost(game: Game) -> bool:
    """Only a Seahaven position still ``playing`` can become ``lost``."""
    return game.code.game in LOST_GAMES and game.status == Status.PLAYING
