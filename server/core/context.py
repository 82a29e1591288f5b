"""What a request handler sees of its caller, and the shape of a handler.

Handlers belong to features; the WebSocket session that calls them is the
edge's. They meet here, below both: a handler gets a :class:`Caller`, never
the connection object, so features know nothing of sockets.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from engine import GameCode
from server.core.games import LiveGame
from server.core.hub import Subscriber


class Caller(Subscriber, Protocol):
    """The authenticated (or anonymous) client a request came from."""

    @property
    def player_id(self) -> str | None:
        """The player, or None on an anonymous (watch-only) connection."""

    @property
    def player_name(self) -> str:
        """The player's display name ("?" when anonymous)."""

    def require_player(self) -> str:
        """The player id, or ``forbidden`` for an anonymous connection."""

    def check_follow(self, topic: str | None = None) -> None:
        """Refuse (``rate_limited``) now if following ``topic`` (None: a new one) would pass
        the watch limit: handlers ask before they store, so a refusal stores nothing."""

    def follow(self, topic: str) -> None:
        """Watch a topic; counts against the connection's watch limit (``rate_limited`` past it)."""

    def unfollow(self, topic: str) -> None:
        """Stop receiving a topic's pushes."""


Handler = Callable[[Caller, dict[str, Any]], Awaitable[dict[str, Any] | None]]
Handlers = Mapping[str, Handler]


class Peer(Protocol):
    """A connected client as the server as a whole sees it (renames, shutdown)."""

    @property
    def player_id(self) -> str | None: ...

    @property
    def token_hash(self) -> str | None:
        """The hash of the token the client authenticated with (None: anonymous)."""

    async def session_ended(self) -> None:
        """Its session was logged out or revoked: close at once (4401)."""

    def rename(self, name: str) -> None:
        """Games started from now on carry the new name."""

    async def goodbye(self, reason: str) -> None:
        """Tell the client the server is going away, then close."""


class Peers:
    """Every open connection of this server."""

    def __init__(self) -> None:
        self._peers: set[Peer] = set()
        # how the other instances hear of ended sessions (several instances: through Redis)
        self.elsewhere: Callable[[set[str]], None] = _alone

    def add(self, peer: Peer) -> None:
        self._peers.add(peer)

    def discard(self, peer: Peer) -> None:
        self._peers.discard(peer)

    def __len__(self) -> int:
        return len(self._peers)

    def renamed(self, player_id: str, name: str) -> None:
        for peer in self._peers:
            if peer.player_id == player_id:
                peer.rename(name)

    async def end_sessions(self, token_hashes: set[str]) -> int:
        """Close every connection authenticated with one of these tokens, here and on every other
        instance; returns how many here."""
        if token_hashes:
            self.elsewhere(token_hashes)
        return await self.end_here(token_hashes)

    async def end_here(self, token_hashes: set[str]) -> int:
        """Close this instance's connections authenticated with one of these tokens; how many."""
        ending = [
            peer for peer in self._peers if peer.token_hash is not None and peer.token_hash in token_hashes
        ]
        for peer in ending:
            await peer.session_ended()
        return len(ending)

    async def goodbye_all(self, reason: str) -> None:
        for peer in list(self._peers):
            await peer.goodbye(reason)


def _alone(token_hashes: set[str]) -> None:
    """One instance has no others to tell."""


class Starter(Protocol):
    """How new games start: the dailies feature decides which attempts are ranked."""

    async def start_on_code(
        self, player_id: str, name: str, code: GameCode, race_id: str | None = None
    ) -> LiveGame:
        """A new game on a code (a daily attempt is ranked at most once)."""

    async def start_daily(self, player_id: str, name: str, family: str) -> LiveGame:
        """A new game on today's challenge of a family."""
