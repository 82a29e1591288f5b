"""The server's stored secrets: generated once, then read by every instance on the database."""

from __future__ import annotations

from sqlalchemy import select

from server.storage.db import Tx
from server.storage.dialect import upsert
from server.storage.models import ServerSecret

T = ServerSecret.__table__


async def stored_or_new(tx: Tx, name: str, fresh: str, now_ms: int) -> tuple[str, int]:
    """(value, created_ms) of a secret, storing ``fresh`` first if there is none yet.

    INSERT … ON CONFLICT DO NOTHING, then a read: instances starting at once all
    read back the first writer's value.
    """
    values = {"name": name, "value": fresh, "created_ms": now_ms}
    await tx.execute(upsert(tx, T).values(**values).on_conflict_do_nothing())
    row = (await tx.execute(select(T.c.value, T.c.created_ms).where(T.c.name == name))).one()
    return str(row.value), int(row.created_ms)
