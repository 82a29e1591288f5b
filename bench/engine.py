"""Engine speed: validated actions applied per second and legal-action listings per second.

Random legal play from many codes (undos included), one core, no I/O. The last
line printed is one JSON object:
{"hh_actions_per_s", "sh_actions_per_s", "hh_listings_per_s", "sh_listings_per_s"}.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

# This file is named like the package it measures: keep its own folder off the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from engine import Action, Game  # noqa: E402
from engine.codes import make_code as make_code_for_bench  # noqa: E402

UNDO = Action("undo")


def random_plays(
    game: str, variant: str, games: int, steps: int, seed: int
) -> list[tuple[Game, list[Action]]]:
    """Pre-compute legal action sequences so the timed loop measures apply alone."""
    rng = random.Random(seed)
    plays = []
    for _ in range(games):
        start = Game.new(make_code_for_bench(game, variant, rng.getrandbits(35)))
        current, actions = start, []
        for _ in range(steps):
            legal = current.legal_actions()
            if not legal:
                break
            action = UNDO if current.history and rng.random() < 0.1 else rng.choice(legal)
            current = current.apply(action).game
            actions.append(action)
        plays.append((start, actions))
    return plays


def time_apply(plays: list[tuple[Game, list[Action]]]) -> float:
    count = sum(len(actions) for _, actions in plays)
    started = time.perf_counter()
    for game, actions in plays:
        for action in actions:
            game = game.apply(action).game
    return count / (time.perf_counter() - started)


def time_listings(plays: list[tuple[Game, list[Action]]]) -> float:
    states = []
    for game, actions in plays:
        every = max(1, len(actions) // 20)
        for i, action in enumerate(actions):
            if i % every == 0:
                states.append(game)
            game = game.apply(action).game
    started = time.perf_counter()
    for game in states:
        game.legal_actions()
    return len(states) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=300, help="random deals per game")
    parser.add_argument("--steps", type=int, default=300, help="actions per deal at most")
    args = parser.parse_args()
    figures = {}
    for name, game, variant in (("hh", "HH", "N"), ("sh", "SH", "C4")):
        plays = random_plays(game, variant, args.games, args.steps, seed=7)
        figures[f"{name}_actions_per_s"] = round(time_apply(plays))
        figures[f"{name}_listings_per_s"] = round(time_listings(plays))
        total = sum(len(a) for _, a in plays)
        print(f"{game}: {total} actions over {len(plays)} deals")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
