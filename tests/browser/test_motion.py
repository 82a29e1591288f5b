"""Motion in real Chromium: moved cards glide from their old place (card by card for a group),
pairs fly off, a draw comes from the stock, undo plays the move back, a win celebrates; input is
never blocked by an animation; prefers-reduced-motion turns it all off; and a move on a phone
causes no long task (over 50 ms), measured with the Performance API."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.helpers import act_all, at, box, open_code, seq, strict_page, wait_seq
from tests.browser.search import hh_winning_deal, seahaven_scenario

pytestmark = pytest.mark.browser

# Every Web Animation the page starts, with the card it moves and its timing.
RECORD_ANIMATIONS = """
window.__animations = [];
const original = Element.prototype.animate;
Element.prototype.animate = function (frames, options) {
  const el = this;
  window.__animations.push({
    card: el.dataset ? el.dataset.card || "" : "",
    loc: el.dataset ? el.dataset.loc || "" : "",
    flying: el.classList ? el.classList.contains("flying") : false,
    duration: options && options.duration,
    delay: (options && options.delay) || 0,
    // Where the element is drawn (its box before the motion plays) and how its motion starts.
    left: el.getBoundingClientRect ? el.getBoundingClientRect().left : 0,
    top: el.getBoundingClientRect ? el.getBoundingClientRect().top : 0,
    first: (Array.isArray(frames) && frames[0] && frames[0].transform) || "",
  });
  return original.call(this, frames, options);
};
"""


def new_page(browser: Browser, *, phone: bool = False, reduced: bool = False) -> AbstractContextManager[Page]:
    """A strict page that records every animation, at a phone's size or a desktop's."""
    return strict_page(
        browser,
        init_script=RECORD_ANIMATIONS,
        viewport=PHONE if phone else DESKTOP,
        is_mobile=phone,
        has_touch=phone,
        reduced_motion="reduce" if reduced else "no-preference",
    )


@pytest.fixture
def moving(browser: Browser) -> Iterator[Page]:
    with new_page(browser) as page:
        yield page


def animations(page: Page) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = page.evaluate("window.__animations.splice(0)")
    return found


def act(page: Page, action: dict[str, Any]) -> None:
    """Send an action through the page's own session, as a click or a drag does."""
    before = seq(page)
    page.evaluate("action => window.solitaire.session.act(action)", action)
    wait_seq(page, before + 1)


def test_seahaven_moves_glide_card_by_card_and_undo_plays_back(moving: Page, site: str) -> None:
    s = seahaven_scenario()
    open_code(moving, site, s.code)
    animations(moving)
    src, dst, count = s.group.args
    column: list[str] = moving.locator(f'#board .card[data-loc="{src}"]').evaluate_all(
        "els => els.map(e => e.dataset.card)"
    )
    moved = column[-int(count) :]
    act(moving, {"type": "move", "from": src, "to": dst, "count": count})
    glides = [a for a in animations(moving) if a["card"] in moved]
    assert sorted(a["card"] for a in glides) == sorted(moved)
    assert all(150 <= a["duration"] <= 250 for a in glides)
    assert len({a["delay"] for a in glides}) == len(moved)  # one after another, card by card

    # Undone at once, while the move still plays (a card still waiting for its turn was measured
    # where its glide showed it, its old place, and an undo left it there with no glide back).
    act(moving, {"type": "undo"})
    back = [a for a in animations(moving) if a["card"] in moved]
    assert sorted(a["card"] for a in back) == sorted(moved)  # the same cards glide back
    expect(moving.locator(f'#board .card[data-card="{moved[0]}"]')).to_have_attribute("data-loc", str(src))


def test_hearts_pairs_fly_off_and_draws_come_from_the_stock(moving: Page, site: str) -> None:
    code, line = hh_winning_deal()
    open_code(moving, site, code)
    animations(moving)
    first_pair = next(n for n, a in enumerate(line) if a.kind == "pair")
    for action in line[:first_pair]:
        act(moving, action.to_json())
    drawn = animations(moving)
    if first_pair:
        assert any(a["loc"] == "waste" and 150 <= a["duration"] <= 250 for a in drawn), drawn
    act(moving, line[first_pair].to_json())
    flights = [a for a in animations(moving) if a["flying"]]
    assert len(flights) == 2  # both cards of the pair leave as flying copies
    expect(moving.locator(".motion-layer .flying")).to_have_count(0)  # and are gone after


def test_input_is_never_blocked_by_an_animation(moving: Page, site: str) -> None:
    code, _ = hh_winning_deal()
    open_code(moving, site, code)
    # The drawn card glides from the stock to the waste and is touched while it still moves
    # (at the redraw itself, whatever the machine's speed): the touch counts at once.
    running = moving.evaluate(
        """() => new Promise((resolve) => {
          const root = document.querySelector("#board");
          const observer = new MutationObserver(() => {
            if (root.dataset.seq !== "1") return;
            observer.disconnect();
            const running = document.getAnimations().filter((a) => a.playState !== "finished").length;
            root.querySelector('[data-loc="waste"]').click();
            resolve(running);
          });
          observer.observe(root, { attributes: true, attributeFilter: ["data-seq"] });
          root.querySelector('[data-loc="stock"]').click();
        })"""
    )
    assert running >= 1
    wait_seq(moving, 2)
    expect(at(moving, "waste")).to_have_attribute("aria-pressed", "true")


