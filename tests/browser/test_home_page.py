"""The player's home in the browser: an account made in one browser and logged in from another,
statistics and history after games, a replay stepped through against the engine's positions,
and ghost races against recorded games."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from engine import Action
from engine.replay import steps_json
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.helpers import WsPlayer, board, wait_attribute, wait_seq
from tests.browser.search import hh_winning_deal
from tests.support import http

pytestmark = pytest.mark.browser

PASSWORD = "a long phrase of my own"
# Reported from every document before the page's scripts run (see test_security_page.py).
LISTEN = """
document.addEventListener("securitypolicyviolation", (e) => window.reportViolation(
  `${e.effectiveDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`));
"""
_names = itertools.count(1)

HH_REPLAY_JS = """() => {
  const root = document.querySelector('#replay-board');
  const heart = [...root.querySelectorAll('.heart .card')].filter(e => !e.hidden);
  return {
    step: Number(root.dataset.step),
    heart: heart.map(e => [e.dataset.loc, e.dataset.card, !e.classList.contains('covered')]),
    stock: root.querySelector('.pile-stock .count').textContent,
    waste: root.querySelector('.pile-waste .card').dataset.card || null,
    score: document.querySelector('#replay-score').textContent,
    moves: document.querySelector('#replay-moves-count').textContent,
    progress: document.querySelector('#replay-progress').textContent,
  };
}"""


def watch_policy(page: Page) -> list[str]:
    """The page's Content-Security-Policy violations, as they happen (none is allowed)."""
    violations: list[str] = []

    def report(text: str) -> None:
        violations.append(text)

    page.expose_function("reportViolation", report)
    page.add_init_script(script=LISTEN)
    return violations


@pytest.fixture(autouse=True)
def strict(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """Every page of a test that uses the ``page`` fixture runs under the policy, unbroken."""
    if "page" not in request.fixturenames:
        yield []
        return
    violations = watch_policy(request.getfixturevalue("page"))
    yield violations
    assert violations == []


def hearts_position(step: dict[str, Any], index: int) -> dict[str, Any]:
    """What the replay board and its information bar must show for an engine step."""
    view = step["view"]["board"]
    return {
        "step": index,
        "heart": [[f"heart:{h['pos']}", h["card"], h["free"]] for h in view["heart"] if h["card"]],
        "stock": str(view["stock_count"]),
        "waste": view["waste_top"],
        "score": str(step["score"]),
        "moves": str(step["moves"]),
        "progress": f"{step['progress']} / {step['progress_total']}",
    }


def shown(page: Page, step: int) -> dict[str, Any]:
    page.wait_for_function(f"() => document.querySelector('#replay-board')?.dataset.step === '{step}'")
    result: dict[str, Any] = page.evaluate(HH_REPLAY_JS)
    return result


def me(page: Page) -> dict[str, str]:
    """The page's player as kept in localStorage, once its socket is authenticated."""
    wait_attribute(page, "body", "data-conn", "online")
    player: dict[str, str] = page.evaluate("() => JSON.parse(localStorage.getItem('solitaire.player'))")
    expect(page.locator("body")).to_have_attribute("data-player", player["id"])
    return player


def won_game(site: str, name: str) -> tuple[str, str, list[Action]]:
    """A Heart to Heart game won by another player over a plain socket: (game id, code, actions)."""
    code, line = hh_winning_deal()
    owner = WsPlayer(site, name)
    try:
        game_id = owner.request("new_game", code=code)["game"]["id"]
        assert owner.play(game_id, line)["status"] == "won"
    finally:
        owner.close()
    return game_id, code, line


def test_an_account_made_in_one_browser_logs_in_from_another(browser: Browser, site: str) -> None:
    first = browser.new_context(viewport=DESKTOP)
    second = browser.new_context(viewport=PHONE)
    try:
        page = first.new_page()
        violations = watch_policy(page)
        page.goto(f"{site}/#profile")
        guest = me(page)
        username = f"ada{next(_names)}_home"
        expect(page.locator("#account-state")).to_contain_text("guest")
        form = page.locator("#form-sign-up")
        form.get_by_label("Username").fill(username)
        form.get_by_label("Password").fill("password")  # a common one: the server refuses it
        form.get_by_role("button", name="Make the account").click()
        expect(form.locator(".error")).not_to_be_empty()
        form.get_by_label("Password").fill(PASSWORD)
        form.get_by_role("button", name="Make the account").click()
        expect(page.locator("#account-state")).to_have_text(f"Logged in as {username}.")
        expect(page.locator("#sessions li")).to_have_count(1)

        # Another browser (a phone) is a guest of its own until it logs in.
        other = second.new_page()
        violations += watch_policy(other)
        other.goto(f"{site}/#profile")
        stranger = me(other)
        assert stranger["id"] != guest["id"]
        expect(other.locator("#account-state")).to_contain_text("guest")  # drawn: typing is not raced
        login = other.locator("#form-log-in")
        login.get_by_label("Username").fill(username.upper())  # usernames ignore case
        login.get_by_label("Password").fill("not the password at all")
        login.get_by_role("button", name="Log in").click()
        expect(login.locator(".error")).to_have_text("Unknown username or wrong password.")
        login.get_by_label("Password").fill(PASSWORD)
        login.get_by_role("button", name="Log in").click()
        expect(other.locator("#account-state")).to_have_text(f"Logged in as {username}.")
        same = me(other)
        assert same["id"] == guest["id"] and same["token"] != guest["token"]
        expect(other.locator("#profile-title")).to_contain_text(guest["name"])
        expect(other.locator("#sessions li")).to_have_count(2)
        expect(other.locator('#sessions li[data-current="true"]')).to_have_count(1)
        # Nothing scrolls sideways on the phone.
        assert other.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]

        # The phone ends the first browser's session: that page becomes a new guest at once.
        other.locator('#sessions li[data-current="false"]').get_by_role("button").click()
        expect(other.locator("#sessions li")).to_have_count(1)
        expect(page.locator("#toast-text")).to_have_text(
            "Your session ended on another device: you are playing as a new guest."
        )
        expect(page.locator("#form-sign-up")).to_be_visible()
        assert me(page)["id"] not in (guest["id"], stranger["id"])
        status, _ = http("GET", f"{site}/api/accounts/me", token=guest["token"])
        assert status == 401

        # Logging out on the phone ends its own session too; the account stays.
        other.locator("#btn-log-out").click()
        expect(other.locator("#form-log-in")).to_be_visible()
        assert me(other)["id"] != guest["id"]
        status, _ = http("GET", f"{site}/api/accounts/me", token=same["token"])
        assert status == 401
        status, body = http("POST", f"{site}/api/sessions", {"username": username, "password": PASSWORD})
        assert status == 201 and body["id"] == guest["id"]
        assert violations == []
    finally:
        first.close()
        second.close()


