"""What operators do, each step in one transaction with its audit row.

Used by the admin HTTP API (``features/moderation/api.py``) and by the
``solitaire-server admin`` commands alike.
"""

from __future__ import annotations

from typing import Any, Protocol

from server.clock import Clock
from server.core.context import Peers
from server.errors import ProtocolError
from server.features.moderation.model import REVIEWS, audit_json, flagged_json, token_json
from server.storage import moderation as store
from server.storage import queries
from server.storage.db import Database, Tx
from server.storage.leaderboards import hide_player, set_standing
from server.storage.screening import entries_in
from server.vocabulary import AuditAction
from wire import LISTED_STANDINGS, ErrorCode, Standing

Admin = tuple[str, str]  # (id, name) of the operator acting
DAY_MS = 86_400_000


class BoardLog(Protocol):
    """Where an action that changes a leaderboard is recorded, in the action's own transaction
    (the results log: a daily board's changes are public record)."""

    async def board_changed(
        self, tx: Tx, code: str, action: str, target: str, reason: str, at_ms: int
    ) -> None:
        """An action on one entry of the code's board."""

    async def player_changed(self, tx: Tx, player_id: str, action: str, reason: str, at_ms: int) -> None:
        """An action on a player, which changes every board they are on."""


class Unrecorded:
    """No record beyond the audit log (what a caller without a results log composes)."""

    async def board_changed(
        self, tx: Tx, code: str, action: str, target: str, reason: str, at_ms: int
    ) -> None:
        return None

    async def player_changed(self, tx: Tx, player_id: str, action: str, reason: str, at_ms: int) -> None:
        return None


class Moderation:
    """Reviews, bans and renames, every one audited."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        peers: Peers | None = None,
        boards: BoardLog | None = None,
    ) -> None:
        self.db = db
        self.clock = clock
        self.peers = peers
        self.boards: BoardLog = boards or Unrecorded()

    async def admin(self, token: str) -> Admin | None:
        """The operator a token names, if it is neither revoked nor expired."""
        async with self.db.read() as tx:
            row = await store.admin_by_token(tx, token, self.clock())
        return None if row is None else (str(row.id), str(row.name))

    async def create_token(
        self, name: str, by: Admin, expires_in_days: float | None = None
    ) -> tuple[str, str]:
        """A new operator token (shown once), audited; it expires after ``expires_in_days``."""
        now = self.clock()
        expires = None if expires_in_days is None else now + int(expires_in_days * DAY_MS)
        details = "" if expires is None else f"expires_at {expires}"
        async with self.db.transaction() as tx:
            admin_id, token = await store.create_token(tx, name, now, expires)
            await store.audit(tx, by, AuditAction.CREATE_TOKEN, admin_id, f"token for {name}", details, now)
        return admin_id, token

    async def tokens(self) -> list[dict[str, Any]]:
        """Every operator token with its state (active, expired, revoked), oldest first."""
        now = self.clock()
        async with self.db.read() as tx:
            return [token_json(row, now) for row in await store.tokens(tx)]

    async def revoke_token(self, by: Admin, admin_id: str, reason: str) -> dict[str, Any]:
        """Revoke an operator token: refused by /api/admin and /metrics from now on; audited."""
        now = self.clock()
        async with self.db.transaction() as tx:
            found = await store.revoke_token(tx, admin_id, now)
            if found is None:
                raise ProtocolError(ErrorCode.NOT_FOUND, "no such operator token")
            details = f"token of {found.name}"
            await store.audit(tx, by, AuditAction.REVOKE_TOKEN, admin_id, reason, details, now)
        return {"id": admin_id, "name": found.name, "revoked": True}

    async def flagged(self, limit: int, standing: Standing = Standing.FLAGGED) -> list[dict[str, Any]]:
        async with self.db.read() as tx:
            return [flagged_json(row, self.clock()) for row in await entries_in(tx, standing, limit)]

    async def review(self, by: Admin, game_id: str, decision: str, reason: str) -> dict[str, Any]:
        """Confirm or clear a flag, or remove an entry: the entry a game made."""
        standing, action = REVIEWS[decision]
        now = self.clock()
        async with self.db.transaction() as tx:
            entry = await store.entry_of_game(tx, game_id)
            if entry is None:
                raise ProtocolError(ErrorCode.NOT_FOUND, "that game is no leaderboard entry (now)")
            reviewable = (Standing.FLAGGED, Standing.CONFIRMED, Standing.CLEARED)
            if decision != "remove" and entry.standing not in reviewable:
                raise ProtocolError(ErrorCode.CONFLICT, f"the entry is {entry.standing}, not flagged")
            banned = entry.banned_ms is not None
            await set_standing(tx, entry.code, entry.player_id, standing, banned)
            details = f"{entry.player_id}: {entry.standing} -> {standing}"  # the target names the game
            await store.audit(tx, by, action, game_id, reason, details, now)
            await self.boards.board_changed(tx, entry.code, action, game_id, reason, now)
        return {
            "game_id": game_id,
            "standing": standing,
            "listed": standing in LISTED_STANDINGS and not banned,
        }

    async def ban(self, by: Admin, player_id: str, reason: str) -> dict[str, Any]:
        """Ban a player: their games stop counting and their entries leave every default view."""
        now = self.clock()
        async with self.db.transaction() as tx:
            if not await store.ban(tx, player_id, now):
                raise ProtocolError(ErrorCode.NOT_FOUND, "no such player")
            hidden = await hide_player(tx, player_id)
            await store.audit(
                tx, by, AuditAction.BAN_PLAYER, player_id, reason, f"{hidden} entries hidden", now
            )
            await self.boards.player_changed(tx, player_id, AuditAction.BAN_PLAYER, reason, now)
        return {"player_id": player_id, "banned": True, "entries_hidden": hidden}

    async def rename(self, by: Admin, player_id: str, name: str, reason: str) -> dict[str, Any]:
        """Give a player another (clean, unique) name."""
        async with self.db.read() as tx:
            player = await queries.player_by_id(tx, player_id)
        if player is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, "no such player")
        old = player.name
        try:
            await queries.rename_player(self.db, player_id, name)
        except queries.NameTaken:
            raise ProtocolError(ErrorCode.BAD_MESSAGE, "name is taken", field="name") from None
        now = self.clock()
        async with self.db.transaction() as tx:
            await store.audit(tx, by, AuditAction.RENAME_PLAYER, player_id, reason, f"{old} -> {name}", now)
            await self.boards.player_changed(tx, player_id, AuditAction.RENAME_PLAYER, reason, now)
        if self.peers is not None:
            self.peers.renamed(player_id, name)
        return {"id": player_id, "name": name}

    async def audit_log(self, limit: int, before: int | None = None) -> list[dict[str, Any]]:
        async with self.db.read() as tx:
            return [audit_json(row) for row in await store.audit_log(tx, limit, before)]
