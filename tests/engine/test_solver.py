"""Solvers (engine/solver): every solution replays through the engine and wins; every
``impossible`` on a small position agrees with a plain exhaustive search over engine states."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import replace
from typing import Any

import pytest

from engine import Action, Game
from engine.api import Rules
from engine.codes import RANKS, make_code
from engine.hearts import COVERED_BY, HeartState, make_state
from engine.hearts import RULES as HH_RULES
from engine.seahaven import RULES as SH_RULES
from engine.seahaven import State
from engine.solver import solve, solve_position
from engine.solver.hearts import BLOCKERS, is_closed, rank_dead

# -- plain exhaustive search over engine states ------------------------------------------


def reachable_win(
    rules: Rules[Any], start: Any, key: Callable[[Any], Hashable], limit: int = 100_000
) -> bool | None:
    """Breadth-first over every legal action the engine lists, no pruning and no shortcut
    (Seahaven: moves off the foundations and between cells included). None past ``limit``."""
    seen = {key(start)}
    todo = deque([start])
    while todo:
        state = todo.popleft()
        if rules.status(state) == "won":
            return True
        for action in rules.legal_actions(state):
            nxt = rules.apply(state, action).state
            k = key(nxt)
            if k not in seen:
                seen.add(k)
                todo.append(nxt)
        if len(seen) > limit:
            return None
    return False


def replays_to_win(code: str, state: Any, actions: list[Any]) -> bool:
    game = replace(Game.new(code), state=state)
    for action in actions:
        game = game.apply(action).game
    return game.status == "won"


# -- Heart to Heart ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(0, 120))
def test_hh_deal_solutions_replay_to_a_win(seed: int) -> None:
    code = make_code("HH", "N", seed)
    answer = solve(code)
    assert answer.result in ("won", "impossible")
    if answer.result == "won":
        assert answer.actions is not None
        assert Game.replay(code, answer.actions).status == "won"
        assert answer.length == len(answer.actions)
    else:
        assert answer.actions is None


def test_hh_stalemate_at_the_deal_is_impossible_at_once() -> None:
    stalled = next(
        code for code in (make_code("HH", "N", s) for s in range(200)) if Game.new(code).status == "stalemate"
    )
    answer = solve(stalled)
    assert answer.result == "impossible" and answer.nodes <= 1


def small_heart(rng: random.Random) -> HeartState:
    """A few heart cards of few ranks, a short stock and waste: small enough to enumerate.

    Half of them could arise in play (cards removed from the tip up); the other
    half leave holes that play never makes.
    """
    ranks = rng.sample(RANKS, 3)
    size = rng.randint(3, 7)
    if rng.random() < 0.5:
        positions = rng.sample(range(25), size)
    else:
        present = set(range(25))
        while len(present) > size:
            free = [i for i in present if not set(FREE_AFTER[i]) & present]
            present.discard(rng.choice(free))
        positions = sorted(present)
    heart: list[str | None] = [None] * 25
    for p in positions:
        heart[p] = rng.choice(ranks) + "H"
    pile = [rng.choice(ranks) + "H" for _ in range(rng.randint(0, 6))]
    split = rng.randint(0, len(pile))
    return make_state(heart, pile[split:], pile[:split])


FREE_AFTER = {p - 1: tuple(c - 1 for c in COVERED_BY[p]) for p in COVERED_BY}


def heart_key(state: HeartState) -> Hashable:
    return (state.heart, state.stock, state.waste)


def test_hh_agrees_with_exhaustive_search_on_small_positions() -> None:
    rng = random.Random(8)
    outcomes = {"won": 0, "impossible": 0}
    for _ in range(400):
        state = small_heart(rng)
        answer = solve_position("HH", state, 100_000)
        assert answer.result in outcomes
        outcomes[answer.result] += 1
        assert (answer.result == "won") == reachable_win(HH_RULES, state, heart_key)
        if answer.actions is not None:
            assert replays_to_win("HH1-N-AAAAAAA", state, answer.actions)
    assert min(outcomes.values()) >= 60  # both answers were really exercised


def test_hh_solution_from_a_position_in_play() -> None:
    code = next(c for c in (make_code("HH", "N", s) for s in range(50)) if solve(c).result == "won")
    game = Game.new(code)
    for _ in range(30):  # draws and a redeal change nothing for winnability
        game = game.apply(Action("draw")).game
    answer = solve(game)
    assert answer.result == "won" and answer.actions is not None
    for action in answer.actions:
        game = game.apply(action).game
    assert game.status == "won"


def test_hh_rank_dead_rules() -> None:
    tip, above_tip = 24, 22  # heart:25 covers heart:23
    assert BLOCKERS[above_tip] >> tip & 1
    assert rank_dead([tip, above_tip], 0)
    assert not rank_dead([tip, above_tip], 2)
    assert not rank_dead([0, 3], 0)  # two lobes: free together once the rows below are gone
    assert is_closed((1 << 25) - 1) and is_closed(1) and not is_closed(1 << 24)


# -- Seahaven Towers -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "seeds"), [("C4", range(0, 40)), ("C2", range(0, 40)), ("C1", range(60, 92))]
)
def test_sh_deal_solutions_replay_to_a_win(variant: str, seeds: range) -> None:
    results = set()
    for seed in seeds:
        code = make_code("SH", variant, seed)
        answer = solve(code, 60_000)
        results.add(answer.result)
        if answer.result == "won":
            assert answer.actions is not None
            assert Game.replay(code, answer.actions).status == "won"
    assert "won" in results


def test_sh_solution_from_a_position_in_play() -> None:
    code = make_code("SH", "C4", 0)
    game = Game.new(code)
    first = solve(game)
    assert first.result == "won" and first.actions is not None
    for action in first.actions[:10]:
        game = game.apply(action).game
    answer = solve(game)
    assert answer.result == "won" and answer.actions is not None
    for action in answer.actions:
        game = game.apply(action).game
    assert game.status == "won"


def sea_key(state: State) -> Hashable:
    """The exact state up to the numbering of columns, which no rule looks at."""
    return tuple(sorted(state.columns)), state.cells, state.foundations


@pytest.mark.parametrize("variant", ["C1", "C2"])
def test_sh_agrees_with_exhaustive_search_on_real_deals(variant: str) -> None:
    """Most one- and two-cell deals are lost and small enough to enumerate whole."""
    checked = {"won": 0, "impossible": 0}
    for seed in range(70):
        state = Game.new(make_code("SH", variant, seed)).state
        answer = solve_position("SH", state, 100_000)
        plain = reachable_win(SH_RULES, state, sea_key, limit=4_000)
        if plain is None:
            continue
        assert (answer.result == "won") == plain, seed
        checked[answer.result] += 1
    assert checked["impossible"] >= 25, checked


def test_sh_lost_position_still_has_moves() -> None:
    """The solver's dead end is more than the rules' ``stuck``: moves remain, no win does."""
    for seed in range(20):
        state = Game.new(make_code("SH", "C1", seed)).state
        if SH_RULES.status(state) == "playing" and solve_position("SH", state).result == "impossible":
            assert SH_RULES.legal_actions(state)
            assert reachable_win(SH_RULES, state, sea_key) is False
            return
    pytest.fail("no lost-but-playing deal found")


def test_budget_exhaustion_is_unknown() -> None:
    answer = solve(make_code("SH", "C4", 37), 5)
    assert answer.result == "unknown" and answer.actions is None and answer.nodes > 5
