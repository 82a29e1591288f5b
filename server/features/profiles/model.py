"""Statistics and history, pure: how one finished game changes a player's totals, streaks,
daily percentiles, and the history's page cursor.

The totals are folded one finished game at a time (:func:`fold_finish`,
:func:`fold_daily`), inside the transaction that finishes the game, so
reading them is one row per variant and never a scan of the player's games.
Migration 0007 folds the games finished before it with the same functions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from engine.vocabulary import Result
from server.errors import ProtocolError
from server.rules.days import FAMILIES
from wire import ErrorCode

PERCENTILE_BUCKETS = 101  # whole percentiles 0..100
# A daily attempt's ``rank`` once its day ended and its entry is not on the default board for
# good (confirmed, removed, its player banned): fixed, counted in no rank, percentile or total.
UNRANKED = 0
# A daily attempt's ``entries`` until its rank is fixed: a win whose figures (moves, time) wait
# for that moment to join its variant's totals, so a result under review never shows them.
HELD = -1
DAILY_RESULTS = frozenset({Result.WON, Result.RESIGNED})  # a daily the player finished themselves
GAME_OF_PREFIX = {"HH": "heart_to_heart", "SH": "seahaven"}
HISTORY_RESULTS = ("won", "resigned", "expired", "open")
_CURSOR = re.compile(r"\A([0-9]{1,15})\.(g_[0-9a-f]{1,13})\Z")


def fold_finish(
    row: dict[str, Any] | None, won: bool, moves: int, elapsed_ms: int, at_ms: int
) -> dict[str, Any]:
    """A variant's totals after one more finished game (``row`` None: the first one).

    A win lengthens the current streak; any other end (resigned, expired) breaks it.
    """
    base = row or {
        "played": 0,
        "won": 0,
        "current_streak": 0,
        "best_streak": 0,
        "best_moves": None,
        "won_moves": 0,
        "best_time_ms": None,
        "won_time_ms": 0,
        "last_finished_ms": at_ms,
    }
    new = {**base, "played": base["played"] + 1, "last_finished_ms": max(at_ms, base["last_finished_ms"])}
    if not won:
        new["current_streak"] = 0
        return new
    new["won"] = base["won"] + 1
    new["current_streak"] = base["current_streak"] + 1
    new["best_streak"] = max(base["best_streak"], new["current_streak"])
    new["best_moves"] = moves if base["best_moves"] is None else min(base["best_moves"], moves)
    new["won_moves"] = base["won_moves"] + moves
    new["best_time_ms"] = (
        elapsed_ms if base["best_time_ms"] is None else min(base["best_time_ms"], elapsed_ms)
    )
    new["won_time_ms"] = base["won_time_ms"] + elapsed_ms
    return new


def next_day(day: str) -> str:
    return (date.fromisoformat(day) + timedelta(days=1)).isoformat()


def fold_daily(row: dict[str, Any] | None, day: str, new_day: bool) -> dict[str, Any] | None:
    """Daily totals after a ranked daily of ``day`` was finished (None: nothing changes).

    ``new_day``: no other daily of that day was finished before. A day right
    after the last one lengthens the streak, a gap starts a new one; a day
    older than the last (yesterday's attempt finished just after midnight)
    counts as played without touching the streak.
    """
    if not new_day:
        return None
    if row is None:
        return {
            "days_played": 1,
            "last_day": day,
            "current_streak": 1,
            "best_streak": 1,
            "best_rank": None,
            "ranked": 0,
            "percentiles": empty_histogram(),
        }
    if day < row["last_day"]:
        return {**row, "days_played": row["days_played"] + 1}
    streak = row["current_streak"] + 1 if next_day(row["last_day"]) == day else 1
    return {
        **row,
        "days_played": row["days_played"] + 1,
        "last_day": day,
        "current_streak": streak,
        "best_streak": max(row["best_streak"], streak),
    }


def current_daily_streak(last_day: str, streak: int, today: str) -> int:
    """The streak still stands while today's or yesterday's daily was finished; else it is 0."""
    return streak if last_day in (today, (date.fromisoformat(today) - timedelta(days=1)).isoformat()) else 0


def percentile(rank: int, entries: int) -> int:
    """Whole percent of the other entries a rank is ahead of (100: first; alone on a board: 100)."""
    if entries <= 1:
        return 100
    return round(100 * (entries - rank) / (entries - 1))


def empty_histogram() -> str:
    return json.dumps([0] * PERCENTILE_BUCKETS, separators=(",", ":"))


def add_percentile(histogram: str, value: int) -> str:
    counts = json.loads(histogram)
    counts[max(0, min(100, value))] += 1
    return json.dumps(counts, separators=(",", ":"))


def median_percentile(histogram: str) -> float | None:
    """The median of the counted percentiles (the mean of the two middle ones for an even count)."""
    counts: list[int] = json.loads(histogram)
    total = sum(counts)
    if total == 0:
        return None
    wanted = [(total - 1) // 2, total // 2]
    found: list[int] = []
    seen = 0
    for value, count in enumerate(counts):
        while len(found) < 2 and wanted[len(found)] < seen + count:
            found.append(value)
        seen += count
    return (found[0] + found[1]) / 2


def variant_json(family: str, row: Any | None) -> dict[str, Any]:
    """One variant's statistics as the API shows them (zeros for a variant never played)."""
    played = row.played if row else 0
    won = row.won if row else 0
    return {
        "game": GAME_OF_PREFIX[family[:2]],
        "variant": family,
        "played": played,
        "won": won,
        "win_rate": round(won / played, 4) if played else None,
        "current_streak": row.current_streak if row else 0,
        "best_streak": row.best_streak if row else 0,
        "best_moves": row.best_moves if row else None,
        "average_moves": round(row.won_moves / won, 1) if row and won else None,
        "best_time_ms": row.best_time_ms if row else None,
        "average_time_ms": round(row.won_time_ms / won) if row and won else None,
    }


def variants_json(rows: dict[str, Any]) -> list[dict[str, Any]]:
    """Every daily family's statistics, in the families' order, then any other variant played."""
    order = [*FAMILIES, *sorted(set(rows) - set(FAMILIES))]
    return [variant_json(family, rows.get(family)) for family in order]


def games_json(variants: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each game's totals over its variants (streaks and bests stay per variant)."""
    out = []
    for game in GAME_OF_PREFIX.values():
        mine = [v for v in variants if v["game"] == game]
        played, won = sum(v["played"] for v in mine), sum(v["won"] for v in mine)
        out.append(
            {
                "game": game,
                "played": played,
                "won": won,
                "win_rate": round(won / played, 4) if played else None,
            }
        )
    return out


def dailies_json(row: Any | None, today: str) -> dict[str, Any]:
    if row is None:
        return {
            "days_played": 0,
            "current_streak": 0,
            "best_streak": 0,
            "last_day": None,
            "best_rank": None,
            "ranked": 0,
            "median_percentile": None,
        }
    return {
        "days_played": row.days_played,
        "current_streak": current_daily_streak(row.last_day, row.current_streak, today),
        "best_streak": row.best_streak,
        "last_day": row.last_day,
        "best_rank": row.best_rank,
        "ranked": row.ranked,
        "median_percentile": median_percentile(row.percentiles),
    }


# -- history ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HistoryFilter:
    """What a history page may be narrowed to; None is no narrowing."""

    game: str | None = None  # "HH" or "SH"
    variant: str | None = None  # a family: "SH1-C4"
    result: str | None = None  # won, resigned, expired or open
    daily: bool = False  # daily attempts only


def encode_cursor(created_ms: int, game_id: str) -> str:
    """Where the next page starts: just after the last game of this one (newest first)."""
    return f"{created_ms}.{game_id}"


def decode_cursor(text: str) -> tuple[int, str]:
    match = _CURSOR.match(text)
    if match is None:
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "cursor must be a next_cursor from a page", field="cursor")
    return int(match.group(1)), match.group(2)
