"""Deals for the browser tests, found with the engine: a winnable Heart to Heart code and its
winning line, a line into a stalemate, a Seahaven position with a group move to make, and
solver-checked Seahaven deals (a move into a proven dead end, winnable and impossible deals).

Every search walks random codes from a fixed seed, so a run is repeatable, and gives up on a
code after a node budget. Each answer is found once per run and kept (a line is handed out as a
new list, so a test that changes its copy changes no other test's).
"""

from __future__ import annotations

import functools
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from engine import Action, Game
from engine.codes import VARIANTS
from engine.solver import solve

BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def codes(prefix: str, seed: int) -> Iterator[str]:
    """Random codes such as ``HH1-N-XXXXXXX`` in a repeatable order."""
    rng = random.Random(seed)
    while True:
        number = rng.randrange(2**35)
        yield prefix + "".join(BASE32[(number >> (5 * k)) & 31] for k in reversed(range(7)))


def _hh_key(game: Game) -> tuple[object, ...]:
    state = game.state
    return (state.heart, state.stock, state.waste)


def hh_line(code: str, goal: Callable[[Game], bool], budget: int) -> list[Action] | None:
    """A list of explicit actions (pairs first, then draw) from the deal to a state meeting ``goal``."""
    seen: set[tuple[object, ...]] = set()
    nodes = 0

    def dfs(game: Game) -> list[Action] | None:
        nonlocal nodes
        nodes += 1
        if goal(game):
            return []
        key = _hh_key(game)
        if nodes > budget or key in seen or game.status == "won":
            return None
        seen.add(key)
        actions = [a for a in game.legal_actions() if a.kind != "undo"]
        actions.sort(key=lambda a: a.kind != "pair")
        for action in actions:
            rest = dfs(game.apply(action).game)
            if rest is not None:
                return [action, *rest]
            if nodes > budget:
                return None
        return None

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        return dfs(Game.new(code))
    finally:
        sys.setrecursionlimit(limit)


def hh_winning_deal(seed: int = 5, budget: int = 20_000) -> tuple[str, list[Action]]:
    """A winnable Heart to Heart code and a winning line for it."""
    code, line = _hh_winning_deal(seed, budget)
    return code, list(line)


@functools.cache
def _hh_winning_deal(seed: int, budget: int) -> tuple[str, tuple[Action, ...]]:
    for n, code in enumerate(codes("HH1-N-", seed)):
        line = hh_line(code, lambda g: g.status == "won", budget)
        if line is not None:
            return code, tuple(line)
        if n > 500:
            break
    raise AssertionError("no winnable Heart to Heart deal found")


def hh_stalemate_deal(seed: int = 7, budget: int = 5_000) -> tuple[str, list[Action]]:
    """A code and a short line of actions ending in a stalemate (HH-21)."""
    code, line = _hh_stalemate_deal(seed, budget)
    return code, list(line)


@functools.cache
def _hh_stalemate_deal(seed: int, budget: int) -> tuple[str, tuple[Action, ...]]:
    for n, code in enumerate(codes("HH1-N-", seed)):
        line = hh_line(code, lambda g: g.status == "stalemate", budget)
        if line is not None and len(line) <= 80:
            return code, tuple(line)
        if n > 500:
            break
    raise AssertionError("no Heart to Heart stalemate found")


@dataclass(frozen=True)
class SeahavenScenario:
    """A deal whose first position offers a group move and a tap; after both of them, a
    double tap that does not go to a foundation and a drop that the rules refuse."""

    code: str
    group: Action  # a `move` of two or more cards onto a non-empty column
    tap_at: str  # a top card that goes to its foundation with a single tap
    double_tap_at: str  # after group and tap: a top card that double tap moves elsewhere
    double_tap_to: str  # where the engine sends it
    bad_drop: tuple[str, str]  # after the double tap: (source, destination) columns refused


def _first(game: Game, accepts: Callable[[Action], bool]) -> Action | None:
    return next((a for a in game.legal_actions() if a.kind == "move" and accepts(a)), None)


@functools.cache
def seahaven_scenario(seed: int = 11) -> SeahavenScenario:
    """Search C4 deals for one that offers every interaction the Seahaven test makes."""
    assert "C4" in VARIANTS["SH"]
    for n, code in enumerate(codes("SH1-C4-", seed)):
        if n > 20_000:
            break
        scenario = _scenario_for(code)
        if scenario is not None:
            return scenario
    raise AssertionError("no Seahaven deal with a group move found")


