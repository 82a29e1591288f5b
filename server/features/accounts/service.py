"""Accounts and sessions: claiming a guest's player, logging in and out, the session list,
changing the password. Every ended session's open sockets are closed at once (``Peers``, on
every instance). Failed logins are counted by the :class:`Failures` the app composed: this
instance's alone, or the fleet's in Redis; the service does not know which."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from server.core.backoff import BackoffRule, FailureCounts
from server.core.quotas import Rate
from server.core.services import Services
from server.errors import ProtocolError
from server.features.accounts.model import (
    bad_credentials,
    check_password,
    clean_username,
    hash_password,
    slowed,
    username_keys,
    verify_password,
)
from server.storage import accounts as store
from server.storage.accounts import Identity, StoredAccount
from server.storage.faults import Conflict
from wire import ErrorCode

ACCOUNT_FREE_FAILURES = 5  # per username, then each failure doubles the wait (1 s, 2 s, … 15 min)
ADDRESS_FREE_FAILURES = 20  # per client address
ACCOUNTS_PER_HOUR = 10  # accounts made from one address


@dataclass(frozen=True, slots=True)
class LoggedIn:
    player_id: str
    name: str
    username: str
    session_id: str
    token: str


class Accounts:
    """The account rules over storage; its HTTP adapters are in ``api.py``."""

    def __init__(self, services: Services, failures: FailureCounts) -> None:
        self.services = services
        clock = services.clock
        self.by_account = failures("account", BackoffRule(ACCOUNT_FREE_FAILURES))
        self.by_address = failures("address", BackoffRule(ADDRESS_FREE_FAILURES))
        self.made = Rate(
            "accounts made from this address in an hour",
            ACCOUNTS_PER_HOUR / 3600,
            ACCOUNTS_PER_HOUR,
            clock,
            services.quotas.shared,  # the fleet's count, with several instances
            "accounts",
        )

    async def identify(self, token: str) -> Identity:
        async with self.services.db.read() as tx:
            found = await store.identify(tx, token)
        if found is None:
            raise ProtocolError(ErrorCode.BAD_TOKEN, "unknown token")
        return found

    async def sign_up(self, who: Identity, username: Any, password: str, address: str | None) -> str:
        """Claim the guest ``who`` as an account; returns the stored username."""
        if who.session_id is not None:
            raise ProtocolError(ErrorCode.CONFLICT, "this player has an account already")
        clean = clean_username(username)
        check_password(password, clean)
        if address is not None:
            await self.made.require(address)
        keys = username_keys(clean)
        digest = await asyncio.to_thread(hash_password, password)
        try:
            async with self.services.db.transaction() as tx:
                await store.create_account(tx, who.player_id, clean, keys, digest, self.services.clock())
        except Conflict:
            async with self.services.db.read() as tx:
                reason = await store.why_refused(tx, who.player_id, keys)
            if isinstance(reason, store.AlreadyAnAccount):
                raise ProtocolError(ErrorCode.CONFLICT, "this player has an account already") from None
            if isinstance(reason, store.UsernameTaken):
                raise ProtocolError(
                    ErrorCode.BAD_MESSAGE,
                    "username is taken: another reads the same (ignoring case and lookalike letters)",
                    field="username",
                ) from None
            raise
        return clean

    def _keys(self, username: Any) -> tuple[str, str | None]:
        """(the backoff key, the lookup fold or None when no account can have this name)."""
        try:
            fold = username_keys(clean_username(username))[0]
        except ProtocolError:
            return "?" + str(username)[:64].casefold(), None
        return fold, fold

    async def _check_wait(self, key: str, address: str | None) -> None:
        """``rate_limited`` if the username or the address must wait before trying again."""
        wait = await self.by_account.wait_s(key)
        if address:
            wait = max(wait, await self.by_address.wait_s(address))
        if wait:
            raise slowed(wait)

    async def _failed(self, key: str, address: str | None) -> None:
        await self.by_account.failed(key)
        if address:
            await self.by_address.failed(address)

    async def log_in(self, username: Any, password: str, address: str | None, label: str) -> LoggedIn:
        """A new session for the account, or one answer for every failure (slowed past a few)."""
        key, fold = self._keys(username)
        await self._check_wait(key, address)
        async with self.services.db.read() as tx:
            account = None if fold is None else await store.account_by_fold(tx, fold)
        stored = account.password_hash if account else None
        matched = await asyncio.to_thread(verify_password, stored, password)  # unknown names too: same time
        if account is None or not matched:
            await self._failed(key, address)
            raise bad_credentials()
        await self.by_account.succeeded(key)
        async with self.services.db.transaction() as tx:
            session_id, token = await store.new_session(tx, account.player_id, label, self.services.clock())
            player = await store.identify(tx, token)
        assert player is not None
        return LoggedIn(account.player_id, player.name, account.username, session_id, token)

    async def account_of(self, player_id: str) -> StoredAccount | None:
        async with self.services.db.read() as tx:
            return await store.account_of(tx, player_id)

    async def sessions(self, who: Identity) -> list[dict[str, Any]]:
        async with self.services.db.read() as tx:
            rows = await store.sessions_of(tx, who.player_id)
        return [
            {"id": r.id, "label": r.label, "created_at": r.created_ms, "current": r.id == who.session_id}
            for r in rows
        ]

    async def end(self, who: Identity, session_id: str | None = None, keep: str | None = None) -> int:
        """End one session (or all but ``keep``); its sockets close now. Returns how many ended."""
        async with self.services.db.transaction() as tx:
            hashes = await store.end_sessions(tx, who.player_id, session_id, keep)
        await self.services.peers.end_sessions(set(hashes))
        return len(hashes)

    async def log_out(self, who: Identity) -> int:
        if who.session_id is None:
            raise ProtocolError(
                ErrorCode.CONFLICT, "a guest's token is its only key: make an account before logging out"
            )
        return await self.end(who, session_id=who.session_id)

    async def change_password(self, who: Identity, current: str, new: str, address: str | None) -> int:
        """Set a new password after checking the current one; every other session ends."""
        account = await self.account_of(who.player_id)
        if account is None or who.session_id is None:
            raise ProtocolError(ErrorCode.CONFLICT, "a guest has no password: make an account first")
        key = account.username_fold
        await self._check_wait(key, address)
        if not await asyncio.to_thread(verify_password, account.password_hash, current):
            await self._failed(key, address)
            raise ProtocolError(ErrorCode.BAD_CREDENTIALS, "wrong password", field="password")
        check_password(new, account.username, field="new_password")
        digest = await asyncio.to_thread(hash_password, new)
        async with self.services.db.transaction() as tx:
            await store.set_password(tx, who.player_id, digest, self.services.clock())
        return await self.end(who, keep=who.session_id)