def test_statistics_and_history_after_games(page: Page, site: str) -> None:
    page.goto(f"{site}/#profile")
    player = me(page)
    expect(page.locator("#stats-table")).to_be_visible()
    expect(page.locator('#stats-table tr[data-variant="HH1-N"]')).to_have_attribute("data-played", "0")
    expect(page.locator("#chart-moves")).to_contain_text("No wins yet")

    # The page's own player plays: one win and one resigned game of Heart to Heart, one
    # resigned Seahaven game, and 21 more resigned games so the history needs a second page.
    # (Two sockets of its own: each keeps to its message rate without waiting for the other's.)
    code, line = hh_winning_deal()
    self_ = WsPlayer(site, "", token=player["token"])
    again = WsPlayer(site, "", token=player["token"])
    try:
        won = self_.request("new_game", code=code)["game"]["id"]
        assert self_.play(won, line)["status"] == "won"
        for n in range(22):
            kind = {"game": "SH", "variant": "C2"} if n == 0 else {"game": "HH", "variant": "N"}
            gid = again.request("new_game", **kind)["game"]["id"]
            assert again.request("resign", game_id=gid)["type"] == "game"
    finally:
        self_.close()
        again.close()

    page.reload()
    hh = page.locator('#stats-table tr[data-variant="HH1-N"]')
    expect(hh).to_have_attribute("data-played", "22")
    expect(hh).to_have_attribute("data-won", "1")
    expect(page.locator('#stats-table tr[data-variant="SH1-C2"]')).to_have_attribute("data-played", "1")
    expect(page.locator("#game-totals")).to_have_text(
        "Heart to Heart: 22 played, 1 won (5%) · Seahaven Towers: 1 played, 0 won (0%)"
    )
    stats = page.request.get(f"{site}/api/players/{player['id']}/stats").json()
    rate = next(v for v in stats["variants"] if v["variant"] == "HH1-N")["win_rate"]
    # The win-rate chart: one bar per variant, its length the server's rate.
    bar = page.locator('#chart-rate svg g[data-key="HH1-N"]')
    expect(bar).to_have_attribute("data-value", f"{rate:.4f}")
    expect(page.locator('#chart-rate svg g[data-key="SH1-C2"]')).to_have_attribute("data-value", "0.0000")
    expect(page.locator('#chart-rate svg g[data-key="SH1-C4"]')).to_have_attribute("data-value", "")
    # The moves chart: the win, as one point of the Heart to Heart series.
    series = page.locator('#chart-moves svg g.series[data-key="HH1-N"]')
    expect(series).to_have_attribute("data-points", "1")
    expect(page.locator("#chart-moves svg")).to_have_attribute("role", "img")

    # The history: 20 newest first, then "Show more" with the server's cursor, then no more.
    rows = page.locator("#history-table tbody tr")
    expect(rows).to_have_count(20)
    page.locator("#history-more").click()
    expect(rows).to_have_count(23)
    expect(page.locator("#history-more")).to_be_hidden()
    ids = rows.evaluate_all("rs => rs.map(r => r.dataset.game)")
    assert len(set(ids)) == 23 and ids[-1] == won
    # Filters narrow on the server.
    page.locator("#history-result").select_option("won")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-game", won)
    page.locator("#history-result").select_option("")
    page.locator("#history-variant").select_option("SH1-C2")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("SH1-C2-")
    # Another viewer sees the same public statistics on the player's link.
    page.goto(f"{site}/#replay={won}")
    page.locator("#replay-summary").get_by_role("link").click()
    expect(page).to_have_url(re.compile(rf"#profile={player['id']}$"))


