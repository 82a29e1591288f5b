"""The message catalogs of the browser client (server/static/i18n/): the same keys in every
language, plural forms for each language's Intl.PluralRules categories, the same placeholders,
and every key the pages use present (read from the JavaScript and index.html, no browser)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[2] / "server" / "static"
LANGS = ("en", "hu", "ro")
# Intl.PluralRules(lang).resolvedOptions().pluralCategories for cardinal numbers (CLDR).
PLURAL_CATEGORIES = {"en": {"one", "other"}, "hu": {"one", "other"}, "ro": {"one", "few", "other"}}
PLACEHOLDER = re.compile(r"\{(\w+)\}")
# t("key" …), has("key"), and keys named in data-i18n attributes or in a `"some.key"` string the
# code hands to t later (a table of keys): every such literal must be in the catalogs.
LITERAL_CALL = re.compile(r"""\b(?:t|has)\(\s*["']([\w.-]+)["']""")
KEY_TABLE = re.compile(r"""["']((?:[a-z_]+\.)+[\w-]+)["']""")
TEMPLATE_CALL = re.compile(r"""`((?:[a-z_]+\.)+)\$\{""")  # a key built from its prefix: `rank.${…}`
MARKED = re.compile(r"""data-i18n(?:-label|-placeholder|-title)?=["']([\w.-]+)["']""")


def catalog(lang: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    return data


def scripts() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted((STATIC / "js").glob("*.js")))


def texts(value: object) -> list[str]:
    return list(value.values()) if isinstance(value, dict) else [str(value)]


def placeholders(value: object) -> set[str]:
    return {name for text in texts(value) for name in PLACEHOLDER.findall(text)}


def test_every_catalog_has_the_same_keys() -> None:
    english = set(catalog("en"))
    assert len(english) > 300
    for lang in LANGS[1:]:
        keys = set(catalog(lang))
        assert keys - english == set(), f"{lang} has keys English lacks"
        assert english - keys == set(), f"{lang} lacks keys"


@pytest.mark.parametrize("lang", LANGS)
def test_entries_are_texts_or_plural_forms_of_the_language(lang: str) -> None:
    for key, value in catalog(lang).items():
        if isinstance(value, dict):
            assert set(value) == PLURAL_CATEGORIES[lang], f"{lang} {key}: forms {sorted(value)}"
            assert all(isinstance(v, str) and v for v in value.values()), key
        else:
            assert isinstance(value, str) and value, f"{lang} {key} is empty"


@pytest.mark.parametrize("lang", LANGS[1:])
def test_translations_use_the_placeholders_english_passes(lang: str) -> None:
    """A translation may take a placeholder's inflected form (``target_onto``), nothing else."""
    english = catalog("en")
    for key, value in catalog(lang).items():
        given = placeholders(english[key])
        allowed = given | {f"{name}_onto" for name in given}
        assert placeholders(value) <= allowed, f"{lang} {key}: {placeholders(value) - allowed}"
        if isinstance(english[key], dict):
            assert "count" in placeholders(english[key]) or "{count}" not in str(value), key


def test_translations_are_not_english() -> None:
    """Catch a copied English text: most entries of hu and ro differ from English."""
    english = catalog("en")
    for lang in LANGS[1:]:
        other = catalog(lang)
        same = [
            key for key, value in other.items() if value == english[key] and re.search("[a-z]{4}", str(value))
        ]
        assert len(same) < len(english) * 0.15, f"{lang}: {len(same)} entries are the English text"


def used_keys() -> tuple[set[str], set[str]]:
    """The literal keys the client uses, and the prefixes of the keys it builds (t(`conn.${…}`))."""
    code = scripts()
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    literal = set(LITERAL_CALL.findall(code)) | set(MARKED.findall(code)) | set(MARKED.findall(html))
    english = catalog("en")
    literal |= {key for key in KEY_TABLE.findall(code) if key in english or key.split(".")[0] in PREFIXES}
    prefixes = set(TEMPLATE_CALL.findall(code))
    return literal, prefixes


PREFIXES = {key.split(".")[0] for key in catalog("en")}


def test_every_key_the_client_uses_is_in_the_catalogs() -> None:
    literal, prefixes = used_keys()
    english = catalog("en")
    assert len(literal) > 90
    assert literal - set(english) == set()
    for prefix in prefixes:
        assert prefix.endswith("."), f"a built key should start with a whole prefix: {prefix!r}"
        assert any(key.startswith(prefix) for key in english), f"no key starts with {prefix!r}"


def test_no_catalog_entry_is_unused() -> None:
    literal, prefixes = used_keys()
    unused = [key for key in catalog("en") if key not in literal and not key.startswith(tuple(prefixes))]
    assert unused == []


# An element made with a literal text of English words (`el("a", {...}, "Play this daily")`):
# every text the page shows comes from the catalogs instead.
LITERAL_TEXT = re.compile(r"""\bel\([^;]*?\},\s*["']([A-Z][a-z]+(?: [a-z]+)+)["']\)""")


def test_no_text_is_written_into_the_scripts() -> None:
    assert LITERAL_TEXT.findall(scripts()) == []
