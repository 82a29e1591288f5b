"""A disk that fills under load is answered `unavailable`, corrupts nothing, loses nothing
acknowledged, and is forgotten by itself once space returns; a disk whose every fsync takes
500 ms slows acknowledgements and refuses none. On SQLite and PostgreSQL, each on a faultfs
mount. bench/powercut.py --disk measures them longer (docs/server.md)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import asyncpg
import pytest

from server.storage.faults import is_unavailable
from tests.durability.diskfull import DiskFault
from tests.durability.powercut import DATABASES

pytestmark = pytest.mark.timeout(240)


@pytest.mark.parametrize("db", DATABASES)
def test_a_full_disk_is_refused_unavailable_and_recovers_by_itself(db: str, tmp_path: Path) -> None:
    report = DiskFault(tmp_path, db, "full").run()
    print(report.as_json())
    assert report.refused_before == 0
    assert report.refused.get("unavailable", 0) > 0 and set(report.refused) == {"unavailable"}, report.refused
    assert report.acked_after > 0, "no write was taken after space returned"
    assert report.integrity == "ok", report.integrity
    assert report.check.phantoms == [], report.check.phantoms
    assert report.check.lost == 0, report.check.problems[:10]
    assert report.tracebacks == [], report.tracebacks[:5]


@pytest.mark.parametrize("db", DATABASES)
def test_a_slow_fsync_slows_acknowledgements_and_loses_nothing(db: str, tmp_path: Path) -> None:
    # Held 5 s: a commit takes two fsyncs, about a second, so several fit inside the fault
    # even on a busy machine (2 s held only one, and none when the machine was loaded).
    report = DiskFault(tmp_path, db, "slow", fsync_delay_ms=500, during_s=5.0).run()
    print(report.as_json())
    assert report.refused == {} and report.refused_before == 0, report.refused
    assert report.latency_during_ms["p50"] >= 500, report.as_json()  # the delay was felt
    assert report.slowest_answer_s < 10, "an answer came too late for a client"
    assert report.integrity == "ok", report.integrity
    assert report.check.lost == 0, report.check.problems[:10]
    assert report.tracebacks == [], report.tracebacks[:5]


def postgres_error(sqlstate: str, severity: str, message: str) -> BaseException:
    """The exception asyncpg raises for an error message with these fields."""
    fields = {"C": sqlstate, "S": severity, "V": severity, "M": message}
    error: BaseException = asyncpg.PostgresError.new(fields)
    return error


@pytest.mark.parametrize(
    ("error", "unavailable"),
    [
        (sqlite3.OperationalError("database or disk is full"), True),
        (postgres_error("53100", "ERROR", 'could not extend file "base/1/2": No space left on device'), True),
        (postgres_error("XX000", "FATAL", "could not write init file"), True),  # the session ended
        (asyncpg.TargetServerAttributeNotMatched("None of the hosts match"), True),  # mid-failover
        (postgres_error("42601", "ERROR", "syntax error"), False),
        (sqlite3.OperationalError("no such table: games"), False),
    ],
)
def test_a_full_disk_and_a_failover_are_the_database_away_not_a_bad_statement(
    error: BaseException, unavailable: bool
) -> None:
    assert is_unavailable(error) is unavailable
