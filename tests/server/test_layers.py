"""The server's layers, checked from its imports: no cycles, every import points down, and no
feature imports another feature.

Every import counts, including those under ``if TYPE_CHECKING:`` and inside
functions, so a layer cannot reach up by hiding an import. The checks are
functions of an import graph, so the last tests show them catching violations
seeded in a small graph of their own.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from tests import sources

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "server"
WIRE = ROOT / "wire"

# Lower numbers lie lower; a module may import only from its own rank or below.
GROUND, MODELS, STORAGE, SOLVER, CORE, CLUSTER, SERVICES, EDGE, COMPOSITION = range(1, 10)
EDGE_FEATURES = {"play", "players"}  # features that are adapters only
BELOW_SERVER = 0  # wire/: the protocol's vocabulary, shared with the clients; it imports no server module


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def rank(module: str) -> int:
    """The layer of a server module, from where it lives and what it is."""
    if module.split(".")[0] == "wire":
        return BELOW_SERVER
    parts = module.split(".")[1:]
    if not parts or parts[0] in ("vocabulary", "errors", "clock", "config", "metrics", "logs"):
        return GROUND
    top = parts[0]
    if top in ("app", "cli"):
        return COMPOSITION
    if top == "edge":
        return EDGE
    if top == "core":
        return CORE
    if top == "cluster":
        return CLUSTER  # several instances through Redis: core's ports, composed by the app only
    if top == "storage":
        return STORAGE
    if top == "solver":
        return SOLVER  # the worker process and cached answers: infrastructure under the features
    if top == "rules":
        return MODELS  # pure rules shared by several features, with the features' own models
    if top == "features":
        if len(parts) == 1:
            return GROUND  # the package docstring only
        if parts[1] in EDGE_FEATURES or parts[-1] == "api":
            return EDGE
        if parts[-1] == "model":
            return MODELS
        return SERVICES
    raise AssertionError(f"{module} has no layer: give it one in this test")


def modules() -> dict[str, Path]:
    return {module_name(p): p for root in (SERVER, WIRE) for p in root.rglob("*.py")}


def imports_of(path: Path, known: set[str]) -> Iterator[str]:
    """Every server or wire module a file imports (``from server.x import y`` may name module y)."""
    return imports_in(sources.tree(path), known)


def imports_in(module: ast.Module, known: set[str]) -> Iterator[str]:
    """Every known server or wire module a parsed module imports, at any depth."""
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            if name.startswith(("server", "wire")) and name in known:
                yield name


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imports_of(path, set(known))) - {name} for name, path in known.items()}


def feature_of(module: str) -> str | None:
    """The feature a module belongs to (``server.features.dailies.model``: dailies), or None."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["server", "features"] else None