def test_stepping_a_replay_shows_the_engines_positions(page: Page, site: str) -> None:
    game_id, code, line = won_game(site, "Replayed")
    positions = steps_json(code, line)
    last = len(line)

    # A link points at a move.
    page.goto(f"{site}/#replay={game_id}&move=37")
    expect(page.locator("#replay-title")).to_contain_text("Replayed")
    assert shown(page, 37) == hearts_position(positions[37], 37)
    current = page.locator('#replay-moves li[aria-current="step"]')
    expect(current).to_have_attribute("data-step", "37")
    expect(page.locator("#replay-step")).to_contain_text(f"Move 37 of {last}")

    page.get_by_role("button", name="Next").click()
    assert shown(page, 38) == hearts_position(positions[38], 38)
    expect(page).to_have_url(re.compile(rf"#replay={game_id}&move=38$"))
    page.get_by_role("button", name="Previous").click()
    page.get_by_role("button", name="Previous").click()
    assert shown(page, 36) == hearts_position(positions[36], 36)
    page.get_by_role("button", name="First").click()
    assert shown(page, 0) == hearts_position(positions[0], 0)
    expect(page.get_by_role("button", name="Previous")).to_be_disabled()
    page.get_by_role("button", name="Last").click()
    assert shown(page, last) == hearts_position(positions[last], last)
    expect(page.locator("#replay-status")).to_have_text("won")
    expect(page.get_by_role("button", name="Next")).to_be_disabled()

    # The slider and the move list go to a step; so do the keys.
    page.locator("#replay-slider").fill("12")
    assert shown(page, 12) == hearts_position(positions[12], 12)
    page.locator('#replay-moves li[data-step="5"]').click()
    assert shown(page, 5) == hearts_position(positions[5], 5)
    page.locator("#replay-title").click()
    page.keyboard.press("ArrowRight")
    assert shown(page, 6) == hearts_position(positions[6], 6)
    page.keyboard.press("End")
    assert shown(page, last) == hearts_position(positions[last], last)

    # Play at 8 moves a second from near the end runs to the last move and stops there.
    page.locator('#replay-moves li[data-step="' + str(last - 4) + '"]').click()
    page.locator("#replay-speed").select_option("8")
    page.get_by_role("button", name="Play").click()
    expect(page.get_by_role("button", name="Pause")).to_be_visible()
    assert shown(page, last) == hearts_position(positions[last], last)
    expect(page.get_by_role("button", name="Play")).to_be_visible()

    # Reloading the address opens the same move.
    page.reload()
    assert shown(page, last) == hearts_position(positions[last], last)


