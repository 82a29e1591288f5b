"""Player names: the rule (normalized, no invisible or reordering characters, 1-24 graphemes) and
uniqueness ignoring case and lookalike letters, so nobody can pass for somebody else."""

from __future__ import annotations

import asyncio
import json
import secrets

import pytest

from server.errors import ProtocolError
from server.rules.names import clean_name, graphemes, guest_name, is_reserved, name_keys
from tests.support import ErrorRecords, ahttp, ahttp_raw, new_player


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("Ada", "Ada"),
        ("  Ada \u3000\u2028 Lovelace  ", "Ada Lovelace"),  # trimmed, inner runs of spaces collapsed
        ("Ａｄａ", "Ada"),  # fullwidth: NFKC
        ("𝐀𝐝𝐚", "Ada"),  # mathematical bold
        ("Zoe\u0308", "Zoë"),  # e + combining diaeresis composes
        ("ﬁona", "fiona"),  # a ligature
        ("한국어", "한국어"),
        ("क्षत्रिय", "क्षत्रिय"),  # Devanagari: marks on consonants
        ("👍🏽 ❤️", "👍🏽 ❤️"),  # a skin tone and a variation selector join their emoji
        ("🇫🇷" * 12, "🇫🇷" * 12),  # 12 flags: 12 graphemes, 24 code points
        ("x" * 24, "x" * 24),
        ("Guest", "Guest"),  # only the prefix "Guest-" is the server's
    ],
)
def test_names_are_normalized(given: str, stored: str) -> None:
    assert clean_name(given) == stored


@pytest.mark.parametrize(
    ("given", "rule"),
    [
        ("Ada\u202e", "bidi"),  # RIGHT-TO-LEFT OVERRIDE
        ("\u2067Ada", "bidi"),  # RIGHT-TO-LEFT ISOLATE
        ("Ad\u200fa", "bidi"),  # RIGHT-TO-LEFT MARK
        ("A\u200bda", "invisible format"),  # ZERO WIDTH SPACE
        ("A\u200dda", "invisible format"),  # ZERO WIDTH JOINER
        ("Ada\ufeff", "invisible format"),  # BOM
        ("Ad\u00ada", "invisible format"),  # SOFT HYPHEN
        ("👨\u200d👩", "invisible format"),  # emoji joined with ZWJ: refused with the joiner
        ("Ada\x00", "control"),
        ("Ada\tLovelace", "control"),
        ("A\x85da", "control"),
        ("\ud800Ada", "surrogate"),
        ("Ada\ue000", "private-use"),
        ("Ada\U000f0000", "private-use"),
        ("Ada\U0001fbfa", "unassigned"),  # assigned only in Unicode 16
        ("\u3164", "draw nothing"),  # HANGUL FILLER
        ("Ada\u2800", "draw nothing"),  # BRAILLE PATTERN BLANK
        ("A\u034fda", "draw nothing"),  # COMBINING GRAPHEME JOINER
        ("", "1 to 24"),
        ("   ", "1 to 24"),
        ("x" * 25, "1 to 24"),
        ("\u0301Ada", "combining mark"),
        ("Ada \u0301x", "combining mark"),
        ("x\u0301\u0302\u0303\u0304\u0305", "marks"),  # five marks on one letter
        ("x\u0301\u0302\u0303\u0304" * 7, "code points"),  # 7 graphemes, 35 code points
        ("Guest-1234", "guests"),
        ("guest-ada", "guests"),
        ("Gu\u0435st–x", "guests"),  # a Cyrillic e and an en dash
        (42, "string"),
        (None, "string"),
    ],
)
def test_names_breaking_a_rule_are_refused_saying_which(given: object, rule: str) -> None:
    with pytest.raises(ProtocolError) as refused:
        clean_name(given)
    assert refused.value.code == "bad_message" and refused.value.extra == {"field": "name"}
    assert rule in refused.value.message, refused.value.message


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Ada", "ADA"),
        ("Ada", "aDa"),
        ("Ada", "\u0410da"),  # Cyrillic A
        ("Ada", "Аdа"),  # Cyrillic A and a
        ("Ada", "Αdα"),  # Greek Alpha, alpha
        ("Paypal", "PaypaI"),  # capital I for l
        ("Bill", "Bi11"),  # ones for l
        ("Bob", "B0b"),  # zero for o
        ("Mom", "rnom"),  # rn for m
        ("Wes", "vves"),
        ("Zoë", "Zое\u0308"),  # Cyrillic o and e, the diaeresis on top
        ("Straße", "STRASSE"),
        ("Ada-Lee", "Ada‐Lee"),  # a hyphen for the hyphen-minus
    ],
)
def test_names_that_read_the_same_share_a_key(a: str, b: str) -> None:
    fold_a, skeleton_a = name_keys(clean_name(a))
    fold_b, skeleton_b = name_keys(clean_name(b))
    assert fold_a == fold_b or skeleton_a == skeleton_b


