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


@dataclass(frozen=True)
class GameInfo:
    """Who owns a game, how it ended and where it counts."""

    id: str
    code: str
    owner: Player
    created_at: int
    finished_at: int | None
    result: str | None
    daily: str | None
    ranked: bool
    race_id: str | None
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameInfo:
        return cls(
            id=data["id"],
            code=data["code"],
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

    code: str
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


# -- accounts and the player's home ------------------------------------------------------------


@dataclass(frozen=True)
class Account:
    """Who a token is: the player and its account (``username`` None for a guest)."""

    id: str
    name: str
    username: str | None
    created_at: int | None
    session_id: str | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Account:
        return cls(
            data["id"], data["name"], data.get("username"), data.get("created_at"), data.get("session_id")
        )


@dataclass(frozen=True)
class LoggedIn:
    """A new session: the token is shown once; it names the same player on every device."""

    id: str
    name: str
    username: str
    token: str
    session_id: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LoggedIn:
        return cls(data["id"], data["name"], data["username"], data["token"], data["session_id"])


@dataclass(frozen=True)
class Session:
    id: str
    label: str
    created_at: int
    current: bool

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Session:
        return cls(data["id"], data["label"], data["created_at"], bool(data["current"]))


@dataclass(frozen=True)
class VariantStats:
    game: str
    variant: str
    played: int
    won: int
    win_rate: float | None
    current_streak: int
    best_streak: int
    best_moves: int | None
    average_moves: float | None
    best_time_ms: int | None
    average_time_ms: int | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VariantStats:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class DailyStats:
    days_played: int
    current_streak: int
    best_streak: int
    last_day: str | None
    best_rank: int | None
    ranked: int
    median_percentile: float | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DailyStats:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class GameStats:
    """A game's totals over its variants."""

    game: str
    played: int
    won: int
    win_rate: float | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameStats:
        return cls(data["game"], data["played"], data["won"], data["win_rate"])


@dataclass(frozen=True)
class PlayerStats:
    player: Player
    games: list[GameStats]
    variants: list[VariantStats]
    dailies: DailyStats
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlayerStats:
        games = [GameStats.from_json(g) for g in data["games"]]
        variants = [VariantStats.from_json(v) for v in data["variants"]]
        daily = DailyStats.from_json(data["dailies"])
        return cls(Player.from_json(data["player"]), games, variants, daily, data)

    def variant(self, family: str) -> VariantStats:
        return next(v for v in self.variants if v.variant == family)


@dataclass(frozen=True)
class HistoryGame:
    id: str
    code: str
    variant: str
    status: str
    result: str | None
    moves: int
    score: int
    progress: int
    undos: int
    elapsed_ms: int
    created_at: int
    finished_at: int | None
    daily: str | None
    ranked: bool
    race_id: str | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HistoryGame:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class HistoryPage:
    """One page of a player's games, newest first; ``next_cursor`` continues (None: the last)."""

    player_id: str
    games: list[HistoryGame]
    next_cursor: str | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HistoryPage:
        return cls(
            data["player_id"], [HistoryGame.from_json(g) for g in data["games"]], data.get("next_cursor")
        )


@dataclass(frozen=True)
class ReplayStep:
    """One position of a replay (index 0: the deal) and the action that led to it."""

    index: int
    action: Action | None
    points: int
    events: list[dict[str, Any]]
    status: str
    score: int
    moves: int
    progress: int
    progress_total: int
    at: int | None
    elapsed_ms: int
    view: dict[str, Any]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReplayStep:
        action = None if data["action"] is None else Action.from_json(data["action"])
        names = cls.__dataclass_fields__.keys() - {"action"}
        return cls(action=action, **{name: data[name] for name in names})


@dataclass(frozen=True)
class Replay:
    """A finished game position by position, as the server's engine computed it."""

    game_id: str
    code: str
    owner: Player
    result: str
    status: str
    moves: int
    elapsed_ms: int
    daily: str | None
    created_at: int
    finished_at: int | None
    steps: list[ReplayStep]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Replay:
        names = cls.__dataclass_fields__.keys() - {"owner", "steps"}
        steps = [ReplayStep.from_json(s) for s in data["steps"]]
        return cls(owner=Player.from_json(data["owner"]), steps=steps, **{n: data[n] for n in names})
