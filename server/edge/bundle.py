"""The first screen's modules as one file, built when the server starts.

A page that loads two dozen modules pays for each: a request the browser's preload scanner
issues, a fetch the service worker answers, a module record to instantiate. Joined into one
file (``js/first.js``) the first screen costs one of each. The modules stay as they are in
the repository; this joins them the way the browser would have run them, so the client needs
no build tool and no Node.js.

The join relies on rules the client's modules keep, each checked here (a module that breaks
one fails the build, named in the error):

- imports are named, from a neighbour: ``import { a, b as c } from "./x.js";``;
- exports are declarations: ``export function``, ``export async function``, ``export class``,
  ``export const``; never ``export let`` (a binding that changes would be copied stale);
- no name is exported by two joined modules;
- no top-level ``await`` (a scope is a plain function; the browser would refuse the joined
  file, which every browser test loads).

Each joined module becomes one function scope, in the order the browser evaluates modules
(a module's imports first, depth first), so their top-level names cannot clash and a module's
globals stay the page's. A module takes what it imports from another joined module out of
that one's scope (``const { a } = $first3;``), which has run by then. The early connection's
modules (``js/connect.js`` and what it imports) stay separate files: the page runs them first,
on their own, and the joined file imports them as any module would. The modules loaded later
(``import()``) are not joined; where they imported a joined module they import ``first.js``,
which exports every joined module's exports, so the page keeps one instance of each module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FIRST = "js/first.js"
SCOPE = "$first"  # the prefix of the joined file's own names; no module may use it
IMPORT = re.compile(r"""^import\s*\{([^}]*)\}\s*from\s*["'](\./[\w.-]+\.js)["'];?[ \t]*\n?""", re.M)
ANY_IMPORT = re.compile(r"^import\b", re.M)
EXPORT = re.compile(r"^export\s+(?:async\s+function\*?|function\*?|class|const)\s+([A-Za-z_$][\w$]*)", re.M)
ANY_EXPORT = re.compile(r"^export\b", re.M)
EXPORT_WORD = re.compile(r"^export\s+")
IDENT = re.compile(r"[A-Za-z_$][\w$]*")
DYNAMIC = re.compile(r"""\bimport\s*\(\s*["'](\./[\w.-]+\.js)["']""")


class BuildError(ValueError):
    """A client module breaks one of the rules the join relies on."""


@dataclass(frozen=True)
class Joined:
    """The client's files after the join: ``files`` as served, ``members`` the joined modules
    (no longer served), ``entry`` the page's entry module."""

    files: dict[str, bytes]
    members: tuple[str, ...]
    entry: str


@dataclass(frozen=True)
class Import:
    """One import statement: the names it binds (``(exported, local)`` pairs) and its module."""

    names: tuple[tuple[str, str], ...]
    module: str


def join_first_screen(files: dict[str, bytes], entry: str, early: str) -> Joined:
    """``files`` with ``entry``'s static graph, less ``early``'s, joined into :data:`FIRST`."""
    texts = {name: body.decode("utf-8") for name, body in files.items() if name.endswith(".js")}
    separate = set(_evaluation_order(texts, early, set()))
    members = _evaluation_order(texts, entry, separate)
    joined = _joined(texts, members, separate)
    out = {name: body for name, body in files.items() if name not in members}
    for name in out:
        if name in texts and name not in separate:
            out[name] = _importing_first(name, texts[name], set(members)).encode("utf-8")
    out[FIRST] = joined.encode("utf-8")
    return Joined(dict(sorted(out.items())), tuple(members), FIRST)


def imports_of(name: str, text: str) -> list[Import]:
    """The module's import statements, every one of them named (or :class:`BuildError`)."""
    found = [Import(_names(name, names), _neighbour(name, spec)) for names, spec in IMPORT.findall(text)]
    if len(ANY_IMPORT.findall(text)) != len(found):
        raise BuildError(f'{name}: every import must be `import {{ … }} from "./x.js";`')
    return found


def _evaluation_order(texts: dict[str, str], entry: str, skip: set[str]) -> list[str]:
    """``entry``'s static graph less ``skip``, each module after what it imports (as the
    browser evaluates them: depth first, in the order of the imports)."""
    order: list[str] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in order or name in skip:
            return
        if name in visiting:
            raise BuildError(f"import cycle: {' -> '.join([*visiting, name])}")
        if name not in texts:
            raise BuildError(f"no such module: {name}")
        visiting.append(name)
        for found in imports_of(name, texts[name]):
            visit(found.module)
        visiting.pop()
        order.append(name)

    visit(entry)
    return order


def _joined(texts: dict[str, str], members: list[str], separate: set[str]) -> str:
    """The joined module: the separate modules imported whole, then each member's scope, then
    every member's exports."""
    scope = {name: f"{SCOPE}{i}" for i, name in enumerate(members)}
    scope.update({name: f"{SCOPE}_{_ident(name)}" for name in sorted(separate)})
    exported: dict[str, str] = {}
    exports: dict[str, list[str]] = {}  # each member's, in the order they appear
    used_separate: set[str] = set()
    parts: list[str] = []
    for name in members:
        text = texts[name]
        if SCOPE in text:
            raise BuildError(f"{name}: the name {SCOPE} is the joined file's own")
        names = exports[name] = _exports(name, text)
        for export in names:
            if export in exported:
                raise BuildError(f"{export} is exported by both {exported[export]} and {name}")
            exported[export] = name
        takes = []
        for found in imports_of(name, text):
            used_separate.update({found.module} & separate)
            pairs = ", ".join(local if local == s else f"{s}: {local}" for s, local in found.names)
            takes.append(f"const {{ {pairs} }} = {scope[found.module]};\n")
        body = EXPORT.sub(lambda m: EXPORT_WORD.sub("", m.group(0)), IMPORT.sub("", text))
        parts.append(
            f"// {name}\nconst {scope[name]} = (() => {{\n{''.join(takes)}{body}"
            f"\nreturn {{ {', '.join(names)} }};\n}})();\n"
        )
    heads = [
        f'import * as {scope[name]} from "./{_relative(FIRST, name)}";\n' for name in sorted(used_separate)
    ]
    tails = [
        f"export const {{ {', '.join(exports[name])} }} = {scope[name]};\n"
        for name in members
        if exports[name]
    ]
    head = "// The first screen's modules, joined (server/edge/bundle.py).\n"
    return "".join([head, *heads, *parts, *tails])


def _exports(name: str, text: str) -> list[str]:
    """The names the module exports, all of them declarations (or :class:`BuildError`)."""
    names = EXPORT.findall(text)
    if len(ANY_EXPORT.findall(text)) != len(names):
        raise BuildError(f"{name}: every export must be `export function|class|const NAME`")
    return names


def _importing_first(name: str, text: str, members: set[str]) -> str:
    """A module loaded later, importing :data:`FIRST` where it imported a joined module."""
    for spec in DYNAMIC.findall(text):
        if _neighbour(name, spec) in members:
            raise BuildError(f"{name}: import() of {spec}, a module of the first screen")

    def retarget(match: re.Match[str]) -> str:
        target = _neighbour(name, match.group(2))
        if target not in members:
            return match.group(0)
        return match.group(0).replace(match.group(2), "./" + _relative(name, FIRST))

    return IMPORT.sub(retarget, text)


def _names(module: str, names: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for part in (p.strip() for p in names.split(",")):
        if not part:
            continue
        source, _, local = (s.strip() for s in part.partition(" as "))
        if not IDENT.fullmatch(source) or not IDENT.fullmatch(local or source):
            raise BuildError(f"{module}: cannot read the import of {part!r}")
        pairs.append((source, local or source))
    return tuple(pairs)


def _neighbour(name: str, spec: str) -> str:
    folder = name.rsplit("/", 1)[0] if "/" in name else ""
    path = spec.removeprefix("./")
    return f"{folder}/{path}" if folder else path


def _relative(origin: str, target: str) -> str:
    """``target`` as a module in ``origin``'s folder names it (both in one folder here)."""
    if origin.rsplit("/", 1)[0] != target.rsplit("/", 1)[0]:
        raise BuildError(f"{target} is not beside {origin}")
    return target.rsplit("/", 1)[-1]


def _ident(name: str) -> str:
    return re.sub(r"\W", "_", name.rsplit("/", 1)[-1].removesuffix(".js"))
