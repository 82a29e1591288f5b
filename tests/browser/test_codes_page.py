"""Game codes as a player types them: a daily's long code (a 13-character seed) opens its game
from the New game dialog, names a leaderboard and opens a race, since the browser checks a code
with the schema's own pattern, read from the module the server writes (``/js/facts.js``)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from engine.codes import LONG_SEED_LENGTH
from engine.hearts import HEART_ROWS
from server.edge.protocol import schema_of
from server.features.dailies.model import candidate
from server.rules.days import FAMILIES
from tests.browser.helpers import dealt, wait_attribute
from wire import PROTOCOL_VERSION, CloseCode

pytestmark = pytest.mark.browser

SECRET = "test-secret"  # the browser tests' server (conftest.sqlite_settings)
DAY = "2026-01-01"  # a day gone: its code is no longer sealed


def daily_code(family: str) -> str:
    """The code the server draws first for ``family`` on :data:`DAY`: a daily's own, long code."""
    code = candidate(SECRET, DAY, family, 0)
    assert code is not None
    return str(code)


def test_a_daily_code_opens_its_game_from_the_new_game_dialog(page: Page, site: str) -> None:
    code = daily_code("SH1-C4")
    assert len(code.rsplit("-", 1)[1]) == LONG_SEED_LENGTH
    page.goto(site)
    dialog = page.locator("#dlg-new")
    expect(dialog).to_be_visible()
    dialog.locator("#new-code").fill(f" {code.lower()} ")  # spaces and case are forgiven
    dialog.locator("#new-play-code").click()
    dealt(page, code)
    expect(page.locator("#new-error")).to_have_text("")


def test_a_mistyped_code_is_refused_before_it_is_sent(page: Page, site: str) -> None:
    page.goto(site)
    dialog = page.locator("#dlg-new")
    dialog.locator("#new-code").fill(daily_code("HH1-N")[:-1])  # 12 characters: neither length
    dialog.locator("#new-play-code").click()
    expect(page.locator("#new-error")).to_have_text(re.compile(r"\S"))
    expect(dialog).to_be_visible()


def test_a_daily_code_names_a_leaderboard(page: Page, site: str) -> None:
    code = daily_code("HH1-N")
    page.goto(f"{site}/#leaderboards")
    form = page.locator("#board-code")
    expect(form).to_be_visible()
    form.fill(code.lower())
    form.press("Enter")
    expect(page).to_have_url(re.compile(f"#board={code}$"))
    expect(page.locator("#board-heading")).to_have_text(f"Leaderboard of {code}")


def test_a_daily_code_opens_a_race(page: Page, site: str) -> None:
    code = daily_code("SH1-C2")
    page.goto(f"{site}/#code=HH1-N-AAAAAAA")
    dealt(page, "HH1-N-AAAAAAA")  # the player is made
    wait_attribute(page, "#conn", "data-state", "online")
    page.goto(f"{site}/#races")
    page.locator("#race-code").fill(code)
    page.get_by_role("button", name="Open a race").click()
    expect(page).to_have_url(re.compile(r"#race=r_"))
    expect(page.locator("#race-title")).to_have_text(f"Race on {code}")


def test_the_page_reads_the_servers_facts(page: Page, site: str) -> None:
    page.goto(site)
    expect(page.locator("#dlg-new")).to_be_visible()
    values: Any = page.evaluate(
        """async () => {
          const facts = await import("/js/facts.js");
          return JSON.stringify({...facts, frozen: Object.isFrozen(facts.HEART_ROWS[0])});
        }"""
    )
    got = json.loads(values)
    assert got["frozen"] is True
    assert got["PROTOCOL"] == PROTOCOL_VERSION
    assert got["CLOSE"] == {code.name: code.value for code in CloseCode}
    assert got["GAME_CODE"] == schema_of("GameCode")["pattern"]
    assert got["FAMILIES"] == list(FAMILIES)
    assert got["HEART_ROWS"] == [list(row) for row in HEART_ROWS]
    # The pattern means in the page what it means in the schema: both code lengths, no other.
    short, long = "SH1-C4-AAAAAJ2", daily_code("SH1-C1")
    checks: Any = page.evaluate(
        """async (codes) => {
          const { GAME_CODE } = await import("/js/facts.js");
          return codes.map((c) => new RegExp(GAME_CODE).test(c));
        }""",
        [short, long, long[:-1], short.lower()],
    )
    assert checks == [True, True, False, False]
