"""Races over the WebSocket: open, join, watch, start, leave."""

from __future__ import annotations

from typing import Any

from server.core import topics
from server.core.context import Caller, Handlers
from server.core.quotas import Rate
from server.features.races.model import DEFAULT_COUNTDOWN_S, RaceState
from server.features.races.service import Races
from server.rules.codes import code_from_fields
from wire import RaceStatus

OVER = (RaceStatus.FINISHED, RaceStatus.CANCELLED)  # nothing more is pushed for these


def race_reply(race: RaceState, caller: Caller, role: str) -> dict[str, Any]:
    racer = race.racers.get(caller.player_id or "")
    return {"type": "race", "race": race.json(), "role": role, "game_id": racer.game_id if racer else None}


def follow(caller: Caller, race: RaceState, as_racer: bool) -> None:
    if race.status in OVER:
        return
    caller.follow(topics.race(race.id))
    if as_racer and caller.player_id is not None:
        caller.follow_own(topics.racer(race.id, caller.player_id))


class RacesApi:
    """The race requests; the races themselves are :class:`Races`'.

    ``opened`` is the per-player quota of ``race_open`` (``races_per_minute``).
    Whatever stores (opening, joining) first checks that the connection can
    follow the race, so a request refused for a limit stores nothing.
    """

    def __init__(self, races: Races, opened: Rate) -> None:
        self.races = races
        self.opened = opened

    def handlers(self) -> Handlers:
        return {
            "race_open": self.race_open,
            "race_join": self.race_join,
            "race_watch": self.race_watch,
            "race_start": self.race_start,
            "race_leave": self.race_leave,
        }

    async def race_open(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        player_id = caller.require_player()
        code = code_from_fields(fields)
        caller.check_follow()
        await self.opened.require(player_id)
        race = await self.races.open(player_id, caller.player_name, code)
        follow(caller, race, True)
        return race_reply(race, caller, "owner")

    async def race_join(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        """Join a race, or come back to one (a racer who reconnected gets their game id back)."""
        player_id = caller.require_player()
        race = await self.races.get(fields["race_id"])
        await self.races.check_unsealed(race.code)
        if player_id not in race.racers:
            caller.check_follow(topics.race(race.id))
            await self.races.join(race, player_id, caller.player_name)
        follow(caller, race, True)
        return race_reply(race, caller, "owner" if player_id == race.owner_id else "racer")

    async def race_watch(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        race = await self.races.get(fields["race_id"])
        await self.races.check_unsealed(race.code)
        follow(caller, race, False)
        return race_reply(race, caller, "spectator")

    async def race_start(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        player_id = caller.require_player()
        countdown = fields.get("countdown_s", DEFAULT_COUNTDOWN_S)  # its bounds are the schema's
        race = await self.races.get(fields["race_id"])
        await self.races.start(race, player_id, countdown)
        return race_reply(race, caller, "owner")

    async def race_leave(self, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
        """Stop following a race; a racer also leaves it (or, once it runs, resigns their game)."""
        race = await self.races.get(fields["race_id"])
        if caller.player_id is not None and caller.player_id in race.racers:
            await self.races.leave(race, caller.player_id)
            caller.unfollow(topics.racer(race.id, caller.player_id))
        caller.unfollow(topics.race(race.id))
        return {"type": "race_left", "race_id": race.id}
