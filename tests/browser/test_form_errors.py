"""Account and name errors say what is wrong, in the page's language: the rule the value breaks
(from the refusal's field and the server's rules), and the name field takes what the server
takes."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import DESKTOP
from tests.browser.helpers import wait_attribute

pytestmark = pytest.mark.browser

CASES = {
    "en-GB": "A password has 10 to 128 characters.",
    "hu-HU": "A jelszó 10–128 karakterből áll.",
    "ro-RO": "O parolă are între 10 și 128 caractere.",
}


@pytest.mark.parametrize("locale", sorted(CASES))
def test_a_short_password_is_refused_for_its_length(browser: Browser, site: str, locale: str) -> None:
    context = browser.new_context(viewport=DESKTOP, locale=locale)
    try:
        page = context.new_page()
        page.goto(f"{site}/#profile")
        wait_attribute(page, "body", "data-conn", "online")  # the player is known: no redraw to come
        expect(page.locator("#account-state")).not_to_be_empty()  # the forms drawn for this player
        form = page.locator("#form-sign-up")
        form.locator("#signup-username").fill(f"shorty{locale[:2]}")
        form.locator("#signup-password").fill("abcde")
        form.locator("button[type=submit]").click()
        expect(form.locator(".error")).to_have_text(CASES[locale])
    finally:
        context.close()


def test_the_name_field_takes_what_the_server_takes(page: Page, site: str) -> None:
    page.goto(site)
    page.locator("#dlg-new").get_by_role("button", name="Cancel").click()
    page.locator("#btn-settings").click()
    assert page.locator("#player-name").get_attribute("maxlength") == "24"
