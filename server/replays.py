"""Verified replays over HTTP: ``GET /api/games/{id}/verify``.

The stored game row (what the server claims) and the game's leaderboard entry
are checked against a fresh replay of the public action log with
:mod:`engine.verify`, the same code a client library runs. The in-memory game
is deliberately not used: it was itself rebuilt from the log, so comparing
with it would prove nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from engine.verify import Mismatch, Verification, elapsed_from_times, verify
from server import http_api
from server.leaderboard import sort_key
from server.protocol import ProtocolError
from server.storage.models import ActionRow, GameRow, LeaderboardEntry

GAMES = GameRow.__table__
ACTIONS = ActionRow.__table__
ENTRIES = LeaderboardEntry.__table__
DECLARED = ("resigned", "expired")


def claimed_from_row(row: Row[Any]) -> dict[str, Any]:
    """What the stored row says; its status is the engine's unless the game was ended."""
    claimed = {
        "result": row.result,
        "score": row.score,
        "moves": row.moves,
        "progress": row.progress,
        "fingerprint": row.fingerprint,
    }
    if row.status not in DECLARED:
        claimed["status"] = row.status
    return claimed


def check_entry(entry: Row[Any], replayed: dict[str, Any], elapsed_ms: int) -> list[Mismatch]:
    """The leaderboard entry must show exactly the replayed game (and the logged time)."""
    expected = {
        "won": replayed["result"] == "won",
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


async def load(conn: AsyncConnection, game_id: str) -> tuple[Row[Any], Sequence[Row[Any]], Row[Any] | None]:
    row = (await conn.execute(select(GAMES).where(GAMES.c.id == game_id))).first()
    if row is None:
        raise ProtocolError("not_found", f"no game {game_id!r}")
    log_q = select(ACTIONS).where(ACTIONS.c.game_id == game_id).order_by(ACTIONS.c.seq)
    actions = (await conn.execute(log_q)).all()
    entry_q = select(ENTRIES).where(
        ENTRIES.c.code == row.code, ENTRIES.c.player_id == row.player_id, ENTRIES.c.game_id == game_id
    )
    entry = (await conn.execute(entry_q)).first()
    return row, actions, entry


def report(row: Row[Any], actions: Sequence[Row[Any]], entry: Row[Any] | None) -> dict[str, Any]:
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


@http_api.endpoint
async def verify_game(request: Request) -> Response:
    """Replay a finished game from its code and log; compare with what the server stored."""
    game_id = request.path_params["game_id"]
    async with http_api.services_of(request).engine.connect() as conn:
        row, actions, entry = await load(conn, game_id)
    if row.result is None:
        raise ProtocolError("conflict", "the game is not finished; its moves are public once it is")
    return JSONResponse(await asyncio.to_thread(report, row, actions, entry))


http_api.EXTRA_ROUTES.append(Route("/api/games/{game_id}/verify", verify_game))
