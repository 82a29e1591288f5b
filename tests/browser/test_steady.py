"""A steady play view: the empty table invites a game and offers no control that does nothing,
a first move does not move the board (the status line's height is reserved), and the win's
celebration plays over the win dialog, not behind its backdrop."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.helpers import act_all, box, open_code, play_hh_action, strict_page
from tests.browser.search import hh_winning_deal

pytestmark = pytest.mark.browser


@pytest.fixture
def moving(browser: Browser) -> Iterator[Page]:
    with strict_page(browser, viewport=DESKTOP, reduced_motion="no-preference") as page:
        yield page


def test_the_empty_table_invites_a_game_and_offers_no_dead_control(page: Page, site: str) -> None:
    page.goto(site)
    dialog = page.locator("#dlg-new")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    empty = page.get_by_role("region", name="No game on the table")
    expect(empty).to_be_visible()
    expect(page.locator("#btn-undo")).to_be_disabled()
    expect(page.locator("#btn-share")).to_be_disabled()
    expect(page.locator("#btn-give-up")).to_be_hidden()
    expect(page.locator("#info-progress")).to_be_hidden()
    empty.get_by_role("button", name="New game").click()
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Random deal").click()
    expect(empty).to_be_hidden()
    expect(page.locator("#btn-share")).to_be_enabled()
    expect(page.locator("#info-progress")).to_be_visible()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_first_move_does_not_move_the_board(browser: Browser, site: str, viewport: dict[str, int]) -> None:
    context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    try:
        page = context.new_page()
        code, line = hh_winning_deal()
        open_code(page, site, code)
        before = box(page.locator("#board"))
        play_hh_action(page, line[0])
        expect(page.locator("#status-line")).not_to_have_text("")
        after = box(page.locator("#board"))
        assert (after["y"], after["height"]) == (before["y"], before["height"])
    finally:
        context.close()


def test_the_win_celebration_plays_over_the_win_dialog(moving: Page, site: str) -> None:
    code, line = hh_winning_deal()
    open_code(moving, site, code)
    # The celebration is kept once over (a slow machine may look late), to be looked at.
    moving.evaluate(
        """() => { const remove = Element.prototype.remove;
          Element.prototype.remove = function () {
            if (!this.matches(".celebration")) remove.call(this);
          }; }"""
    )
    act_all(moving, line)
    expect(moving.locator("#dlg-end")).to_be_visible()
    spark = moving.locator(".celebration span").first
    expect(spark).to_be_attached()
    # Held still where it starts (over the dialog) and painted pure green, the other sparks
    # (which start at the same place) hidden: the pixel at its centre is that green only when
    # the spark is drawn over the dialog and its backdrop.
    centre = spark.evaluate(
        """(s) => { for (const other of s.parentElement.children) {
            for (const a of other.getAnimations()) a.cancel();
            if (other !== s) other.style.visibility = "hidden";
          }
          s.style.opacity = "1"; s.style.textShadow = "none";
          s.style.background = "#00ff00"; s.style.color = "#00ff00";
          const r = s.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }"""
    )
    shot = moving.screenshot(clip={"x": centre[0] - 1, "y": centre[1] - 1, "width": 3, "height": 3})
    pixel = moving.evaluate(
        """async (b64) => { const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          const image = await createImageBitmap(new Blob([bytes], { type: "image/png" }));
          const canvas = new OffscreenCanvas(image.width, image.height);
          const ctx = canvas.getContext("2d"); ctx.drawImage(image, 0, 0);
          return [...ctx.getImageData(1, 1, 1, 1).data.slice(0, 3)]; }""",
        base64.b64encode(shot).decode(),
    )
    assert pixel[1] > 230 and pixel[0] < 30 and pixel[2] < 30, pixel
