"""What a database failure means for the caller: unavailable (nothing stored), or in doubt;
and one warning line per outage, however many requests it refuses."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable

import asyncpg
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from server.errors import ProtocolError
from wire import ErrorCode

# ...and no host of a multi-host URL takes writes now (target_session_attrs=read-write during a failover)
_PG_GONE = (
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.CannotConnectNowError,
    asyncpg.TargetServerAttributeNotMatched,
)
# SQLSTATE classes of a database that cannot serve now, whatever the statement: connection
# exceptions, insufficient resources (53300 too many connections, disk full, out of memory),
# operator intervention (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now,
# 57014 a statement timeout), system errors
_PG_AWAY_CLASSES = ("08", "53", "57", "58")
_PG_AWAY_STATES = frozenset(
    {
        "55000",  # object not in prerequisite state: "database ... is not currently accepting connections"
        "55006",  # object in use: the database is being dropped or renamed
        "55P03",  # lock not available: a lock timeout, PostgreSQL's "busy"
        "25006",  # read-only transaction: a standby, or a primary demoted by a failover
        "28000",  # invalid authorization: the role may not log in (now)
        "28P01",  # invalid password
        "3D000",  # the database does not exist (dropped, or not created yet)
    }
)

# SQLite's messages of a database that cannot be written now: SQLITE_BUSY, SQLITE_LOCKED,
# SQLITE_IOERR and SQLITE_FULL ("database or disk is full": the disk has no room left)
_SQLITE_AWAY = ("locked", "busy", "disk I/O", "disk is full")

_PG_ENDING = ("FATAL", "PANIC")


Conflict = IntegrityError  # a unique or foreign key refused the write: another got there first


class StorageUnavailable(RuntimeError):
    """The database cannot be written now (locked by another process, or away); nothing was stored."""


class StorageInDoubt(StorageUnavailable):
    """A commit failed and what the database holds could not be read back: it may hold the write."""


def is_unavailable(exc: BaseException) -> bool:
    """A failure of the database itself (lock, lost connection), not of one write's content."""
    if isinstance(exc, (StorageUnavailable, ConnectionError, TimeoutError, OSError, *_PG_GONE)):
        return True
    if isinstance(exc, PoolTimeout):  # every pooled connection busy past the wait: a storm
        return True
    if is_away_state(getattr(exc, "sqlstate", None)) or ends_session(exc):
        return True
    if isinstance(exc, sqlite3.OperationalError):
        return any(words in str(exc) for words in _SQLITE_AWAY)
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


def ends_session(exc: BaseException) -> bool:
    """A PostgreSQL error of severity FATAL or PANIC: the server ended the session, whatever the
    SQLSTATE (a full disk's "could not write init file" is XX000): the database, not the statement."""
    return getattr(exc, "severity_en", None) in _PG_ENDING or getattr(exc, "severity", None) in _PG_ENDING


def is_away_state(sqlstate: object) -> bool:
    """Whether a PostgreSQL SQLSTATE says the database cannot serve now (not that a statement is wrong)."""
    if not isinstance(sqlstate, str) or len(sqlstate) != 5:
        return False
    return sqlstate[:2] in _PG_AWAY_CLASSES or sqlstate in _PG_AWAY_STATES


class Outage:
    """One warning when the database stops answering, one line when it answers again.

    Every request refused meanwhile would otherwise log its own line (or, before
    the SQLSTATE classes above, its own traceback): hundreds a second under
    load. An outage begins at the first failure reported and ends at the first
    success reported (a health check, or no failure for :attr:`quiet_s`); what
    it refused in between is counted and told in the closing line.
    """

    def __init__(self, quiet_s: float = 30.0, now: Callable[[], float] = time.monotonic) -> None:
        self.quiet_s = quiet_s
        self.now = now
        self.since: float | None = None  # when the outage began
        self.last = 0.0  # the latest failure
        self.held = 0  # failures not logged since it began

    def failed(self, logger: logging.Logger, what: str, exc: BaseException) -> None:
        """Report a failure of the database met by ``what`` (a request, a commit)."""
        now = self.now()
        if self.since is not None and now - self.last >= self.quiet_s:
            self.answered(self.last)  # quiet for long: that one is over, this is another
        self.last = now
        if self.since is not None:
            self.held += 1
            return
        self.since = now
        logger.warning(
            "%s: the database is unavailable (%s); what it refuses is answered `unavailable`, "
            "counted and not logged until it answers again",
            what,
            brief(exc),
        )

    def answered(self, at: float | None = None) -> None:
        """Report that the database answered: an outage under way is over."""
        if self.since is None:
            return
        log.warning(
            "the database answers again after %.1f s; %d more failures were not logged",
            (self.now() if at is None else at) - self.since,
            self.held,
        )
        self.since, self.held = None, 0


log = logging.getLogger(__name__)
OUTAGE = Outage()  # the process's: every request, commit and health check reports to it
