"""Playing and watching over the WebSocket: new games, opening, watching, acting, resigning."""

from __future__ import annotations

from typing import Any

from engine import GameCode
from engine.vocabulary import Result
from server.core import topics
from server.core.context import Caller, Handlers, Starter
from server.core.games import GameService, LiveGame
from server.core.quotas import Rate
from server.errors import ProtocolError
from server.rules.codes import code_from_fields
from server.rules.disclosure import sealed_to_others
from server.solver.deals import Deals
from server.solver.pool import SolverLost, as_unavailable
from wire import ErrorCode


async def proven_code(drawn: GameCode, deals: Deals) -> GameCode:
    """ "Winnable deals only": a random code of the drawn code's game and variant that the solver
    proves winnable before it is dealt (docs/protocol.md, Winnable deals only)."""
    try:
        found = await deals.winnable_code(drawn.game, drawn.variant)
    except SolverLost as lost:
        raise as_unavailable(lost) from lost
    if found is None:
        raise ProtocolError(ErrorCode.UNAVAILABLE, "no winnable deal was proven this time: try again")
    return found


def game_message(live: LiveGame, role: str) -> dict[str, Any]:
    return {"type": "game", "game": live.info(), "state": live.state(), "role": role}


def follow_game(caller: Caller, live: LiveGame, owner: bool) -> None:
    """Subscribe to a game's pushes; a finished game has none left, so it is not followed."""
    if live.finished:
        return
    if owner:
        caller.follow_own(topics.game(live.id))
    else:
        caller.follow(topics.game(live.id))


class Play:
    """The WebSocket requests of plain play; how a game starts is the ``starter``'s business.

    ``new_games`` is the per-player quota of ``new_game`` (``games_per_minute``); ``deals`` proves
    "winnable deals only".
    """

    def __init__(self, games: GameService, starter: Starter, new_games: Rate, deals: Deals) -> None:
        self.games = games
        self.starter = starter
        self.new_games = new_games
        self.deals = deals

    def handlers(self) -> Handlers:
        return {
            "ping": self.ping,
            "new_game": self.new_game,
            "open_game": self.open_game,
            "watch": self.watch,
            "unwatch": self.unwatch,
            "act": self.act,
            "resign": self.resign,
        }

    async def ping(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        return {"type": "pong"}

    async def new_game(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        player_id = caller.require_player()
        winnable = fields.get("winnable") is True
        if winnable and ("daily" in fields or "code" in fields):
            raise ProtocolError(
                ErrorCode.BAD_MESSAGE, "winnable goes with game and variant only", field="winnable"
            )
        code = None if "daily" in fields else code_from_fields(fields)
        await self.new_games.require(player_id)  # before anything is stored
        if winnable and code is not None:
            code = await proven_code(code, self.deals)
        if code is None:
            live = await self.starter.start_daily(player_id, caller.player_name, fields["daily"])
        else:
            live = await self.starter.start_on_code(player_id, caller.player_name, code)
        caller.follow_own(topics.game(live.id))
        return game_message(live, "owner")

    async def open_game(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        live = await self.games.require(fields["game_id"])
        sealed_to_others(live.daily_day, live.owner_id, caller.player_id, self.games.clock())
        owner = live.owner_id == caller.player_id
        follow_game(caller, live, owner)
        return game_message(live, "owner" if owner else "spectator")

    async def watch(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        live = await self.games.require(fields["game_id"])
        sealed_to_others(live.daily_day, live.owner_id, caller.player_id, self.games.clock())
        follow_game(caller, live, owner=False)
        return game_message(live, "spectator")

    async def unwatch(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        caller.unfollow(topics.game(fields["game_id"]))
        return {"type": "unwatched", "game_id": fields["game_id"]}

    async def act(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        player_id = caller.require_player()
        brief = fields.get("reply") == "brief"  # the schema allows full (the default) and brief only
        game_id, seq, action = fields["game_id"], fields["seq"], fields["action"]
        return await self.games.act(game_id, player_id, seq, action, caller, brief=brief)

    async def resign(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        player_id = caller.require_player()
        live = await self.games.end(fields["game_id"], player_id, Result.RESIGNED, caller)
        return game_message(live, "owner")
