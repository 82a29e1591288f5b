"""Accounts, pure: what a username and a password may be, how passwords are hashed, and how
failed logins are slowed down.

- **Usernames** follow the rule of names (:func:`server.rules.names.clean_name`:
  NFKC, no invisible or control characters, whitespace collapsed, not ``Guest-…``) and are
  3 to 24 characters; two are the same when either key of ``name_keys`` is (case and
  lookalike letters ignored), which the database enforces.
- **Passwords** are 10 to 128 characters, not on the shipped list of common passwords
  (``common_passwords.txt``, compared ignoring case) and not the username. They are hashed
  with argon2id (``argon2-cffi``) at OWASP's recommended parameters for argon2id: 19 MiB of
  memory, 2 iterations, 1 lane (:data:`HASHER`).
- **Failed logins** count per username (whether or not it exists, so the answer never
  tells) and per client address: past a few free failures each further one must wait
  twice as long as the one before, up to a cap. The rule and its counts are in
  :mod:`server.core.backoff` (one instance) and :mod:`server.cluster.backoff` (a
  fleet); :func:`slowed` is the answer to a login that must wait.
"""

from __future__ import annotations

import math
import unicodedata
from functools import cache
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError

from server.errors import ProtocolError
from server.rules.names import clean_name, graphemes, name_keys
from wire import ErrorCode

USERNAME_MIN, USERNAME_MAX = 3, 24  # graphemes
PASSWORD_MIN, PASSWORD_MAX = 10, 128  # characters (code points)
COMMON_PASSWORDS = Path(__file__).resolve().parent / "common_passwords.txt"

# OWASP Password Storage Cheat Sheet, argon2id: m=19456 KiB (19 MiB), t=2, p=1.
HASHER = PasswordHasher(
    time_cost=2, memory_cost=19_456, parallelism=1, hash_len=32, salt_len=16, type=Type.ID
)
# Verified when a username is unknown, so an unknown name costs the same time as a wrong password.
_DUMMY_HASH = HASHER.hash("a password nobody has")


def clean_username(value: Any) -> str:
    """A requested username in its stored form, or ``bad_message`` (field ``username``)."""
    if isinstance(value, str):
        text = " ".join(unicodedata.normalize("NFKC", value).split())
        if not USERNAME_MIN <= len(list(graphemes(text))) <= USERNAME_MAX:
            raise ProtocolError(
                ErrorCode.BAD_MESSAGE,
                f"username must be {USERNAME_MIN} to {USERNAME_MAX} characters long",
                field="username",
            )
    try:
        return clean_name(value)
    except ProtocolError as exc:
        message = exc.message.replace("name", "username", 1)
        raise ProtocolError(ErrorCode.BAD_MESSAGE, message, field="username") from None


def username_keys(username: str) -> tuple[str, str]:
    """(fold, skeleton) of a username: the same keys that keep names apart."""
    return name_keys(username)


@cache
def common_passwords() -> frozenset[str]:
    lines = COMMON_PASSWORDS.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip().casefold() for line in lines if line.strip() and not line.startswith("#"))


def check_password(password: str, username: str, field: str = "password") -> str:
    """A new password, or ``bad_message`` (naming ``field``) saying which rule it breaks."""
    if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE,
            f"password must be {PASSWORD_MIN} to {PASSWORD_MAX} characters",
            field=field,
        )
    folded = password.casefold()
    if folded in common_passwords():
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "password is too common: choose another", field=field)
    if username.casefold() in folded:
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "password must not contain the username", field=field)
    if len(set(password)) < 3:
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE, "password must use at least 3 different characters", field=field
        )
    return password


def hash_password(password: str) -> str:
    """The argon2id hash (PHC string: parameters and salt included). CPU-heavy: run in a thread."""
    return HASHER.hash(password)


def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches; an unknown account (None) takes the same time and fails."""
    try:
        matched: bool = HASHER.verify(stored or _DUMMY_HASH, password)
        return matched and stored is not None
    except (VerificationError, InvalidHashError):
        return False


def slowed(wait_s: float) -> ProtocolError:
    """``rate_limited`` for a login that must wait; it says nothing of the account."""
    return ProtocolError(
        ErrorCode.RATE_LIMITED,
        "too many failed logins; wait before trying again",
        retry_after_s=max(1, math.ceil(wait_s)),
    )


def bad_credentials() -> ProtocolError:
    """The one answer to a wrong username or a wrong password: it never says which."""
    return ProtocolError(ErrorCode.BAD_CREDENTIALS, "unknown username or wrong password")


def session_label(user_agent: str | None, given: str | None) -> str:
    """What a session is called in the list: the client's own label, else its User-Agent."""
    text = (given or user_agent or "unknown device").strip()
    text = "".join(ch for ch in text if ch.isprintable())
    return text[:64] or "unknown device"
