"""Deal reproduction: what a code deals, computed locally by the engine (docs/protocol.md, Deals).

A client can show a deal before it starts, check that the server dealt what
the code promises, or print the spec's test vectors to compare another
language's implementation against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import Game, GameCode, parse_code
from engine.codes import shuffled_deck


@dataclass(frozen=True)
class Deal:
    """A code's shuffled deck and starting layout (hidden cards included)."""

    code: GameCode
    deck: list[str]
    layout: dict[str, Any]

    @property
    def text(self) -> str:
        """The layout in the form of the spec's test vectors."""
        if self.code.game == "HH":
            heart = " ".join(card or "--" for card in self.layout["heart"])
            stock = " ".join(self.layout["stock"])
            return f"{self.code}  {heart}\n  stock {stock}  waste {' '.join(self.layout['waste'])}"
        columns = " | ".join(" ".join(column) for column in self.layout["columns"])
        cells = " ".join(card or "-" for card in self.layout["cells"])
        return f"{self.code}  {columns}\n  cells {cells}"


def deal(code: str | GameCode) -> Deal:
    """The deal for a code, exactly as every conforming server deals it."""
    parsed = parse_code(code) if isinstance(code, str) else code
    game = Game.new(parsed)
    return Deal(parsed, shuffled_deck(parsed), game.rules.snapshot(game.state))


def matches_state(code: str, board: dict[str, Any]) -> bool:
    """Whether a fresh game's public board (state ``board``) is what the code deals."""
    dealt: dict[str, Any] = Game.new(code).view()["board"]
    return dealt == board