def test_a_win_is_celebrated(moving: Page, site: str) -> None:
    code, line = hh_winning_deal()
    open_code(moving, site, code)
    act_all(moving, line[:-1])
    act(moving, line[-1].to_json())  # the winning pair
    expect(moving.locator("#dlg-end")).to_be_visible()
    expect(moving.locator(".motion-layer .celebration")).to_have_count(1)
    assert len(moving.locator(".motion-layer .celebration span").all()) >= 20


def test_reduced_motion_turns_it_all_off(browser: Browser, site: str) -> None:
    with new_page(browser, reduced=True) as page:
        s = seahaven_scenario()
        open_code(page, site, s.code)
        src, dst, count = s.group.args
        animations(page)
        act(page, {"type": "move", "from": src, "to": dst, "count": count})
        act(page, {"type": "undo"})
        act(page, {"type": "tap", "at": s.tap_at})
        assert animations(page) == []
        assert page.locator(".motion-layer .flying").count() == 0


def test_no_long_task_during_moves_on_a_phone(browser: Browser, site: str) -> None:
    """The board is redrawn and its motion started within one short task: no long task (the
    Performance API's longtask entries are the tasks over 50 ms) while moves are played."""
    with new_page(browser, phone=True) as page:
        s = seahaven_scenario()
        open_code(page, site, s.code)
        wait_seq(page, 0)
        page.wait_for_timeout(300)  # let the page settle: loading is not a move
        page.evaluate(
            """() => {
              window.__long = [];
              new PerformanceObserver((list) => {
                for (const entry of list.getEntries()) window.__long.push(entry.duration);
              }).observe({ type: "longtask" });
            }"""
        )
        src, dst, count = s.group.args
        for action in (
            {"type": "move", "from": src, "to": dst, "count": count},
            {"type": "undo"},
            {"type": "move", "from": src, "to": dst, "count": count},
            {"type": "tap", "at": s.tap_at},
            {"type": "undo"},
            {"type": "undo"},
        ):
            act(page, action)
            page.wait_for_timeout(260)  # the motion plays out
        durations: list[float] = page.evaluate("window.__long")
        assert durations == [], f"long tasks during moves: {durations} ms"
        draws: list[float] = page.evaluate(
            "performance.getEntriesByName('solitaire:draw').slice(-6).map((e) => e.duration)"
        )
        assert len(draws) == 6 and max(draws) < 50, draws
        print(f"draw and start of motion per move on a phone: {[round(d, 1) for d in draws]} ms")


def test_a_redeal_sends_the_waste_back_to_the_stock(moving: Page, site: str) -> None:
    open_code(moving, site, "HH1-N-AAAAAAM")
    stock = at(moving, "stock")
    draws = int(moving.locator(".pile-stock .count").inner_text())
    moving.evaluate(
        "async (n) => { for (let i = 0; i < n; i++) await window.solitaire.session.act({type: 'draw'}); }",
        draws,
    )
    wait_seq(moving, draws)
    expect(stock).to_have_class(re.compile(r"\bredeal\b"))
    animations(moving)
    act(moving, {"type": "draw"})  # the redeal
    flights = [a for a in animations(moving) if a["flying"]]
    assert len(flights) == 1  # the waste's top card flies back onto the stock
    expect(moving.locator(".pile-stock .count")).to_have_text(str(draws + 1))


def glide_start(animation: dict[str, Any]) -> tuple[float, float]:
    """Where a glide starts on the page: the element's box moved by its first frame's translate."""
    found = re.match(r"translate\((-?[\d.e-]+)px, (-?[\d.e-]+)px\)", str(animation["first"]))
    dx, dy = (float(found.group(1)), float(found.group(2))) if found else (0.0, 0.0)
    return float(animation["left"]) + dx, float(animation["top"]) + dy


def test_a_dropped_card_lands_from_where_it_was_dropped(moving: Page, site: str) -> None:
    """A card dragged and dropped does not appear at its source again to glide from there: it
    settles from where it was let go, and nothing flies from the source."""
    s = seahaven_scenario()
    open_code(moving, site, s.code)
    src, dst, count = str(s.group.args[0]), str(s.group.args[1]), int(s.group.args[2])
    moved: list[str] = moving.locator(f'#board .card[data-loc="{src}"]').evaluate_all(
        "els => els.map(e => e.dataset.card)"
    )
    moved = moved[-count:]
    source = box(moving.locator(f'#board .card[data-card="{moved[0]}"]'))
    goal = box(moving.locator(f'#board .column[data-drop="{dst}"]'))
    animations(moving)
    moving.mouse.move(source["x"] + source["width"] / 2, source["y"] + 5)
    moving.mouse.down()
    drop = (goal["x"] + goal["width"] / 2, goal["y"] + goal["height"] / 2)
    moving.mouse.move(*drop, steps=8)
    moving.mouse.up()
    wait_seq(moving, 1)
    expect(moving.locator(".ghost")).to_have_count(0)
    started = animations(moving)
    glides = [a for a in started if a["card"] in moved and not a["flying"]]
    assert not [a for a in started if a["flying"]], started  # no copy flies from the source
    for animation in glides:
        x, y = glide_start(animation)
        assert abs(x - source["x"]) + abs(y - source["y"]) > source["height"], (animation, source)
    # The first card settles from about where the pointer let it go (grabbed 5 px from its top).
    first = [a for a in glides if a["card"] == moved[0]]
    if first:
        x, y = glide_start(first[0])
        assert abs(x + source["width"] / 2 - drop[0]) < 2 and abs(y + 5 - drop[1]) < 2, (first[0], drop)
