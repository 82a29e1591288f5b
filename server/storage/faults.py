"""What a database failure means for the caller: unavailable (nothing stored), or in doubt."""

from __future__ import annotations

import sqlite3

import asyncpg
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from server.errors import ProtocolError
from wire import ErrorCode

_PG_GONE = (asyncpg.PostgresConnectionError, asyncpg.InterfaceError, asyncpg.CannotConnectNowError)


Conflict = IntegrityError  # a unique or foreign key refused the write: another got there first


class StorageUnavailable(RuntimeError):
    """The database cannot be written now (locked by another process, or away); nothing was stored."""


class StorageInDoubt(StorageUnavailable):
    """A commit failed and what the database holds could not be read back: it may hold the write."""


def is_unavailable(exc: BaseException) -> bool:
    """A failure of the database itself (lock, lost connection), not of one write's content."""
    if isinstance(exc, (StorageUnavailable, ConnectionError, TimeoutError, OSError, *_PG_GONE)):
        return True
    if isinstance(exc, sqlite3.OperationalError):
        return "locked" in str(exc) or "busy" in str(exc) or "disk I/O" in str(exc)
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, DBAPIError) and exc.orig is not None and is_unavailable(exc.orig):
        return True
    if isinstance(exc, OperationalError) and exc.orig is None:
        return True
    cause = exc.__cause__ or exc.__context__
    return cause is not None and cause is not exc and is_unavailable(cause)


def is_away(exc: BaseException) -> bool:
    """A failure of the database itself, or the ``unavailable`` refusal a change of a game
    becomes when the database cannot take it: background work that meets one logs a warning
    (no traceback) and goes on."""
    if isinstance(exc, ProtocolError) and exc.code == ErrorCode.UNAVAILABLE:
        return True
    return is_unavailable(exc)


def brief(exc: BaseException) -> str:
    """An exception's class and first line, for a log line (no driver dump)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__
