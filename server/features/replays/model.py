"""Verifying a game, pure: what the stored row claims against a replay of the public log.

The stored game row (what the server claims) and the game's leaderboard entry
are checked with :mod:`engine.verify`, the same code a client library runs. The
in-memory game is deliberately not used: it was itself rebuilt from the log,
so comparing with it would prove nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.verify import Mismatch, Verification, elapsed_from_times, verify
from engine.vocabulary import DECLARED_RESULTS, Result
from server.rules.ranking import sort_key


def claimed_from_row(row: Any) -> dict[str, Any]:
    """What the stored row says; its status is the engine's unless the game was ended."""
    claimed = {
        "result": row.result,
        "score": row.score,
        "moves": row.moves,
        "progress": row.progress,
        "fingerprint": row.fingerprint,
    }
    if row.status not in DECLARED_RESULTS:
        claimed["status"] = row.status
    return claimed


def check_entry(entry: Any, replayed: dict[str, Any], elapsed_ms: int) -> list[Mismatch]:
    """The leaderboard entry must show exactly the replayed game (and the logged time)."""
    expected = {
        "won": replayed["result"] == Result.WON,
        "result": replayed["result"],
        "progress": replayed["progress"],
        "moves": replayed["moves"],
        "score": replayed["score"],
        "elapsed_ms": elapsed_ms,
    }
    expected["sort_key"] = sort_key(expected["won"], expected["progress"], expected["moves"], elapsed_ms)
    found = {name: getattr(entry, name) for name in expected}
    found["won"] = bool(found["won"])
    return [Mismatch(k, found[k], v) for k, v in expected.items() if found[k] != v]


def report(row: Any, actions: Sequence[Any], entry: Any | None) -> dict[str, Any]:
    """The whole verdict for one game (CPU only: runs in a worker thread)."""
    claimed = claimed_from_row(row)
    gap = next((i for i, a in enumerate(actions) if a.seq != i), None)
    if gap is not None:
        result = Verification(row.code, len(actions), None, error=f"seq gap at {gap}")
    else:
        result = verify(row.code, [a.action for a in actions], claimed)
    body = {"game_id": row.id, **result.to_json(), "claimed": claimed, "leaderboard": None}
    if entry is not None and result.replayed is not None:
        elapsed = elapsed_from_times([a.at_ms for a in actions])
        problems = check_entry(entry, result.replayed, elapsed)
        body["leaderboard"] = {"ok": not problems, "mismatches": [m.to_json() for m in problems]}
        body["ok"] = body["ok"] and not problems
    return body
