"""Players and games over HTTP: create and rename players, list, show and log games."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from server.core.context import Peers
from server.core.games import LiveGame
from server.core.quotas import address_key
from server.core.services import Services
from server.edge.auth import player_from_header, viewer_from_header
from server.edge.inputs import int_param, json_body
from server.edge.openapi import route
from server.errors import ProtocolError
from server.rules.days import day_of
from server.rules.disclosure import sealed_to_others
from server.rules.names import clean_name
from server.storage import queries
from wire import ErrorCode, PlayerKind

TAKEN = "name is taken: another player's reads the same (ignoring case and lookalike letters)"


def final_summary(live: LiveGame) -> dict[str, Any]:
    """What a verifier must reproduce from the code and the log."""
    return {
        "result": live.result,
        "status": live.game.status,
        "score": live.game.score,
        "moves": live.game.moves,
        "progress": live.game.progress,
        "fingerprint": live.game.fingerprint(),
    }


def live_game_json(row: Any, name: str) -> dict[str, Any]:
    return {
        "id": row.id,
        "code": None if row.daily_day is not None else row.code,
        "owner": {"id": row.player_id, "name": name},
        "status": row.status,
        "progress": row.progress,
        "moves": row.moves,
        "score": row.score,
        "last_action_at": row.last_action_ms,
        "race_id": row.race_id,
    }


class Players:
    """The HTTP routes for players and games."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.peers: Peers = services.peers

    def routes(self) -> list[BaseRoute]:
        return [
            route("/api/players", self.create_player, methods=["POST"]),
            route("/api/players/me", self.rename_me, methods=["PATCH"]),
            route("/api/players/{player_id}", self.get_player),
            route("/api/games", self.list_live_games),
            route("/api/games/{game_id}", self.get_game),
            route("/api/games/{game_id}/actions", self.game_actions),
        ]

    async def create_player(self, request: Request) -> Response:
        body = await json_body(request)
        name = clean_name(body["name"]) if body.get("name") is not None else None
        kind = PlayerKind.BOT if body.get("bot") else PlayerKind.HUMAN
        address = address_key(request.client.host if request.client else None)
        if address is not None:
            await self.services.quotas.players.require(address)  # players_per_hour, before storing
        try:
            player, token = await queries.create_player(self.services.db, name, self.services.clock(), kind)
        except queries.NameTaken:
            raise ProtocolError(ErrorCode.BAD_MESSAGE, TAKEN, field="name") from None
        body = {"id": player.id, "name": player.name, "token": token, "bot": kind == PlayerKind.BOT}
        return JSONResponse(body, 201)

    async def get_player(self, request: Request) -> Response:
        async with self.services.db.read() as tx:
            player = await queries.player_by_id(tx, request.path_params["player_id"])
        if player is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, "no such player")
        body = {
            "id": player.id,
            "name": player.name,
            "created_at": player.created_ms,
            "bot": player.kind == PlayerKind.BOT,
            "banned": player.banned_ms is not None,
        }
        return JSONResponse(body)

    async def rename_me(self, request: Request) -> Response:
        player_id = await player_from_header(request, self.services.db)
        name = clean_name((await json_body(request)).get("name"))
        try:
            await queries.rename_player(self.services.db, player_id, name)
        except queries.NameTaken:
            raise ProtocolError(ErrorCode.BAD_MESSAGE, TAKEN, field="name") from None
        self.peers.renamed(player_id, name)  # games started from now on carry the new name
        return JSONResponse({"id": player_id, "name": name})

    async def list_live_games(self, request: Request) -> Response:
        """Games being played now, most recently active first: anyone may watch them.

        A daily challenge's games are not listed until their day is over (sealed).
        """
        limit = int_param(request, "limit", 20, 1, 100)
        async with self.services.db.read() as tx:
            rows = await queries.live_games(tx, limit, day_of(self.services.clock()))
        return JSONResponse({"games": [live_game_json(row, name) for row, name in rows]})

    async def get_game(self, request: Request) -> Response:
        """A game's info and public state: what any spectator sees (a sealed daily's: its player only)."""
        live = await self.services.games.require(request.path_params["game_id"])
        await self.sealed_to_others(request, live)
        return JSONResponse({"game": live.info(), "state": live.state()})

    async def sealed_to_others(self, request: Request, live: LiveGame) -> bool:
        """Whether the game is sealed to all but its player (``sealed`` for anyone else)."""
        now = self.services.clock()
        if live.daily_day is None or live.daily_day < day_of(now):
            return False  # not sealed: nobody need be identified
        viewer = await viewer_from_header(request, self.services.db)
        return sealed_to_others(live.daily_day, live.owner_id, viewer, now)

    async def game_actions(self, request: Request) -> Response:
        """A finished game's action log, for replay and verification by anyone.

        A daily challenge's log is its player's only until the day is over; then
        it carries the code, published that midnight.
        """
        live = await self.services.games.require(request.path_params["game_id"])
        sealed = await self.sealed_to_others(request, live)
        if live.result is None:
            raise ProtocolError(
                ErrorCode.CONFLICT, "the game is not finished; its moves are public once it is"
            )
        async with self.services.db.read() as tx:
            rows = await queries.game_actions(tx, live.id)
        body = {
            "game": live.info(),
            "code": None if sealed else str(live.game.code),
            "actions": [{"seq": r.seq, "action": r.action, "at": r.at_ms} for r in rows],
            "final": final_summary(live),
        }
        return JSONResponse(body)
