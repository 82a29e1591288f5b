"""The fingerprint is exactly what docs/protocol.md defines, for every reachable state.

The engine builds the canonical JSON by hand for speed; here it is checked
against the definition computed with a general JSON encoder, through random
play of both games (touches and selections, undos, all Seahaven variants).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Action, Game
from engine.codes import MAX_SEED, make_code


def documented_fingerprint(game: Game) -> str:
    body: dict[str, Any] = {
        "code": str(game.code),
        "moves": game.moves,
        "score": game.score,
        "state": game.rules.snapshot(game.state),
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def check(game: Game) -> None:
    canonical = json.dumps(game.rules.snapshot(game.state), sort_keys=True, separators=(",", ":"))
    assert game.rules.snapshot_json(game.state) == canonical
    assert game.fingerprint() == documented_fingerprint(game)


@settings(max_examples=40, deadline=None)
@given(
    family=st.sampled_from([("HH", "N"), ("SH", "C4"), ("SH", "C2"), ("SH", "C1")]),
    seed=st.integers(0, MAX_SEED),
    picks=st.lists(st.integers(0, 10_000), min_size=1, max_size=120),
)
def test_fingerprint_matches_the_definition_during_play(
    family: tuple[str, str], seed: int, picks: list[int]
) -> None:
    game = Game.new(make_code(family[0], family[1], seed))
    check(game)
    for pick in picks:
        legal = game.legal_actions()
        if not legal:
            break
        game = game.apply(legal[pick % len(legal)]).game
        check(game)


def test_fingerprint_tells_a_selection_apart() -> None:
    game = Game.new("HH1-N-AAAAAC5")
    selected = game.apply(Action("touch", ("heart:25",))).game
    assert selected.state.selection == "heart:25"
    check(selected)
    assert selected.fingerprint() != game.fingerprint()
