"""The one place that picks the SQL dialect for statements the two backends spell differently."""

from __future__ import annotations

from typing import Any

from sqlalchemy import FromClause
from sqlalchemy.dialects import postgresql, sqlite

from server.storage.db import Tx


def upsert(tx: Tx, table: FromClause) -> Any:
    """``INSERT`` with ``ON CONFLICT`` support for the connection's backend (SQLite or PostgreSQL)."""
    dialect = postgresql if tx.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)
