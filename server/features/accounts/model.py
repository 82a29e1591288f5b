"""Accounts, pure: what a username and a password may be, how passwords are hashed, and how
failed logins are slowed down.

- **Usernames** follow the rule of names (:func:`server.features.names.model.clean_name`:
  NFKC, no invisible or control characters, whitespace collapsed, not ``Guest-…``) and are
  3 to 24 characters; two are the same when either key of ``name_keys`` is (case and
  lookalike letters ignored), which the database enforces.
- **Passwords** are 10 to 128 characters, not on the shipped list of common passwords
  (``common_passwords.txt``, compared ignoring case) and not the username. They are hashed
  with argon2id (``argon2-cffi``) at OWASP's recommended parameters for argon2id: 19 MiB of
  memory, 2 iterations, 1 lane (:data:`HASHER`).
- **Failed logins** count per username (whether or not it exists, so the answer never
  tells) and per client address: past a few free failures each further one must wait
  twice as long as the one before, up to a cap (:class:`Backoff`).
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError

from server.clock import Clock
from server.errors import ProtocolError
from server.features.names.model import clean_name, graphemes, name_keys
from server.vocabulary import ErrorCode

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


@dataclass(slots=True)
class _Failures:
    count: int
    last_ms: int


class Backoff:
    """Failed attempts per key on the injected clock: ``free`` failures cost nothing, then the
    ``n``-th more waits ``base_s * 2**(n-1)`` seconds (at most ``cap_s``) before the next try.

    A key is forgotten once it has been quiet for ``forget_s``; memory is capped at
    ``max_keys`` (the oldest go first), so a flood of made-up names cannot fill it.
    """

    def __init__(
        self,
        clock: Clock,
        free: int,
        base_s: float = 1.0,
        cap_s: float = 900.0,
        forget_s: float = 3600.0,
        max_keys: int = 100_000,
    ) -> None:
        self.clock, self.free, self.base_s, self.cap_s = clock, free, base_s, cap_s
        self.forget_ms, self.max_keys = int(forget_s * 1000), max_keys
        self._keys: dict[str, _Failures] = {}

    def wait_s(self, key: str) -> float:
        """Seconds before ``key`` may try again (0: now)."""
        found = self._keys.get(key)
        now = self.clock()
        if found is None:
            return 0.0
        if now - found.last_ms >= self.forget_ms:
            del self._keys[key]
            return 0.0
        over = found.count - self.free
        if over <= 0:
            return 0.0
        delay_ms = min(self.base_s * float(2 ** (over - 1)), self.cap_s) * 1000
        return max(0.0, (found.last_ms + delay_ms - now) / 1000)

    def failed(self, key: str) -> None:
        found = self._keys.pop(key, None)  # re-inserted: the dict stays in order of last failure
        self._keys[key] = _Failures((found.count if found else 0) + 1, self.clock())
        while len(self._keys) > self.max_keys:
            del self._keys[next(iter(self._keys))]

    def succeeded(self, key: str) -> None:
        self._keys.pop(key, None)

    def __len__(self) -> int:
        return len(self._keys)


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
