"""Game codes and deals exactly as deal.md says (HH-24, SH-19), and the engine's purity."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import Action, ActionFormatError, CodeError, Game, parse_code
from engine.codes import MAX_LONG_SEED, MAX_SEED, SplitMix64, decode_seed, encode_seed, make_code, random_code
from tests import sources

ENGINE_DIR = Path(__file__).resolve().parents[2] / "engine"
ALLOWED_IMPORTS = {
    "__future__", "dataclasses", "typing", "collections", "collections.abc", "hashlib", "json",
    "secrets", "importlib", "functools", "itertools", "enum", "heapq", "math", "random", "time",
}  # fmt: skip


def test_splitmix64_vectors() -> None:
    rng = SplitMix64(0)
    assert [rng.next() for _ in range(3)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F
    ]  # fmt: skip
    rng = SplitMix64(314)
    assert [rng.next() for _ in range(3)] == [
        0x519302A2895C7074, 0x76E881FBBF8A4B83, 0x730CC862A848A99A
    ]  # fmt: skip


def test_seed_encoding_examples() -> None:
    assert decode_seed("AAAAAAM") == 12
    assert decode_seed("AAAAAJ2") == 9 * 32 + 26
    assert encode_seed(314) == "AAAAAJ2"
    assert encode_seed(MAX_SEED) == "7777777"


def test_long_seed_vectors() -> None:
    """deal.md "Long seeds": 13 characters from 2^35 up, one canonical form per seed."""
    assert decode_seed("N5LN657FP5OV6") == 0xDEADBEEFCAFEBABE
    assert decode_seed("P777777777777") == MAX_LONG_SEED == 2**64 - 1
    assert decode_seed("AAAAABAAAAAAA") == 2**35
    assert encode_seed(2**35) == "AAAAABAAAAAAA"
    assert encode_seed(0xDEADBEEFCAFEBABE) == "N5LN657FP5OV6"
    rng = SplitMix64(0xDEADBEEFCAFEBABE)
    assert [rng.next() for _ in range(3)] == [
        0x0D7D93560D1929D2, 0x491DFB740E50D43F, 0x42722BF4473E5E7D
    ]  # fmt: skip
    assert str(parse_code("hh1-n-n5ln657fp5ov6 ")) == "HH1-N-N5LN657FP5OV6"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("HH1-N-AAAAAAAAAAAAM", "AAAAAAM"),  # below 2^35: the short form is the only one
        ("HH1-N-Q777777777777", "2^64"),  # 65 bits
        ("HH1-N-AAAAAAAAAAAA", "13"),  # 12 characters
    ],
)
def test_bad_long_seeds_are_refused_with_the_reason(text: str, names: str) -> None:
    with pytest.raises(CodeError) as info:
        parse_code(text)
    assert info.value.part == "seed" and names in str(info.value)


@given(st.integers(MAX_SEED + 1, MAX_LONG_SEED))
def test_long_codes_round_trip(seed: int) -> None:
    code = make_code("SH", "C1", seed)
    assert len(str(code)) == len("SH1-C1-") + 13
    assert parse_code(str(code)) == code


@given(st.integers(0, MAX_SEED), st.sampled_from([("HH", "N"), ("SH", "C4"), ("SH", "C2"), ("SH", "C1")]))
def test_codes_round_trip(seed: int, family: tuple[str, str]) -> None:
    code = make_code(family[0], family[1], seed)
    assert parse_code(str(code)) == code
    assert parse_code(f"  {str(code).lower()} ") == code


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("XX1-N-AAAAAAA", "game"),
        ("HH2-N-AAAAAAA", "version"),
        ("HHx-N-AAAAAAA", "version"),
        ("HH1-C4-AAAAAAA", "variant"),
        ("SH1-C3-AAAAAAA", "variant"),
        ("SH1-C4-AAAAAA", "seed"),
        ("SH1-C4-AAAAAA1", "seed"),
        ("SH1-C4", "code"),
        ("", "code"),
    ],
)
def test_bad_codes_name_the_bad_part(text: str, part: str) -> None:
    with pytest.raises(CodeError) as info:
        parse_code(text)
    assert info.value.part == part


def test_random_codes_are_valid_and_varied() -> None:
    codes = {str(random_code("SH", "C2")) for _ in range(50)}
    assert len(codes) > 45
    assert all(parse_code(c).variant == "C2" for c in codes)
    assert str(random_code("HH", "N", rand_bits=12)) == "HH1-N-AAAAAAM"


def test_actions_round_trip_between_json_and_text() -> None:
    samples = [
        Action("touch", ("heart:5",)),
        Action("pair", ("heart:3", "waste")),
        Action("draw"),
        Action("move", ("col:3", "col:5", 3)),
        Action("double_tap", ("col:1", 1)),
        Action("undo"),
    ]
    for action in samples:
        assert Action.from_json(action.to_json()) == action
        assert Action.from_text(action.to_text()) == action
    assert Action.from_json({"type": "move", "from": "cell:1", "to": "found"}).arg("count") == 1


@pytest.mark.parametrize(
    "data",
    [
        {"type": "fly"},
        {"type": "touch"},
        {"type": "touch", "at": 5},
        {"type": "move", "from": "col:1", "to": "col:2", "count": 0},
        {"type": "move", "from": "col:1", "to": "col:2", "count": True},
        {"type": "pair", "a": "x" * 40, "b": "waste"},
        {"type": ["touch"]},  # unhashable: once a TypeError, an `internal` answer
        {"type": {"type": "draw"}},
        [],
    ],
)
def test_malformed_actions_are_refused(data: object) -> None:
    with pytest.raises(ActionFormatError):
        Action.from_json(data)


def test_games_are_rebuilt_from_code_and_log() -> None:
    game = Game.new("HH1-N-AAAAAAM")
    log = []
    for _ in range(30):
        action = game.legal_actions()[0]
        game = game.apply(action).game
        log.append(action)
    again = Game.replay("HH1-N-AAAAAAM", log)
    assert again.fingerprint() == game.fingerprint() and again.view() == game.view()


def test_engine_imports_nothing_that_does_io() -> None:
    """The engine is pure: standard-library modules without I/O, and itself."""
    for path in ENGINE_DIR.rglob("*.py"):
        tree = sources.tree(path)
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                root = name.split(".")[0]
                assert root == "engine" or name in ALLOWED_IMPORTS, f"{path.name} imports {name}"


def test_engine_does_not_load_server_or_io_modules() -> None:
    import subprocess

    code = (
        "import sys, engine, engine.hearts, engine.seahaven;"
        "bad = {'asyncio', 'socket', 'sqlalchemy', 'server', 'starlette'} & set(sys.modules);"
        "print(sorted(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
