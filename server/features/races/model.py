"""Races, pure: who races, where each racer stands, and the places (open → countdown → running → finished).

A racer's public progress never holds their board: racers and spectators see
progress, not positions, unless they choose to ``watch`` a racer's game.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine import GameCode
from engine.registry import rules_for
from engine.vocabulary import FINAL_RESULTS
from wire import RaceStatus

MAX_RACERS = 16
DEFAULT_COUNTDOWN_S = 5  # without countdown_s; its bounds are the schema's (race_start)
JOINABLE = (RaceStatus.OPEN, RaceStatus.COUNTDOWN)


@dataclass(frozen=True, slots=True)
class Progress:
    """What a race shows of a racer's game at one moment."""

    status: str
    progress: int
    moves: int
    elapsed_ms: int
    finished_ms: int | None


@dataclass
class Racer:
    """One racer's public progress: never their board."""

    player_id: str
    name: str
    joined_ms: int
    game_id: str | None = None
    status: str = "waiting"
    progress: int = 0
    moves: int = 0
    elapsed_ms: int = 0
    finished_ms: int | None = None
    place: int | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINAL_RESULTS

    def take(self, seen: Progress) -> bool:
        """Copy a game's progress in; returns whether anything visible changed."""
        before = self.json(0)
        self.status, self.progress = seen.status, seen.progress
        self.moves, self.elapsed_ms = seen.moves, seen.elapsed_ms
        if seen.status in FINAL_RESULTS and self.finished_ms is None:
            self.finished_ms = seen.finished_ms
        return self.json(0) != before

    def json(self, progress_total: int) -> dict[str, Any]:
        return {
            "player": {"id": self.player_id, "name": self.name},
            "game_id": self.game_id,
            "status": self.status,
            "progress": self.progress,
            "progress_total": progress_total,
            "moves": self.moves,
            "elapsed_ms": self.elapsed_ms,
            "finished": self.finished,
            "finished_at": self.finished_ms,
            "place": self.place,
        }


@dataclass
class RaceState:
    """A race: its code, its racers and where it stands (open → countdown → running → finished)."""

    id: str
    code: GameCode
    owner_id: str
    owner_name: str
    created_ms: int
    status: RaceStatus = RaceStatus.OPEN
    starts_ms: int | None = None
    finished_ms: int | None = None
    racers: dict[str, Racer] = field(default_factory=dict)

    @property
    def progress_total(self) -> int:
        return rules_for(self.code.game).progress_total

    def json(self) -> dict[str, Any]:
        total = self.progress_total
        return {
            "id": self.id,
            "code": str(self.code),
            "link": f"/#race={self.id}",
            "owner": {"id": self.owner_id, "name": self.owner_name},
            "status": self.status,
            "created_at": self.created_ms,
            "starts_at": self.starts_ms,
            "finished_at": self.finished_ms,
            "racers": [r.json(total) for r in self.ordered()],
        }

    def ordered(self) -> list[Racer]:
        """Placed racers first by place, then everyone else by join time."""
        return sorted(self.racers.values(), key=lambda r: (r.place or MAX_RACERS + 1, r.joined_ms))

    def place_winner(self, racer: Racer) -> None:
        racer.place = 1 + sum(1 for r in self.racers.values() if r.place is not None)

    def place_the_rest(self) -> None:
        """When everyone has finished: winners keep their places; the rest follow, best first."""
        rest = [r for r in self.racers.values() if r.place is None]
        rest.sort(key=lambda r: (-r.progress, r.moves, r.elapsed_ms, r.finished_ms or 0))
        for racer in rest:
            self.place_winner(racer)
