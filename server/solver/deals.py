"""Deal answers, cached: what the solver says of a deal within a node budget.

Every solve runs in the solver's worker process (a :class:`Runner`), so a
search never holds the server's GIL, and is bounded by a node budget, never
by time, so the same code gets the same answer on every instance (two
instances choosing a day's code agree). The answers stay in the server's
process, in the cache a :class:`Deals` owns; answers depend only on (code,
budget), so the request path and the background solves share one cache
(:meth:`Deals.on`).
"""

from __future__ import annotations

from engine import GameCode, random_code
from engine.solver import SolveResult, solve
from server.solver.cache import BoundedCache
from server.solver.runner import Runner

SOLUTION_BUDGET = 200_000  # nodes for a deal's full answer: the solution after a game, screening's line
WINNABLE_BUDGET = 20_000  # nodes per candidate of a "winnable deals only" game
WINNABLE_TRIES = 400  # candidates at most (about 2% of one-cell Seahaven deals are winnable)
WINNABLE_BATCH = 50  # candidates per run of the worker: other solves wait for one batch, not all
DEAL_CACHE = 512

Answers = BoundedCache[str, tuple[int, SolveResult]]  # code -> (budget, answer)


def answers_until_won(codes: list[GameCode], budget: int) -> list[SolveResult]:
    """In the worker: each code's answer in order, up to the first ``won``."""
    answers: list[SolveResult] = []
    for code in codes:
        answers.append(solve(code, budget))
        if answers[-1].result == "won":
            break
    return answers


class Deals:
    """Deals solved through ``runner``, their answers kept in ``answers``."""

    def __init__(self, runner: Runner, answers: Answers | None = None) -> None:
        self.runner = runner
        self.answers: Answers = BoundedCache(DEAL_CACHE) if answers is None else answers

    def on(self, runner: Runner) -> Deals:
        """The same answers, solved through another runner (the background's spare cores)."""
        return Deals(runner, self.answers)

    async def solve(self, code: GameCode, budget: int) -> SolveResult:
        """The answer for a deal, cached: ``won`` and ``impossible`` hold whatever the budget."""
        text = str(code)
        cached = self.answers.get(text)
        if cached is not None and (cached[1].result != "unknown" or cached[0] >= budget):
            return cached[1]
        answer = await self.runner.run(solve, code, budget)
        self.answers.put(text, (budget, answer))
        return answer

    async def winnable_among(
        self, candidates: list[GameCode], budget: int = WINNABLE_BUDGET
    ) -> GameCode | None:
        """A code the solver proves winnable within ``budget`` nodes each, or None.

        A code already known to be winnable is taken without a solve; the unknown
        ones are solved in order, in one run of the worker, and each answer is
        cached like any deal's.
        """
        for code in candidates:
            cached = self.answers.get(str(code))
            if cached is not None and cached[1].result == "won":
                return code
        fresh = [code for code in candidates if str(code) not in self.answers]
        answers = await self.runner.run(answers_until_won, fresh, budget) if fresh else []
        for code, answer in zip(fresh, answers, strict=False):  # answers stop at the first won
            self.answers.put(str(code), (budget, answer))
            if answer.result == "won":
                return code
        return None

    async def winnable_code(self, game: str, variant: str, tries: int = WINNABLE_TRIES) -> GameCode | None:
        """A random code of ``game`` and ``variant`` proven winnable, or None after ``tries`` codes.

        The "winnable deals only" start option; it goes beyond the original apps, which never say
        whether a deal can be won (HH-25). Bounded by nodes and tries, never by time.
        """
        candidates = [random_code(game, variant) for _ in range(tries)]
        for start in range(0, tries, WINNABLE_BATCH):
            found = await self.winnable_among(candidates[start : start + WINNABLE_BATCH])
            if found is not None:
                return found
        return None
