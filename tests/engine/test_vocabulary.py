"""engine.vocabulary: the game's words are defined once, and they are their wire strings."""

from __future__ import annotations

import ast
import json
from enum import StrEnum
from pathlib import Path

import pytest

import engine
from engine import FINAL_RESULTS, Action, ActionKind, Game, IllegalAction, Refusal, Result, Status
from engine.api import ACTION_FIELDS
from engine.hearts import RULES as HEARTS
from engine.seahaven import RULES as SEAHAVEN
from engine.vocabulary import DECLARED_RESULTS
from tests import sources

ENGINE_DIR = Path(engine.__file__).resolve().parent
ENUMS = (Status, Result, Refusal, ActionKind)


def engine_sources() -> list[Path]:
    return sorted(ENGINE_DIR.rglob("*.py"))


@pytest.mark.parametrize("enum", ENUMS, ids=lambda e: e.__name__)
def test_members_are_their_wire_strings(enum: type[StrEnum]) -> None:
    for member in enum:
        assert isinstance(member, str) and member == member.value
        assert str(member) == f"{member}" == member.value
        assert hash(member) == hash(member.value)
        assert json.dumps({member: [member]}) == json.dumps({member.value: [member.value]})


def test_statuses() -> None:
    """Every status a client can be shown: the engine's, then the server's own."""
    assert [s.value for s in Status] == [
        "playing", "won", "stalemate", "stuck", "lost", "resigned", "expired"
    ]  # fmt: skip
    assert HEARTS.statuses == (Status.PLAYING, Status.WON, Status.STALEMATE)
    assert SEAHAVEN.statuses == (Status.PLAYING, Status.WON, Status.STUCK)
    for rules in (HEARTS, SEAHAVEN):
        assert all(type(status) is Status for status in rules.statuses)


def test_results() -> None:
    assert [r.value for r in Result] == ["won", "resigned", "expired"]
    assert FINAL_RESULTS == frozenset(Result) == {"won", "resigned", "expired"}
    assert frozenset({Result.RESIGNED, Result.EXPIRED}) == DECLARED_RESULTS
    assert "won" in FINAL_RESULTS and "playing" not in FINAL_RESULTS


def test_action_kinds_are_the_action_fields() -> None:
    assert set(ActionKind) == set(ACTION_FIELDS)
    assert all(type(kind) is str for kind in ACTION_FIELDS)  # plain values: the fast lookup
    built = Action(ActionKind.MOVE, ("col:1", "cell:2", 1))
    parsed = Action.from_json({"type": "move", "from": "col:1", "to": "cell:2", "count": 1})
    assert built == parsed and hash(built) == hash(parsed)
    assert json.dumps(built.to_json()) == json.dumps(parsed.to_json())
    assert built.to_text() == parsed.to_text() == "move col:1 cell:2 1"


def test_engine_values_serialize_exactly_as_before() -> None:
    """The wire format: statuses and refusal codes in JSON are the plain strings."""
    game = Game.new("SH1-C4-AAAAAAA")
    assert type(game.status) is Status
    assert '"status": "playing"' in json.dumps(game.view())
    with pytest.raises(IllegalAction) as info:
        game.apply(Action("undo"))
    assert type(info.value.code) is Refusal
    assert json.dumps({"rule": info.value.code}) == '{"rule": "nothing_to_undo"}'


def _refusal_arguments() -> list[tuple[str, int, ast.expr]]:
    """The first argument of every ``IllegalAction(...)`` / ``_refuse(...)`` call in the engine."""
    found = []
    for path in engine_sources():
        tree = sources.tree(path)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id in ("IllegalAction", "_refuse") and node.args:
                found.append((path.name, node.lineno, node.args[0]))
    return found


def test_every_refusal_is_a_refusal_member_and_every_member_is_used() -> None:
    used = set()
    calls = _refusal_arguments()
    assert calls
    for name, line, arg in calls:
        if name == "seahaven.py" and isinstance(arg, ast.Name) and arg.id == "code":
            continue  # _refuse itself passes its typed ``code: Refusal`` parameter on
        ok = isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "Refusal"
        assert ok, f"{name}:{line} raises a refusal that is not a Refusal member"
        assert isinstance(arg, ast.Attribute)
        used.add(Refusal[arg.attr])
    assert used == set(Refusal)


def test_documented_refusal_tables_use_only_refusal_codes() -> None:
    """The tables in the hearts and seahaven docstrings name codes that exist."""
    import engine.hearts
    import engine.seahaven

    documented = set()
    for module in (engine.hearts, engine.seahaven):
        lines = (module.__doc__ or "").split("Refusals", 1)[1].splitlines()
        rules = [i for i, line in enumerate(lines) if line.startswith("====")][:3]
        for row in lines[rules[1] + 1 : rules[2]]:  # the body, between the 2nd and 3rd rule lines
            word = row.split(" ", 1)[0].strip("`")
            if word:  # continuation lines start with spaces
                documented.add(word)
    assert documented <= set(Refusal)
    assert documented | {"nothing_to_undo"} == set(Refusal)


def test_no_assert_statements_in_the_engine() -> None:
    """``python -O`` strips asserts, so the engine validates with explicit checks instead."""
    for path in engine_sources():
        tree = sources.tree(path)
        lines = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assert)]
        assert not lines, f"{path.relative_to(ENGINE_DIR.parent)} has assert at line(s) {lines}"


def test_exported_from_the_package() -> None:
    for name in ("Status", "Result", "Refusal", "ActionKind", "FINAL_RESULTS"):
        assert name in engine.__all__ and hasattr(engine, name)
