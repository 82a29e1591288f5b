"""Games taken through their fencing token among instances; each move announced to the others.

It implements core's :class:`server.core.cluster.Leases`.
"""

from __future__ import annotations

from typing import Protocol

from server import metrics
from server.cluster.control import Control
from server.storage import leases
from server.storage.db import Database
from server.storage.faults import Conflict


class Announcer(Protocol):
    """What a lease asks of the instance: its name, and the control channel."""

    name: str

    def send_control(self, kind: Control, body: str) -> None: ...


class RedisLeases:
    """Games taken through their fencing token; each move announced to the other instances."""

    def __init__(self, cluster: Announcer, db: Database) -> None:
        self.cluster = cluster
        self.db = db

    async def take(self, game_id: str) -> int:
        try:
            token = await leases.take(self.db, game_id, self.cluster.name)
        except Conflict:  # the game is not stored (yet): no lease to take
            raise LookupError(game_id) from None
        if token > 1:  # another instance may hold a copy: it drops it at once
            metrics.LEASE_MOVES.inc()
            self.cluster.send_control(Control.MOVED, game_id)
        return token
