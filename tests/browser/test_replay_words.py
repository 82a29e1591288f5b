"""A replay in words: every move of its list said in the page's language (a touch that selects
a card too, never the protocol's "touch heart:25"), and the page opens at its top."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.conftest import PHONE
from tests.browser.helpers import WsPlayer
from tests.browser.search import hh_winning_deal

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("locale", ["en-GB", "hu-HU", "ro-RO"])
def test_a_replay_says_its_moves_in_words_at_the_top(browser: Browser, site: str, locale: str) -> None:
    code, line = hh_winning_deal()
    player = WsPlayer(site, f"Replayer {locale}")
    try:
        game = player.request("new_game", code=code)["game"]["id"]
        # A pair made by touching its two cards, as a player clicks: a select, then the pair.
        touches: list[dict[str, Any]] = []
        for action in line:
            if action.kind == "pair":
                touches += [{"type": "touch", "at": str(at)} for at in action.args]
            else:
                touches.append(action.to_json())
        for seq, touch in enumerate(touches):
            reply = player.request("act", game_id=game, seq=seq, action=touch)
            assert reply["type"] == "result", reply
    finally:
        player.close()
    context = browser.new_context(viewport=PHONE, locale=locale, has_touch=True, is_mobile=True)
    try:
        page = context.new_page()
        page.goto(f"{site}/#replay={game}")
        moves = page.locator("#replay-moves li")
        expect(moves).to_have_count(len(touches))
        texts = moves.all_inner_texts()
        assert not [text for text in texts if "heart:" in text or "touch " in text], texts
        assert page.evaluate("window.scrollY") == 0
        assert page.evaluate("document.querySelector('#view-replay').scrollTop") == 0
    finally:
        context.close()