def _scenario_for(code: str) -> SeahavenScenario | None:
    game = Game.new(code)
    group = _first(
        game, lambda a: int(a.args[2]) >= 2 and str(a.args[1]).startswith("col:") and _nonempty(game, a)
    )
    tap = _first(game, lambda a: str(a.args[0]).startswith("col:") and str(a.args[1]).startswith("found"))
    if group is None or tap is None:
        return None
    busy = {str(group.args[0]), str(group.args[1]), str(tap.args[0])}
    try:
        game = game.apply(group).game.apply(Action("tap", (str(tap.args[0]),))).game
    except Exception:
        return None
    double = _double_tap_target(game, busy)
    if double is None:
        return None
    game = game.apply(Action("double_tap", (double[0], 1))).game
    bad = _bad_drop(game, busy | {double[0]})
    if bad is None:
        return None
    return SeahavenScenario(code, group, str(tap.args[0]), double[0], double[1], bad)


def _nonempty(game: Game, action: Action) -> bool:
    index = int(str(action.args[1]).split(":")[1]) - 1
    return bool(game.state.columns[index])


def _double_tap_target(game: Game, busy: set[str]) -> tuple[str, str] | None:
    for i in range(1, 11):
        at = f"col:{i}"
        if at in busy:
            continue
        try:
            outcome = game.apply(Action("double_tap", (at, 1)))
        except Exception:
            continue
        to = str(outcome.events[0]["to"])
        if not to.startswith("found"):
            return at, to
    return None


def _bad_drop(game: Game, busy: set[str]) -> tuple[str, str] | None:
    legal = {(str(a.args[0]), str(a.args[1])) for a in game.legal_actions() if a.kind == "move"}
    for i in range(1, 11):
        for j in range(1, 11):
            src, dst = f"col:{i}", f"col:{j}"
            if i != j and src not in busy and dst not in busy and (src, dst) not in legal:
                return src, dst
    return None


def seahaven_stuck_line(seed: int = 3, tries: int = 20, depth: int = 12) -> tuple[str, list[Action]]:
    """A Hard (one cell) deal and a few random useful moves that leave no move at all (``stuck``)."""
    code, path = _seahaven_stuck_line(seed, tries, depth)
    return code, list(path)


@functools.cache
def _seahaven_stuck_line(seed: int, tries: int, depth: int) -> tuple[str, tuple[Action, ...]]:
    for n, code in enumerate(codes("SH1-C1-", seed)):
        if n > 5_000:
            break
        rng = random.Random(n)
        for _ in range(tries):
            game, path = Game.new(code), list[Action]()
            for _ in range(depth):
                moves = [a for a in game.legal_actions() if a.kind == "move" and _useful(a)]
                if not moves:
                    break
                action = rng.choice(moves)
                game, path = game.apply(action).game, [*path, action]
                if game.status == "stuck":
                    return code, tuple(path)
    raise AssertionError("no stuck Seahaven position found")


def _useful(action: Action) -> bool:
    src, dst = str(action.args[0]), str(action.args[1])
    return not src.startswith("found") and not (src.startswith("cell") and dst.startswith("cell"))


@functools.cache
def seahaven_lost_line(seed: int = 13, budget: int = 20_000) -> tuple[str, Action]:
    """A Hard (one cell) deal the solver wins, and a first move after which it proves that no
    winning line remains although a card can still move: the server's ``lost`` (protocol.md,
    Solutions and dead ends), undone back to a winnable deal. ``budget`` is at most the
    server's own (``server.features.solutions.model.LOST_BUDGET``), so the server proves it too."""
    for n, code in enumerate(codes("SH1-C1-", seed)):
        if n > 2_000:
            break
        game = Game.new(code)
        if solve(game, budget).result != "won":
            continue
        for action in game.legal_actions():
            if action.kind != "move":
                continue
            after = game.apply(action).game
            if after.status == "playing" and solve(after, budget).result == "impossible":
                return code, action
    raise AssertionError("no Seahaven move into a proven dead end found")


@functools.cache
def seahaven_solution_deals(seed: int = 17, budget: int = 20_000) -> tuple[str, str]:
    """Two Hard (one cell) codes: one the solver wins, one it proves impossible (its answers
    are per deal, so the server, with a larger budget, gives the same ones)."""
    won = impossible = None
    for n, code in enumerate(codes("SH1-C1-", seed)):
        if n > 2_000 or (won and impossible):
            break
        result = solve(code, budget).result
        if result == "won" and won is None:
            won = code
        elif result == "impossible" and impossible is None:
            impossible = code
    assert won and impossible, "no winnable and impossible Seahaven deals found"
    return won, impossible
