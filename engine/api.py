"""The one interface every game implements, so nothing above the engine is game-specific.

A game module exposes a :class:`Rules` object, generic over its state type
(``Rules[HeartState]``, ``Rules[State]``). States are immutable: ``apply``
returns a :class:`Step` holding a new state (or raises :class:`IllegalAction`,
which changes nothing because nothing was mutated). Score, move counter and
undo history live in :class:`engine.game.Game`, one level up, identically for
every game.

The words are :mod:`engine.vocabulary`'s ``StrEnum`` members, equal to their
wire strings: ``status`` returns a :class:`~engine.vocabulary.Status`,
``IllegalAction.code`` is a :class:`~engine.vocabulary.Refusal`, and the keys
of :data:`ACTION_FIELDS` are :class:`~engine.vocabulary.ActionKind` members.
``Action.kind`` stays a plain ``str`` type (an action parsed from JSON keeps
the string it was given); it always equals one of the ``ActionKind`` values,
so ``Action.to_json`` and ``Action.to_text`` are unchanged on the wire.

A won game is final in the rules too: ``legal_actions`` of a won state is
empty, ``apply`` refuses with ``game_over`` and ``hints`` offer nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from engine.codes import GameCode
from engine.vocabulary import ActionKind, Refusal, Status

S = TypeVar("S")  # a game's state type: HeartState, seahaven.State

# Action kinds and the JSON field each positional part maps to. Rules as data:
# one table drives JSON parsing, JSON output and the text form.
# Keys are ActionKind members (equal to, and hashing like, their strings).
_FIELDS: dict[ActionKind, tuple[str, ...]] = {
    ActionKind.TOUCH: ("at",),  # Heart to Heart touch model: "heart:N", "stock", "waste"
    ActionKind.PAIR: ("a", "b"),  # Heart to Heart explicit pair: two of "heart:N" / "waste"
    ActionKind.DRAW: (),  # Heart to Heart: draw from the stock, or redeal when it is empty
    ActionKind.TAP: ("at",),  # Seahaven single tap: "col:N" or "cell:N" -> its foundation
    ActionKind.DOUBLE_TAP: ("at", "count"),  # Seahaven double tap on the card heading `count` top cards
    ActionKind.MOVE: ("from", "to", "count"),  # Seahaven explicit move of `count` cards
    ActionKind.UNDO: (),  # both games
}
# Keyed by the plain values: every action's JSON and text form looks its kind up here,
# and a str key hashes faster than an enum member (equal keys either way).
ACTION_FIELDS: dict[str, tuple[str, ...]] = {kind.value: fields for kind, fields in _FIELDS.items()}
INT_FIELDS = frozenset({"count"})
OPTIONAL_FIELDS = frozenset({"count"})  # defaults to 1


class ActionFormatError(ValueError):
    """An action whose JSON or text form is malformed (not a rules refusal)."""


@dataclass(frozen=True, slots=True)
class Action:
    """One player action. ``args`` follow ``ACTION_FIELDS[kind]`` in order.

    ``kind`` is one of the :class:`~engine.vocabulary.ActionKind` values: the
    engine builds actions with the members, ``from_json`` keeps the string it
    was given; both compare, hash and serialize the same.
    """

    kind: str
    args: tuple[str | int, ...] = ()

    def arg(self, name: str) -> Any:
        return self.args[ACTION_FIELDS[self.kind].index(name)]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.kind}
        data.update(zip(ACTION_FIELDS[self.kind], self.args, strict=True))
        return data

    def to_text(self) -> str:
        return " ".join([self.kind, *(str(a) for a in self.args)])

    @classmethod
    def from_json(cls, data: Any) -> Action:
        if not isinstance(data, dict):
            raise ActionFormatError("an action must be a JSON object")
        kind = data.get("type")
        if not isinstance(kind, str):  # a list or an object is not even hashable
            raise ActionFormatError("an action's type must be a string")
        if kind not in ACTION_FIELDS:
            raise ActionFormatError(f"unknown action type {kind!r}")
        args: list[str | int] = []
        for name in ACTION_FIELDS[kind]:
            value = data.get(name, 1 if name in OPTIONAL_FIELDS else None)
            args.append(_check_field(name, value))
        return cls(kind, tuple(args))

    @classmethod
    def from_text(cls, text: str) -> Action:
        words = text.split()
        if not words or words[0] not in ACTION_FIELDS:
            raise ActionFormatError(f"unknown action {text!r}")
        names = ACTION_FIELDS[words[0]]
        values: list[Any] = words[1:]
        if len(values) == len(names) - 1 and names and names[-1] in OPTIONAL_FIELDS:
            values.append(1)
        if len(values) != len(names):
            raise ActionFormatError(f"{words[0]} takes {len(names)} argument(s): {' '.join(names)}")
        data = {"type": words[0], **dict(zip(names, values, strict=True))}
        for name in INT_FIELDS & set(names):
            try:
                data[name] = int(data[name])
            except ValueError:
                raise ActionFormatError(f"{name} must be a whole number") from None
        return cls.from_json(data)


def _check_field(name: str, value: Any) -> str | int:
    if name in INT_FIELDS:
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 52:
            raise ActionFormatError(f"field {name!r} must be a whole number from 1 to 52")
        return value
    if not isinstance(value, str) or not 0 < len(value) <= 16:
        raise ActionFormatError(f"field {name!r} must be a location string such as 'col:3'")
    return value


RefusalParams = Mapping[str, str | int]
"""What a refusal names, so that any client can word it in its own language: ``card`` (wire
text such as ``"7C"``), ``target``, ``first``, ``second``, ``need``, ``at`` (a location),
``suit`` (``"S"``…) and ``count`` (a number). Tabled per code in docs/games.md."""


class IllegalAction(Exception):
    """The rules refuse an action. ``code`` is stable for clients; ``reason`` is for people
    (English); ``params`` name the cards, places and numbers involved, for translations.

    ``code`` is a :class:`~engine.vocabulary.Refusal` member, so it equals its
    string (``exc.code == "game_over"``) and serializes as it.
    """

    def __init__(self, code: Refusal, reason: str, params: RefusalParams | None = None) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.params: RefusalParams = params or {}


@dataclass(frozen=True, slots=True)
class Step(Generic[S]):
    """What one accepted action did, as the rules see it."""

    state: S
    points: int = 0
    is_move: bool = True  # counts on the move counter and can be undone
    events: tuple[dict[str, Any], ...] = ()
    reason: str | None = None  # set when an accepted action still explains itself (HH-16)
    extra: dict[str, Any] = field(default_factory=dict)


class Rules(Protocol[S]):
    """What a game module provides, for its state type ``S``. See the package docstring for adding a game."""

    game: str  # "HH" or "SH": the first two letters of its codes
    statuses: tuple[Status, ...]  # every status `status` may return
    progress_total: int  # the value of `progress` for a won game

    def deal(self, code: GameCode) -> S:
        """The starting state for a code (see ``deal.md``)."""

    def apply(self, state: S, action: Action) -> Step[S]:
        """Apply a non-undo action or raise IllegalAction (``game_over`` once won)."""

    def legal_actions(self, state: S) -> list[Action]:
        """Every explicit action (pair / draw / move) the rules accept now; none once won."""

    def status(self, state: S) -> Status:
        """``playing``, ``won``, or the game's own no-progress status (one of ``statuses``)."""

    def progress(self, state: S) -> int:
        """Cards cleared (HH: heart cards removed; SH: cards on foundations)."""

    def clear_selection(self, state: S) -> S:
        """The same state without a touch selection (undo clears it)."""

    def view(self, state: S) -> dict[str, Any]:
        """JSON-ready public board: never anything the rules hide."""

    def hints(self, state: S) -> dict[str, Any]:
        """Placement-help data for the current state (HH-18; SH taps, moves and targets); empty once won."""

    def snapshot(self, state: S) -> dict[str, Any]:
        """JSON-ready complete state (hidden cards included) for fingerprints."""

    def snapshot_json(self, state: S) -> str:
        """``snapshot`` as canonical JSON (sorted keys, no spaces), built directly.

        It is on every action's path (the fingerprint), so it is written out by
        hand instead of going through a general encoder with key sorting.
        """


class _Quoted(dict[str | None, str]):
    """A card name as a JSON string (``null`` for none), each written once and then looked up."""

    def __missing__(self, card: str | None) -> str:
        text = "null" if card is None else f'"{card}"'
        self[card] = text
        return text


_QUOTED = _Quoted()


def json_cards(cards: tuple[str | None, ...] | list[str | None]) -> str:
    """Canonical JSON of a list of card names and nulls (card names need no escaping).

    On every action's path (the fingerprint): a lookup per card joined in C, instead of a
    generator formatting each card again."""
    return "[" + ",".join(map(_QUOTED.__getitem__, cards)) + "]"


def json_strings(cards: tuple[str, ...]) -> str:
    """Canonical JSON of a list of card names, no nulls: one join."""
    return '["' + '","'.join(cards) + '"]' if cards else "[]"
