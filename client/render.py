"""Terminal drawing of a game's public state: suits, red and black, hints, the information bar.

Works from the protocol's ``State`` alone, so the board a spectator sees is
drawn exactly like the owner's. Colours are ANSI escapes; without them every
distinction (free, covered, selected, hinted) still shows through brackets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from client.models import GameState
from engine.hearts import HEART_ROWS

SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
RED_SUITS = ("H", "D")


def _numbered(rows: tuple[tuple[int, ...], ...]) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The engine's rows of centres as rows of (position, x): positions count row by row from 1."""
    numbered: list[tuple[tuple[int, int], ...]] = []
    first = 1
    for xs in rows:
        numbered.append(tuple(zip(range(first, first + len(xs)), xs, strict=True)))
        first += len(xs)
    return tuple(numbered)


# The heart's geometry (docs/rules/deal.md): (position, x centre in half-card widths), row by row.
HEART_POSITIONS = _numbered(HEART_ROWS)
X_STEP = 3  # characters per half-card width


@dataclass(frozen=True)
class Style:
    """How to decorate text: ANSI colours when enabled, and suit symbols or letters."""

    color: bool = True
    symbols: bool = True

    def paint(self, text: str, *codes: str) -> str:
        if not self.color or not codes:
            return text
        return f"\x1b[{';'.join(codes)}m{text}\x1b[0m"

    def card(self, card: str | None, *extra: str) -> str:
        """Two visible characters: rank (T as 10's letter) and suit."""
        if card is None:
            return self.paint("··", "2")
        suit = SUIT_SYMBOLS[card[1]] if self.symbols else card[1]
        colour = ("31",) if card[1] in RED_SUITS else ()
        return self.paint(card[0] + suit, *colour, *extra)

    def dim(self, text: str) -> str:
        return self.paint(text, "2")

    def bold(self, text: str) -> str:
        return self.paint(text, "1")


def card_count(count: int) -> str:
    """``1 card``, ``0 cards``, ``24 cards``."""
    return f"{count} card" if count == 1 else f"{count} cards"


def clock(ms: int) -> str:
    seconds = ms // 1000
    return f"{seconds // 60}:{seconds % 60:02d}"


def info_bar(state: GameState, style: Style) -> str:
    status = state.status
    shown = style.bold(status) if status == "playing" else style.paint(status.upper(), "1", "33")
    named = state.code or f"{state.game}1-{state.variant} daily"  # a daily's game names no code
    return (
        f"{named}   score {state.score}   moves {state.moves}   time {clock(state.elapsed_ms)}   "
        f"{state.progress}/{state.progress_total}   {shown}"
    )


def render(state: GameState, style: Style | None = None) -> str:
    """The whole screen for one state."""
    style = style or Style()
    body = render_heart(state, style) if state.game == "HH" else render_towers(state, style)
    return "\n".join([info_bar(state, style), "", *body])


# -- Heart to Heart --------------------------------------------------------------------


def _heart_token(entry: dict[str, Any], selection: str | None, framed: set[str], style: Style) -> str:
    """Four visible characters: [X] selected, <X> has a partner, (X) covered, X free."""
    loc = f"heart:{entry['pos']}"
    card = entry["card"]
    if card is None:
        return " " + style.dim("··") + " "
    if loc == selection:
        return "[" + style.card(card, "7") + "]"
    if not entry["free"]:
        return style.dim("(") + style.card(card, "2") + style.dim(")")
    if loc in framed:
        return "<" + style.card(card, "1", "4") + ">"
    return " " + style.card(card, "1") + " "


def _place(items: list[tuple[int, str, int]]) -> str:
    """Concatenate (column, text, visible width) items left to right with padding."""
    line, at = "", 0
    for column, text, width in sorted(items):
        line += " " * max(0, column - at) + text
        at = max(column, at) + width
    return line.rstrip()


def render_heart(state: GameState, style: Style) -> list[str]:
    board, hints = state.board, state.hints
    by_pos = {entry["pos"]: entry for entry in board["heart"]}
    framed = set(hints.get("framed", []))
    lines = []
    for row in HEART_POSITIONS:
        cards = [
            (x * X_STEP + 2, _heart_token(by_pos[p], board["selection"], framed, style), 4) for p, x in row
        ]
        numbers = [(x * X_STEP + 3, style.dim(f"{p:<2}"), 2) for p, x in row]
        lines += ["  " + _place(cards), "  " + _place(numbers)]
    waste = board["waste_top"]
    waste_text = "empty" if waste is None else style.card(waste)
    if board["selection"] == "waste" and waste is not None:
        waste_text = "[" + style.card(waste, "7") + "]"
    elif "waste" in framed:
        waste_text = "<" + style.card(waste, "1", "4") + ">"
    lines.append("")
    stock = f"  stock (s): {card_count(board['stock_count'])}"
    lines.append(f"{stock}    waste (w): {waste_text}  ({card_count(board['waste_count'])})")
    return lines


# -- Seahaven Towers ----------------------------------------------------------------------


def render_towers(state: GameState, style: Style) -> list[str]:
    board, hints = state.board, state.hints
    tappable = set(hints.get("tappable", []))
    cells = []
    for i, card in enumerate(board["cells"], start=1):
        mark = "*" if f"cell:{i}" in tappable else " "
        cells.append(f"x{i} {style.card(card) if card else style.dim('--')}{mark}")
    tops = board["foundations"]
    foundations = "  ".join(
        f"{SUIT_SYMBOLS[s] if style.symbols else s} {style.card(tops[s]) if tops[s] else style.dim('--')}"
        for s in "SHDC"
    )
    lines = ["  cells: " + "  ".join(cells) + "      foundations (f): " + foundations, ""]
    lines.append("  " + "".join(style.dim(f"c{i}".ljust(5)) for i in range(1, 11)))
    columns: list[list[str]] = board["columns"]
    height = max((len(c) for c in columns), default=0)
    for row in range(height):
        line = ""
        for i, column in enumerate(columns, start=1):
            if row < len(column):
                top = row == len(column) - 1
                mark = "*" if top and f"col:{i}" in tappable else " "
                line += style.card(column[row]) + mark + "  "
            else:
                line += "     "
        lines.append("  " + line.rstrip())
    if not height:
        lines.append("  (all columns empty)")
    lines.append("")
    lines.append(
        f"  group limit {board['group_limit']} (to an empty column: {board['group_limit_to_empty'] or '-'})"
        "    * = a tap sends it home"
    )
    return lines
