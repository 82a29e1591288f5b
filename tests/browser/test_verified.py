"""The "verified" mark: a past daily's results checked in the browser against the signed
results log (WebCrypto: SHA-256 and Ed25519), and no mark when a proof was tampered with."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, expect

from server.rules.days import DAY_MS, day_of
from tests.browser.conftest import AheadClock, sqlite_settings
from tests.browser.helpers import WsPlayer
from tests.support import http, running_server

FAMILY = "HH1-N"


@pytest.fixture(scope="module")
def log_clock() -> AheadClock:
    return AheadClock()


@pytest.fixture(scope="module")
def log_site(tmp_path_factory: pytest.TempPathFactory, log_clock: AheadClock) -> Iterator[str]:
    path: Path = tmp_path_factory.mktemp("verified-db") / "solitaire.db"
    with running_server(sqlite_settings(path), log_clock) as base:
        yield base


@pytest.fixture(scope="module")
def past_day(log_site: str, log_clock: AheadClock) -> str:
    """Two players' results on a daily whose day is over and whose head is signed."""
    day = day_of(log_clock())
    for name in ("Ann", "Bob"):
        player = WsPlayer(log_site, name)
        try:
            started = player.request("new_game", daily=FAMILY)
            draw = {"type": "draw"}  # Heart to Heart's first move is always the stock's (HH deals)
            assert (
                player.request("act", game_id=started["game"]["id"], seq=0, action=draw)["type"] == "result"
            )
            assert player.request("resign", game_id=started["game"]["id"])["type"] == "game"
        finally:
            player.close()
    log_clock.skip(DAY_MS)
    deadline = time.monotonic() + 60
    while http("GET", f"{log_site}/api/log/heads/{day}")[0] != 200:
        assert time.monotonic() < deadline, "the day's head was never signed"
        time.sleep(0.2)
    return day


def test_a_past_dailys_results_carry_the_mark(page: Page, log_site: str, past_day: str) -> None:
    page.goto(f"{log_site}/#board={past_day}/{FAMILY}")
    marks = page.locator('#board-table [data-verified="yes"]')
    expect(marks).to_have_count(2)
    expect(marks.first).to_be_visible()
    expect(marks.first).to_contain_text("verified")


def test_a_tampered_proof_gets_no_mark(page: Page, log_site: str, past_day: str) -> None:
    def tamper(route: Route) -> None:
        answer = route.fetch()
        proof = answer.json()
        leaf = json.loads(proof["leaf"])
        leaf["moves"] = int(leaf["moves"]) + 1  # a result recorded otherwise than it is shown
        proof["leaf"] = json.dumps(leaf, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        route.fulfill(response=answer, json=proof)

    page.route("**/api/games/*/inclusion", tamper)
    page.goto(f"{log_site}/#board={past_day}/{FAMILY}")
    expect(page.locator('#board-table [data-verified="no"]')).to_have_count(2)
    expect(page.locator('#board-table [data-verified="yes"]')).to_have_count(0)
