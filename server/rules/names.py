"""Player names, pure: what a name may hold, the form it is stored in, and the keys that keep
names apart, so nobody can pass for somebody else.

The rule (docs/protocol.md, "Identity"), in the order it is applied:

1. **Normalized** to NFKC: fullwidth, mathematical and ligature letters
   become the plain ones (``Ａｄａ`` and ``𝐀𝐝𝐚`` are ``Ada``).
2. **Refused characters**: controls (Cc), format characters (Cf: zero-width
   spaces and joiners, the soft hyphen, direction marks and the bidi
   embeddings, overrides and isolates such as U+202E), surrogates (Cs),
   private use (Co), unassigned code points (Cn, in the Unicode version of
   the server's Python: 14.0 on 3.11), and the few letters and marks that
   draw nothing (Hangul fillers, the braille blank, the grapheme joiner).
3. **Whitespace** is trimmed and every inner run becomes one space.
4. **Marks** must sit on something: not first, not after a space, and at
   most :data:`MAX_MARKS` on one character (no towers over the next line).
5. **Length**: 1 to :data:`MAX_GRAPHEMES` graphemes (what a reader counts as
   characters: ``é`` written as e + accent is one, a flag is one), and at
   most :data:`MAX_CODE_POINTS` code points, the stored column's size.
6. **Reserved**: names beginning with ``Guest-`` are the server's, for
   players who chose none (:func:`guest_name`, unique by player id).
7. **Unique**: two players' names may not share either key of
   :func:`name_keys`: the case-folded form (``ada`` = ``ADA``), or the
   lookalike skeleton (Cyrillic ``А`` = Latin ``A``, ``I`` = ``l`` = ``1``,
   ``0`` = ``O``, ``rn`` = ``m``). The database enforces both (unique indexes,
   migration 0005); this module only computes them.

The keys are stored: changing :data:`LOOKALIKES` or the folding changes
what is unique, and needs a migration that recomputes them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Any

from server.errors import ProtocolError
from wire import ErrorCode

MAX_GRAPHEMES = 24
MAX_CODE_POINTS = 32  # players.name is VARCHAR(32)
MAX_MARKS = 4  # combining marks on one character
MAX_KEY = 128  # players.name_fold and players.name_skeleton: case folding may triple a name
GUEST_PREFIX = "Guest-"

# Bidi controls are Cf too, but named apart: they reorder the text around them (U+202E turns
# "Ada's" into what reads as another name).
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Default-ignorable or blank characters outside Cf: letters and marks that draw nothing.
INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0")
VARIATION_SELECTORS = frozenset(
    [chr(c) for c in range(0xFE00, 0xFE10)] + [chr(c) for c in range(0xE0100, 0xE01F0)]
)
EMOJI_MODIFIERS = frozenset(chr(c) for c in range(0x1F3FB, 0x1F400))  # skin tones: Extend
MARKS = frozenset(("Mn", "Mc", "Me"))

# Lookalikes folded into the skeleton key, after Unicode TR39's confusables: letters of other
# scripts (and digits) drawn like a Latin letter. Applied to the decomposed name before case
# folding (so capital I can be l) and again after it.
LOOKALIKES: dict[str, str] = {
    # digits and signs drawn like letters
    "0": "o", "1": "l", "I": "l", "|": "l", "ǀ": "l",
    # Latin letters drawn like others
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɡ": "g", "ɩ": "i", "ʏ": "y", "ᴏ": "o", "ᴄ": "c", "ᴠ": "v",
    "ᴡ": "w", "ᴢ": "z", "ꜱ": "s",
    # Greek
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "l", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "α": "a", "ι": "i", "ν": "v", "ο": "o",
    "ρ": "p", "υ": "u", "γ": "y", "ϲ": "c", "Ϲ": "C", "ϳ": "j", "Ϳ": "J",
    # Cyrillic
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "У": "Y", "Ү": "Y", "Ѕ": "S", "І": "l", "Ӏ": "l", "Ј": "J", "Ԛ": "Q",
    "Ԝ": "W", "Ԁ": "D", "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x",
    "ѕ": "s", "і": "i", "ј": "j", "ԁ": "d", "һ": "h", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ү": "y",
    # Armenian
    "օ": "o", "ս": "u", "հ": "h", "ո": "n", "զ": "q", "Տ": "S", "Օ": "O",
    # dashes and apostrophes
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-", "⁃": "-", "˗": "-",
    "’": "'", "‘": "'", "ʼ": "'", "′": "'", "`": "'", "´": "'",
}  # fmt: skip
# Letter pairs drawn like one letter, folded after case folding.
LOOKALIKE_PAIRS = (("rn", "m"), ("vv", "w"))


def refuse(message: str) -> ProtocolError:
    return ProtocolError(ErrorCode.BAD_MESSAGE, message, field="name")


def _u(ch: str) -> str:
    return f"U+{ord(ch):04X}"


def clean_name(value: Any, *, allow_reserved: bool = False) -> str:
    """A requested name in its stored form, or ``bad_message`` (field ``name``) saying which rule
    it breaks. Uniqueness is the database's to check (:func:`name_keys`)."""
    if not isinstance(value, str):
        raise refuse("name must be a string")
    text = unicodedata.normalize("NFKC", value)
    for ch in text:
        _check_character(ch)
    text = " ".join(text.split())
    clusters = list(graphemes(text))
    if not 1 <= len(clusters) <= MAX_GRAPHEMES:
        raise refuse(
            f"name must be 1 to {MAX_GRAPHEMES} characters long (a letter and its accents count as one)"
        )
    for cluster in clusters:
        if _extends(cluster[0]) or (cluster[0] == " " and len(cluster) > 1):
            mark = cluster[0] if _extends(cluster[0]) else cluster[1]
            raise refuse(f"name must not begin a word with a combining mark ({_u(mark)})")
        if sum(unicodedata.category(ch) in MARKS for ch in cluster) > MAX_MARKS:
            raise refuse(f"name must not stack more than {MAX_MARKS} marks on one character")
    if len(text) > MAX_CODE_POINTS:
        raise refuse(f"name must be at most {MAX_CODE_POINTS} code points once normalized (NFKC)")
    if not allow_reserved and is_reserved(text):
        raise refuse(f"names beginning with {GUEST_PREFIX!r} are kept for guests")
    return text


