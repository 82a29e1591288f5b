"""What a player is told about their own standing: a result held for review says so (the rank
read leaves it out, the board's flagged view marks it), and the daily streak's rule is spelled
out on the profile."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from server.storage.db import Database
from server.storage.leaderboards import set_standing
from tests.browser.conftest import AheadClock, sqlite_settings
from tests.browser.helpers import act_all, open_code
from tests.browser.search import hh_winning_deal
from tests.support import running_server
from wire import Standing

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("review-db") / "solitaire.db"


@pytest.fixture(scope="module")
def site(database: Path, clock: AheadClock) -> Iterator[str]:
    with running_server(sqlite_settings(database), clock) as base:
        yield base


def flag(database: Path, code: str, player_id: str) -> None:
    """An entry flagged, as the screening leaves a suspect result (waiting for an operator)."""

    async def run() -> None:
        db = Database.open(f"sqlite+aiosqlite:///{database}")
        try:
            async with db.transaction() as tx:
                await set_standing(tx, code, player_id, Standing.FLAGGED)
        finally:
            await db.dispose()

    # Playwright's sync API holds this thread's event loop: the database is written from another.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, run()).result(timeout=30)


def test_a_flagged_result_says_it_is_held_for_review(page: Page, site: str, database: Path) -> None:
    code, line = hh_winning_deal()
    open_code(page, site, code)
    me = str(page.evaluate("document.body.dataset.player"))
    act_all(page, line)
    expect(page.locator("#end-rank")).to_have_text(f"Rank #1 on the {code} leaderboard.")
    flag(database, code, me)
    page.evaluate(f"location.hash = '#board={code}'")
    expect(page.locator("#board-mine")).to_have_text(
        "Your result is held for review: it is ranked once an operator clears it."
    )


def test_the_profile_says_what_counts_as_a_day_played(page: Page, site: str) -> None:
    page.goto(f"{site}/#profile")
    expect(page.locator("#daily-rule")).to_contain_text("after at least one move")
