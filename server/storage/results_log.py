"""Queries of the results log: appends serialized on the head row, nodes by key, heads by day.

An append first moves the one ``log_head`` row (``UPDATE … RETURNING``): on
PostgreSQL that row lock orders every appending transaction of every instance
until it commits, and on SQLite the statement takes the write lock; so leaf
indices have no gap and no repeat, whatever commits first. The hashes of the
perfect subtrees (``log_nodes``) are written with the leaf that completes them,
and never change: a root or a proof reads the O(log n) nodes it folds by key.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import func, insert, select, tuple_, update

from server.features.results_log.model import NodeKey, TreeHead, extend, leaf_hash, subtrees
from server.storage.db import Tx
from server.storage.dialect import upsert
from server.storage.models import DailyChallenge, LeaderboardEntry, LogHead, LogLeaf, LogNode, LogTreeHead

HEAD = LogHead.__table__
LEAVES = LogLeaf.__table__
NODES = LogNode.__table__
HEADS = LogTreeHead.__table__
DAILY = DailyChallenge.__table__
ENTRIES = LeaderboardEntry.__table__
HEAD_ID = 1
NODE_CHUNK = 500  # keys per IN list


@dataclass(frozen=True, slots=True)
class NewLeaf:
    """A leaf to append: its bytes and what it is looked up by."""

    leaf: bytes
    kind: str
    day: str
    game_id: str | None = None


@dataclass(frozen=True, slots=True)
class StoredLeaf:
    index: int
    day: str
    leaf: str


@dataclass(frozen=True, slots=True)
class SignedHead:
    head: TreeHead
    signature: str


async def append(tx: Tx, leaves: Sequence[NewLeaf], now_ms: int) -> int:
    """Append leaves in order, in the caller's transaction; returns the index of the first.

    Takes the head row first (the one ordering point), then reads the tree's
    right-edge subtrees and writes each new leaf and each subtree it completes.
    """
    if not leaves:
        raise ValueError("nothing to append")
    moved = update(LogHead).where(LogHead.id == HEAD_ID).values(size=LogHead.size + len(leaves))
    size = int((await tx.execute(moved.returning(LogHead.size))).scalar_one())
    start = size - len(leaves)
    frontier = await nodes(tx, subtrees(0, start))
    written = extend(start, [leaf_hash(new.leaf) for new in leaves], frontier)
    await tx.execute(
        insert(LogLeaf),
        [
            {
                "idx": start + offset,
                "kind": new.kind,
                "day": new.day,
                "game_id": new.game_id,
                "leaf": new.leaf.decode(),
                "appended_ms": now_ms,
            }
            for offset, new in enumerate(leaves)
        ],
    )
    await tx.execute(insert(LogNode), [{"level": k[0], "idx": k[1], "hash": h} for k, h in written])
    return start


async def size(tx: Tx, lock: bool = False) -> int:
    """Leaves in the log; ``lock`` takes the head row as an append does (no append meanwhile)."""
    if lock:
        statement = (
            update(LogHead).where(LogHead.id == HEAD_ID).values(size=LogHead.size).returning(LogHead.size)
        )
        return int((await tx.execute(statement)).scalar_one())
    return int((await tx.execute(select(HEAD.c.size).where(HEAD.c.id == HEAD_ID))).scalar_one())


async def nodes(tx: Tx, keys: Iterable[NodeKey]) -> dict[NodeKey, bytes]:
    """The stored hashes of the given perfect subtrees (each must exist)."""
    wanted = list(dict.fromkeys(keys))
    found: dict[NodeKey, bytes] = {}
    for at in range(0, len(wanted), NODE_CHUNK):
        chunk = wanted[at : at + NODE_CHUNK]
        query = select(NODES.c.level, NODES.c.idx, NODES.c.hash).where(
            tuple_(NODES.c.level, NODES.c.idx).in_(chunk)
        )
        for row in (await tx.execute(query)).all():
            found[(int(row.level), int(row.idx))] = bytes(row.hash)
    missing = [key for key in wanted if key not in found]
    if missing:
        raise LookupError(f"the log has no node {missing[0]}")
    return found


async def leaf_of_game(tx: Tx, game_id: str) -> StoredLeaf | None:
    row = (await tx.execute(select(LEAVES).where(LEAVES.c.game_id == game_id))).first()
    return None if row is None else StoredLeaf(int(row.idx), str(row.day), str(row.leaf))


async def leaves(tx: Tx, start: int, end: int) -> list[StoredLeaf]:
    """Leaves ``start`` to ``end`` inclusive, in order."""
    query = select(LEAVES.c.idx, LEAVES.c.day, LEAVES.c.leaf).where(LEAVES.c.idx.between(start, end))
    rows = (await tx.execute(query.order_by(LEAVES.c.idx))).all()
    return [StoredLeaf(int(r.idx), str(r.day), str(r.leaf)) for r in rows]


async def latest_day_between(tx: Tx, start: int, end: int) -> str | None:
    """The latest day of the leaves ``start`` to ``end`` inclusive: the last to open."""
    query = select(func.max(LEAVES.c.day)).where(LEAVES.c.idx.between(start, end))
    found = (await tx.execute(query)).scalar()
    return None if found is None else str(found)


async def first_appended_ms(tx: Tx) -> int | None:
    found = (await tx.execute(select(LEAVES.c.appended_ms).where(LEAVES.c.idx == 0))).scalar()
    return None if found is None else int(found)


async def insert_head(tx: Tx, signed: SignedHead) -> None:
    """Store a day's head unless one is stored already (a day's head never changes)."""
    h = signed.head
    values = {
        "day": h.day,
        "tree_size": h.tree_size,
        "root_hash": h.root_hash,
        "timestamp_ms": h.timestamp_ms,
        "signature": signed.signature,
    }
    await tx.execute(upsert(tx, HEADS).values(**values).on_conflict_do_nothing())


def _signed(row: object) -> SignedHead:
    r = row._mapping  # type: ignore[attr-defined]
    head = TreeHead(str(r["day"]), int(r["tree_size"]), str(r["root_hash"]), int(r["timestamp_ms"]))
    return SignedHead(head, str(r["signature"]))


async def head_of(tx: Tx, day: str) -> SignedHead | None:
    row = (await tx.execute(select(HEADS).where(HEADS.c.day == day))).first()
    return None if row is None else _signed(row)


async def latest_head(tx: Tx) -> SignedHead | None:
    row = (await tx.execute(select(HEADS).order_by(HEADS.c.day.desc()).limit(1))).first()
    return None if row is None else _signed(row)


async def daily_of_code(tx: Tx, code: str) -> tuple[str, str] | None:
    """(day, family) when a code was a daily challenge."""
    row = (await tx.execute(select(DAILY.c.day, DAILY.c.family).where(DAILY.c.code == code))).first()
    return None if row is None else (str(row.day), str(row.family))


async def daily_boards_of_player(tx: Tx, player_id: str) -> list[tuple[str, str]]:
    """(day, family) of every daily board the player has an entry on, oldest first."""
    query = (
        select(DAILY.c.day, DAILY.c.family)
        .join(ENTRIES, ENTRIES.c.code == DAILY.c.code)
        .where(ENTRIES.c.player_id == player_id)
        .order_by(DAILY.c.day, DAILY.c.family)
    )
    return [(str(r.day), str(r.family)) for r in (await tx.execute(query)).all()]