def test_racing_the_ghost_of_a_recorded_win(page: Page, site: str) -> None:
    game_id, code, line = won_game(site, "Ghostly")
    page.goto(f"{site}/#replay={game_id}")
    me(page)
    page.get_by_role("button", name="Race this ghost").click()
    expect(page).to_have_url(re.compile(r"#game=g_"))
    expect(page.locator("#info-code")).to_have_text(code)
    strip = page.locator("#ghost-strip")
    expect(strip).to_be_visible()
    expect(strip).to_contain_text("Ghostly's ghost")
    expect(strip).to_have_attribute("data-ghost-progress", "0")
    expect(page.locator("#ghost-note")).to_have_text("The ghost starts with your first move.")

    # The connection drops and comes back: the page follows the ghost race again (ghost_watch).
    page.evaluate("() => { window.solitaire.net.drop(4000, 'test'); window.solitaire.net.scheduleRetry(); }")
    expect(page.locator("body")).to_have_attribute("data-conn", "connecting")
    wait_attribute(page, "body", "data-conn", "online")

    # The ghost's clock starts with our first move; it then plays its recorded win at the pace
    # it was played (about a second here) and its progress fills the strip.
    page.locator('#board [data-loc="stock"]').last.click()
    wait_seq(page, 1)
    expect(strip).to_have_attribute("data-ghost-finished", "true")
    final = steps_json(code, line)[-1]
    assert final["status"] == "won"
    expect(strip.locator(".ghost-racer")).to_have_attribute("data-progress", str(final["progress"]))
    # Giving up loses to a win.
    page.evaluate("() => window.solitaire.session.resign()")
    dialog = page.locator("#dlg-ghost")
    expect(dialog).to_be_visible()
    expect(dialog).to_have_attribute("data-winner", "ghost")
    expect(dialog.locator("h2")).to_have_text("The ghost won")
    dialog.get_by_role("button", name="Close").click()
    expect(board(page)).to_have_attribute("data-status", "resigned")
    # The game just given up can be watched again from the information bar.
    mine = board(page).get_attribute("data-game-id")
    page.locator("#btn-watch-again").click()
    expect(page).to_have_url(re.compile(rf"#replay={mine}$"))
    expect(page.locator("#replay-status")).to_have_text("playing")  # the deal, before the draw
    page.get_by_role("button", name="Last").click()
    expect(page.locator("#replay-status")).to_have_text("given up")


def test_a_win_beats_the_ghost_of_a_game_given_up(page: Page, site: str) -> None:
    code, line = hh_winning_deal()
    owner = WsPlayer(site, "Quitter")
    try:
        recorded = owner.request("new_game", code=code)["game"]["id"]
        owner.play(recorded, line[:3])
        assert owner.request("resign", game_id=recorded)["type"] == "game"
    finally:
        owner.close()
    page.goto(f"{site}/#replay={recorded}")
    me(page)
    page.get_by_role("button", name="Race this ghost").click()
    expect(page.locator("#ghost-strip")).to_be_visible()
    wait_seq(page, 0)
    play = "actions => actions.forEach((a) => window.solitaire.session.act(a))"
    page.evaluate(play, [a.to_json() for a in line])
    wait_seq(page, len(line))
    dialog = page.locator("#dlg-ghost")
    expect(dialog).to_have_attribute("data-winner", "racer")
    expect(dialog.locator("h2")).to_have_text("You beat the ghost!")


def test_the_home_speaks_the_players_language(browser: Browser, site: str) -> None:
    game_id, _, line = won_game(site, "Nyelvész")
    context = browser.new_context(viewport=PHONE, locale="hu-HU")
    try:
        page = context.new_page()
        violations = watch_policy(page)
        page.goto(f"{site}/#profile")
        me(page)
        expect(page.locator("#profile-title")).to_contain_text("A profilod")
        expect(page.locator("#form-sign-up").get_by_label("Felhasználónév")).to_be_visible()
        page.goto(f"{site}/#replay={game_id}&move=2")
        expect(page.locator("#replay-title")).to_have_text(re.compile("^Nyelvész játszmája"))
        page.get_by_role("button", name="Következő").click()
        expect(page.locator("#replay-step")).to_contain_text(f"3. lépés / {len(line)}")
        # Another language picked in Settings redraws the page at the same move.
        page.locator("#btn-settings").click()
        page.locator("#lang-select").select_option("ro")
        page.locator('#form-settings button[value="close"]').click()
        expect(page.get_by_role("button", name="Următor")).to_be_visible()
        expect(page.locator('#replay-moves li[aria-current="step"]')).to_have_attribute("data-step", "3")
        assert violations == []
    finally:
        context.close()
