"""The game's words, defined once: statuses, results, refusal codes and action kinds.

Every value is a :class:`enum.StrEnum` member, so it *is* its wire form: a
member is a ``str`` equal to its value (``Status.WON == "won"``), hashes like
it (a dict keyed by ``"won"`` finds ``Status.WON``), formats as it in
f-strings and ``str()``, and ``json.dumps`` writes it as ``"won"``. Code that
compares with plain strings keeps working; the JSON the server sends does not
change by a byte.

The server's own words (error codes, close codes, connection states) live in
``server.vocabulary``; these are the engine's, and the server and clients
import them from here (or from :mod:`engine`).
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """Every status a game can show (``Game.status`` and the server's ``LiveGame.status``).

    The engine itself produces ``playing``, ``won`` and each game's own
    no-progress status (``stalemate`` for Heart to Heart, HH-21; ``stuck``
    for Seahaven, Decision on SH-13); see each rules object's ``statuses``.
    ``lost`` (the solver proved no win remains), ``resigned`` and ``expired``
    are the server's, shown in the same place.
    """

    PLAYING = "playing"
    WON = "won"
    STALEMATE = "stalemate"  # Heart to Heart, HH-21
    STUCK = "stuck"  # Seahaven, Decision on SH-13
    LOST = "lost"  # server: the solver proved no winning line is left
    RESIGNED = "resigned"  # server: the player stopped
    EXPIRED = "expired"  # server: the game timed out


class Result(StrEnum):
    """How a game ended: a win is derived from the moves, the other two are declared."""

    WON = "won"
    RESIGNED = "resigned"
    EXPIRED = "expired"


FINAL_RESULTS: frozenset[Result] = frozenset(Result)
"""Every result that ends a game (all of them: a game without a result is unfinished)."""

DECLARED_RESULTS: frozenset[Result] = frozenset({Result.RESIGNED, Result.EXPIRED})
"""Results a replay cannot derive from the log: the server declares them (``engine.verify``)."""


class Refusal(StrEnum):
    """Every ``IllegalAction.code``: stable, for clients and the server docs.

    When each is raised is tabled in the ``engine.hearts`` and
    ``engine.seahaven`` docstrings; ``GAME_OVER`` and ``NOTHING_TO_UNDO``
    come from :class:`engine.game.Game` (``GAME_OVER`` also from each rules
    object, since a win is final).
    """

    # Both games (engine.game, and the rules for a won position)
    GAME_OVER = "game_over"
    NOTHING_TO_UNDO = "nothing_to_undo"
    BAD_LOCATION = "bad_location"
    # Heart to Heart (engine.hearts)
    UNSUPPORTED_ACTION = "unsupported_action"
    EMPTY_POSITION = "empty_position"
    NOT_FREE = "not_free"
    WASTE_EMPTY = "waste_empty"
    SAME_CARD = "same_card"
    RANK_MISMATCH = "rank_mismatch"
    NOTHING_TO_DRAW = "nothing_to_draw"
    # Seahaven Towers (engine.seahaven)
    BAD_ACTION = "bad_action"
    BAD_COUNT = "bad_count"
    EMPTY_SOURCE = "empty_source"
    NOT_ENOUGH_CARDS = "not_enough_cards"
    NOT_A_RUN = "not_a_run"
    SINGLE_CARD = "single_card"
    SAME_PLACE = "same_place"
    WRONG_SUIT_OR_RANK = "wrong_suit_or_rank"
    KINGS_ONLY = "kings_only"
    TOO_MANY_CARDS = "too_many_cards"
    CELL_FULL = "cell_full"
    WRONG_FOUNDATION = "wrong_foundation"
    FOUNDATION_ORDER = "foundation_order"
    NO_TARGET = "no_target"
    POINTLESS = "pointless"


class ActionKind(StrEnum):
    """The ``type`` of an action (the keys of ``engine.api.ACTION_FIELDS``)."""

    TOUCH = "touch"  # Heart to Heart touch model
    PAIR = "pair"  # Heart to Heart explicit pair
    DRAW = "draw"  # Heart to Heart draw or redeal
    TAP = "tap"  # Seahaven single tap (SH-15)
    DOUBLE_TAP = "double_tap"  # Seahaven double tap (SH-16)
    MOVE = "move"  # Seahaven explicit move
    UNDO = "undo"  # both games


__all__ = ["DECLARED_RESULTS", "FINAL_RESULTS", "ActionKind", "Refusal", "Result", "Status"]
