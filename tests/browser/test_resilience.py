"""Resilience and identity in the browser: the player persists, can be renamed, and the page
reconnects by itself after a server restart or a dropped connection, resuming the game."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import sqlite_settings
from tests.browser.helpers import at, board, open_code, wait_attribute, wait_seq
from tests.support import free_port, http, running_server

pytestmark = pytest.mark.browser


def player_id(page: Page) -> str:
    expect(page.locator("body")).to_have_attribute("data-player", re.compile(r"^p_"))
    return str(page.locator("body").get_attribute("data-player"))


def test_identity_persists_and_the_player_can_rename(page: Page, context: BrowserContext, site: str) -> None:
    game_id = open_code(page, site, "HH1-N-AAAAAAA")
    me = player_id(page)
    page.reload()
    wait_seq(page, 0)
    assert player_id(page) == me
    expect(board(page)).to_have_attribute("data-game-id", game_id)

    page.locator("#btn-settings").click()
    page.locator("#player-name").fill("Ada Lovelace")
    page.locator("#btn-rename").click()
    expect(page.locator("#name-status")).to_have_text("Saved: you are Ada Lovelace")
    page.locator('#form-settings button[value="close"]').click()
    status, body = http("GET", f"{site}/api/players/{me}")
    assert status == 200 and body["name"] == "Ada Lovelace"

    # Games started after the rename carry the new name.
    new_id = open_code(page, site, "SH1-C2-AAAAAJ2")
    status, body = http("GET", f"{site}/api/games/{new_id}")
    assert status == 200 and body["game"]["owner"]["name"] == "Ada Lovelace"

    # Another browser profile is another player, and watches this game instead of playing it.
    other = context.browser.new_context() if context.browser else None
    assert other is not None
    try:
        spectator = other.new_page()
        spectator.goto(f"{site}/#game={new_id}")
        wait_attribute(spectator, "#board", "data-role", "spectator")
        expect(spectator.locator("#banner")).to_have_text("Watching Ada Lovelace's game live")
        assert player_id(spectator) != me
        # The owner's moves reach the spectator live.
        at(page, "col:1").dblclick()
        wait_seq(page, 1)
        wait_seq(spectator, 1)
    finally:
        other.close()


def test_reconnects_after_a_server_restart(page: Page, tmp_path: Path) -> None:
    settings = sqlite_settings(tmp_path / "restart.db")
    port = free_port()
    conn = page.locator("#conn")
    with running_server(settings, port=port) as base:
        game_id = open_code(page, base, "HH1-N-AAAAAAM")
        at(page, "stock").click()
        wait_seq(page, 1)
        at(page, "stock").click()
        wait_seq(page, 2)
        wait_attribute(page, "#conn", "data-state", "online")
    expect(conn).to_have_attribute("data-state", re.compile("reconnecting|offline"))
    with running_server(settings, port=port):
        wait_attribute(page, "#conn", "data-state", "online", timeout_ms=20_000)
        expect(board(page)).to_have_attribute("data-game-id", game_id)
        expect(page.locator("#info-moves")).to_have_text("2")
        at(page, "stock").click()
        wait_seq(page, 3)
        expect(page.locator("#info-moves")).to_have_text("3")
        expect(page.locator(".pile-stock .count")).to_have_text("23")


def test_an_action_sent_while_offline_arrives_once(page: Page, context: BrowserContext, site: str) -> None:
    open_code(page, site, "HH1-N-AAAAAAM")
    context.set_offline(True)
    expect(page.locator("#conn")).to_have_attribute("data-state", "offline")
    at(page, "stock").click()
    context.set_offline(False)
    wait_seq(page, 1)
    wait_attribute(page, "#conn", "data-state", "online")
    # A dropped socket (as after a network change) reconnects and the game goes on.
    page.evaluate("window.solitaire.net.ws.close()")
    wait_attribute(page, "#conn", "data-state", "online")
    at(page, "stock").click()
    wait_seq(page, 2)
    expect(page.locator("#info-moves")).to_have_text("2")


def test_a_spectator_catches_up_after_a_server_restart(
    page: Page, context: BrowserContext, tmp_path: Path
) -> None:
    """A watching page reconnects by itself (backoff with jitter, js/net.js), follows the game
    again (``open_game`` on "ready", js/session.js) and shows the moves made meanwhile and after."""
    settings = sqlite_settings(tmp_path / "spectate.db")
    port = free_port()
    other = context.browser.new_context() if context.browser else None
    assert other is not None
    try:
        spectator = other.new_page()
        with running_server(settings, port=port) as base:
            game_id = open_code(page, base, "HH1-N-AAAAAAM")
            spectator.goto(f"{base}/#game={game_id}")
            wait_attribute(spectator, "#board", "data-role", "spectator")
            at(page, "stock").click()
            wait_seq(page, 1)
            wait_seq(spectator, 1)
        expect(spectator.locator("#conn")).to_have_attribute("data-state", re.compile("reconnecting|offline"))
        with running_server(settings, port=port):
            wait_attribute(page, "#conn", "data-state", "online", timeout_ms=20_000)
            at(page, "stock").click()  # perhaps before the spectator is back: it catches up on resuming
            wait_seq(page, 2)
            wait_attribute(spectator, "#conn", "data-state", "online", timeout_ms=20_000)
            wait_seq(spectator, 2)
            at(page, "stock").click()  # and the next move is pushed to it live
            wait_seq(page, 3)
            wait_seq(spectator, 3)
            expect(spectator.locator("#info-moves")).to_have_text("3")
    finally:
        other.close()
