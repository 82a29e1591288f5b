"""The one rule for sealing: a daily challenge's game is its player's alone until its day ends.

Every adapter that returns moves, boards or a solution, and races, ask it;
nothing else decides whether another player may see a daily's game.
"""

from __future__ import annotations

from server.errors import ProtocolError
from server.rules.days import DAY_MS, day_of, day_start_ms
from wire import ErrorCode


def is_sealed(daily_day: str | None, now_ms: int) -> bool:
    """Whether a game of that daily day is still sealed: its day has not ended."""
    return daily_day is not None and daily_day >= day_of(now_ms)


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
            opens_at=day_start_ms(str(daily_day)) + DAY_MS,
        )
    return True