@pytest.mark.parametrize(("a", "b"), [("Neil", "Nell"), ("ian", "lan"), ("Zoe", "Zoë"), ("Ada", "Ada L")])
def test_names_that_read_differently_do_not_clash(a: str, b: str) -> None:
    fold_a, skeleton_a = name_keys(a)
    fold_b, skeleton_b = name_keys(b)
    assert fold_a != fold_b and skeleton_a != skeleton_b


def test_graphemes_are_what_a_reader_counts() -> None:
    assert list(graphemes("e\u0301a")) == ["e\u0301", "a"]
    assert list(graphemes("🇫🇷🇩🇪🇮")) == ["🇫🇷", "🇩🇪", "🇮"]
    assert list(graphemes("👍🏽x")) == ["👍🏽", "x"]
    assert list(graphemes("\u1100\u1161\u11a8\u1100")) == ["\u1100\u1161\u11a8", "\u1100"]  # jamo
    assert list(graphemes("한국")) == ["한", "국"]
    assert list(graphemes("")) == []


def test_guest_names_are_unique_by_id_and_kept_for_guests() -> None:
    names = {guest_name(f"p_{secrets.token_hex(6)}") for _ in range(2000)}
    assert len({name_keys(n) for n in names}) == len(names) == 2000
    assert all(is_reserved(n) and clean_name(n, allow_reserved=True) == n for n in names)


async def test_names_are_unique_ignoring_case_and_lookalikes(
    server: str, server_errors: ErrorRecords
) -> None:
    tag = secrets.token_hex(3)  # this module's server is shared: a name of this test only
    ada = await new_player(server, f"Ada {tag}")
    for impostor in (
        f"ADA {tag}",
        f"\u0410da {tag}",
        f"  Ada   {tag} ",
        f"Ada\u200b {tag}",
        f"Ada {tag}\u202e",
    ):
        status, body = await ahttp("POST", f"{server}/api/players", {"name": impostor})
        assert (status, body["error"]["code"], body["error"]["field"]) == (400, "bad_message", "name"), body
    other = await new_player(server)
    status, body = await ahttp("PATCH", f"{server}/api/players/me", {"name": f"aDA {tag}"}, other["token"])
    assert status == 400 and "taken" in body["error"]["message"], body
    status, body = await ahttp("PATCH", f"{server}/api/players/me", {"name": f"ADA {tag}"}, ada["token"])
    assert (status, body["name"]) == (200, f"ADA {tag}")  # one's own name in other capitals
    status, body = await ahttp("PATCH", f"{server}/api/players/me", {"name": f"Ｂｏｂ {tag}"}, other["token"])
    assert (status, body["name"]) == (200, f"Bob {tag}")  # stored normalized
    status, body = await ahttp("GET", f"{server}/api/players/{other['id']}")
    assert body["name"] == f"Bob {tag}"
    status, body = await ahttp("POST", f"{server}/api/players", {"name": f"Guest-{tag}"})
    assert status == 400 and "guests" in body["error"]["message"]
    assert not server_errors.records, server_errors.lines()


async def test_one_name_asked_for_at_once_goes_to_one_player(
    server: str, server_errors: ErrorRecords
) -> None:
    """The database decides: of simultaneous requests for a name, exactly one gets it."""
    name = f"Race {secrets.token_hex(3)}"
    bodies = [json.dumps({"name": variant}).encode() for variant in (name, name.upper(), name.lower()) * 3]
    answers = await asyncio.gather(*(ahttp_raw("POST", f"{server}/api/players", b) for b in bodies))
    assert sorted(status for status, _ in answers) == [201] + [400] * 8, answers
    assert not server_errors.records, server_errors.lines()


async def test_guests_get_distinct_names(server: str) -> None:
    guests = await asyncio.gather(*(new_player(server) for _ in range(20)))
    assert len({g["name"] for g in guests}) == 20
    assert all(g["name"] == guest_name(g["id"]) for g in guests)
