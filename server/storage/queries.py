"""Reads and simple writes outside the hot path (players, game creation, loading)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from server.storage.models import ActionRow, GameRow, Player


def hash_token(token: str) -> str:
    """Tokens are stored only as SHA-256: they are long random strings, so no salt is needed."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(6)}"


async def create_player(session: AsyncSession, name: str | None, now_ms: int) -> tuple[Player, str]:
    """A new player and its token (returned once, never stored in clear)."""
    token = "st_" + secrets.token_urlsafe(24)
    player_id = new_id("p")
    player = Player(
        id=player_id,
        name=name or f"Guest-{player_id[-4:]}",
        token_hash=hash_token(token),
        created_ms=now_ms,
    )
    session.add(player)
    await session.commit()
    return player, token


async def player_by_token(session: AsyncSession, token: str) -> Player | None:
    result = await session.execute(select(Player).where(Player.token_hash == hash_token(token)))
    return result.scalar_one_or_none()


async def player_by_id(session: AsyncSession, player_id: str) -> Player | None:
    return await session.get(Player, player_id)


async def rename_player(session: AsyncSession, player_id: str, name: str) -> None:
    await session.execute(update(Player).where(Player.id == player_id).values(name=name))
    await session.commit()


async def insert_game(session: AsyncSession, row: GameRow) -> None:
    session.add(row)
    await session.commit()


async def game_row(session: AsyncSession, game_id: str) -> GameRow | None:
    return await session.get(GameRow, game_id)


async def game_actions(session: AsyncSession, game_id: str) -> Sequence[ActionRow]:
    result = await session.execute(
        select(ActionRow).where(ActionRow.game_id == game_id).order_by(ActionRow.seq)
    )
    return result.scalars().all()


async def player_games_on_code(session: AsyncSession, player_id: str, code: str) -> Sequence[GameRow]:
    result = await session.execute(
        select(GameRow)
        .where(GameRow.player_id == player_id, GameRow.code == code)
        .order_by(GameRow.created_ms)
    )
    return result.scalars().all()


async def live_games(session: AsyncSession, limit: int) -> Sequence[Any]:
    """Open games that have started, most recently active first, with their owners' names."""
    result = await session.execute(
        select(GameRow, Player.name)
        .join(Player, Player.id == GameRow.player_id)
        .where(GameRow.result.is_(None), GameRow.last_action_ms.is_not(None))
        .order_by(GameRow.last_action_ms.desc())
        .limit(limit)
    )
    return result.all()


def row_to_dict(row: Any) -> dict[str, Any]:
    return {c.key: getattr(row, c.key) for c in row.__table__.columns}
