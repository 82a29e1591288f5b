"""Reads and simple writes outside the hot path (players, game creation, loading)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from server.rules.names import guest_name, name_keys
from server.storage.db import Database, Tx
from server.storage.models import ActionRow, GameRow, Player, PlayerSession


def hash_token(token: str) -> str:
    """Tokens are stored only as SHA-256: they are long random strings, so no salt is needed."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(6)}"


class NameTaken(Exception):
    """Another player's name has the same key (``names.model.name_keys``): it reads the same."""


def _player(row: Any) -> Player:
    """A stored player as a (detached) ``Player``: read with Core, shaped as the model."""
    return Player(**row._mapping)


def _game(row: Any) -> GameRow:
    return GameRow(**row._mapping)


async def create_player(
    db: Database, name: str | None, now_ms: int, kind: str = "human"
) -> tuple[Player, str]:
    """A new player and its token (returned once, never stored in clear); ``name`` is a clean
    name (``names.model.clean_name``), or None for a guest's; ``kind`` ``bot`` for a program
    that says so. Raises :class:`NameTaken`. Takes the database, not a transaction: telling a
    clash of names apart reads after the failed one has rolled back."""
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
    values = {c.key: getattr(player, c.key) for c in Player.__table__.columns if c.key != "banned_ms"}
    await _commit_name(db, name, player_id, insert(Player).values(**values))
    return player, token


async def _name_holder(tx: Tx, name: str, besides: str) -> str | None:
    """The id of another player whose name clashes with ``name``, if any."""
    fold, skeleton = name_keys(name)
    result = await tx.execute(
        select(Player.id)
        .where(or_(Player.name_fold == fold, Player.name_skeleton == skeleton), Player.id != besides)
        .limit(1)
    )
    return result.scalar_one_or_none()


async def player_by_token(tx: Tx, token: str) -> Player | None:
    """The player of a guest's own token or of a logged-in session's (migration 0007)."""
    digest = hash_token(token)
    row = (await tx.execute(select(Player).where(Player.token_hash == digest))).first()
    if row is None:
        in_session = select(Player).join(PlayerSession, PlayerSession.player_id == Player.id)
        row = (await tx.execute(in_session.where(PlayerSession.token_hash == digest))).first()
    return None if row is None else _player(row)


async def player_by_id(tx: Tx, player_id: str) -> Player | None:
    row = (await tx.execute(select(Player).where(Player.id == player_id))).first()
    return None if row is None else _player(row)


async def rename_player(db: Database, player_id: str, name: str) -> None:
    """Give a player a clean name; raises :class:`NameTaken` when another player's clashes.
    Takes the database, as :func:`create_player` does."""
    fold, skeleton = name_keys(name)
    rename = update(Player).where(Player.id == player_id)
    await _commit_name(db, name, player_id, rename.values(name=name, name_fold=fold, name_skeleton=skeleton))


async def _commit_name(db: Database, name: str, player_id: str, statement: Any) -> None:
    """Run ``statement`` in its own transaction; a unique-key clash with another player's
    name is :class:`NameTaken`."""
    try:
        async with db.transaction() as tx:
            await tx.execute(statement)
    except IntegrityError:
        async with db.read() as tx:
            if await _name_holder(tx, name, player_id) is not None:
                raise NameTaken(name) from None
        raise


async def insert_game(tx: Tx, values: dict[str, Any]) -> None:
    await tx.execute(insert(GameRow).values(**values))


async def game_row(tx: Tx, game_id: str) -> GameRow | None:
    row = (await tx.execute(select(GameRow).where(GameRow.id == game_id))).first()
    return None if row is None else _game(row)


async def game_actions(tx: Tx, game_id: str) -> Sequence[ActionRow]:
    result = await tx.execute(select(ActionRow).where(ActionRow.game_id == game_id).order_by(ActionRow.seq))
    return [ActionRow(**row._mapping) for row in result]


async def live_games(tx: Tx, limit: int, today: str) -> Sequence[tuple[GameRow, str]]:
    """Open games that have started, most recently active first, with their owners' names;
    a daily challenge's games only once their day (``daily_day``) is before ``today``."""
    unsealed = or_(GameRow.daily_day.is_(None), GameRow.daily_day < today)
    name = Player.name.label("owner_name")
    result = await tx.execute(
        select(GameRow, name)
        .join(Player, Player.id == GameRow.player_id)
        .where(GameRow.result.is_(None), GameRow.last_action_ms.is_not(None), unsealed)
        .order_by(GameRow.last_action_ms.desc())
        .limit(limit)
    )
    games = GameRow.__table__.columns.keys()
    return [(GameRow(**{k: row._mapping[k] for k in games}), row.owner_name) for row in result]
