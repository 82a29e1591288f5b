"""A daily's player sees their own attempts in the browser, and never the daily's code until
its day ends: the history names the variant, the replay no code, and nothing on either page
holds the code or the seed in it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from engine.solver import solve
from server.rules.days import day_of
from tests.browser.conftest import AheadClock, sqlite_settings
from tests.browser.helpers import WsPlayer, wait_attribute
from tests.support import running_server


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sealed-db") / "solitaire.db"


@pytest.fixture(scope="module")
def sealed_site(database: Path) -> Iterator[str]:
    with running_server(sqlite_settings(database), AheadClock()) as base:
        yield base


def todays_codes(database: Path) -> list[str]:
    with sqlite3.connect(database) as conn:
        rows = conn.execute("SELECT code FROM daily_challenges WHERE day = ?", (day_of(AheadClock()()),))
        return [str(code) for (code,) in rows]


def test_the_players_own_daily_pages_name_no_code(page: Page, sealed_site: str, database: Path) -> None:
    page.goto(f"{sealed_site}/#profile")
    wait_attribute(page, "body", "data-conn", "online")
    token = page.evaluate("() => JSON.parse(localStorage.getItem('solitaire.player')).token")
    player = WsPlayer(sealed_site, "", token=token)
    try:
        won = player.request("new_game", daily="SH1-C4")["game"]["id"]
        code = next(c for c in todays_codes(database) if c.startswith("SH1-C4"))
        answer = solve(code, 200_000)
        assert answer.actions is not None
        assert player.play(won, answer.actions)["status"] == "won"
        player.request("new_game", daily="HH1-N")  # and one still being played
    finally:
        player.close()
    secrets = [part for c in todays_codes(database) for part in (c, c.rsplit("-", 1)[1])]

    page.reload()
    rows = page.locator("#history-table tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("HH1-N")
    shown = page.locator("#main").inner_html()
    assert not [s for s in secrets if s in shown]

    page.goto(f"{sealed_site}/#replay={won}")
    expect(page.locator("#replay-summary")).to_be_visible()
    shown = page.content()
    assert not [s for s in secrets if s in shown]
