"""The replay verifier: anyone can check a finished game's claimed result.

A finished game's action log is public (``GET /api/games/{id}/actions``).
Replaying it from the code with the same engine must reproduce the result,
score, moves, progress and fingerprint the server claims; the check itself
is ``engine.verify``, shared with the server so both judge by the same rules.
"""

from __future__ import annotations

from typing import Any

from client.http import HttpApi
from engine.verify import Verification, verify_log


async def verify_game(http: HttpApi, game_id: str) -> Verification:
    """Fetch a finished game's log over HTTP and replay it locally."""
    return verify_log(await http.game_actions(game_id))


def describe(verdict: Verification) -> str:
    """One line per finding, for people."""
    if verdict.error:
        return f"NOT VERIFIED: {verdict.error}"
    if verdict.mismatches:
        lines = [f"NOT VERIFIED: {len(verdict.mismatches)} claimed value(s) differ"]
        lines += [f"  {m.field}: claimed {m.claimed!r}, replayed {m.replayed!r}" for m in verdict.mismatches]
        return "\n".join(lines)
    got: dict[str, Any] = verdict.replayed or {}
    return (
        f"verified: {verdict.code}, {verdict.actions} actions replayed -> {got.get('result')}, "
        f"score {got.get('score')}, {got.get('moves')} moves, fingerprint {got.get('fingerprint')}"
    )
