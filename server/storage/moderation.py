"""Queries of moderation: operators' tokens, the audit log, bans, and entries by game.

Every operator action is one transaction with its audit row, so nothing is
done without being written down, and nothing is written down undone.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, insert, or_, select, update

from server.storage.db import Tx
from server.storage.models import AdminToken, AuditEntry, LeaderboardEntry, Player
from server.storage.queries import hash_token, new_id

ADMINS = AdminToken.__table__
AUDIT = AuditEntry.__table__
ENTRIES = LeaderboardEntry.__table__
PLAYERS = Player.__table__


async def create_token(tx: Tx, name: str, now_ms: int, expires_ms: int | None = None) -> tuple[str, str]:
    """A new operator (id, token); only the token's SHA-256 is stored."""
    admin_id, token = new_id("a"), "sa_" + secrets.token_urlsafe(32)
    values = {
        "id": admin_id,
        "name": name,
        "token_hash": hash_token(token),
        "created_ms": now_ms,
        "expires_ms": expires_ms,
    }
    await tx.execute(insert(AdminToken).values(**values))
    return admin_id, token


async def admin_by_token(tx: Tx, token: str, now_ms: int) -> Row[Any] | None:
    """The operator a token names, unless it is revoked or has expired."""
    query = select(ADMINS).where(
        ADMINS.c.token_hash == hash_token(token),
        ADMINS.c.revoked_ms.is_(None),
        or_(ADMINS.c.expires_ms.is_(None), ADMINS.c.expires_ms > now_ms),
    )
    return (await tx.execute(query)).first()


async def tokens(tx: Tx) -> Sequence[Row[Any]]:
    """Every operator token ever made (never its hash), oldest first."""
    shown = [ADMINS.c[name] for name in ("id", "name", "created_ms", "expires_ms", "revoked_ms")]
    query = select(*shown).order_by(ADMINS.c.created_ms, ADMINS.c.id)
    return (await tx.execute(query)).all()


async def revoke_token(tx: Tx, admin_id: str, now_ms: int) -> Row[Any] | None:
    """Mark a token revoked (a repeat keeps the first time); None if there is no such token."""
    found = (await tx.execute(select(ADMINS).where(ADMINS.c.id == admin_id))).first()
    if found is not None and found.revoked_ms is None:
        await tx.execute(update(AdminToken).where(ADMINS.c.id == admin_id).values(revoked_ms=now_ms))
    return found


async def audit(
    tx: Tx,
    admin: tuple[str, str],
    action: str,
    target: str,
    reason: str,
    details: str,
    now_ms: int,
) -> int:
    """Write one audit row (who, what, on what, why, when); returns its id."""
    values = {
        "at_ms": now_ms,
        "admin_id": admin[0],
        "admin_name": admin[1],
        "action": action,
        "target": target,
        "reason": reason,
        "details": details[:500],
    }
    result = await tx.execute(insert(AuditEntry).values(**values).returning(AUDIT.c.id))
    return int(result.scalar_one())


async def audit_log(tx: Tx, limit: int, before: int | None = None) -> Sequence[Row[Any]]:
    """Newest first; ``before`` (an id) continues an earlier page."""
    query = select(AUDIT)
    if before is not None:
        query = query.where(AUDIT.c.id < before)
    return (await tx.execute(query.order_by(AUDIT.c.id.desc()).limit(limit))).all()


async def entry_of_game(tx: Tx, game_id: str) -> Row[Any] | None:
    """The leaderboard entry a game made (with its player's ban), if it is still the entry."""
    query = (
        select(ENTRIES, PLAYERS.c.banned_ms)
        .join(PLAYERS, PLAYERS.c.id == ENTRIES.c.player_id)
        .where(ENTRIES.c.game_id == game_id)
    )
    return (await tx.execute(query)).first()


async def ban(tx: Tx, player_id: str, now_ms: int) -> bool:
    """Mark a player banned (a repeat keeps the first time); False if there is no such player."""
    found = (await tx.execute(select(PLAYERS.c.banned_ms).where(PLAYERS.c.id == player_id))).first()
    if found is None:
        return False
    if found.banned_ms is None:
        await tx.execute(update(Player).where(PLAYERS.c.id == player_id).values(banned_ms=now_ms))
    return True
