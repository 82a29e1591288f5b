"""Reads and simple writes outside the hot path (players, game creation, loading)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from server.rules.names import guest_name, name_keys
from server.storage.models import ActionRow, GameRow, Player, PlayerSession


def hash_token(token: str) -> str:
    """Tokens are stored only as SHA-256: they are long random strings, so no salt is needed."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(6)}"


class NameTaken(Exception):
    """Another player's name has the same key (``names.model.name_keys``): it reads the same."""


async def create_player(
    session: AsyncSession, name: str | None, now_ms: int, kind: str = "human"
) -> tuple[Player, str]:
    """A new player and its token (returned once, never stored in clear); ``name`` is a clean
    name (``names.model.clean_name``), or None for a guest's; ``kind`` ``bot`` for a program
    that says so. Raises :class:`NameTaken`."""
    token = "st_" + secrets.token_urlsafe(24)
    player_id = new_id("p")
    name = name or guest_name(player_id)
    fold, skeleton = name_keys(name)
    player = Player(
        id=player_id,
        name=name,
        token_hash=hash_token(token),
        created_ms=now_ms,
        name_fold=fold,
        name_skeleton=skeleton,
        kind=kind,
    )
    session.add(player)
    await _commit_name(session, name, player_id)
    return player, token


async def _name_holder(session: AsyncSession, name: str, besides: str) -> str | None:
    """The id of another player whose name clashes with ``name``, if any."""
    fold, skeleton = name_keys(name)
    result = await session.execute(
        select(Player.id)
        .where(or_(Player.name_fold == fold, Player.name_skeleton == skeleton), Player.id != besides)
        .limit(1)
    )
    return result.scalar_one_or_none()


async def player_by_token(session: AsyncSession, token: str) -> Player | None:
    """The player of a guest's own token or of a logged-in session's (migration 0007)."""
    digest = hash_token(token)
    result = await session.execute(select(Player).where(Player.token_hash == digest))
    player = result.scalar_one_or_none()
    if player is None:
        in_session = select(Player).join(PlayerSession, PlayerSession.player_id == Player.id)
        result = await session.execute(in_session.where(PlayerSession.token_hash == digest))
        player = result.scalar_one_or_none()
    return player


async def player_by_id(session: AsyncSession, player_id: str) -> Player | None:
    return await session.get(Player, player_id)


async def rename_player(session: AsyncSession, player_id: str, name: str) -> None:
    """Give a player a clean name; raises :class:`NameTaken` when another player's clashes."""
    fold, skeleton = name_keys(name)
    rename = update(Player).where(Player.id == player_id)
    await _commit_name(
        session, name, player_id, rename.values(name=name, name_fold=fold, name_skeleton=skeleton)
    )


async def _commit_name(session: AsyncSession, name: str, player_id: str, statement: Any = None) -> None:
    """Run ``statement`` (if any) and commit; a unique-key clash with another player's name,
    at either step, is :class:`NameTaken`."""
    try:
        if statement is not None:
            await session.execute(statement)
        await session.commit()
    except IntegrityError:
        await session.rollback()
        if await _name_holder(session, name, player_id) is not None:
            raise NameTaken(name) from None
        raise


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


async def live_games(session: AsyncSession, limit: int, today: str) -> Sequence[Any]:
    """Open games that have started, most recently active first, with their owners' names;
    a daily challenge's games only once their day (``daily_day``) is before ``today``."""
    unsealed = or_(GameRow.daily_day.is_(None), GameRow.daily_day < today)
    result = await session.execute(
        select(GameRow, Player.name)
        .join(Player, Player.id == GameRow.player_id)
        .where(GameRow.result.is_(None), GameRow.last_action_ms.is_not(None), unsealed)
        .order_by(GameRow.last_action_ms.desc())
        .limit(limit)
    )
    return result.all()


def row_to_dict(row: Any) -> dict[str, Any]:
    return {c.key: getattr(row, c.key) for c in row.__table__.columns}
