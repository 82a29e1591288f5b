"""The results log: leaves appended where results become final, heads signed at each day's end.

A ranked daily attempt that ends appends its leaf in the finishing
transaction (a finish hook), and an operator's action on a daily board in the
action's transaction (:meth:`ResultsLog.board_changed`,
:meth:`ResultsLog.player_changed`, which the moderation feature calls through
its own small protocol): no acknowledged result or action can be missing from
the log, and a crash cannot leave a hole. The day-end sweep calls
:meth:`ResultsLog.day_ended` once every ranked attempt of the earlier days is
final; each day without a head then gets one, signed with the Ed25519 key the
first instance stored in the database.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from engine.vocabulary import FINAL_RESULTS
from server.clock import Clock
from server.core.games import GameService, LiveGame
from server.errors import ProtocolError
from server.features.results_log.model import (
    MAX_LEAVES_PER_CALL,
    LeafKind,
    TreeHead,
    consistency_ranges,
    inclusion_ranges,
    keys_of,
    moderation_leaf,
    range_hash,
    result_leaf,
    subtrees,
)
from server.rules.days import DAY_MS, day_of, day_start_ms
from server.rules.disclosure import is_sealed
from server.storage import results_log as store
from server.storage.db import Database, Tx
from server.storage.results_log import NewLeaf, SignedHead
from server.storage.stored_secrets import stored_or_new
from wire import ErrorCode

log = logging.getLogger(__name__)
KEY_NAME = "results-log-ed25519"  # the private key's row in server_secrets (hex of its 32 bytes)


def check_open(day: str, now_ms: int) -> None:
    """THE rule for what of the log may be shown: a leaf (it holds the code) once its day ended.

    Tree heads and hashes are public at any time; leaf bytes and the proofs
    that carry them answer ``sealed`` (403, ``opens_at`` the day's end) before.
    """
    if is_sealed(day, now_ms):
        raise ProtocolError(
            ErrorCode.SEALED,
            "the log's leaves of a daily are published when its day ends",
            opens_at=day_start_ms(day) + DAY_MS,
        )


def days_to_sign(last_signed: str | None, first_leaf_ms: int | None, today: str) -> list[str]:
    """The ended days still without a head: after the last signed one, or from the first leaf's."""
    if last_signed is not None:
        start = date.fromisoformat(last_signed) + timedelta(days=1)
    elif first_leaf_ms is not None:
        start = date.fromisoformat(day_of(first_leaf_ms))
    else:
        return []
    end = date.fromisoformat(today)
    return [(start + timedelta(days=n)).isoformat() for n in range((end - start).days)]


def head_json(signed: SignedHead) -> dict[str, Any]:
    h = signed.head
    return {
        "day": h.day,
        "tree_size": h.tree_size,
        "root_hash": h.root_hash,
        "timestamp_ms": h.timestamp_ms,
        "signature": signed.signature,
    }


@dataclass(frozen=True, slots=True)
class Inclusion:
    leaf: str
    leaf_index: int
    head: SignedHead
    audit_path: list[str]


class ResultsLog:
    """Appends (finish hook, moderation), day-end heads, and the proofs the routes answer."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        self._key: Ed25519PrivateKey | None = None

    # -- the key --------------------------------------------------------------------

    async def key(self) -> Ed25519PrivateKey:
        """The signing key: the database's, stored by the first instance that needed one."""
        if self._key is None:
            fresh = Ed25519PrivateKey.generate().private_bytes_raw().hex()
            async with self.db.transaction() as tx:
                stored, _ = await stored_or_new(tx, KEY_NAME, fresh, self.clock())
            self._key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(stored))
        return self._key

    async def public_key(self) -> str:
        raw = (await self.key()).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        return raw.hex()

    # -- appends ----------------------------------------------------------------------

    async def on_finish(self, live: LiveGame, tx: Tx) -> None:
        """Finish hook: a ranked daily attempt's result, in the transaction that ends it."""
        if live.daily_day is None or not live.ranked or live.result not in FINAL_RESULTS:
            return
        g = live.game
        leaf = result_leaf(
            day=live.daily_day,
            family=g.code.family,
            code=str(g.code),
            game_id=live.id,
            player_id=live.owner_id,
            result=str(live.result),
            score=g.score,
            moves=g.moves,
            time_ms=live.elapsed_ms,
            finished_ms=live.finished_ms or 0,
        )
        await store.append(tx, [NewLeaf(leaf, LeafKind.RESULT, live.daily_day, live.id)], self.clock())

    async def board_changed(
        self, tx: Tx, code: str, action: str, target: str, reason: str, at_ms: int
    ) -> None:
        """An operator's action on one board: a leaf when the board is a daily's."""
        daily = await store.daily_of_code(tx, code)
        if daily is not None:
            await self._moderated(tx, [daily], action, target, reason, at_ms)

    async def player_changed(self, tx: Tx, player_id: str, action: str, reason: str, at_ms: int) -> None:
        """An operator's action on a player (a ban, a rename): a leaf for each of their daily boards."""
        boards = await store.daily_boards_of_player(tx, player_id)
        if boards:
            await self._moderated(tx, boards, action, player_id, reason, at_ms)

    async def _moderated(
        self, tx: Tx, boards: list[tuple[str, str]], action: str, target: str, reason: str, at_ms: int
    ) -> None:
        new = [
            NewLeaf(moderation_leaf(day, family, action, target, reason, at_ms), LeafKind.MODERATION, day)
            for day, family in boards
        ]
        await store.append(tx, new, self.clock())

    # -- heads ------------------------------------------------------------------------

    async def day_ended(self, today: str) -> list[str]:
        """Day-end sweep: sign each ended day that has no head yet; returns the days signed.

        Called once every ranked attempt of the days before ``today`` is final,
        so each head covers all of its day's results.
        """
        async with self.db.read() as tx:
            latest = await store.latest_head(tx)
            first = await store.first_appended_ms(tx)
        days = days_to_sign(None if latest is None else latest.head.day, first, today)
        if not days:
            return []
        key = await self.key()
        async with self.db.transaction() as tx:
            size = await store.size(tx, lock=True)  # no append between the size and its root
            root = range_hash(await store.nodes(tx, subtrees(0, size)), 0, size).hex()
            now = self.clock()
            for day in days:
                head = TreeHead(day, size, root, now)
                await store.insert_head(tx, SignedHead(head, key.sign(head.signed_bytes()).hex()))
        log.info("results log: signed the heads of %s at %d leaves", ", ".join(days), size)
        return days

    async def head(self, day: str) -> SignedHead | None:
        async with self.db.read() as tx:
            return await store.head_of(tx, day)

    async def latest(self) -> SignedHead | None:
        async with self.db.read() as tx:
            return await store.latest_head(tx)

    # -- proofs -----------------------------------------------------------------------

    async def inclusion(self, game_id: str) -> Inclusion:
        """A daily game's leaf and its audit path to the head of its day (``sealed`` before then)."""
        async with self.db.read() as tx:
            leaf = await store.leaf_of_game(tx, game_id)
            if leaf is None:
                raise ProtocolError(ErrorCode.NOT_FOUND, "that game has no leaf in the results log")
            check_open(leaf.day, self.clock())
            signed = await store.head_of(tx, leaf.day)
            if signed is not None and leaf.index >= signed.head.tree_size:
                signed = await store.latest_head(tx)  # appended after its day's head: a later one has it
            if signed is None or leaf.index >= signed.head.tree_size:
                raise ProtocolError(ErrorCode.NOT_FOUND, "the head of the game's day is not signed yet")
            ranges = inclusion_ranges(leaf.index, signed.head.tree_size)
            found = await store.nodes(tx, keys_of(ranges))
        path = [range_hash(found, start, end).hex() for start, end in ranges]
        return Inclusion(leaf.leaf, leaf.index, signed, path)

    async def consistency(self, first: int, second: int) -> list[str]:
        """RFC 9162's consistency proof between two tree sizes, up to the latest head's."""
        async with self.db.read() as tx:
            latest = await store.latest_head(tx)
            signed = 0 if latest is None else latest.head.tree_size
            if not 0 < first <= second <= signed:
                raise ProtocolError(
                    ErrorCode.BAD_MESSAGE,
                    f"first and second must satisfy 0 < first <= second <= {signed} (the latest head's size)",
                    field="second" if first <= second else "first",
                )
            ranges = consistency_ranges(first, second)
            found = await store.nodes(tx, keys_of(ranges))
        return [range_hash(found, start, end).hex() for start, end in ranges]

    async def leaves(self, start: int, end: int) -> list[str]:
        """Leaves ``start`` to ``end`` inclusive (at most 1,000: fewer when more are asked)."""
        async with self.db.read() as tx:
            size = await store.size(tx)
            if not 0 <= start <= end < size:
                raise ProtocolError(
                    ErrorCode.BAD_MESSAGE,
                    f"start and end must satisfy 0 <= start <= end < {size} (the log's size)",
                    field="end" if start <= end else "start",
                )
            end = min(end, start + MAX_LEAVES_PER_CALL - 1)
            latest_day = await store.latest_day_between(tx, start, end)
            if latest_day is not None:
                check_open(latest_day, self.clock())
            found = await store.leaves(tx, start, end)
        return [leaf.leaf for leaf in found]

    async def start(self, games: GameService) -> None:
        """Take the key (generating it on the first start) and join the finish hooks, first of all:
        a finishing transaction then takes the log's head row before any leaderboard row."""
        await self.key()
        games.finish_hooks.insert(0, self.on_finish)
