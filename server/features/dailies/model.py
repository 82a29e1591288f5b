"""Days and daily codes, pure: UTC day arithmetic, families, and each day's candidate codes.

A day's code is derived from the server secret (HMAC-SHA256 over day, family
and a counter) and uses a long (64-bit) seed, so nobody can compute it before
the server publishes it, nor find it by searching every seed from what a
player sees. Until the day ends the code is sealed: only its commitment
(:func:`commitment`) is public, and the day's games are shown to nobody but
their players (:func:`check_unsealed`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from datetime import UTC, date, datetime

from engine import GameCode
from engine.codes import MAX_SEED, make_code
from engine.vocabulary import Status
from server.errors import ProtocolError
from wire import ErrorCode

FAMILIES = ("HH1-N", "SH1-C4", "SH1-C2", "SH1-C1")
DAY_MS = 86_400_000
NO_PROGRESS_STATUSES = (Status.STALEMATE, Status.STUCK, Status.LOST)
_DAY_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def day_of(ms: int) -> str:
    """The UTC date (``YYYY-MM-DD``) of a millisecond timestamp."""
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()


def day_start_ms(day: str) -> int:
    """Midnight UTC at the start of a day, in milliseconds (Unix time has no leap seconds)."""
    return (date.fromisoformat(day) - date(1970, 1, 1)).days * DAY_MS


def parse_day(text: str) -> str:
    """A ``YYYY-MM-DD`` path segment, or ``bad_message``."""
    try:
        if not _DAY_RE.match(text):
            raise ValueError(text)
        return date.fromisoformat(text).isoformat()
    except ValueError:
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "a day is written YYYY-MM-DD", field="day") from None


def family_of(text: str) -> str:
    """A daily family (``SH1-C2``) from a request, case-insensitive."""
    family = text.strip().upper()
    if family not in FAMILIES:
        allowed = ", ".join(FAMILIES)
        raise ProtocolError(ErrorCode.BAD_MESSAGE, f"daily must be one of {allowed}", field="daily")
    return family


def candidate(secret: str, day: str, family: str, n: int) -> GameCode | None:
    """The ``n``-th candidate code for a day: unpredictable without the server secret.

    Its seed is the HMAC's first 64 bits, so the code takes the long form; the
    one in 2^29 candidates whose seed falls below 2^35 is skipped (None), so
    every daily code is long.
    """
    digest = hmac.new(secret.encode(), f"{day}|{family}|{n}".encode(), hashlib.sha256).digest()
    seed = int.from_bytes(digest[:8], "big")
    if seed <= MAX_SEED:
        return None
    game, variant = family[:2], family.split("-")[1]
    return make_code(game, variant, seed)


def commitment(day: str, family: str, code: str, salt: str) -> str:
    """SHA-256 (hex) of ``solitaire-daily|DAY|FAMILY|CODE|SALT``: published before the code."""
    text = f"solitaire-daily|{day}|{family}|{code}|{salt}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_sealed(daily_day: str | None, now_ms: int) -> bool:
    """Whether a game of that daily day is still sealed: its day has not ended."""
    return daily_day is not None and daily_day >= day_of(now_ms)


def check_unsealed(daily_day: str | None, owner_id: str, viewer_id: str | None, now_ms: int) -> None:
    """``sealed`` (403) for anyone but the player while the game's daily day lasts."""
    if viewer_id != owner_id and is_sealed(daily_day, now_ms):
        raise ProtocolError(
            ErrorCode.SEALED,
            "this is a daily challenge's game: only its player sees it until the day ends",
            opens_at=day_start_ms(str(daily_day)) + DAY_MS,
        )
