"""Days and daily codes, pure: UTC day arithmetic, families, and each day's candidate codes.

A day's code is derived from the server secret (HMAC-SHA256 over day, family
and a counter), so nobody can compute it before the server publishes it.
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
from server.vocabulary import ErrorCode

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


def candidate(secret: str, day: str, family: str, n: int) -> GameCode:
    """The ``n``-th candidate code for a day: unpredictable without the server secret."""
    digest = hmac.new(secret.encode(), f"{day}|{family}|{n}".encode(), hashlib.sha256).digest()
    seed = int.from_bytes(digest[:8], "big") & MAX_SEED
    game, variant = family[:2], family.split("-")[1]
    return make_code(game, variant, seed)
