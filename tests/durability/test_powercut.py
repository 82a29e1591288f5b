"""Power cuts lose no acknowledged action, game result or leaderboard entry, on SQLite and
PostgreSQL, and the check would see it if they did: with the database's durability weakened
on purpose (SQLite ``synchronous=NORMAL``, PostgreSQL ``synchronous_commit=off``) the same
cuts lose acknowledged actions. bench/powercut.py runs many more cycles (docs/server.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.durability.powercut import DATABASES, PowerCuts, Report

pytestmark = pytest.mark.timeout(120)
CYCLES = 3


def assert_consistent(report: Report) -> None:
    """What even a weakened database must do: no corruption, nothing stored that was never sent."""
    assert report.integrity == [], report.integrity
    assert report.check.phantoms == report.final.phantoms == [], report.final.phantoms
    assert report.refused == 0, "a request was refused before the power cut"
    assert min(report.acked_before_cut) > 50, report.acked_before_cut  # the cuts came under load


@pytest.mark.parametrize("db", DATABASES)
def test_power_cuts_lose_nothing_acknowledged(db: str, tmp_path: Path) -> None:
    report = PowerCuts(tmp_path, db).run(CYCLES)
    print(report.as_json())
    assert report.cycles == CYCLES
    assert_consistent(report)
    assert report.lost == 0, (report.check.problems + report.final.problems)[:10]
    assert report.check.acked >= sum(report.acked_before_cut)


@pytest.mark.parametrize("db", DATABASES)
def test_a_weakened_database_loses_acknowledged_actions_and_the_check_says_so(
    db: str, tmp_path: Path
) -> None:
    report = PowerCuts(tmp_path, db, weak=True).run(2)
    print(report.as_json())
    assert_consistent(report)
    assert report.lost > 0, "the weakened database lost nothing: the power cut proves nothing"
