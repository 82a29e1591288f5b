"""What the player types at the play prompt (``> ``), turned into protocol actions.

Heart to Heart: ``t 25`` (touch heart:25), ``t w`` / ``t s`` (waste, stock),
``p 3 7`` / ``p 25 w`` (pair), ``d`` (draw). Seahaven: ``t c3`` (tap),
``tt c3 [n]`` (double tap), ``m c3 c5 [n]``, ``m x1 f``. Both: ``u`` (undo).
Locations: ``c1``..``c10`` columns, ``x1``..``x4`` cells, ``f`` (the card's own
foundation) or ``fs fh fd fc``; full protocol names (``col:3``) work too.
"""

from __future__ import annotations

import re

from engine import Action

HELP = {  # each line fits in 80 columns
    "HH": """commands:
  t N     touch heart card N (1-25): select it, deselect it,
          or pair it with the selection
  t w     touch the waste card
  t s, d  draw from the stock (redeal when it is empty)
  p A B   pair two cards: heart numbers, or w for the waste (p 25 w)
  u undo   r resign (asks first)   b redraw the board   q quit (game stays open)""",
    "SH": """commands:
  t c3       tap: send column 3's top card (x1: cell 1's card) to its foundation
  tt c3 N    double tap: the best place for the N top cards of column 3
             (N defaults to 1)
  m c3 c5 N  move N cards (default 1) from column 3 to column 5;
             places: c1-c10 columns, x1-x4 cells, f the card's foundation
  u undo   r resign (asks first)   b redraw the board   q quit (game stays open)""",
}
META = {"q": "quit", "quit": "quit", "exit": "quit", "?": "help", "h": "help", "help": "help"}
META |= {"r": "resign", "resign": "resign", "b": "board", "board": "board"}


class CommandError(ValueError):
    """A command the player mistyped; the message says what was expected."""


def parse(line: str, game: str) -> Action | str:
    """An Action, or a meta command name (quit, help, resign, board); CommandError if unclear."""
    words = line.strip().lower().split()
    if not words:
        raise CommandError("type ? for help")
    if words[0] in META:
        return META[words[0]]
    if words[0] in ("u", "undo"):
        return Action("undo")
    if game == "HH":
        return _heart(words)
    return _towers(words)


def _heart(words: list[str]) -> Action:
    head, rest = words[0], words[1:]
    if head in ("d", "draw") or (head == "t" and rest == ["s"]):
        return Action("draw") if head != "t" else Action("touch", ("stock",))
    if head.isdigit() or head == "w":
        head, rest = "t", words
    if head in ("t", "touch") and len(rest) == 1:
        return Action("touch", (_heart_loc(rest[0]),))
    if head in ("p", "pair") and len(rest) == 2:
        return Action("pair", (_heart_loc(rest[0]), _heart_loc(rest[1])))
    raise CommandError("expected t N, t w, t s, p A B, d or u (? for help)")


def _heart_loc(word: str) -> str:
    if word in ("w", "waste"):
        return "waste"
    if word in ("s", "stock"):
        return "stock"
    number = word.removeprefix("heart:")
    if number.isdigit() and 1 <= int(number) <= 25:
        return f"heart:{int(number)}"
    raise CommandError(f"{word!r} is not a heart position (1-25), w or s")


def _towers(words: list[str]) -> Action:
    head, rest = words[0], words[1:]
    if head in ("t", "tap") and len(rest) == 1:
        return Action("tap", (_tower_loc(rest[0]),))
    if head in ("tt", "dt", "double") and len(rest) in (1, 2):
        return Action("double_tap", (_tower_loc(rest[0]), _count(rest[1:])))
    if head in ("m", "move") and len(rest) in (2, 3):
        return Action("move", (_tower_loc(rest[0]), _tower_loc(rest[1]), _count(rest[2:])))
    raise CommandError("expected t c3, tt c3 [n], m c3 c5 [n] or u (? for help)")


def _count(rest: list[str]) -> int:
    if not rest:
        return 1
    if rest[0].isdigit() and 1 <= int(rest[0]) <= 52:
        return int(rest[0])
    raise CommandError(f"{rest[0]!r} is not a number of cards")


def _tower_loc(word: str) -> str:
    if ":" in word:
        return word
    if word == "f":
        return "found"
    if re.fullmatch(r"f[shdc]", word):
        return f"found:{word[1].upper()}"
    match = re.fullmatch(r"([cx]?)(\d+)", word)
    if match:
        kind = "cell" if match.group(1) == "x" else "col"
        return f"{kind}:{int(match.group(2))}"
    raise CommandError(f"{word!r} is not a place: use c1-c10, x1-x4, f, fs/fh/fd/fc")
