"""How the client's files are served (server/edge/static.py): gzipped when the browser takes it,
under build-named URLs cached as immutable while the page and the service worker are revalidated,
and a modulepreload in the page for every module the client imports, so that they load side by
side. The module graph is found here from the files' own imports, not from the server's list."""

from __future__ import annotations

import gzip
import re
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from server.edge import facts
from server.edge.static import ClientBundle

pytestmark = pytest.mark.browser

STATIC = Path(__file__).resolve().parents[2] / "server" / "static"
IMPORTS = re.compile(r"""(?:from|import)\s*\(?\s*["']\./([\w-]+\.js)["']""")


def get(url: str, gzipped: bool = True, etag: str | None = None) -> tuple[int, dict[str, str], bytes]:
    headers = {"Accept-Encoding": "gzip, br"} if gzipped else {}
    if etag:
        headers["If-None-Match"] = etag
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, b""


def imported_modules() -> set[str]:
    """Every module reachable from js/main.js by its imports, static or dynamic."""
    found, todo = set(), ["main.js"]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        path = STATIC / "js" / name
        if path.is_file():
            todo += IMPORTS.findall(path.read_text(encoding="utf-8"))
    return {f"js/{name}" for name in found}


def page_links(site: str) -> tuple[str, list[str], str]:
    """The page's build prefix (``a/<build>/``), its modulepreloads and its stylesheet."""
    _, _, body = get(site, gzipped=False)
    html = body.decode()
    preloads = re.findall(r'<link rel="modulepreload" href="([^"]+)">', html)
    (style,) = re.findall(r'<link rel="stylesheet" href="([^"]+)">', html)
    (entry,) = re.findall(r'<script type="module" src="([^"]+)">', html)
    prefix = entry.removesuffix("js/main.js")
    assert re.fullmatch(r"a/[0-9a-f]{12}/", prefix), entry
    return prefix, preloads, style


def test_every_imported_module_is_preloaded(site: str) -> None:
    prefix, preloads, style = page_links(site)
    assert style == f"{prefix}app.css"
    modules = imported_modules()
    assert len(modules) > 25 and "js/facts.js" in modules
    assert sorted(preloads) == sorted(prefix + name for name in modules)


def test_build_files_are_gzipped_and_immutable(site: str) -> None:
    prefix, preloads, _ = page_links(site)
    for url in [*preloads, f"{prefix}app.css", f"{prefix}i18n/hu.json"]:
        status, headers, body = get(f"{site}/{url}")
        assert status == 200, url
        assert headers["content-encoding"] == "gzip", url
        assert headers["vary"] == "Accept-Encoding"
        assert headers["cache-control"] == "public, max-age=31536000, immutable"
        name = url.removeprefix(prefix)
        if name != "js/facts.js":
            assert gzip.decompress(body) == (STATIC / name).read_bytes(), url
            assert len(body) < len((STATIC / name).read_bytes()) or len(body) < 400, url
    # Without gzip in Accept-Encoding: the file as it is.
    status, headers, body = get(f"{site}/{prefix}js/main.js", gzipped=False)
    assert status == 200 and "content-encoding" not in headers
    assert body == (STATIC / "js" / "main.js").read_bytes()
    # Another build's URL is not an answer of this one.
    assert get(f"{site}/a/000000000000/js/main.js")[0] == 404


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
    assert f'"{prefix}js/main.js",' in worker and f'"{prefix}app.css",' in worker


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
    assert after.modules == before.modules


def test_the_browser_fetches_no_module_it_was_not_told_of(page: Page, site: str) -> None:
    _, preloads, _ = page_links(site)
    page.goto(site)
    expect(page.locator("#dlg-new")).to_be_visible()
    fetched: list[str] = page.evaluate(
        "performance.getEntriesByType('resource').map(e => new URL(e.name).pathname.slice(1))"
        ".filter(p => p.endsWith('.js') && p !== 'sw.js')"
    )
    assert fetched and set(fetched) <= set(preloads)
    # Each module came once (a preload and an import share one fetch).
    assert len(fetched) == len(set(fetched))