def _check_character(ch: str) -> None:
    category = unicodedata.category(ch)
    if category == "Cc":
        raise refuse(f"name must not hold control characters ({_u(ch)})")
    if ch in BIDI_CONTROLS:
        raise refuse(f"name must not hold bidi controls ({_u(ch)}): they reorder the text around them")
    if category == "Cf":
        raise refuse(f"name must not hold invisible format characters, such as zero-width ones ({_u(ch)})")
    if category == "Cs":
        raise refuse(f"name must be Unicode text: it holds the lone surrogate {_u(ch)}")
    if category == "Co":
        raise refuse(f"name must not hold private-use characters ({_u(ch)})")
    if category == "Cn":
        raise refuse(f"name must not hold unassigned code points ({_u(ch)})")
    if ch in INVISIBLE:
        raise refuse(f"name must not hold characters that draw nothing ({_u(ch)})")


def is_reserved(name: str) -> bool:
    """Whether a name reads as a guest's: ``Guest-``, in any case or lookalike letters."""
    fold, skeleton = name_keys(name)
    guest_fold, guest_skeleton = name_keys(GUEST_PREFIX)
    return fold.startswith(guest_fold) or skeleton.startswith(guest_skeleton)


def guest_name(player_id: str) -> str:
    """The name of a player who chose none: unique as the id is (``p_4f9c…`` → ``Guest-4f9c…``)."""
    return GUEST_PREFIX + player_id.removeprefix("p_")


def name_keys(name: str) -> tuple[str, str]:
    """(fold, skeleton): two names clash when either is the same.

    ``fold`` is the name case-folded (NFKC_Casefold: ``ADA`` = ``ada``, ``ß`` =
    ``ss``). ``skeleton`` also folds lookalikes: Cyrillic and Greek letters
    drawn like Latin ones, ``I``/``l``/``1``, ``0``/``O``, ``rn``/``m``; it
    is taken on the decomposed name, so accents stay (``é`` ≠ ``e``) while
    the letters under them fold; variation selectors are dropped.
    """
    fold = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    decomposed = unicodedata.normalize("NFD", name)
    mapped = "".join(LOOKALIKES.get(ch, ch) for ch in decomposed if ch not in VARIATION_SELECTORS)
    folded = "".join(LOOKALIKES.get(ch, ch) for ch in unicodedata.normalize("NFD", mapped.casefold()))
    for pair, single in LOOKALIKE_PAIRS:
        folded = folded.replace(pair, single)
    skeleton = unicodedata.normalize("NFC", folded)
    return fold[:MAX_KEY], skeleton[:MAX_KEY]


# -- graphemes -------------------------------------------------------------------------------


def _hangul(ch: str) -> str:
    """The Hangul syllable type of a character (UAX #29): L, V, T, LV, LVT or empty."""
    cp = ord(ch)
    if 0x1100 <= cp <= 0x115F or 0xA960 <= cp <= 0xA97C:
        return "L"
    if 0x1160 <= cp <= 0x11A7 or 0xD7B0 <= cp <= 0xD7C6:
        return "V"
    if 0x11A8 <= cp <= 0x11FF or 0xD7CB <= cp <= 0xD7FB:
        return "T"
    if 0xAC00 <= cp <= 0xD7A3:
        return "LV" if (cp - 0xAC00) % 28 == 0 else "LVT"
    return ""


_HANGUL_JOINS = {"L": {"L", "V", "LV", "LVT"}, "LV": {"V", "T"}, "V": {"V", "T"}, "LVT": {"T"}, "T": {"T"}}


def _extends(ch: str) -> bool:
    """Whether a character belongs to the cluster before it (Extend, SpacingMark, ZWJ)."""
    return (
        unicodedata.category(ch) in MARKS
        or ch in EMOJI_MODIFIERS
        or ch in VARIATION_SELECTORS
        or ch in "\u200c\u200d"
    )


def graphemes(text: str) -> Iterator[str]:
    """The grapheme clusters of ``text``: UAX #29's extended clusters for what a name can hold
    (marks and variation selectors join the character before them, two regional indicators
    make one flag, Hangul jamo join into syllables); ``Prepend`` and emoji joined with ZWJ,
    which names cannot hold, are not joined."""
    cluster = ""
    flags = 0  # regional indicators in the current cluster
    for ch in text:
        regional = 0x1F1E6 <= ord(ch) <= 0x1F1FF
        previous = cluster[-1] if cluster else ""
        joins = bool(cluster) and (
            _extends(ch)
            or (regional and flags == 1 and len(cluster) == 1)
            or _hangul(ch) in _HANGUL_JOINS.get(_hangul(previous), ())
        )
        if joins:
            cluster += ch
        else:
            if cluster:
                yield cluster
            cluster, flags = ch, 0
        flags += regional
    if cluster:
        yield cluster
