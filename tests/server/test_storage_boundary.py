"""Features hold no SQL: every statement is built in ``server/storage/``, every transaction
opened by ``Database.transaction()`` or ``Database.read()``.

A features module may not import SQLAlchemy or the storage models, name a model's class or
its table, spell a statement in a string, or reach the engine under the unit of work.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from server.storage.models import Base

ROOT = Path(__file__).resolve().parents[2]
FEATURES = ROOT / "server" / "features"

MODEL_CLASSES = frozenset(mapper.class_.__name__ for mapper in Base.registry.mappers)
TABLES = frozenset(Base.metadata.tables)
STATEMENT = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE)\b.*\b(FROM|INTO|SET)\b", re.DOTALL)


def _imports(tree: ast.AST) -> list[tuple[str, list[str], int]]:
    """(module, names imported from it, line) for every import of a file."""
    found: list[tuple[str, list[str], int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            found.append((node.module, [alias.name for alias in node.names], node.lineno))
    return found


def violations(path: Path) -> list[str]:
    """What in one module crosses the storage boundary, each as ``file:line: why``."""
    tree = ast.parse(path.read_text(), str(path))
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    found: list[str] = []
    for module, names, line in _imports(tree):
        if module == "sqlalchemy" or module.startswith("sqlalchemy."):
            found.append(f"{where}:{line}: imports {module}")
        elif module == "server.storage.models" or (module == "server.storage" and "models" in names):
            found.append(f"{where}:{line}: imports the storage models")
        elif module.startswith("server.storage") and (named := MODEL_CLASSES.intersection(names)):
            found.append(f"{where}:{line}: imports the model {', '.join(sorted(named))}")
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and node.attr in MODEL_CLASSES | {"__table__"}:
            found.append(f"{where}:{line}: names the table {node.attr}")
        elif isinstance(node, ast.Attribute) and node.attr == "engine":
            found.append(f"{where}:{line}: reaches the engine under the unit of work")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_sql(node.value):
            found.append(f"{where}:{line}: spells a statement")
    return found


def _is_sql(value: str) -> bool:
    match = STATEMENT.search(value)
    return match is not None and any(re.search(rf"\b{table}\b", value) for table in TABLES)


def test_features_hold_no_sql() -> None:
    paths = sorted(FEATURES.rglob("*.py"))
    assert len(paths) > 20  # the features are where this test looks
    assert [v for path in paths for v in violations(path)] == []


def test_the_check_finds_each_kind_of_violation(tmp_path: Path) -> None:
    seeded = {
        "sqlalchemy": "from sqlalchemy import select\n",
        "engine_types": "from sqlalchemy.ext.asyncio import AsyncEngine\n",
        "plain_import": "import sqlalchemy\n",
        "models": "from server.storage.models import GameRow\n",
        "models_module": "from server.storage import models\n",
        "model_reexported": "from server.storage.accounts import Account\n",
        "table": "from server.storage import leaderboards\nT = leaderboards.LeaderboardEntry.__table__\n",
        "engine": "async def f(db):\n    async with db.engine.begin() as conn:\n        pass\n",
        "text": 'QUERY = "SELECT id FROM games WHERE player_id = :p"\n',
    }
    for name, source in seeded.items():
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        assert violations(path), f"{name}: not found"
    clean = tmp_path / "clean.py"
    clean.write_text(
        "from server.storage import dailies as store\n"
        "from server.storage.db import Database\n\n"
        "async def day(db: Database, code: str) -> object:\n"
        "    async with db.read() as tx:\n"
        "        return await store.day_of_code(tx, code)\n"
        'NOTE = "select a card from the games you play"\n'
    )
    assert violations(clean) == []
