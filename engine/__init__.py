"""Rules of Heart to Heart and Seahaven Towers: pure Python, no I/O, standard library only.

Layout:
- ``codes``: game codes, SplitMix64 and the shuffle (``docs/rules/deal.md``).
- ``vocabulary``: the game's words, defined once as ``StrEnum`` members equal
  to their wire strings: :class:`~engine.vocabulary.Status`,
  :class:`~engine.vocabulary.Result` (and ``FINAL_RESULTS``),
  :class:`~engine.vocabulary.Refusal` (every ``IllegalAction.code``) and
  :class:`~engine.vocabulary.ActionKind`.
- ``api``: the generic :class:`~engine.api.Rules` protocol (``Rules[S]`` for a
  state type ``S``), :class:`~engine.api.Action` (JSON and text forms),
  :class:`~engine.api.Step` and :class:`~engine.api.IllegalAction`.
- ``game``: :class:`~engine.game.Game`, the game-independent layer: score,
  move counter, undo history (last 100 moves), replay and fingerprint.
- ``hearts`` and ``seahaven``: one ``RULES`` object each, with frozen states.

Adding a third game: pick a two-letter prefix and variants and add them to
``codes.VARIANTS`` (and an unshuffled deck to ``codes.unshuffled_deck``);
write ``engine/<name>.py`` with a frozen state and a ``RULES`` object typed
``Rules[<its state>]``; add any new action kinds to ``vocabulary.ActionKind``
and ``api.ACTION_FIELDS``, any new refusal codes to ``vocabulary.Refusal`` and
a new no-progress status to ``vocabulary.Status``; register the module in
``registry._MODULES``. The
server, storage and clients then work unchanged, since they only ever talk
to :class:`~engine.game.Game`.
"""

from engine.api import Action, ActionFormatError, IllegalAction
from engine.codes import CodeError, GameCode, parse_code, random_code
from engine.game import Game, Outcome
from engine.vocabulary import FINAL_RESULTS, ActionKind, Refusal, Result, Status

__all__ = [
    "FINAL_RESULTS",
    "Action",
    "ActionFormatError",
    "ActionKind",
    "CodeError",
    "Game",
    "GameCode",
    "IllegalAction",
    "Outcome",
    "Refusal",
    "Result",
    "Status",
    "parse_code",
    "random_code",
]
