"""Files served as they are: the browser client at ``/``, the published schemas under ``/api/schema``.

The client's own files (the page's scripts, styles and catalogs) are read once at start into a
:class:`ClientBundle`: the modules of the first screen are joined into one
(``js/first.js``, :mod:`server.edge.bundle`), each file is gzipped then, the bundle's content
names a build (``a/<build>/…`` URLs, cached for a year as immutable), the page links the joined
module and the early connection's modules as ``modulepreload`` (fetched side by side), and
``index.html`` and ``sw.js`` are written for that build and revalidated on every visit
(``no-cache``). The page's head carries one inline script (``inline/early.js``, allowed by its
hash in the page's CSP): it opens the stored player's connection before any module has loaded.
What the first screen imports dynamically (``import()``: the competition and home pages, the
solution's dialog) is not preloaded: the page names those modules in a JSON map
(``<script type="application/json" id="later-modules">``, each dynamic import's modules that
the first screen does not load) for the client to preload when it loads one. The service
worker keeps them all. A module's relative imports, static or dynamic, resolve under its own
build, so the files are served as written, but for the later modules' imports of a joined one,
which name the joined file instead.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from server.edge.bundle import join_first_screen
from server.edge.envelope import error_response
from server.edge.openapi import SCHEMA_DIR
from server.errors import ProtocolError
from wire import PROTOCOL_VERSION, ErrorCode

PUBLISHED_SCHEMAS = ("asyncapi.json", "openapi.json")
BUNDLED = ("app.css", "js/*.js", "i18n/*.json")  # the files under a build's URL
ENTRY = "js/main.js"
EARLY = "js/connect.js"  # run first, async: the connection opens while the rest is evaluated
EARLY_INLINE = "inline/early.js"  # written into the page's head: the socket opens before any module
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
# A module's imports of its neighbours, static: `from "./x.js"`, `import "./x.js"`,
STATIC_IMPORT = re.compile(r"""(?:\bfrom|\bimport)\s*["'](\.\.?/[^"']+\.js)["']""")
# and dynamic: `import("./x.js")`.
DYNAMIC_IMPORT = re.compile(r"""\bimport\s*\(\s*["'](\.\.?/[^"']+\.js)["']""")
TEXT_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".css": "text/css; charset=utf-8",
}
SW_CACHE = re.compile(r'^const CACHE = "[^"]*";', re.M)
SW_BUILT = re.compile(r"^const BUILT = \[\];.*$", re.M)


async def schema_file(request: Request) -> Response:
    """One of the published schema documents, byte for byte."""
    name = request.path_params["name"]
    path = SCHEMA_DIR / name
    if name not in PUBLISHED_SCHEMAS or not path.is_file():
        return error_response(ProtocolError(ErrorCode.NOT_FOUND, "no such schema"))
    return Response(path.read_bytes(), media_type="application/json")


@dataclass(frozen=True, slots=True)
class Asset:
    """One file as served: its bytes, their gzip, its type and its ETag."""

    body: bytes
    gzipped: bytes
    media_type: str
    etag: str

    @classmethod
    def of(cls, body: bytes, media_type: str) -> Asset:
        digest = hashlib.sha256(body).hexdigest()[:20]
        return cls(body, gzip.compress(body, 9, mtime=0), media_type, f'"{digest}"')


def csp_hash(script: str) -> str:
    """The CSP source that lets this inline script run (``'sha256-…'``)."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    return f"'sha256-{digest}'"


def media_type(name: str) -> str:
    suffix = Path(name).suffix
    return TEXT_TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"


def module_graph(
    files: dict[str, bytes], entry: str = ENTRY, *, dynamic: bool = True, loaded: frozenset[str] = frozenset()
) -> list[str]:
    """Every module reachable from ``entry`` by its imports (static and, unless told not to,
    dynamic ones), entry first; not through the ``loaded`` ones, whose imports are loaded too."""
    patterns = (STATIC_IMPORT, DYNAMIC_IMPORT) if dynamic else (STATIC_IMPORT,)
    seen: list[str] = []
    todo = [entry]
    while todo:
        name = todo.pop(0)
        if name in seen or name not in files or name in loaded:
            continue
        seen.append(name)
        text = files[name].decode("utf-8")
        todo += [_neighbour(name, spec) for pattern in patterns for spec in pattern.findall(text)]
    return seen


def later_modules(files: dict[str, bytes], eager: list[str]) -> dict[str, list[str]]:
    """For each module the eager ones import dynamically: its own graph less the eager
    modules, itself first (what loading it fetches that the first screen did not)."""
    later: dict[str, list[str]] = {}
    for name in eager:
        for spec in DYNAMIC_IMPORT.findall(files[name].decode("utf-8")):
            target = _neighbour(name, spec)
            if target in files and target not in eager and target not in later:
                later[target] = module_graph(files, target, loaded=frozenset(eager))
    return later


def _neighbour(name: str, spec: str) -> str:
    return _normal(f"{Path(name).parent.as_posix()}/{spec}")


def _normal(path: str) -> str:
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


class ClientBundle:
    """The client's files read and compressed once, under the build their content names."""

    def __init__(self, directory: Path, generated: dict[str, bytes]) -> None:
        files = {
            p.relative_to(directory).as_posix(): p.read_bytes() for g in BUNDLED for p in directory.glob(g)
        }
        files.update(generated)
        joined = join_first_screen(files, ENTRY, EARLY)
        self.files, self.entry, self.members = joined.files, joined.entry, joined.members
        whole = hashlib.sha256()
        for name, body in self.files.items():
            whole.update(name.encode() + b"\0" + hashlib.sha256(body).digest())
        self.build = whole.hexdigest()[:12]
        self.prefix = f"a/{self.build}/"
        self.modules = module_graph(self.files, self.entry, dynamic=False)  # the first screen's
        self.later = later_modules(self.files, self.modules)  # the pages loaded when needed
        self.assets = {name: Asset.of(body, media_type(name)) for name, body in self.files.items()}
        self.early_script = (directory / EARLY_INLINE).read_text("utf-8")
        self.inline_scripts = (csp_hash(self.early_script),)  # the page's one inline script, for its CSP
        self.index = Asset.of(
            self.page((directory / "index.html").read_text("utf-8")), "text/html; charset=utf-8"
        )
        self.worker = Asset.of(
            self.service_worker((directory / "sw.js").read_text("utf-8")), TEXT_TYPES[".js"]
        )

    def url(self, name: str) -> str:
        return self.prefix + name

    def page(self, html: str) -> bytes:
        """index.html for this build: its stylesheet and entry module under the build's URL, a
        modulepreload for every module the entry imports statically, and the map of the
        modules each of its dynamic imports loads besides (their build URLs)."""
        preloads = "".join(f'  <link rel="modulepreload" href="{self.url(m)}">\n' for m in self.modules)
        later = {self.url(root): [self.url(m) for m in graph] for root, graph in self.later.items()}
        # "<" is written escaped in JSON so that no text of it ends the script element.
        data = json.dumps(later, separators=(",", ":")).replace("<", "\\u003c")
        preloads += f'  <script type="application/json" id="later-modules">{data}</script>\n'
        early = f'<script data-inline="{EARLY_INLINE}"></script>'
        if early not in html:
            raise ValueError("index.html has no place for the early socket's script")
        html = html.replace(early, f'<script data-protocol="{PROTOCOL_VERSION}">{self.early_script}</script>')
        html = html.replace(
            '<link rel="stylesheet" href="app.css">', f'<link rel="stylesheet" href="{self.url("app.css")}">'
        )
        early = f'<script type="module" async src="{EARLY}"></script>'
        if early not in html:
            raise ValueError("index.html has no early connection module to link")
        html = html.replace(early, f'<script type="module" async src="{self.url(EARLY)}"></script>')
        entry = f'<script type="module" src="{ENTRY}"></script>'
        if entry not in html:
            raise ValueError("index.html has no entry module to link")
        html = html.replace(
            entry, preloads.lstrip() + f'  <script type="module" src="{self.url(self.entry)}"></script>'
        )
        return html.encode("utf-8")

    def service_worker(self, text: str) -> bytes:
        """sw.js for this build: its cache named after the build, the build's URLs among its files."""
        if not (SW_CACHE.search(text) and SW_BUILT.search(text)):
            raise ValueError("sw.js has no CACHE or BUILT line to fill")
        text = SW_CACHE.sub(f'const CACHE = "solitaire-client-{self.build}";', text, count=1)
        built = "[\n" + "".join(f"  {json.dumps(self.url(name))},\n" for name in self.files) + "]"
        return SW_BUILT.sub(lambda _: f"const BUILT = {built};", text, count=1).encode("utf-8")

    def lookup(self, path: str) -> tuple[Asset, str] | None:
        """The asset at a served path and its Cache-Control, or None when it is not the bundle's."""
        if path in (".", "", "index.html"):
            return self.index, REVALIDATE
        if path == "sw.js":
            return self.worker, REVALIDATE
        if path.startswith(self.prefix) and path[len(self.prefix) :] in self.assets:
            return self.assets[path[len(self.prefix) :]], IMMUTABLE
        return None


def answer(asset: Asset, cache: str, headers: Headers) -> Response:
    """The asset, gzipped when the client takes it, or 304 when its copy is current."""
    common = {"ETag": asset.etag, "Cache-Control": cache, "Vary": "Accept-Encoding"}
    if headers.get("if-none-match") == asset.etag:
        return Response(status_code=304, headers=common)
    if "gzip" in headers.get("accept-encoding", ""):
        return Response(
            asset.gzipped, media_type=asset.media_type, headers={**common, "Content-Encoding": "gzip"}
        )
    return Response(asset.body, media_type=asset.media_type, headers=common)


class ClientFiles(StaticFiles):
    """The browser client's files, mounted at ``/``; never an answer for an API path.

    Without this, an unknown ``/api/…`` path (or a POST to one) would reach the
    static files and get their plain-text 404 or 405. The bundle's files (see the module's
    docstring) are answered from memory; the rest (icons, the manifest) from the folder.
    """

    def __init__(self, *, directory: Path, generated: dict[str, bytes], html: bool = True) -> None:
        super().__init__(directory=directory, html=html)
        self.bundle = ClientBundle(directory, generated)

    async def get_response(self, path: str, scope: Scope) -> Response:
        if path == "api" or path.startswith("api/"):
            raise HTTPException(status_code=404, detail=f"no such route: /{path}")
        found = self.bundle.lookup(path.replace("\\", "/"))
        if found is not None and scope["method"] in ("GET", "HEAD"):
            return answer(*found, Headers(scope=scope))
        if path.startswith("a/"):  # another build's file: gone
            raise HTTPException(status_code=404, detail=f"no such file: /{path}")
        return await super().get_response(path, scope)
