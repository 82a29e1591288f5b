"""Days, pure: UTC day arithmetic and the daily families, shared by every feature that names a day."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

from server.errors import ProtocolError
from wire import ErrorCode

FAMILIES = ("HH1-N", "SH1-C4", "SH1-C2", "SH1-C1")
DAY_MS = 86_400_000
_DAY_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def day_of(ms: int) -> str:
    """The UTC date (``YYYY-MM-DD``) of a millisecond timestamp."""
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()


def day_start_ms(day: str) -> int:
    """Midnight UTC at the start of a day, in milliseconds (Unix time has no leap seconds)."""
    return (date.fromisoformat(day) - date(1970, 1, 1)).days * DAY_MS


def day_end_ms(day: str) -> int:
    """Midnight UTC at the end of a day: the first millisecond of the next one."""
    return day_start_ms(day) + DAY_MS


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
