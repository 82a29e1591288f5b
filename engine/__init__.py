"""Rules of Heart to Heart and Seahaven Towers: pure Python, no I/O, standard library only.

Layout:
- ``codes``: game codes, SplitMix64 and the shuffle (``shared/spec/deal.md``).
- ``api``: the :class:`~engine.api.Rules` protocol, :class:`~engine.api.Action`
  (JSON and text forms) and :class:`~engine.api.IllegalAction`.
- ``game``: :class:`~engine.game.Game`, the game-independent layer: score,
  move counter, undo history (last 100 moves), replay and fingerprint.
- ``hearts`` and ``seahaven``: one ``RULES`` object each, with frozen states.

Adding a third game: pick a two-letter prefix and variants and add them to
``codes.VARIANTS`` (and an unshuffled deck to ``codes.unshuffled_deck``);
write ``engine/<name>.py`` with a frozen state and a ``RULES`` object that
satisfies :class:`~engine.api.Rules`; add any new action kinds to
``api.ACTION_FIELDS``; register the module in ``registry._MODULES``. The
server, storage and clients then work unchanged, since they only ever talk
to :class:`~engine.game.Game`.
"""

from engine.api import Action, ActionFormatError, IllegalAction
from engine.codes import CodeError, GameCode, parse_code, random_code
from engine.game import Game, Outcome

__all__ = [
    "Action",
    "ActionFormatError",
    "CodeError",
    "Game",
    "GameCode",
    "IllegalAction",
    "Outcome",
    "parse_code",
    "random_code",
]
