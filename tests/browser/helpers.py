"""Page helpers for the browser tests: every wait is on page state, never on time."""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import ExitStack
from typing import Any

from playwright.sync_api import Browser, FloatRect, Locator, Page, expect
from playwright.sync_api import Error as PlaywrightError
from websockets.sync.client import connect

from engine import Action, Game
from tests.support import http


@contextlib.contextmanager
def strict_page(browser: Browser, *, init_script: str | None = None, **options: Any) -> Iterator[Page]:
    """A page in a context of its own (``options`` as ``Browser.new_context`` takes them,
    ``init_script`` run before each page's own scripts) that fails the test on any uncaught
    script error; the context is closed either way."""
    context = browser.new_context(**options)
    if init_script is not None:
        context.add_init_script(init_script)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"script errors in the page: {errors}"


EXPECT_TIMEOUT_MS = 15_000  # how long an expect() waits (conftest sets it)
RANK_WORDS = {"A": "ace", "T": "10", "J": "jack", "Q": "queen", "K": "king"}
SUIT_WORDS = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}


def card_words(card: str) -> str:
    """A card as the English page names it: ``7C`` is "7 of clubs", ``KD`` "king of diamonds"."""
    return f"{RANK_WORDS.get(card[0], card[0])} of {SUIT_WORDS[card[1]]}"


def board(page: Page) -> Locator:
    return page.locator("#board")


def at(page: Page, loc: str) -> Locator:
    """The card (or empty slot) at a location such as ``heart:25``, ``col:3`` (top) or ``waste``."""
    return page.locator(f'#board [data-loc="{loc}"]:not([hidden])').last


def card(page: Page, text: str) -> Locator:
    """A Seahaven card by its text, such as ``7S``."""
    return page.locator(f'#board .card[data-card="{text}"]')


def until(page: Page, predicate: str, arg: Any = None, timeout_ms: float = EXPECT_TIMEOUT_MS) -> float:
    """Wait until the page function ``predicate`` holds, looking every 10 ms, for at most
    ``timeout_ms``; returns what is left of it (ms) for the expect() that follows and has the
    last word (it reports a failure). expect() alone looks less and less often (every half
    second after the first 0.3 s), so it sees a state late by up to that."""
    start = time.monotonic()
    with contextlib.suppress(PlaywrightError):
        page.wait_for_function(predicate, arg=arg, polling=10, timeout=timeout_ms)
    return max(timeout_ms - (time.monotonic() - start) * 1000, 500)


def wait_attribute(
    page: Page, selector: str, name: str, value: str, timeout_ms: float = EXPECT_TIMEOUT_MS
) -> None:
    """expect(page.locator(selector)).to_have_attribute(name, value), seen as soon as it holds
    (:func:`until`)."""
    has = "([selector, name, value]) => document.querySelector(selector)?.getAttribute(name) === value"
    left = until(page, has, [selector, name, value], timeout_ms)
    expect(page.locator(selector)).to_have_attribute(name, value, timeout=left)


def wait_seq(page: Page, seq: int) -> None:
    wait_attribute(page, "#board", "data-seq", str(seq))


def seq(page: Page) -> int:
    return int(board(page).get_attribute("data-seq") or "-1")


def open_code(page: Page, base: str, code: str) -> str:
    """Deal a code through its share link; returns the new game's id."""
    page.goto(f"{base}/#code={code}")
    return dealt(page, code)


def dealt(page: Page, code: str) -> str:
    """Once a page opened on a code's share link shows the new game: its id."""
    fresh = """() => document.querySelector("#board")?.dataset.seq === "0"
      && location.href.includes("#game=g_")"""
    left = until(page, fresh)
    expect(board(page)).to_have_attribute("data-seq", "0", timeout=left)
    expect(page.locator("#info-code")).to_have_text(code)
    expect(page).to_have_url(re.compile(r"#game=g_"))
    return str(board(page).get_attribute("data-game-id"))


def set_setting(page: Page, name: str, on: bool) -> None:
    page.locator("#btn-settings").click()
    box = page.locator(f'#form-settings input[name="{name}"]')
    box.set_checked(on)
    page.locator('#form-settings button[value="close"]').click()
    expect(page.locator("#dlg-settings")).not_to_be_visible()


def column_cards(page: Page, n: int) -> list[str]:
    cards: Any = page.locator(f"#board .column:nth-child({n}) .card").evaluate_all(
        "els => els.map(e => e.dataset.card)"
    )
    return list(cards)


def play_hh_action(page: Page, action: Action) -> None:
    """Play one explicit Heart to Heart action with the touch model, as a player clicks."""
    before = seq(page)
    if action.kind == "draw":
        at(page, "stock").click()
        wait_seq(page, before + 1)
        return
    assert action.kind == "pair", action
    first, second = (str(a) for a in action.args)
    at(page, first).click()
    wait_seq(page, before + 1)
    expect(at(page, first)).to_have_class(re.compile(r"\bselected\b"))
    at(page, second).click()
    wait_seq(page, before + 2)


