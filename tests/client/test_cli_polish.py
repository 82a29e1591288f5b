"""The command line reads well: plain help, counted nouns, 80 columns, labelled columns."""

from __future__ import annotations

import re

import pytest

from client import cli
from client.cli.format import plural, table
from client.cli.prompt import HELP
from client.render import Style, card_count, render
from tests.client.states import heart_state


def test_help_has_no_raw_markup(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = capsys.readouterr().out
    assert "``" not in text and ":class:" not in text and "Play, watch" in text
    for name in ("login", "logout", "stats", "history", "replay"):
        assert name in text


@pytest.mark.parametrize("game", ["HH", "SH"])
def test_in_game_help_fits_in_80_columns(game: str) -> None:
    assert max(len(line) for line in HELP[game].splitlines()) <= 80
    assert "r resign (asks first)" in HELP[game]


def test_one_card_is_not_cards() -> None:
    assert card_count(1) == "1 card" and card_count(0) == "0 cards" and card_count(24) == "24 cards"
    assert plural(1, "move") == "1 move" and plural(3, "day") == "3 days"


def test_the_stock_line_counts_its_cards() -> None:
    text = render(heart_state(waste_top="KD", stock_count=1), Style(color=False, symbols=False))
    assert "stock (s): 1 card " in text and "(1 card)" in text and "1 cards" not in text


def test_tables_label_every_column() -> None:
    lines = table(("rank", "player", "moves"), [("1.", "Ada", "120"), ("2.", "Grace Hopper", "7")], left=2)
    assert lines[0].split() == ["rank", "player", "moves"]
    assert re.fullmatch(r"1\. +Ada +120", lines[1]) and lines[2].endswith("  7")
    assert len({len(line) for line in lines[1:]}) == 1  # numbers right-aligned under their label
