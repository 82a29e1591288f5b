"""A code's leaderboard, pure: ranks, count buckets, cursors, entry shapes.

The ranking order is folded into one ascending BIGINT, ``sort_key``
(:mod:`server.rules.ranking`, shared with profiles and replays), so the top of
a board is an index range and a rank is an index-only count
(``server.storage.leaderboards``).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from server.errors import ProtocolError
from wire import ErrorCode

DEFAULT_LIMIT, MAX_LIMIT = 50, 100
DEFAULT_RADIUS, MAX_RADIUS = 5, 25
LEVELS = ((0, 56), (1, 36), (2, 16))  # (level, shift): won+progress; + moves; + time in 65.5 s steps
SHARDS = 8  # rows per top-level bucket: its few buckets take every result, the others spread


def shard_of(player_id: str) -> int:
    """The top-level shard a player's changes go to (stable, so a player's own changes meet)."""
    return zlib.crc32(player_id.encode()) % SHARDS


def bucket_deltas(changes: dict[int, int], shard: int = 0) -> list[tuple[int, int, int, int]]:
    """(level, bucket, shard, delta) for every bucket an entry leaves or joins, sorted (the
    order rows are locked in), zeros dropped; the top level's rows in ``shard``."""
    deltas: dict[tuple[int, int, int], int] = {}
    for key, delta in changes.items():
        for level, shift in LEVELS:
            row = (level, key >> shift, shard if level == LEVELS[0][0] else 0)
            deltas[row] = deltas.get(row, 0) + delta
    return sorted((*row, d) for row, d in deltas.items() if d)


@dataclass
class Window:
    """Consecutive entries in ranking order, each with its rank."""

    entries: list[dict[str, Any]]
    next_cursor: str | None = None
    me: dict[str, Any] | None = None


def entry_json(row: Any, rank: int) -> dict[str, Any]:
    """One entry as the API shows it."""
    return {
        "rank": rank,
        "player": {"id": row.player_id, "name": row.name},
        "result": row.result,
        "won": bool(row.won),
        "progress": row.progress,
        "score": row.score,
        "moves": row.moves,
        "elapsed_ms": row.elapsed_ms,
        "undos": row.undos,
        "finished_at": row.finished_ms,
        "game_id": row.game_id,
        "standing": row.standing,
    }


def ranks(keys: Sequence[int], offset: int, less_than_first: int) -> list[int]:
    """Competition ranks ("1224") for a window starting at 0-based position ``offset``.

    Entries tied with the first share its rank (1 + entries strictly better);
    any later key's rank is the position of its first occurrence, since every
    entry before that occurrence ranks strictly better.
    """
    out: list[int] = []
    first_at: dict[int, int] = {}
    for i, key in enumerate(keys):
        if key == keys[0]:
            out.append(less_than_first + 1)
        else:
            out.append(offset + first_at.setdefault(key, i) + 1)
    return out


def encode_cursor(row: Any) -> str:
    return f"{row.sort_key}.{row.player_id}"


CURSOR = re.compile(r"(0|[1-9][0-9]{0,18})\.(p_[0-9a-z]{1,30})\Z", re.ASCII)
MAX_SORT_KEY = (1 << 63) - 1  # a BIGINT: a larger number would overflow the database driver


def decode_cursor(text: str) -> tuple[int, str]:
    """A cursor back into (sort_key, player_id); anything else is ``bad_message``.

    Only what :func:`encode_cursor` can write passes: a sort key within BIGINT
    (ASCII digits; ``str.isdigit`` would take ``²``) and a player id's shape.
    """
    match = CURSOR.match(text)
    if match is None or int(match.group(1)) > MAX_SORT_KEY:
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "cursor is not one this server gave", field="cursor")
    return int(match.group(1)), match.group(2)
