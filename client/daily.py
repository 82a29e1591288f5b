"""Checking a day's published daily codes against the commitments shown all that day.

While a day lasts the server shows only each family's commitment, the
SHA-256 (hex) of ``solitaire-daily|DAY|FAMILY|CODE|SALT``; when it ends it
publishes the code and the salt beside it. Anyone can then recompute the
hash: a match proves the code played all day is the one committed to at its
start, and the random salt means the commitment could not be checked against
guessed codes in advance.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any


def commitment(day: str, family: str, code: str, salt: str) -> str:
    """The commitment a server publishes for one family's challenge of one day."""
    return hashlib.sha256(f"solitaire-daily|{day}|{family}|{code}|{salt}".encode()).hexdigest()


@dataclass(frozen=True)
class Checked:
    """One family's verdict."""

    family: str
    code: str | None
    ok: bool
    reason: str


def verify_day(body: dict[str, Any], earlier: dict[str, Any] | None = None) -> list[Checked]:
    """Check a past day's answer (``GET /api/daily/DAY``): each code and salt against its commitment.

    ``earlier`` is that day's answer seen while it lasted (sealed): its
    commitments must be the ones published with the codes.
    """
    out = []
    for family, challenge in body["challenges"].items():
        code, salt, committed = challenge.get("code"), challenge.get("salt"), challenge.get("commitment")
        if code is None or salt is None or committed is None:
            out.append(Checked(family, code, False, "no code, salt or commitment published (yet)"))
            continue
        if earlier is not None and earlier["challenges"].get(family, {}).get("commitment") != committed:
            out.append(Checked(family, code, False, "the commitment differs from the one shown that day"))
            continue
        ok = commitment(body["day"], family, code, salt) == committed
        out.append(Checked(family, code, ok, "matches its commitment" if ok else "does NOT match"))
    return out
