"""Daily codes, pure: each day's candidate codes and their commitments.

A day's code is derived from the server secret (HMAC-SHA256 over day, family
and a counter) and uses a long (64-bit) seed, so nobody can compute it before
the server publishes it, nor find it by searching every seed from what a
player sees. Until the day ends the code is sealed: only its commitment
(:func:`commitment`) is public, and the day's games are shown to nobody but
their players (:func:`server.rules.disclosure.sealed_to_others`). Day
arithmetic and the families are :mod:`server.rules.days`.
"""

from __future__ import annotations

import hashlib
import hmac

from engine import GameCode
from engine.codes import MAX_SEED, make_code
from engine.vocabulary import Status

DAILY_BUDGET = 50_000  # nodes per daily candidate: a winnable deal is nearly always proven well within
NO_PROGRESS_STATUSES = (Status.STALEMATE, Status.STUCK, Status.LOST)


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
