"""Disclosure: what of a daily challenge may leave the server, to whom, and when.

A daily's game is its player's alone until its day ends, and its code is nobody's (its player's
and operators' included) until then: knowing the code is knowing the deal, the Heart to Heart
stock order included, and the solver wins it in under a second. Three parts keep it so:

- :func:`sealed_to_others`: the one access rule every adapter asks before it shows a daily's
  game, moves, boards or solution to anyone but its player (``sealed``, 403, ``opens_at``).
- :func:`shown_code`: the one way a game's code is named in anything that leaves the server
  (an answer, a push, an admin view, CLI output): ``None`` while its day lasts.
- :class:`SealedCode` and :class:`Tripwire`: a daily's code held in a type that cannot be
  written out (``str``, ``format``, JSON and pickle raise :class:`SealedLeak`), and a last check
  on every frame and body the edge writes that refuses to send a sealed day's code, seed or
  salt. A path that forgets the rule fails loudly in a test instead of leaking.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import NoReturn

from server.errors import ProtocolError
from server.rules.days import DAY_MS, day_of, day_start_ms
from wire import ErrorCode


class Audience(StrEnum):
    """Who asks: what they may see of a daily while its day lasts differs."""

    PLAYER = "player"  # the game's own player: their live game and their moves, never the code
    OTHER = "other"  # another signed-in player: nothing of it
    ANONYMOUS = "anonymous"  # nobody signed in: nothing of it
    OPERATOR = "operator"  # an operator: results and evidence, never the code


def audience(owner_id: str, viewer_id: str | None, operator: bool = False) -> Audience:
    if operator:
        return Audience.OPERATOR
    if viewer_id is None:
        return Audience.ANONYMOUS
    return Audience.PLAYER if viewer_id == owner_id else Audience.OTHER


class SealedLeak(RuntimeError):
    """A sealed daily's code was about to leave the server: a bug in the path that wrote it."""


def _refuse(*_: object) -> NoReturn:
    raise SealedLeak("a sealed daily's code may only be named through server.rules.disclosure")


class SealedCode:
    """A daily challenge's code while its day lasts: it can be compared, never written out."""

    __slots__ = ("_code", "day")

    def __init__(self, code: str, day: str) -> None:
        self._code = code
        self.day = day

    __str__ = __format__ = __reduce__ = __reduce_ex__ = __getstate__ = _refuse

    def __repr__(self) -> str:
        return f"SealedCode(day={self.day!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SealedCode) and other._code == self._code

    def __hash__(self) -> int:
        return hash(self._code)

    @property
    def family(self) -> str:
        """The code's family (``SH1-C4``): public, it names the daily."""
        return self._code.rsplit("-", 1)[0]

    def for_engine(self) -> str:
        """The code for the engine's own use inside the server (deal, replay), never to show."""
        return self._code


def seal(code: str, daily_day: str | None, now_ms: int) -> str | SealedCode:
    """A stored game's code as the server holds it for a view: a daily's is sealed until its day ends."""
    return SealedCode(code, daily_day) if is_sealed(daily_day, now_ms) and daily_day is not None else code


def is_sealed(daily_day: str | None, now_ms: int) -> bool:
    """Whether a game of that daily day is still sealed: its day has not ended."""
    return daily_day is not None and daily_day >= day_of(now_ms)


def opens_at(day: str) -> int:
    """When a day's dailies open: the end of that day (UTC)."""
    return day_start_ms(day) + DAY_MS


def shown_code(code: str | SealedCode, daily_day: str | None, now_ms: int) -> str | None:
    """The code as a view names it: ``None`` for a daily's game while its day lasts."""
    held = seal(code, daily_day, now_ms) if isinstance(code, str) else code
    if isinstance(held, SealedCode):
        return None if is_sealed(held.day, now_ms) else held.for_engine()
    return held


def sealed_to_others(daily_day: str | None, owner_id: str, viewer_id: str | None, now_ms: int) -> bool:
    """Whether the game is sealed to everyone but its player (its daily day lasts).

    Anyone but the player is refused with ``sealed`` (403, ``opens_at`` the day's end); the
    player is answered True, so that what is shown names no code until then.
    """
    if not is_sealed(daily_day, now_ms):
        return False
    if viewer_id != owner_id:
        raise ProtocolError(
            ErrorCode.SEALED,
            "this is a daily challenge's game: only its player sees it until the day ends",
            opens_at=opens_at(str(daily_day)),
        )
    return True


class Tripwire:
    """The last check on what the edge writes: no sealed day's code, seed or salt goes out.

    The dailies tell it each day's secrets as they are chosen (:meth:`seal`); a frame or body
    that holds one while its day lasts raises :class:`SealedLeak` instead of being sent. A code's
    seed is a substring of the code, so the seeds and salts are what is searched for.
    """

    def __init__(self) -> None:
        self._until: dict[str, int] = {}  # secret -> when it may be shown (its day's end)
        self._now: list[str] = []  # the secrets still sealed, searched in order
        self._now_bytes: list[bytes] = []
        self._next_open: int | None = None  # the earliest day's end among them: open() before it is free

    def seal(self, day: str, code: str, salt: str | None) -> None:
        secrets = [code.rsplit("-", 1)[1], *([salt] if salt else [])]
        for secret in secrets:
            self._until[secret] = opens_at(day)
        self._remember()

    def _remember(self) -> None:
        self._now = list(self._until)
        self._now_bytes = [s.encode() for s in self._now]
        self._next_open = min(self._until.values(), default=None)

    def open(self, now_ms: int) -> None:
        """Forget the secrets whose day has ended (they are published then)."""
        if self._next_open is not None and self._next_open <= now_ms:
            self._until = {s: u for s, u in self._until.items() if u > now_ms}
            self._remember()

    def check(self, text: str | bytes, now_ms: int) -> None:
        """Raise :class:`SealedLeak` if ``text`` holds a secret whose day has not ended."""
        if not self._now:
            return
        self.open(now_ms)
        secrets: list[str] | list[bytes] = self._now if isinstance(text, str) else self._now_bytes
        for secret in secrets:
            if secret in text:  # type: ignore[operator]
                raise SealedLeak(f"a sealed daily's secret was about to be sent ({len(text)} characters)")

    @property
    def armed(self) -> bool:
        """Whether any secret is sealed now or was until the last check: when not, no frame
        needs the clock read or a search (the usual case outside a daily's day)."""
        return bool(self._now)

    def sealed(self) -> Iterable[str]:
        return tuple(self._now)
