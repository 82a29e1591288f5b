"""Game ownership across instances: fencing tokens in PostgreSQL, checked inside each commit.

With several instances a live game is owned by the one that took it last.
Taking it (:func:`take`) adds one to the game's token in ``game_leases``;
the row lock that UPDATE needs waits for any commit the previous owner still
has running for that game, so the new owner reads the game only after it.
Every commit for a game (:class:`FencedWriter`) locks the same row and
writes only if the token is still the one its instance took: an instance
that lost a game (paused, partitioned, slow) can never commit for it again.
PostgreSQL is the only source of truth: Redis plays no part in this.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.db import Database
from server.storage.models import GameLease
from server.storage.writer import GroupWriter, Write, batch_rows, settle


class StorageFenced(RuntimeError):
    """Another instance has taken the game: this write was not stored and never will be."""


async def take(db: Database, game_id: str, holder: str) -> int:
    """Take a game for ``holder``: its new fencing token, committed before this returns."""
    statement = (
        pg_insert(GameLease)
        .values(game_id=game_id, token=1, holder=holder)
        .on_conflict_do_update(
            index_elements=[GameLease.game_id], set_={"token": GameLease.token + 1, "holder": holder}
        )
        .returning(GameLease.token)
    )
    async with db.transaction() as tx:
        return int((await tx.execute(statement)).scalar_one())


async def tokens(conn: AsyncConnection, game_ids: Sequence[str]) -> dict[str, int]:
    """The current tokens of these games, their rows locked until the transaction ends.

    Locked in id order, so two commits on overlapping games cannot deadlock.
    """
    rows = await conn.execute(_TOKENS, {"ids": sorted(set(game_ids))})
    return {game_id: token for game_id, token in rows}


# One array parameter rather than an IN list: the same statement whatever the batch's size.
_TOKENS = text("SELECT game_id, token FROM game_leases WHERE game_id = ANY(:ids) ORDER BY game_id FOR UPDATE")


def fenced_id(write: Write) -> str | None:
    """The game a fenced write is for (None: not fenced)."""
    if write.fence is None:
        return None
    if write.game is not None:
        return str(write.game["id"])
    return None if write.action is None else str(write.action["game_id"])


class FencedWriter(GroupWriter):
    """The group writer of an instance among several: each write checks its game's token.

    The check and the writes are one transaction: writes whose token is stale
    are left out of it and fail with :class:`StorageFenced`; the rest commit
    together as usual.
    """

    async def _write_batch(self, batch: list[Write]) -> None:
        fenced = [(w, game_id) for w in batch if (game_id := fenced_id(w)) is not None]
        stale: list[Write] = []
        try:
            if (direct := self._direct_for(batch)) is not None:
                fences = {game_id: w.fence for w, game_id in fenced if w.fence is not None}
                held = await direct.write(*batch_rows(batch), fences)
                stale = [w for w, game_id in fenced if game_id not in held]
                return
            async with self._engine.begin() as conn:
                current = await tokens(conn, [game_id for _, game_id in fenced]) if fenced else {}
                stale = [w for w, game_id in fenced if current.get(game_id) != w.fence]
                keep = [w for w in batch if not any(w is s for s in stale)] if stale else batch
                if keep:
                    await self._write(conn, keep)
        finally:  # left out of the transaction: never stored, whatever became of the COMMIT
            if stale:
                settle(stale, StorageFenced("another instance has taken the game"))

    async def _stored(self, batch: list[Write]) -> bool:
        """As the group writer's, for the writes still waiting (fenced ones have their answer)."""
        waiting = [w for w in batch if w.done is None or not w.done.done()]
        return await super()._stored(waiting) if waiting else True
