"""Game codes and deals, exactly as ``docs/rules/deal.md`` (version 1) says.

A code names one deal on every server and in every client language, so this
module is deliberately tiny and literal: SplitMix64, a Fisher-Yates shuffle
and the two unshuffled decks. Dealing the cards into a layout belongs to
each game's module.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
SEED_LENGTH = 7
MAX_SEED = 2**35 - 1  # the short form: the codes players type and share
LONG_SEED_LENGTH = 13
MAX_LONG_SEED = 2**64 - 1  # the long form (2^35 and up): daily challenges, not searchable
RANKS = "A23456789TJQK"
SUITS = "SHDC"
VARIANTS: dict[str, tuple[str, ...]] = {"HH": ("N",), "SH": ("C4", "C2", "C1")}
VERSIONS = (1,)
MASK64 = 0xFFFFFFFFFFFFFFFF


class CodeError(ValueError):
    """A game code that cannot be parsed; ``part`` names the bad part."""

    def __init__(self, part: str, message: str) -> None:
        super().__init__(message)
        self.part = part


@dataclass(frozen=True, slots=True)
class GameCode:
    """A parsed game code such as ``SH1-C4-AAAAAJ2``."""

    game: str
    version: int
    variant: str
    seed: int
    text: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Formatted once: the text goes into every state, fingerprint and stored row.
        text = f"{self.game}{self.version}-{self.variant}-{encode_seed(self.seed)}"
        object.__setattr__(self, "text", text)

    def __str__(self) -> str:
        return self.text

    @property
    def family(self) -> str:
        """The code without its seed (``SH1-C4``): what a daily challenge is keyed on."""
        return f"{self.game}{self.version}-{self.variant}"


def encode_seed(seed: int) -> str:
    """Base32, most significant first: 7 characters below 2^35, else the 13 of the long form."""
    if not 0 <= seed <= MAX_LONG_SEED:
        raise CodeError("seed", f"seed {seed} is outside 0..2^64-1")
    length = SEED_LENGTH if seed <= MAX_SEED else LONG_SEED_LENGTH
    chars = []
    for _ in range(length):
        chars.append(ALPHABET[seed & 31])
        seed >>= 5
    return "".join(reversed(chars))


def decode_seed(text: str) -> int:
    """The number a seed string stands for (already upper case); one canonical form per seed."""
    if len(text) not in (SEED_LENGTH, LONG_SEED_LENGTH):
        raise CodeError(
            "seed", f"seed must be {SEED_LENGTH} or {LONG_SEED_LENGTH} characters, got {len(text)}"
        )
    value = 0
    for ch in text:
        index = ALPHABET.find(ch)
        if index < 0:
            raise CodeError("seed", f"seed character {ch!r} is not in A-Z, 2-7")
        value = value * 32 + index
    if value > MAX_LONG_SEED:
        raise CodeError("seed", f"seed {text} is above 2^64-1 (a long seed starts with A to P)")
    if len(text) == LONG_SEED_LENGTH and value <= MAX_SEED:
        short = encode_seed(value)
        raise CodeError("seed", f"seed {text} is below 2^35: its only form is the short {short}")
    return value


def parse_code(text: str) -> GameCode:
    """Parse a code, ignoring case and surrounding spaces; errors name the bad part."""
    if not isinstance(text, str):
        raise CodeError("code", "a game code must be a string")
    parts = text.strip().upper().split("-")
    if len(parts) != 3:
        raise CodeError("code", "a game code has three parts: GAMEVERSION-VARIANT-SEED")
    head, variant, seed_text = parts
    game, version_text = head[:2], head[2:]
    if game not in VARIANTS:
        raise CodeError("game", f"unknown game {game!r}: expected HH or SH")
    if not version_text.isdigit() or int(version_text) not in VERSIONS:
        raise CodeError("version", f"unknown version {version_text!r}: expected 1")
    if variant not in VARIANTS[game]:
        allowed = ", ".join(VARIANTS[game])
        raise CodeError("variant", f"unknown variant {variant!r} for {game}: expected {allowed}")
    return GameCode(game, int(version_text), variant, decode_seed(seed_text))


def make_code(game: str, variant: str, seed: int, version: int = 1) -> GameCode:
    """Build a code from its parts, validating them like :func:`parse_code`."""
    return parse_code(f"{game}{version}-{variant}-{encode_seed(seed)}")


def random_code(game: str, variant: str, rand_bits: int | None = None) -> GameCode:
    """A fresh code for "new game"; ``rand_bits`` makes it reproducible in tests."""
    seed = secrets.randbits(35) if rand_bits is None else rand_bits & MAX_SEED
    return make_code(game, variant, seed)


class SplitMix64:
    """The deal's random number generator (64-bit arithmetic, modulo 2^64)."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def unshuffled_deck(game: str) -> list[str]:
    """Index 0..51 of the deck before shuffling, as card text (``TH``)."""
    if game == "HH":
        return [RANKS[i % 13] + "H" for i in range(52)]
    return [RANKS[i % 13] + SUITS[i // 13] for i in range(52)]


def shuffled_deck(code: GameCode) -> list[str]:
    """The deck after the version-1 shuffle for this code's seed."""
    deck = unshuffled_deck(code.game)
    rng = SplitMix64(code.seed)
    for i in range(51, 0, -1):
        j = rng.next() % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck
