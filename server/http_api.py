"""The plain HTTP JSON API: health, players, games and replays, schemas.

Errors use the same codes as the WebSocket protocol:
``{"error": {"code": …, "message": …}}`` with a fitting HTTP status.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import text
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.protocol import ProtocolError
from server.storage import queries

if TYPE_CHECKING:
    from server.app import Services

SCHEMA_DIR = Path(__file__).resolve().parent / "schema"
STATUS_FOR = {
    "bad_json": 400,
    "bad_message": 400,
    "bad_code": 400,
    "bad_token": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "game_over": 409,
    "internal": 500,
}
MAX_BODY_BYTES = 4096


def services_of(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def error_response(exc: ProtocolError) -> JSONResponse:
    body = {"error": {"code": exc.code, "message": exc.message, **exc.extra}}
    return JSONResponse(body, status_code=STATUS_FOR.get(exc.code, 400))


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object (empty body = {}), or bad_json."""
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise ProtocolError("bad_message", f"the body is larger than {MAX_BODY_BYTES} bytes")
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except ValueError:
        raise ProtocolError("bad_json", "the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ProtocolError("bad_json", "the body must be a JSON object")
    return body


def check_name(value: Any) -> str:
    if not isinstance(value, str) or not 1 <= len(value.strip()) <= 32:
        raise ProtocolError("bad_message", "name must be 1 to 32 characters", field="name")
    if any(ord(ch) < 32 for ch in value):
        raise ProtocolError("bad_message", "name must not hold control characters", field="name")
    return value.strip()


async def player_from_header(request: Request) -> str:
    """The player id for an ``Authorization: Bearer TOKEN`` header."""
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("bearer "):
        raise ProtocolError("bad_token", "send Authorization: Bearer TOKEN")
    async with services_of(request).sessions() as session:
        player = await queries.player_by_token(session, header[7:].strip())
    if player is None:
        raise ProtocolError("bad_token", "unknown token")
    return player.id


def endpoint(fn: Any) -> Any:
    """Turn ProtocolErrors raised by a handler into JSON error responses."""

    async def wrapped(request: Request) -> Response:
        try:
            result: Response = await fn(request)
            return result
        except ProtocolError as exc:
            return error_response(exc)

    wrapped.__name__ = fn.__name__
    wrapped.__doc__ = fn.__doc__
    return wrapped


@endpoint
async def health(request: Request) -> Response:
    """200 once the database answers, 503 otherwise."""
    try:
        async with services_of(request).engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except Exception as exc:
        return JSONResponse({"status": "unavailable", "database": str(exc)[:200]}, 503)
    return JSONResponse({"status": "ok", "database": "ok"})


@endpoint
async def create_player(request: Request) -> Response:
    body = await json_body(request)
    name = check_name(body["name"]) if body.get("name") is not None else None
    services = services_of(request)
    async with services.sessions() as session:
        player, token = await queries.create_player(session, name, services.clock())
    return JSONResponse({"id": player.id, "name": player.name, "token": token}, 201)


@endpoint
async def get_player(request: Request) -> Response:
    async with services_of(request).sessions() as session:
        player = await queries.player_by_id(session, request.path_params["player_id"])
    if player is None:
        raise ProtocolError("not_found", "no such player")
    return JSONResponse({"id": player.id, "name": player.name, "created_at": player.created_ms})


@endpoint
async def rename_me(request: Request) -> Response:
    player_id = await player_from_header(request)
    name = check_name((await json_body(request)).get("name"))
    services = services_of(request)
    async with services.sessions() as session:
        await queries.rename_player(session, player_id, name)
    for conn in services.connections:  # games started from now on carry the new name
        if conn.player_id == player_id:
            conn.player_name = name
    return JSONResponse({"id": player_id, "name": name})


@endpoint
async def list_live_games(request: Request) -> Response:
    """Games being played now, most recently active first: anyone may watch them."""
    text = request.query_params.get("limit", "20")
    if not text.isdigit() or not 1 <= int(text) <= 100:
        raise ProtocolError("bad_message", "limit must be a whole number from 1 to 100", field="limit")
    async with services_of(request).sessions() as session:
        rows = await queries.live_games(session, int(text))
    games = [
        {
            "id": row.id,
            "code": row.code,
            "owner": {"id": row.player_id, "name": name},
            "status": row.status,
            "progress": row.progress,
            "moves": row.moves,
            "score": row.score,
            "last_action_at": row.last_action_ms,
            "race_id": row.race_id,
        }
        for row, name in rows
    ]
    return JSONResponse({"games": games})


@endpoint
async def get_game(request: Request) -> Response:
    """A game's info and public state: what any spectator sees."""
    live = await services_of(request).games.require(request.path_params["game_id"])
    return JSONResponse({"game": live.info(), "state": live.state()})


@endpoint
async def game_actions(request: Request) -> Response:
    """A finished game's action log, for replay and verification by anyone."""
    services = services_of(request)
    live = await services.games.require(request.path_params["game_id"])
    if live.result is None:
        raise ProtocolError("conflict", "the game is not finished; its moves are public once it is")
    async with services.sessions() as session:
        rows = await queries.game_actions(session, live.id)
    body = {
        "game": live.info(),
        "code": str(live.game.code),
        "actions": [{"seq": r.seq, "action": r.action, "at": r.at_ms} for r in rows],
        "final": final_summary(live),
    }
    return JSONResponse(body)


def final_summary(live: Any) -> dict[str, Any]:
    """What a verifier must reproduce from the code and the log."""
    return {
        "result": live.result,
        "status": live.game.status,
        "score": live.game.score,
        "moves": live.game.moves,
        "progress": live.game.progress,
        "fingerprint": live.game.fingerprint(),
    }


async def schema_file(request: Request) -> Response:
    name = request.path_params["name"]
    path = SCHEMA_DIR / name
    if name not in ("asyncapi.json", "openapi.json") or not path.is_file():
        return error_response(ProtocolError("not_found", "no such schema"))
    return Response(path.read_bytes(), media_type="application/json")


EXTRA_ROUTES: list[Route] = []  # competition and other modules add theirs here


def routes() -> list[Route]:
    return [
        Route("/health", health),
        Route("/api/players", create_player, methods=["POST"]),
        Route("/api/players/me", rename_me, methods=["PATCH"]),
        Route("/api/players/{player_id}", get_player),
        Route("/api/games", list_live_games),
        Route("/api/games/{game_id}", get_game),
        Route("/api/games/{game_id}/actions", game_actions),
        Route("/api/schema/{name}", schema_file),
        *EXTRA_ROUTES,
    ]
