"""The terminal heart is the engine's heart: its geometry is taken from engine.hearts, drawn in place."""

from __future__ import annotations

import re
from pathlib import Path

from client.render import X_STEP, Style, render
from engine.hearts import COVERED_BY, HEART_ROWS, HEART_SIZE
from tests.client.states import heart_state

DEAL_MD = Path(__file__).resolve().parents[2] / "docs" / "rules" / "deal.md"


def test_the_rows_are_deal_mds_table() -> None:
    text = DEAL_MD.read_text(encoding="utf-8")
    section = text[text.index("## The heart's geometry") :]
    rows = re.findall(r"^\| \d[^|]*\| \d+ \| [\d–]+ \| ([\d, ]+) \|$", section, re.M)
    assert tuple(tuple(int(x) for x in row.split(",")) for row in rows) == HEART_ROWS
    assert sum(len(row) for row in HEART_ROWS) == HEART_SIZE


def test_the_rows_agree_with_the_covering_table() -> None:
    """A card is covered by the cards of the next row whose centres are x − 1 and x + 1."""
    centres = [(r, x) for r, row in enumerate(HEART_ROWS) for x in row]
    placed = [(number, r, x) for number, (r, x) in enumerate(centres, start=1)]
    for number, r, x in placed:
        below = {q for q, rq, xq in placed if rq == r + 1 and abs(xq - x) == 1}
        assert below == set(COVERED_BY[number]), number


def test_each_position_is_drawn_at_its_centre() -> None:
    lines = render(heart_state(), Style(color=False, symbols=False)).splitlines()[2:]
    numbered = 1
    for r, row in enumerate(HEART_ROWS):
        cards, numbers = lines[2 * r], lines[2 * r + 1]
        for x in row:
            column = 2 + x * X_STEP + 3
            assert numbers[column : column + 2].strip() == str(numbered), (r, x, numbers)
            assert cards[column : column + 2] == "AS", (r, x, cards)
            numbered += 1
    assert numbered == HEART_SIZE + 1
