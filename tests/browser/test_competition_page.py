"""Competing in the browser: a leaderboard page updating live, a race between two browser
contexts (open, share, join, countdown, live progress, results), today's dailies."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import DESKTOP, AheadClock
from tests.browser.helpers import WsPlayer, board, dealt, play_hh_line, wait_attribute, wait_seq
from tests.browser.search import hh_winning_deal

pytestmark = pytest.mark.browser


def test_leaderboard_updates_live(page: Page, site: str) -> None:
    code, line = hh_winning_deal(seed=21)
    page.goto(f"{site}/#board={code}")
    table = page.locator("#board-table")
    expect(page.locator("#board-heading")).to_have_text(f"Leaderboard of {code}")
    expect(table).to_contain_text("No results yet")

    quitter = WsPlayer(site, "Quitter")
    winner = WsPlayer(site, "Winner")
    try:
        game = quitter.request("new_game", code=code)
        quitter.play(game["game"]["id"], line[:4])
        assert quitter.request("resign", game_id=game["game"]["id"])["type"] == "game"
        row = table.locator(f'tr[data-player="{quitter.id}"]')
        expect(row).to_contain_text("Gave up")
        expect(row).to_have_attribute("data-rank", "1")

        game = winner.request("new_game", code=code)
        state = winner.play(game["game"]["id"], line)
        assert state["status"] == "won"
        expect(table.locator(f'tr[data-player="{winner.id}"]')).to_have_attribute("data-rank", "1")
        expect(table.locator(f'tr[data-player="{winner.id}"]')).to_contain_text("Won")
        expect(row).to_have_attribute("data-rank", "2")
    finally:
        quitter.close()
        winner.close()

    # The winner's game can be viewed from the board.
    table.locator(f'tr[data-player="{winner.id}"] a').click()
    wait_attribute(page, "#board", "data-role", "spectator")
    expect(board(page)).to_have_attribute("data-status", "won")


def test_leaderboard_pages(page: Page, site: str) -> None:
    code = "SH1-C1-PAGEAAA"
    players = [WsPlayer(site, f"P{n:02d}") for n in range(27)]
    try:
        for player in players:
            game = player.request("new_game", code=code)
            assert player.request("resign", game_id=game["game"]["id"])["type"] == "game"
    finally:
        for player in players:
            player.close()
    page.goto(f"{site}/#board={code}")
    rows = page.locator("#board-table tbody tr")
    expect(rows).to_have_count(25)
    page.locator("#board-more").click()
    expect(rows).to_have_count(27)
    expect(page.locator("#board-more")).to_be_hidden()
    expect(page.locator("#board-mine")).to_have_text("You have no result on this code yet.")


def test_dailies_are_offered(page: Page, site: str) -> None:
    page.goto(f"{site}/#leaderboards")
    tabs = page.locator("#view-boards nav.tabs a")
    expect(tabs).to_have_count(4)
    hh_daily = str(tabs.first.get_attribute("href")).split("=")[1]
    day, family = hh_daily.split("/")  # a daily's board is named by day and family: its code is sealed
    assert family == "HH1-N" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", day)
    heading = re.compile(r"^Heart to Heart · daily of \w+ \d+, \d{4}$")
    expect(page.locator("#board-heading")).to_have_text(heading)
    page.locator("#btn-new").click()
    dialog = page.locator("#dlg-new")
    daily = dialog.locator("#new-daily")
    expect(daily).to_be_visible()
    daily.click()
    expect(page.locator("#info-code")).to_have_text("Heart to Heart daily")
    wait_seq(page, 0)
    assert not re.search(r"HH1-N-[A-Z2-7]{13}", page.content())  # nothing names today's (long) code


def test_race_between_two_browsers(browser: Browser, site: str, clock: AheadClock) -> None:
    code, line = hh_winning_deal(seed=33)
    alice_ctx = browser.new_context(viewport=DESKTOP)
    bob_ctx = browser.new_context(viewport=DESKTOP)
    try:
        alice, bob = alice_ctx.new_page(), bob_ctx.new_page()
        for page in (alice, bob):  # both pages load at once
            page.goto(f"{site}/#code=HH1-N-AAAAAAA", wait_until="commit")
        for page, name in ((alice, "Alice"), (bob, "Bob")):
            page.wait_for_load_state()
            dealt(page, "HH1-N-AAAAAAA")  # the player is made
            page.locator("#btn-settings").click()
            page.locator("#player-name").fill(name)
            page.locator("#btn-rename").click()
            expect(page.locator("#name-status")).to_have_text(f"Saved: you are {name}")
            page.locator('#form-settings button[value="close"]').click()
            wait_attribute(page, "#conn", "data-state", "online")

        # Alice opens a race on the code and shares its link.
        alice.goto(f"{site}/#races")
        alice.locator("#race-code").fill(code)
        alice.get_by_role("button", name="Open a race").click()
        expect(alice).to_have_url(re.compile(r"#race=r_"))
        expect(alice.locator("#race-status")).to_have_text("Waiting for racers: 1 racer in")
        link = alice.locator("#race-share").input_value()
        assert "#race=r_" in link

        # Bob opens the link and joins; Alice sees him arrive.
        bob.goto(link)
        bob.get_by_role("button", name="Join this race").click()
        for page in (alice, bob):
            expect(page.locator("#race-detail table.racers tbody tr")).to_have_count(2)
        expect(alice.locator("#race-detail")).to_contain_text("Bob")

        # Alice starts with a countdown (the server's clock is then moved past it); both boards
        # open on the same deal.
        alice.locator("#race-countdown").select_option("3")
        alice.locator("#race-start").click()
        expect(bob.locator("#race-status")).to_contain_text("Starting in")
        clock.skip(3_000)
        for page in (alice, bob):
            wait_attribute(page, "#board", "data-seq", "0", timeout_ms=20_000)
            expect(page.locator("#info-code")).to_have_text(code)
            expect(page.locator("#race-strip")).to_be_visible()
            expect(page.locator("#race-strip .race-status")).to_have_text("Running")

        # Alice's progress shows on Bob's strip, live (her draws through her page's session, her
        # first pair clicked).
        alice_id = alice.locator("body").get_attribute("data-player")
        first_pair = next(n for n, a in enumerate(line) if a.kind == "pair")
        play_hh_line(alice, line[: first_pair + 1], {first_pair})
        chip = bob.locator(f'#race-strip .racer[data-player="{alice_id}"]')
        expect(chip).not_to_have_attribute("data-progress", "0")

        # Bob gives up; Alice plays on to a win (through her page's session, the winning pair
        # clicked); both see the results.
        bob.locator("#race-give-up").click()
        expect(board(bob)).to_have_attribute("data-status", "resigned")
        rest = line[first_pair + 1 :]
        play_hh_line(alice, rest, {len(rest) - 1})
        for page in (alice, bob):
            results = page.locator("#dlg-race")
            expect(results).to_be_visible()
            first = results.locator("tbody tr").first
            expect(first).to_contain_text("1st")
            expect(first).to_contain_text("Alice")
            expect(results.locator("tbody tr").nth(1)).to_contain_text("Bob")
        wait_seq(alice, len(line) + 1 + (rest[-1].kind == "pair"))  # a pair clicked is two touches
    finally:
        alice_ctx.close()
        bob_ctx.close()


def test_watch_a_game_from_the_live_list(page: Page, site: str) -> None:
    """Anyone can find a game being played now and watch it live (spectator view)."""
    code, line = hh_winning_deal(seed=21)
    player = WsPlayer(site, "Livewire")
    try:
        game = player.request("new_game", code=code)
        game_id = game["game"]["id"]
        player.play(game_id, line[:2])
        page.goto(f"{site}/#races")
        entry = page.locator("#live-games a", has_text="Livewire")
        expect(entry).to_contain_text(code)
        entry.click()
        wait_attribute(page, "#board", "data-role", "spectator")
        wait_seq(page, 2)
        reply = player.request("act", game_id=game_id, seq=2, action=line[2].to_json())
        assert reply["type"] == "result", reply
        wait_seq(page, 3)  # the next move arrives live
    finally:
        player.close()
