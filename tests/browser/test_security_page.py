"""The client runs under the server's strict Content-Security-Policy: playing both games and
opening every dialog (and the race pages, whose progress bars are sized from script) breaks no
directive and logs no console error."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import ConsoleMessage, Page, expect

from tests.browser.conftest import AheadClock
from tests.browser.helpers import (
    at,
    board,
    card,
    column_cards,
    drag,
    hh_shapes,
    open_code,
    play_hh_line,
    wait_attribute,
    wait_seq,
)
from tests.browser.search import hh_stalemate_deal, seahaven_scenario

pytestmark = pytest.mark.browser

# Runs in every document before the page's own scripts (through the DevTools protocol, which
# the CSP does not restrict), reporting to the test at once: a reload loses nothing.
LISTEN = """
document.addEventListener("securitypolicyviolation", (e) => window.reportViolation(
  `${e.effectiveDirective} blocked ${e.blockedURI || "inline"}` +
  ` at ${e.sourceFile}:${e.lineNumber} ${e.sample}`));
"""


def close_dialog(page: Page, dialog_id: str, value: str = "close") -> None:
    dialog = page.locator(f"#{dialog_id}")
    dialog.locator(f'button[value="{value}"]').click()
    expect(dialog).to_be_hidden()


def test_playing_and_every_dialog_break_no_policy(page: Page, site: str, clock: AheadClock) -> None:
    violations: list[str] = []

    def report(text: str) -> None:
        violations.append(text)

    page.expose_function("reportViolation", report)
    page.add_init_script(script=LISTEN)
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            errors.append(message.text)

    page.on("console", on_console)

    # A first visit offers a new game: the New game dialog, here with a Heart to Heart code.
    code, line = hh_stalemate_deal()
    page.goto(site)
    new = page.locator("#dlg-new")
    expect(new).to_be_visible()
    new.locator('input[name="game"][value="HH"]').check()
    new.locator("#new-code").fill(code)
    new.locator("#new-play-code").click()
    wait_seq(page, 0)
    wait_attribute(page, "#conn", "data-state", "online")

    # Help and settings (four-colour suits restyle the cards).
    page.locator("#btn-help").click()
    expect(page.locator("#dlg-help")).to_be_visible()
    close_dialog(page, "dlg-help")
    page.locator("#btn-settings").click()
    page.locator('#form-settings input[name="fourColor"]').check()
    page.locator('#form-settings input[name="placementHelp"]').uncheck()
    close_dialog(page, "dlg-settings")

    # Heart to Heart into a stalemate (a card clicked for each kind of move and for the last, the
    # moves between sent through the page's session): the end dialog; giving up there, then the
    # solution.
    play_hh_line(page, line, hh_shapes(code, line) | {len(line) - 1})
    end = page.locator("#dlg-end")
    expect(end).to_be_visible()
    end.locator('button[value="resign"]').click()
    confirm = page.locator("#dlg-confirm")  # giving up is asked first, naming the game
    expect(confirm.locator("#confirm-text")).to_contain_text(code)
    confirm.get_by_role("button", name="Give up").click()
    expect(board(page)).to_have_attribute("data-status", "resigned")
    page.locator("#btn-share").click()
    expect(page.locator("#share-code")).to_have_value(code)
    close_dialog(page, "dlg-share")
    page.locator("#btn-solution").click()
    solution = page.locator("#dlg-solution")
    expect(solution).to_have_attribute("data-state", re.compile(r"^(won|impossible)$"))
    if solution.get_attribute("data-state") == "won":
        solution.locator("#solution-next").click()
        expect(solution.locator('#solution-steps li[aria-current="step"]')).to_have_count(1)
    close_dialog(page, "dlg-solution")

    # Seahaven: a group dragged onto a column (the drag ghost is placed from script), and a tap.
    s = seahaven_scenario()
    open_code(page, site, s.code)
    src, dst, count = (str(s.group.args[0]), str(s.group.args[1]), int(s.group.args[2]))
    moved = column_cards(page, int(src.split(":")[1]))[-count:]
    drag(page, card(page, moved[0]), page.locator("#board .column").nth(int(dst.split(":")[1]) - 1))
    wait_seq(page, 1)
    at(page, s.tap_at).click()
    wait_seq(page, 2)

    # A race of one: the racers' table and strip draw progress bars; giving up ends the race and
    # opens its results.
    page.goto(f"{site}/#races")
    page.locator("#race-code").fill(code)
    page.get_by_role("button", name="Open a race").click()
    expect(page).to_have_url(re.compile(r"#race=r_"))
    expect(page.locator("#race-detail table.racers .bar")).to_have_count(1)
    page.locator("#race-countdown").select_option("3")
    page.locator("#race-start").click()
    expect(page.locator("#race-status")).to_contain_text("Starting in")
    clock.skip(3_000)  # the server's clock past the countdown
    expect(page.locator("#race-strip .bar")).to_have_count(1, timeout=20_000)
    wait_seq(page, 0)
    page.locator("#race-give-up").click()
    results = page.locator("#dlg-race")
    expect(results).to_be_visible()
    expect(results.locator("tbody tr")).to_have_count(1)
    close_dialog(page, "dlg-race")

    # The leaderboards page too.
    page.goto(f"{site}/#board={code}")
    expect(page.locator("#view-boards")).to_be_visible()

    assert violations == []
    assert errors == []
