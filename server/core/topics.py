"""The one place that names fan-out topics."""

from __future__ import annotations


def game(game_id: str) -> str:
    """Updates, status and finished pushes of one game."""
    return f"game:{game_id}"


def game_of(topic: str) -> str | None:
    """The game whose topic this is (None: not a game's)."""
    return topic.removeprefix("game:") if topic.startswith("game:") else None


def leaderboard(code: str) -> str:
    """``leaderboard_update`` pushes of one code's board."""
    return f"leaderboard:{code}"


def race(race_id: str) -> str:
    """``race_update`` and ``race_progress`` pushes of one race."""
    return f"race:{race_id}"


def racer(race_id: str, player_id: str) -> str:
    """A racer's private topic: their ``race_started`` (with their own game) goes here."""
    return f"race:{race_id}:{player_id}"


def ghost(race_id: str) -> str:
    """A ghost race's ``ghost_progress`` and ``ghost_finished`` pushes (its one racer follows it)."""
    return f"ghost:{race_id}"