def act_all(page: Page, actions: Sequence[Action]) -> None:
    """Play explicit actions through the page's own session, one after another, as clicks and keys
    send them; none may be refused, and the board shows the last."""
    if not actions:
        return
    before = seq(page)
    refused: list[int] = page.evaluate(
        """async (actions) => {
          const refused = [];
          for (const [n, a] of actions.entries()) {
            if ((await window.solitaire.session.act(a)) === null) refused.push(n);
          }
          return refused;
        }""",
        [action.to_json() for action in actions],
    )
    assert refused == [], f"refused: {[actions[n] for n in refused]}"
    wait_seq(page, before + len(actions))


def hh_shapes(code: str, line: Sequence[Action]) -> set[int]:
    """Where a Heart to Heart line first does each thing a player clicks differently: a draw, a
    redeal (a draw from the empty stock), a pair of two heart cards, a pair with the waste."""
    game, first = Game.new(code), dict[tuple[str, ...], int]()
    for n, action in enumerate(line):
        if action.kind == "draw":
            shape: tuple[str, ...] = ("redeal" if game.view()["board"]["stock_count"] == 0 else "draw",)
        else:
            shape = tuple(sorted("waste" if arg == "waste" else "heart" for arg in action.args))
        first.setdefault(shape, n)
        game = game.apply(action).game
    return set(first.values())


def play_hh_line(page: Page, line: Sequence[Action], clicked: Collection[int]) -> None:
    """Play a line of explicit Heart to Heart actions: those at the indices in ``clicked`` by
    clicking (:func:`play_hh_action`: a pair is two touches, two seqs), the runs between them
    through the page's session (:func:`act_all`)."""
    run: list[Action] = []
    for n, action in enumerate(line):
        if n in clicked:
            act_all(page, run)
            run = []
            play_hh_action(page, action)
        else:
            run.append(action)
    act_all(page, run)


def box(locator: Locator) -> FloatRect:
    rect = locator.bounding_box()
    assert rect is not None, f"{locator} is not visible"
    return rect


def boxes(locator: Locator) -> list[FloatRect]:
    """The box of every element ``locator`` finds, read in one call: what :func:`box` gives for
    each (the border box on the page, as ``getBoundingClientRect`` has it); each must have one."""
    rects: list[FloatRect | None] = locator.evaluate_all(
        """els => els.map((e) => {
          if (!e.getClientRects().length) return null;  // not rendered: no box
          const r = e.getBoundingClientRect();
          return { x: r.x, y: r.y, width: r.width, height: r.height };
        })"""
    )
    missing = [n for n, rect in enumerate(rects) if rect is None]
    assert not missing, f"{locator}: elements {missing} are not visible"
    return [rect for rect in rects if rect is not None]


def drag(page: Page, source: Locator, target: Locator, steps: int = 12) -> None:
    """Drag with the mouse from the top strip of ``source`` to the middle of ``target``."""
    start = box(source)
    goal = box(target)
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + min(10, start["height"] / 4))
    page.mouse.down()
    page.mouse.move(goal["x"] + goal["width"] / 2, goal["y"] + goal["height"] / 2, steps=steps)
    page.mouse.up()


class WsPlayer:
    """Another player on a plain WebSocket (the sync client of ``websockets``): an opponent or a
    rival on a leaderboard, without a second page to drive."""

    def __init__(self, base: str, name: str, token: str | None = None) -> None:
        """A new player named ``name``, or (with ``token``) the player that token is, such as a
        page's own, to play games for it without clicking."""
        if token is None:
            status, body = http("POST", f"{base}/api/players", {"name": name})
            assert status == 201, body
            token = str(body["token"])
        self._stack = ExitStack()
        self.ws = self._stack.enter_context(connect(base.replace("http", "ws", 1) + "/ws", compression=None))
        self._ids = itertools.count(1)
        hello = self.recv()
        assert hello["type"] == "hello"
        self._rate, self._burst = hello["limits"]["rate_per_s"], hello["limits"]["burst"] - 1
        self._tokens = float(self._burst)
        self._last = time.monotonic()
        welcome = self.request("auth", protocol=1, token=token)
        assert welcome["type"] == "welcome", welcome
        self.id: str = welcome["player"]["id"]

    def recv(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.ws.recv(timeout=15))
        return message

    def _pace(self) -> None:
        """Stay within the announced message rate, as a well-behaved client does."""
        now = time.monotonic()
        self._tokens = min(self._tokens + (now - self._last) * self._rate, self._burst)
        self._last = now
        if self._tokens < 1:
            time.sleep((1 - self._tokens) / self._rate)
            self._tokens, self._last = 1.0, time.monotonic()
        self._tokens -= 1

    def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        rid = next(self._ids)
        self._pace()
        self.ws.send(json.dumps({"type": kind, "id": rid, **fields}))
        while True:
            message = self.recv()
            if message.get("id") == rid:
                return message

    def play(self, game_id: str, actions: list[Action]) -> dict[str, Any]:
        """Play explicit actions from the start of a game; returns the last state."""
        state: dict[str, Any] = {}
        for n, action in enumerate(actions):
            reply = self.request("act", game_id=game_id, seq=n, action=action.to_json())
            assert reply["type"] == "result", reply
            state = reply["state"]
        return state

    def close(self) -> None:
        self._stack.close()
