"""Queries of accounts and sessions. Tokens are stored only as their SHA-256
(:func:`~server.storage.queries.hash_token`); passwords only as argon2id hashes."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, delete, select, update

from server.storage.db import Tx
from server.storage.models import Account, Player, PlayerSession
from server.storage.queries import hash_token, new_id

ACCOUNTS: Table = Account.__table__  # type: ignore[assignment]
SESSIONS: Table = PlayerSession.__table__  # type: ignore[assignment]
PLAYERS: Table = Player.__table__  # type: ignore[assignment]
GUEST_LABEL = "the device this account was made on"


class UsernameTaken(Exception):
    """Another account's username reads the same (ignoring case and lookalike letters)."""


class AlreadyAnAccount(Exception):
    """The player has an account already."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a token names: the player, and the session (None for a guest's own token)."""

    player_id: str
    name: str
    session_id: str | None
    token_hash: str


@dataclass(frozen=True, slots=True)
class StoredAccount:
    """An account as stored: what logging in and the account page need."""

    player_id: str
    username: str
    username_fold: str
    password_hash: str
    created_ms: int


def _account(row: Any) -> StoredAccount:
    return StoredAccount(row.player_id, row.username, row.username_fold, row.password_hash, row.created_ms)


def new_token() -> str:
    return "st_" + secrets.token_urlsafe(24)


async def identify(tx: Tx, token: str) -> Identity | None:
    """The player and session of a bearer token, if it is one."""
    digest = hash_token(token)
    guest = (
        await tx.execute(select(PLAYERS.c.id, PLAYERS.c.name).where(PLAYERS.c.token_hash == digest))
    ).first()
    if guest is not None:
        return Identity(guest.id, guest.name, None, digest)
    query = (
        select(PLAYERS.c.id, PLAYERS.c.name, SESSIONS.c.id.label("session_id"))
        .join(SESSIONS, SESSIONS.c.player_id == PLAYERS.c.id)
        .where(SESSIONS.c.token_hash == digest)
    )
    found = (await tx.execute(query)).first()
    return None if found is None else Identity(found.id, found.name, found.session_id, digest)


async def create_account(
    tx: Tx,
    player_id: str,
    username: str,
    keys: tuple[str, str],
    password_hash: str,
    now_ms: int,
) -> None:
    """Claim a guest's player: its own token becomes the account's first session (so the
    device it was made on stays logged in and can log out). A clash of usernames raises
    ``IntegrityError``; :func:`why_refused` then says which it was."""
    fold, skeleton = keys
    await tx.execute(
        ACCOUNTS.insert().values(
            player_id=player_id,
            username=username,
            username_fold=fold,
            username_skeleton=skeleton,
            password_hash=password_hash,
            created_ms=now_ms,
            password_changed_ms=now_ms,
        )
    )
    guest_hash = (
        await tx.execute(select(PLAYERS.c.token_hash).where(PLAYERS.c.id == player_id))
    ).scalar_one()
    await tx.execute(
        SESSIONS.insert().values(
            id=new_id("s"), player_id=player_id, token_hash=guest_hash, label=GUEST_LABEL, created_ms=now_ms
        )
    )
    retired = hash_token("retired:" + secrets.token_urlsafe(24))  # the column stays unique, matching nothing
    await tx.execute(update(PLAYERS).where(PLAYERS.c.id == player_id).values(token_hash=retired))


async def why_refused(tx: Tx, player_id: str, keys: tuple[str, str]) -> Exception | None:
    """After a refused :func:`create_account`: :class:`AlreadyAnAccount`, :class:`UsernameTaken`, or None."""
    if (await tx.execute(select(ACCOUNTS.c.player_id).where(ACCOUNTS.c.player_id == player_id))).first():
        return AlreadyAnAccount(player_id)
    fold, skeleton = keys
    taken = select(ACCOUNTS.c.player_id).where(
        (ACCOUNTS.c.username_fold == fold) | (ACCOUNTS.c.username_skeleton == skeleton)
    )
    return UsernameTaken(fold) if (await tx.execute(taken)).first() is not None else None


async def account_by_fold(tx: Tx, fold: str) -> StoredAccount | None:
    row = (await tx.execute(select(ACCOUNTS).where(ACCOUNTS.c.username_fold == fold))).first()
    return None if row is None else _account(row)


async def account_of(tx: Tx, player_id: str) -> StoredAccount | None:
    row = (await tx.execute(select(ACCOUNTS).where(ACCOUNTS.c.player_id == player_id))).first()
    return None if row is None else _account(row)


async def new_session(tx: Tx, player_id: str, label: str, now_ms: int) -> tuple[str, str]:
    """(session id, token): the token is returned once and stored only as its hash."""
    token, session_id = new_token(), new_id("s")
    await tx.execute(
        SESSIONS.insert().values(
            id=session_id, player_id=player_id, token_hash=hash_token(token), label=label, created_ms=now_ms
        )
    )
    return session_id, token


async def sessions_of(tx: Tx, player_id: str) -> Sequence[PlayerSession]:
    query = (
        select(SESSIONS)
        .where(SESSIONS.c.player_id == player_id)
        .order_by(SESSIONS.c.created_ms, SESSIONS.c.id)
    )
    return [PlayerSession(**row._mapping) for row in (await tx.execute(query)).all()]


async def end_sessions(
    tx: Tx, player_id: str, session_id: str | None = None, keep: str | None = None
) -> list[str]:
    """Delete one session of a player (``session_id``), or all but the session ``keep``;
    returns the ended sessions' token hashes (their open sockets are closed by the caller)."""
    where = SESSIONS.c.player_id == player_id
    if session_id is not None:
        where &= SESSIONS.c.id == session_id
    if keep is not None:
        where &= SESSIONS.c.id != keep
    hashes = list((await tx.execute(select(SESSIONS.c.token_hash).where(where))).scalars())
    if hashes:
        await tx.execute(delete(SESSIONS).where(where))
    return hashes


async def set_password(tx: Tx, player_id: str, password_hash: str, now_ms: int) -> None:
    await tx.execute(
        update(ACCOUNTS)
        .where(ACCOUNTS.c.player_id == player_id)
        .values(password_hash=password_hash, password_changed_ms=now_ms)
    )
