"""How the client's files are served (server/edge/static.py): gzipped when the browser takes it,
under build-named URLs cached as immutable while the page and the service worker are revalidated,
and a modulepreload in the page for every module the first screen imports, so that they load side
by side; what main.js imports dynamically (the competition and home pages, the solution's dialog)
loads only after the first screen is ready, or when asked for. The module graph is found here
from the files' own imports, not from the server's list."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from server.edge import facts
from server.edge.static import ClientBundle
from tests.browser.helpers import WsPlayer
from tests.browser.search import hh_winning_deal
from wire import PROTOCOL_VERSION

pytestmark = pytest.mark.browser

STATIC = Path(__file__).resolve().parents[2] / "server" / "static"
IMPORTS = re.compile(r"""(?:from|import)\s*\(?\s*["']\./([\w-]+\.js)["']""")
STATIC_IMPORTS = re.compile(r"""(?:from|import)\s*["']\./([\w-]+\.js)["']""")
# The pages main.js loads after the first screen, the modules only they import, and the
# solution's dialog (loaded when first asked for, or with the replay page that imports it too).
LATER = {
    "js/solution.js",
    "js/competition.js",
    "js/dailycontext.js",
    "js/leaderboard.js",
    "js/races.js",
    "js/verified.js",
    "js/home.js",
    "js/account.js",
    "js/profile.js",
    "js/replay.js",
    "js/charts.js",
}
# When the page is ready, as bench/pageload.py sees it (the same script).
NOTE_READY = (Path(__file__).resolve().parents[2] / "bench" / "ready.js").read_text()
BUILT = ClientBundle(STATIC, facts.generated())  # the files as the server builds them
FETCHED = """() => Object.fromEntries(performance.getEntriesByType('resource')
  .map(e => [new URL(e.name).pathname.slice(1), e.startTime])
  .filter(([p]) => p.endsWith('.js') && p !== 'sw.js'))"""


def get(url: str, gzipped: bool = True, etag: str | None = None) -> tuple[int, dict[str, str], bytes]:
    headers = {"Accept-Encoding": "gzip, br"} if gzipped else {}
    if etag:
        headers["If-None-Match"] = etag
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, b""


def imported_modules(start: str = "main.js", dynamic: bool = True) -> set[str]:
    """Every module reachable from ``start`` by its imports, static or (unless told not to)
    dynamic."""
    found, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        path = STATIC / "js" / name
        if path.is_file():
            todo += (IMPORTS if dynamic else STATIC_IMPORTS).findall(path.read_text(encoding="utf-8"))
    return {f"js/{name}" for name in found}


def page_links(site: str) -> tuple[str, list[str], str]:
    """The page's build prefix (``a/<build>/``), its modulepreloads and its stylesheet."""
    prefix, preloads, style, _ = page_modules(site)
    return prefix, preloads, style


def page_modules(site: str) -> tuple[str, list[str], str, dict[str, list[str]]]:
    """:func:`page_links` and the page's map of the modules loaded after the first screen."""
    _, _, body = get(site, gzipped=False)
    html = body.decode()
    preloads = re.findall(r'<link rel="modulepreload" href="([^"]+)">', html)
    (style,) = re.findall(r'<link rel="stylesheet" href="([^"]+)">', html)
    (entry,) = re.findall(r'<script type="module" src="([^"]+)">', html)
    (later,) = re.findall(r'<script type="application/json" id="later-modules">([^<]*)</script>', html)
    prefix = entry.removesuffix("js/first.js")
    assert re.fullmatch(r"a/[0-9a-f]{12}/", prefix), entry
    return prefix, preloads, style, json.loads(later)


def test_the_first_screens_modules_are_preloaded_and_the_pages_named(site: str) -> None:
    prefix, preloads, style, later = page_modules(site)
    assert style == f"{prefix}app.css"
    modules = imported_modules()
    eager = imported_modules(dynamic=False)
    assert len(eager) > 20 and "js/facts.js" in eager and "js/dailies.js" in eager
    assert modules - eager == LATER
    # The first screen's modules joined in one file, beside the early connection's modules.
    separate = imported_modules("connect.js", dynamic=False)
    assert separate == {"js/connect.js", "js/identity.js", "js/net.js", "js/facts.js"}
    assert sorted(preloads) == sorted(prefix + name for name in {"js/first.js", *separate})
    # Each page's modules, itself first, that the first screen did not load.
    assert list(later) == [f"{prefix}js/{name}" for name in ("competition.js", "home.js", "solution.js")]
    for root, names in later.items():
        assert names[0] == root
        page = root.removeprefix(f"{prefix}js/")
        assert set(names) == {prefix + name for name in imported_modules(page) - eager}
    assert {name for names in later.values() for name in names} == {prefix + name for name in LATER}


def test_build_files_are_gzipped_and_immutable(site: str) -> None:
    prefix, preloads, _, later = page_modules(site)
    assert later[f"{prefix}js/home.js"]
    every = [*preloads, *{name for names in later.values() for name in names}]
    for url in [*every, f"{prefix}app.css", f"{prefix}i18n/hu.json"]:
        status, headers, body = get(f"{site}/{url}")
        assert status == 200, url
        assert headers["content-encoding"] == "gzip", url
        assert headers["vary"] == "Accept-Encoding"
        assert headers["cache-control"] == "public, max-age=31536000, immutable"
        name = url.removeprefix(prefix)
        built = BUILT.files[name]
        assert gzip.decompress(body) == built, url
        assert len(body) < len(built) or len(body) < 400, url
        if name in ("js/net.js", "app.css", "i18n/hu.json"):
            assert built == (STATIC / name).read_bytes(), url  # served as written
    # Without gzip in Accept-Encoding: the file as it is.
    status, headers, body = get(f"{site}/{prefix}js/net.js", gzipped=False)
    assert status == 200 and "content-encoding" not in headers
    assert body == (STATIC / "js" / "net.js").read_bytes()
    # A joined module has no URL of its own under the build; another build's URL is not an answer.
    assert get(f"{site}/{prefix}js/main.js")[0] == 404
    assert get(f"{site}/a/000000000000/js/net.js")[0] == 404


def test_the_page_and_the_worker_are_revalidated(site: str) -> None:
    prefix, _, _ = page_links(site)
    for url in (f"{site}/", f"{site}/index.html", f"{site}/sw.js"):
        status, headers, _ = get(url)
        assert status == 200 and headers["cache-control"] == "no-cache", url
        assert headers["content-encoding"] == "gzip" and headers["vary"] == "Accept-Encoding"
        again = get(url, etag=headers["etag"])
        assert again[0] == 304, url
    worker = gzip.decompress(get(f"{site}/sw.js")[2]).decode()
    assert f'const CACHE = "solitaire-client-{prefix.split("/")[1]}";' in worker
    assert f'"{prefix}js/first.js",' in worker and f'"{prefix}app.css",' in worker
    assert f'"{prefix}js/main.js",' not in worker


def test_a_changed_file_names_a_new_build(tmp_path: Path) -> None:
    copy = tmp_path / "static"
    shutil.copytree(STATIC, copy)
    generated = facts.generated()
    before = ClientBundle(copy, generated)
    assert ClientBundle(copy, generated).build == before.build  # the same files, the same build
    path = copy / "js" / "cards.js"
    path.write_text(path.read_text(encoding="utf-8") + "\n// changed\n", encoding="utf-8")
    after = ClientBundle(copy, generated)
    assert after.build != before.build
    assert after.modules == before.modules and after.later == before.later


def test_the_browser_fetches_no_module_it_was_not_told_of(page: Page, site: str) -> None:
    _, preloads, _, later = page_modules(site)
    told = {*preloads, *(name for names in later.values() for name in names)}
    page.goto(site)
    expect(page.locator("#dlg-new")).to_be_visible()
    page.wait_for_function(f"() => ({FETCHED})()[{json.dumps(next(iter(later)))}] !== undefined")
    fetched: list[str] = page.evaluate(
        "performance.getEntriesByType('resource').map(e => new URL(e.name).pathname.slice(1))"
        ".filter(p => p.endsWith('.js') && p !== 'sw.js')"
    )
    assert fetched and set(fetched) <= told
    # Each module came once (a preload and an import share one fetch).
    assert len(fetched) == len(set(fetched))


def test_the_pages_load_after_the_first_screen_and_catch_up_with_it(page: Page, site: str) -> None:
    """A plain visit's first screen loads none of the competition and home pages' modules: they
    come after it is ready, and behave as if they had been there all along (the connection was
    ready before them: a leaderboard subscribes and follows its pushes, again after a reconnect,
    and the profile knows the player)."""
    prefix, _, _, later = page_modules(site)
    page.add_init_script(script=NOTE_READY)
    page.goto(site)
    page.wait_for_function("() => window.__ready !== undefined")
    lazy = sorted({name for names in later.values() for name in names})
    page.wait_for_function(f"(names) => names.every(n => ({FETCHED})()[n] !== undefined)", arg=lazy)
    ready: float = page.evaluate("window.__ready")
    fetched: dict[str, float] = page.evaluate(FETCHED)
    early = {name: round(fetched[name]) for name in lazy if fetched[name] < ready}
    assert early == {}, f"fetched before the page was ready at {ready:.0f} ms"
    assert fetched[f"{prefix}js/first.js"] < ready

    # A leaderboard, shown after the connection was ready: it follows the board's pushes.
    code, line = hh_winning_deal(seed=23)
    page.evaluate("code => { location.hash = `board=${code}`; }", code)
    table = page.locator("#board-table")
    expect(page.locator("#board-heading")).to_have_text(f"Leaderboard of {code}")
    expect(table).to_contain_text("No results yet")
    first, second = WsPlayer(site, "Early"), WsPlayer(site, "Late")
    try:
        game = first.request("new_game", code=code)
        assert first.request("resign", game_id=game["game"]["id"])["type"] == "game"
        expect(table.locator(f'tr[data-player="{first.id}"]')).to_contain_text("Gave up")
        # A reconnect later: the page's "ready" listener subscribes the board again.
        page.evaluate("window.solitaire.net.restart()")
        page.wait_for_function("() => window.solitaire.net.ready")
        expect(page.locator("#conn")).to_have_text("Online")
        game = second.request("new_game", code=code)
        assert second.play(game["game"]["id"], line)["status"] == "won"
        row = table.locator(f'tr[data-player="{second.id}"]')
        expect(row).to_contain_text("Won")
        expect(row).to_have_attribute("data-rank", "1")
    finally:
        first.close()
        second.close()

    # The profile: the account was asked about on the connection's "ready" it came after.
    name: str = page.evaluate("window.solitaire.player.name")
    page.evaluate("location.hash = 'profile'")
    expect(page.locator("#account-state")).to_contain_text("guest")
    expect(page.locator("#profile-title")).to_contain_text(name)
    expect(page.locator("body")).to_have_attribute("data-account", "guest")


# Notes every WebSocket the page makes, and whether the page's inline head script made it.
NOTE_SOCKETS = """
window.__sockets = [];
const Native = window.WebSocket;
window.WebSocket = class extends Native {
  constructor(...args) {
    super(...args);
    const script = document.currentScript;
    window.__sockets.push(script ? script.dataset.protocol || "script" : "module");
  }
};
"""


def test_a_returning_player_plays_on_the_socket_the_pages_head_opened(page: Page, site: str) -> None:
    """The page's head opens the stored player's connection before any module runs
    (server/static/inline/early.js); the client takes that socket over instead of opening its own."""
    page.goto(site)
    expect(page.locator("#conn")).to_have_text("Online")
    page.add_init_script(script=NOTE_SOCKETS)
    page.reload()
    expect(page.locator("#conn")).to_have_text("Online")
    expect(page.locator("#dlg-new")).to_be_visible()
    assert page.evaluate("window.__sockets") == [str(PROTOCOL_VERSION)]  # one, from the head
    assert page.evaluate("window.solitaireEarlySocket") is None  # taken over
    assert page.evaluate("window.solitaire.net.ws.readyState") == 1
    # It plays: a deal over that socket.
    code, _ = hh_winning_deal(seed=23)
    page.evaluate("code => window.solitaire.start({ code })", code)
    expect(page.locator("#info-code")).to_have_text(code)
    assert page.evaluate("window.__sockets.length") == 1


def test_an_unknown_token_makes_a_new_guest_on_the_early_socket(page: Page, site: str) -> None:
    page.goto(site)
    expect(page.locator("#conn")).to_have_text("Online")
    old: str = page.evaluate("window.solitaire.player.id")
    stale = {"id": "x", "name": "x", "token": "unknown-token"}
    page.evaluate("p => localStorage.setItem('solitaire.player', JSON.stringify(p))", stale)
    page.add_init_script(script=NOTE_SOCKETS)
    page.reload()
    expect(page.locator("#conn")).to_have_text("Online")
    assert page.evaluate("window.__sockets")[0] == str(PROTOCOL_VERSION)  # the head tried first
    player = page.evaluate("JSON.parse(localStorage.getItem('solitaire.player'))")
    assert player["token"] != "unknown-token" and player["id"] not in ("x", old)
