"""Player settings (js/appearance.js): themes (the table and the card backs, and high contrast),
animation speed, volume and a left-handed layout, each set in the settings dialog, applied at once
and kept for the next visit."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import at, box, open_code, wait_seq

pytestmark = pytest.mark.browser

HH_CODE = "HH1-N-AAAAAC5"
# A stand-in AudioContext that records each note's peak gain (a test cannot hear the page).
RECORD_GAINS = """
window.__gains = [];
class FakeParam {
  setValueAtTime() {}
  linearRampToValueAtTime(v) { window.__gains.push(v); }
  exponentialRampToValueAtTime() {}
}
class FakeNode {
  constructor() { this.gain = new FakeParam(); this.frequency = {}; }
  connect(n) { return n; }
  start() {}
  stop() {}
}
window.AudioContext = class {
  constructor() { this.state = "running"; this.currentTime = 0; this.destination = {}; }
  createOscillator() { return new FakeNode(); }
  createGain() { return new FakeNode(); }
  resume() { return Promise.resolve(); }
};
"""
# Element.animate, recorded: each animation's duration as the page asked for it.
RECORD_ANIMATIONS = """
window.__durations = [];
const animate = Element.prototype.animate;
Element.prototype.animate = function (frames, options) {
  window.__durations.push(typeof options === "number" ? options : (options && options.duration) || 0);
  return animate.call(this, frames, options);
};
"""


def open_settings(page: Page) -> None:
    page.locator("#btn-settings").click()
    expect(page.locator("#dlg-settings")).to_be_visible()


def close_settings(page: Page) -> None:
    page.keyboard.press("Escape")
    expect(page.locator("#dlg-settings")).to_be_hidden()


def style(page: Page, selector: str, prop: str) -> str:
    value: str = page.evaluate(
        "([s, p]) => getComputedStyle(document.querySelector(s)).getPropertyValue(p)", [selector, prop]
    )
    return value


def test_themes_change_the_table_and_the_backs_and_are_kept(page: Page, site: str) -> None:
    open_code(page, site, HH_CODE)
    looks: dict[str, tuple[str, str]] = {}
    for theme in ("felt", "ocean", "wine", "contrast"):
        open_settings(page)
        page.locator("#theme-select").select_option(theme)
        close_settings(page)
        expect(page.locator("html")).to_have_attribute("data-theme", theme)
        looks[theme] = (
            style(page, "body", "background-image"),
            style(page, ".pile-stock .card", "background-image"),
        )
    assert len({table for table, _ in looks.values()}) == 4, "each theme has its own table"
    assert len({back for _, back in looks.values()}) == 4, "each theme has its own card back"
    assert style(page, "html", "--felt").strip() == "#000"  # high contrast: black table
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-theme", "contrast")


def test_animation_speed_scales_the_glide(page: Page, site: str) -> None:
    page.add_init_script(RECORD_ANIMATIONS)
    open_code(page, site, HH_CODE)
    durations: dict[str, Any] = {}
    for seq, speed in enumerate(("slow", "fast", "off"), start=1):
        open_settings(page)
        page.locator("#speed-select").select_option(speed)
        close_settings(page)
        page.evaluate("window.__durations = []")
        page.locator("body").press("d")  # a draw: the card glides to the waste
        wait_seq(page, seq)
        durations[speed] = page.evaluate("window.__durations.filter((d) => d > 0)")
    assert durations["slow"] and durations["fast"]
    assert max(durations["slow"]) == 4 * max(durations["fast"])
    assert durations["off"] == []


def test_volume_scales_the_sounds(page: Page, site: str) -> None:
    page.add_init_script(RECORD_GAINS)
    open_code(page, site, HH_CODE)
    open_settings(page)
    page.locator('#form-settings input[name="sound"]').check()
    peaks: dict[str, float] = {}
    for n, volume in enumerate(("100", "50", "0", "20"), start=1):
        page.locator("#volume-range").fill(volume)
        close_settings(page)
        page.locator("body").press("d")  # a draw: the move sound, one note
        wait_seq(page, n)
        if volume != "0":
            page.wait_for_function(f"window.__gains.length === {len(peaks) + 1}", timeout=5_000)
            peaks[volume] = page.evaluate("window.__gains.at(-1)")
        open_settings(page)
    assert peaks["100"] > 0 and abs(peaks["50"] - peaks["100"] / 2) < 1e-9
    # The silent draw played no note: one note for each of the three others, the last at 20.
    assert page.evaluate("window.__gains.length") == 3
    assert abs(peaks["20"] - peaks["100"] / 5) < 1e-9


def test_left_handed_layout_puts_the_piles_on_the_left(page: Page, site: str) -> None:
    open_code(page, site, HH_CODE)
    assert box(at(page, "stock"))["x"] > box(at(page, "heart:25"))["x"]
    open_settings(page)
    page.locator('#form-settings input[name="leftHanded"]').check()
    close_settings(page)
    expect(page.locator("html")).to_have_attribute("data-hand", "left")
    assert box(at(page, "stock"))["x"] < box(at(page, "heart:25"))["x"]
    undo, code = box(page.locator("#btn-undo")), box(page.locator("#info-code"))
    assert undo["x"] < code["x"], "the buttons are on the left"


def test_restart_deals_the_same_code_again(page: Page, site: str) -> None:
    first = open_code(page, site, HH_CODE)
    for n in (1, 2):
        page.locator("body").press("d")
        wait_seq(page, n)
    page.locator("#btn-restart").click()
    expect(page.locator("#board")).not_to_have_attribute("data-game-id", first)
    wait_seq(page, 0)
    expect(page.locator("#info-code")).to_have_text(HH_CODE)
    expect(page.locator("#info-moves")).to_have_text("0")
    # A daily's code is sealed: no restart there.
    page.goto(f"{site}/#daily=HH1-N")
    expect(page.locator("#daily-context")).to_be_visible()
    expect(page.locator("#btn-restart")).to_be_hidden()
