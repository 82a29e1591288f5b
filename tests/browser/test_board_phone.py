"""The leaderboard on a phone: a screenful of entries (two short lines each), links big enough
to touch (24 × 24 px at least), and a long name without a space kept within the screen."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.conftest import PHONE
from tests.browser.helpers import WsPlayer, boxes

pytestmark = pytest.mark.browser

CODE = "HH1-N-AAAAAAM"
LONG_NAME = "Averyveryverylongnamexyz"  # 24 characters, the most a name may have, and no space


def test_a_phone_shows_a_screenful_of_entries(browser: Browser, site: str) -> None:
    for n in range(8):
        player = WsPlayer(site, LONG_NAME if n == 0 else f"Racer {n}")
        try:
            game = player.request("new_game", code=CODE)
            player.request("resign", game_id=game["game"]["id"])
        finally:
            player.close()
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    try:
        page = context.new_page()
        page.goto(f"{site}/#board={CODE}")
        rows = page.locator("#board-table tbody tr")
        expect(rows).to_have_count(8)
        heights = [rect["height"] for rect in boxes(rows)]
        assert max(heights) * 6 <= PHONE["height"] * 0.7, heights  # six entries in 70% of the screen
        for link in boxes(page.locator("#board-table tbody a")):
            assert link["width"] >= 24 and link["height"] >= 24, link
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= PHONE["width"], wide
        expect(page.locator("#board-table")).to_contain_text(LONG_NAME)
    finally:
        context.close()
