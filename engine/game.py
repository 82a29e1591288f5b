"""A game in progress: rules state plus score, move counter, undo history and log.

This layer is the same for every game, which is why undo (HH-22, SH-18),
scoring take-back (SH-21) and replay live here rather than in the rules.

:class:`Game` is not generic over the state type: its rules object is chosen
at run time from the code's prefix (``registry.rules_for``), so the state is
typed ``Any`` here and precisely inside each rules module (``Rules[S]``). See
:data:`engine.registry.AnyRules` for why that is the one boundary.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

from engine.api import Action, IllegalAction
from engine.codes import GameCode, parse_code
from engine.registry import AnyRules, rules_for
from engine.vocabulary import ActionKind, Refusal, Status

# Names read on every action, bound once: on Python 3.11 reading ``Status.WON``
# through its class is a descriptor call, and an enum member compares and
# hashes through a slower slot than a str, so action kinds are kept as their
# plain values (equal to the members) and statuses are tested by identity.
_UNDO = ActionKind.UNDO.value
_WON = Status.WON

UNDO_LIMIT = 100
UNDO = Action(_UNDO)


@dataclass(frozen=True, slots=True)
class Outcome:
    """The answer to one accepted action."""

    game: Game
    action: Action
    points: int
    is_move: bool
    events: tuple[dict[str, Any], ...]
    reason: str | None


@dataclass(frozen=True, slots=True)
class Game:
    """An immutable game. ``apply`` returns an :class:`Outcome` holding the next Game."""

    code: GameCode
    rules: AnyRules  # the rules of ``code.game``; ``state`` is that rules object's state type
    state: Any
    score: int = 0
    moves: int = 0
    seq: int = 0  # accepted actions so far (selections included): the protocol's action number
    history: tuple[tuple[Any, int], ...] = ()  # (state, score) before each undoable move
    # The status, computed once: a server reads it for the result, the row and each view.
    _status: Status | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def new(cls, code: GameCode | str) -> Game:
        parsed = parse_code(code) if isinstance(code, str) else code
        rules = rules_for(parsed.game)
        return cls(parsed, rules, rules.deal(parsed))

    @classmethod
    def replay(cls, code: GameCode | str, actions: list[Action]) -> Game:
        """Rebuild a game from its code and action log; raises IllegalAction on a bad log."""
        game = cls.new(code)
        for action in actions:
            game = game.apply(action).game
        return game

    @property
    def status(self) -> Status:
        status = self._status
        if status is None:
            status = self.rules.status(self.state)
            object.__setattr__(self, "_status", status)  # a cache: the game itself never changes
        return status

    @property
    def progress(self) -> int:
        return self.rules.progress(self.state)

    @property
    def undo_depth(self) -> int:
        return len(self.history)

    def apply(self, action: Action) -> Outcome:
        """Apply one action or raise IllegalAction; this Game is never changed."""
        if self.status is _WON:  # statuses are always members: identity is the cheapest test
            raise IllegalAction(Refusal.GAME_OVER, "The game is won")
        if action.kind == _UNDO:
            return self._undo()
        step = self.rules.apply(self.state, action)
        if not step.is_move:
            nxt = replace(self, state=step.state, seq=self.seq + 1)
        else:
            history = (*self.history[-(UNDO_LIMIT - 1) :], (self.state, self.score))
            nxt = replace(
                self,
                state=step.state,
                score=self.score + step.points,
                moves=self.moves + 1,
                seq=self.seq + 1,
                history=history,
            )
        return Outcome(nxt, action, step.points, step.is_move, step.events, step.reason)

    def _undo(self) -> Outcome:
        if not self.history:
            raise IllegalAction(Refusal.NOTHING_TO_UNDO, "There is nothing to undo")
        state, score = self.history[-1]
        nxt = replace(
            self,
            state=self.rules.clear_selection(state),
            score=max(0, score),
            moves=self.moves + 1,
            seq=self.seq + 1,
            history=self.history[:-1],
        )
        taken = score - self.score
        event = {"kind": "undo", "points": taken}
        return Outcome(nxt, UNDO, taken, True, (event,), None)

    def legal_actions(self) -> list[Action]:
        """Explicit legal actions now, undo included when there is history."""
        if self.status is _WON:  # statuses are always members: identity is the cheapest test
            return []
        actions = self.rules.legal_actions(self.state)
        return [*actions, UNDO] if self.history else actions

    def hints(self) -> dict[str, Any]:
        """The rules' placement help for the current state (empty lists once won)."""
        return self.rules.hints(self.state)

    def fingerprint(self) -> str:
        """First 16 hex digits of SHA-256 over the canonical JSON of the whole state."""
        state = self.rules.snapshot_json(self.state)
        text = f'{{"code":"{self.code}","moves":{self.moves},"score":{self.score},"state":{state}}}'
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def view(self, fingerprint: str | None = None) -> dict[str, Any]:
        """The public state a client draws: board, information bar data, hints, status.

        Pass ``fingerprint`` when it is already known, to skip hashing twice.
        """
        return {
            "code": str(self.code),
            "game": self.code.game,
            "variant": self.code.variant,
            "status": self.status,
            "score": self.score,
            "moves": self.moves,
            "seq": self.seq,
            "undo_depth": self.undo_depth,
            "progress": self.progress,
            "progress_total": self.rules.progress_total,
            "board": self.rules.view(self.state),
            "hints": self.hints(),
            "fingerprint": fingerprint or self.fingerprint(),
        }
