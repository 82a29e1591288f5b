"""A database failover loses no acknowledged action: the primary killed under load, its
synchronous standby promoted, the server (one instance, or two behind Redis) reconnecting
by its multi-host URL and going on. bench/powercut.py --failover measures it longer
(docs/server.md)."""

from __future__ import annotations

import pytest

from tests.durability.failover import Failover
from tests.durability.players import Check, Player

pytestmark = pytest.mark.timeout(180)


@pytest.mark.parametrize("instances", [1, 2])
def test_a_failover_loses_nothing_acknowledged_and_the_server_goes_on(instances: int) -> None:
    report = Failover(instances=instances, players=6, before_s=1.5, after_s=2.0).run()
    print(report.as_json())
    assert not report.promoted_in_recovery, "the standby was not promoted"
    assert report.refused_before == 0, "a request was refused before the kill"
    assert report.acked_before >= 50, "the kill came under no load"
    assert report.acked_after >= 50, "the server did not go on on the promoted database"
    assert report.check.phantoms == [], report.check.phantoms
    assert report.check.lost == 0, report.check.problems[:10]
    assert report.check.acked >= report.acked_before + report.acked_after
    assert set(report.refused) <= {"unavailable"}, report.refused
    assert report.no_ack_s < 15, report.as_json()
    assert report.tracebacks == [], report.tracebacks[:5]
    assert report.locks_after == instances, "an instance did not take its lock again on the promoted database"


def test_the_check_sees_an_action_missing_from_the_promoted_database() -> None:
    """The comparison the failover relies on does fail: one acknowledged action not stored."""
    from tests.durability.players import GameLog, Stored, check

    player = Player(["http://unused"], "token")
    player.games.append(GameLog("g1", acked=["a", "b", "c"]))
    stored = Stored({"g1": ["a", "b"]}, {}, set())
    result: Check = check([player], stored)
    assert result.lost == 1 and result.problems
