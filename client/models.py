"""Typed views of the protocol's JSON objects (see ``server/schema/asyncapi.json``).

Each keeps the original JSON in ``raw``, so a field the server adds later is
never lost to a client built against an older version of this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine import Action


@dataclass(frozen=True)
class Player:
    id: str
    name: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Player:
        return cls(str(data["id"]), str(data["name"]))


@dataclass(frozen=True)
class Credentials:
    """A new player's identity. The token is shown once by the server: keep it."""

    id: str
    name: str
    token: str
    bot: bool = False


@dataclass(frozen=True)
class GameInfo:
    """Who owns a game, how it ended and where it counts."""

    id: str
    code: str | None  # None for a daily challenge's game: named by ``daily`` and ``family``
    owner: Player
    created_at: int
    finished_at: int | None
    result: str | None
    daily: str | None
    ranked: bool
    race_id: str | None
    family: str = ""
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameInfo:
        return cls(
            id=data["id"],
            code=data.get("code"),
            family=data.get("family", ""),
            owner=Player.from_json(data["owner"]),
            created_at=data["created_at"],
            finished_at=data.get("finished_at"),
            result=data.get("result"),
            daily=data.get("daily"),
            ranked=bool(data.get("ranked", True)),
            race_id=data.get("race_id"),
            raw=data,
        )

    @property
    def finished(self) -> bool:
        return self.result is not None


@dataclass(frozen=True)
class GameState:
    """The public state the server sends: enough to draw the board and the information bar."""

    code: str | None  # None for a daily challenge's game
    game: str
    variant: str
    status: str
    score: int
    moves: int
    seq: int
    undo_depth: int
    progress: int
    progress_total: int
    elapsed_ms: int
    clock_running: bool
    board: dict[str, Any]
    hints: dict[str, Any]
    fingerprint: str
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameState:
        names = cls.__dataclass_fields__.keys() - {"raw"}
        return cls(**{name: data[name] for name in names}, raw=data)


@dataclass(frozen=True)
class Outcome:
    """What an accepted action did: points, whether it was a move, the rules' events."""

    points: int
    is_move: bool
    events: list[dict[str, Any]]
    reason: str | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        return cls(data["points"], data["is_move"], list(data["events"]), data.get("reason"))


@dataclass(frozen=True)
class Result:
    """The answer to an accepted ``act``, or an ``update`` pushed to watchers (duplicate False)."""

    game_id: str
    seq: int
    action: Action
    duplicate: bool
    outcome: Outcome
    state: GameState

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        return cls(
            game_id=data["game_id"],
            seq=data["seq"],
            action=Action.from_json(data["action"]),
            duplicate=bool(data.get("duplicate", False)),
            outcome=Outcome.from_json(data["outcome"]),
            state=GameState.from_json(data["state"]),
        )