def upward_imports(edges: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import of a module from a higher layer than its own."""
    return sorted(
        f"{name} ({rank(name)}) imports {target} ({rank(target)})"
        for name, targets in edges.items()
        for target in targets
        if rank(target) > rank(name) and not name.endswith("__init__")
    )


def cross_feature_imports(edges: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import of one feature's module by another feature: they meet through protocols
    the composition root wires, never directly."""
    return sorted(
        f"{name} imports {target}"
        for name, targets in edges.items()
        for target in targets
        if (mine := feature_of(name)) is not None and feature_of(target) not in (None, mine)
    )


def test_every_server_module_has_a_layer() -> None:
    for name in modules():
        rank(name)


def test_imports_point_down() -> None:
    upward = upward_imports(graph())
    assert not upward, "\n".join(upward)


def test_no_feature_imports_another_feature() -> None:
    crossing = cross_feature_imports(graph())
    assert not crossing, "\n".join(crossing)


def test_no_import_cycles() -> None:
    edges = graph()
    # Package __init__ modules are namespaces here: importing server.x.y names server.x too.
    edges = {n: {t for t in ts if edges.get(t) or t in edges} for n, ts in edges.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target] if target in path else [node, target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert not cycles, cycles


def test_the_engine_knows_nothing_of_the_server() -> None:
    for path in (ROOT / "engine").rglob("*.py"):
        for node in ast.walk(sources.tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("server", "client")), (path, node.module)
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith(("server", "client")) for a in node.names), path


def top_level_imports(package: str) -> Iterator[tuple[Path, str]]:
    """Every (file, top-level package) a package's files import, absolute imports only."""
    for path in sources.files(package):
        for node in ast.walk(sources.tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                yield path, node.module.split(".")[0]
            elif isinstance(node, ast.Import):
                yield from ((path, alias.name.split(".")[0]) for alias in node.names)


def test_wire_imports_none_of_the_project() -> None:
    """The shared vocabulary stands alone: a client installs it without server or engine."""
    above = ("server", "client", "engine")
    found = [f"{path}: {top}" for path, top in top_level_imports("wire") if top in above]
    assert not found, found
    assert sources.files("wire"), "no wire sources found"


def test_the_client_never_imports_the_server() -> None:
    """client/ speaks the protocol through wire; it must install and run without server/."""
    found = [f"{path}: {top}" for path, top in top_level_imports("client") if top == "server"]
    assert not found, found
    assert any(top == "wire" for _, top in top_level_imports("client")), "the client should use wire"


def imported_roots(node: ast.AST) -> set[str]:
    """The top-level packages an import statement names (none for any other node)."""
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return {node.module.split(".")[0]}
    if isinstance(node, ast.Import):
        return {alias.name.split(".")[0] for alias in node.names}
    return set()


def test_only_the_composition_imports_the_cluster_layer() -> None:
    """Features, edge and core know the ports (server.core.cluster), never their Redis side."""
    found = [
        f"{module} -> {target}"
        for module, targets in graph().items()
        for target in targets
        if target.startswith("server.cluster") and rank(module) not in (CLUSTER, COMPOSITION)
    ]
    assert not found, found
    redis = [
        str(path.relative_to(ROOT))
        for path in (SERVER / "core").rglob("*.py")
        for node in ast.walk(sources.tree(path))
        if (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("redis", "hiredis"))
        or (
            isinstance(node, ast.Import)
            and any(a.name.split(".")[0] in ("redis", "hiredis") for a in node.names)
        )
    ]
    assert not redis, f"core imports Redis: {redis}"


def test_no_feature_or_core_module_reads_the_redis_settings() -> None:
    """Whether several instances run is the composition's to decide: it hands features what
    follows from it (a flag, a port), so no feature or core module asks for Redis itself."""
    found = [
        str(path.relative_to(ROOT))
        for folder in ("features", "core")
        for path in (SERVER / folder).rglob("*.py")
        for node in ast.walk(sources.tree(path))
        if isinstance(node, ast.Attribute) and node.attr in ("redis_url", "redis_prefix")
    ]
    assert not found, found


def test_features_do_not_register_by_import() -> None:
    """No module-level mutation of another module's registry (``X.append(...)`` at import)."""
    for path in SERVER.rglob("*.py"):
        for node in sources.tree(path).body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                func = node.value.func
                assert not (
                    isinstance(func, ast.Attribute) and func.attr in ("append", "extend", "update")
                ), f"{path}: registration at import"


# A small tree of its own: a feature reaching into another, storage reaching up into core.
SEEDED = {
    "server.features.races.api": "from server.features.play import code_from_fields\n",
    "server.features.play": "from server.core import games\n",
    "server.storage.queries": "def later():\n    from server.core.games import LiveGame\n",
    "server.core.games": "from server.storage import queries\n",
    "server.features.solutions.service": "from server.features.solutions.model import LOST_BUDGET\n",
    "server.features.solutions.model": "import server.rules.days\n",
    "server.rules.days": "",
}
SEEDED_TREES = {name: ast.parse(text) for name, text in SEEDED.items()}  # parsed at collection


def seeded_graph() -> dict[str, set[str]]:
    known = set(SEEDED)
    return {name: set(imports_in(tree, known)) - {name} for name, tree in SEEDED_TREES.items()}


def test_the_checks_find_seeded_violations() -> None:
    edges = seeded_graph()
    assert edges["server.storage.queries"] == {"server.core.games"}  # inside a function counts
    assert cross_feature_imports(edges) == ["server.features.races.api imports server.features.play"]
    assert upward_imports(edges) == [f"server.storage.queries ({STORAGE}) imports server.core.games ({CORE})"]


def test_the_checks_pass_a_clean_graph() -> None:
    """A feature's own modules and the layers below it are not violations."""
    edges = seeded_graph()
    clean = {
        n: ts for n, ts in edges.items() if n not in ("server.features.races.api", "server.storage.queries")
    }
    assert clean["server.features.solutions.service"] == {"server.features.solutions.model"}
    assert cross_feature_imports(clean) == [] and upward_imports(clean) == []
