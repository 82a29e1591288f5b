"""The project's own source files, parsed once when the tests are collected.

Python 3.11 keeps the AST builder's recursion guard in state shared by every
thread, and its traceback formatting parses source lines too: an
``ast.parse`` in a test while a server thread formats a traceback can fail
with ``SystemError: AST constructor recursion depth mismatch``. Parsing
everything here, at import (collection, before any server runs), keeps the
tests that read the code away from that race.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_TREES: dict[Path, ast.Module] = {
    path: ast.parse(path.read_text(encoding="utf-8"), str(path))
    for package in ("engine", "server", "client", "wire")
    for path in sorted((ROOT / package).rglob("*.py"))
}


def tree(path: Path) -> ast.Module:
    """The parsed module at ``path`` (one of the project's packages)."""
    return _TREES[path.resolve()]


def files(package: str) -> list[Path]:
    """Every source file of a package, in a stable order."""
    root = ROOT / package
    return [path for path in _TREES if path.is_relative_to(root)]
