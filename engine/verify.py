"""Replay verification: rebuild a finished game from its code and public action log.

A leaderboard is only as trustworthy as its entries, so anyone (the server,
the client library, a third party) can take a game's published log, replay it
with the same engine and check that it reproduces the claimed result, score,
moves, progress and final fingerprint. Pure: no I/O, standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.api import Action, ActionFormatError, IllegalAction
from engine.codes import CodeError, parse_code
from engine.game import Game
from engine.vocabulary import DECLARED_RESULTS, Result, Status

# DECLARED_RESULTS (engine.vocabulary): results a server declares that the
# replay cannot derive (the player stopped); re-exported here for callers.
REQUIRED = ("result", "score", "moves", "fingerprint")
IDLE_GAP_CAP_MS = 60_000  # the protocol's clock: a gap between two actions counts at most this
COMPARED = ("result", "status", "score", "moves", "progress", "fingerprint")


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One claimed value the replay does not reproduce."""

    field: str
    claimed: Any
    replayed: Any

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "claimed": self.claimed, "replayed": self.replayed}


@dataclass(frozen=True, slots=True)
class Verification:
    """The verdict: ``ok`` only when the log replays and every claimed value matches."""

    code: str
    actions: int
    replayed: dict[str, Any] | None
    mismatches: tuple[Mismatch, ...] = ()
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.mismatches

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "code": self.code,
            "actions": self.actions,
            "replayed": self.replayed,
            "mismatches": [m.to_json() for m in self.mismatches],
            "error": self.error,
        }


def summary(game: Game, result: str | None) -> dict[str, Any]:
    """The comparable summary of a game: the shape of ``final`` in the actions log."""
    return {
        "result": result,
        "status": game.status,
        "score": game.score,
        "moves": game.moves,
        "progress": game.progress,
        "fingerprint": game.fingerprint(),
    }


def replayed_result(status: str, claimed: str | None) -> Result | None:
    """What the result must be after the replay: a win is derived, a resignation declared."""
    if status == Status.WON:
        return Result.WON
    # ``claimed`` comes from a published log: it may be any JSON value, even an unhashable one.
    return Result(claimed) if isinstance(claimed, str) and claimed in DECLARED_RESULTS else None


def to_action(item: str | Action | Mapping[str, Any]) -> Action:
    """An action from its text form, its JSON form, or an ``{"action": text}`` log row."""
    if isinstance(item, Action):
        return item
    if isinstance(item, str):
        return Action.from_text(item)
    if isinstance(item.get("action"), str):
        return Action.from_text(item["action"])
    return Action.from_json(dict(item))


def verify(
    code: str, actions: Iterable[str | Action | Mapping[str, Any]], claimed: Mapping[str, Any]
) -> Verification:
    """Replay ``actions`` from ``code`` and compare with ``claimed`` (keys of ``COMPARED``).

    ``result``, ``score``, ``moves`` and ``fingerprint`` must be claimed;
    ``status`` and ``progress`` are compared when present.
    """
    log = list(actions)
    try:
        game = Game.new(parse_code(code))
    except CodeError as exc:
        return Verification(code, len(log), None, error=f"bad code: {exc}")
    for index, item in enumerate(log):
        try:
            action = to_action(item)
            game = game.apply(action).game
        except (ActionFormatError, IllegalAction) as exc:
            return Verification(code, len(log), None, error=f"action {index} refused: {exc}")
    replayed = summary(game, replayed_result(game.status, claimed.get("result")))
    return Verification(str(game.code), len(log), replayed, compare(claimed, replayed))


def compare(claimed: Mapping[str, Any], replayed: Mapping[str, Any]) -> tuple[Mismatch, ...]:
    """Every compared field whose claimed value differs (a missing required one included)."""
    out = []
    for name in COMPARED:
        if name not in claimed:
            if name in REQUIRED:
                out.append(Mismatch(name, None, replayed[name]))
            continue
        if claimed[name] != replayed[name]:
            out.append(Mismatch(name, claimed[name], replayed[name]))
    return tuple(out)


def elapsed_from_times(times_ms: Iterable[int]) -> int:
    """A game's time from its log's action times: the sum of the gaps, each capped at a minute."""
    total, last = 0, None
    for at in times_ms:
        if last is not None:
            total += min(max(0, at - last), IDLE_GAP_CAP_MS)
        last = at
    return total


def verify_log(body: Mapping[str, Any]) -> Verification:
    """Verify the JSON of ``GET /api/games/{id}/actions`` as published.

    Also checks that the log's ``seq`` numbers run 0, 1, 2 … without gaps, so
    a log with an action left out cannot pass.
    """
    rows = list(body.get("actions", []))
    for expected, row in enumerate(rows):
        if row.get("seq") != expected:
            return Verification(str(body.get("code")), len(rows), None, error=f"seq gap at {expected}")
    return verify(str(body.get("code")), rows, body.get("final") or {})
